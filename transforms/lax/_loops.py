"""Loops: ``while_loop`` and ``fori_loop``.

Both run eagerly, so the trip count is known as they run: forward mode, Taylor mode and
sparsity follow every iteration, and reverse mode (which JAX refuses for ``while_loop``)
stores what each iteration's pullback reads and replays the iterations backwards; it nests
(``grad(grad)``, ``hessian``) like any eager code.

Under ``vmap`` a predicate that differs between examples keeps the loop running while any
example runs: the examples that are done are frozen (their carry is selected unchanged, with
its derivatives), and the body runs on safe inputs for them (``_select``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

import transforms.numpy as tnp
from transforms.core import concrete
from transforms.core.tree_util import PyTreeDef
from transforms.numpy._define import dtype_of

from ._construct import apply, construct
from ._select import Decision, batched, leaves_of, run_branch, safe_inputs, select
from ._signature import carry_like

__all__ = ["fori_loop", "while_loop"]

T = TypeVar("T")

while_loop_p = construct("while_loop")
fori_loop_p = construct("fori_loop")


def _iterate(
    name: str,
    cond_fun: Callable[[Any], Any],
    body_fun: Callable[[Any], Any],
    carry: list[Any],
    tree: PyTreeDef[Any],
) -> list[Any]:
    """Run ``body_fun`` on the carry (as leaves of ``tree``) while ``cond_fun`` holds, per
    example under ``vmap``."""
    while True:
        pred = cond_fun(tree.unflatten(carry))
        if dtype_of(pred) != np.bool_:
            raise TypeError(f"{name}: cond_fun must return a boolean scalar, got {dtype_of(pred)}")
        decision = Decision(pred, f"{name}: cond_fun's output")
        if decision.uniform == 0:
            return carry
        what = f"{name}: body_fun's output"
        if decision.uniform == 1:  # every example runs this iteration
            carry = carry_like(what, body_fun(tree.unflatten(carry)), carry, tree)
            continue
        safe = safe_inputs(decision, 1, carry)
        new = carry_like(what, run_branch(decision, body_fun, tree.unflatten(safe)), carry, tree)
        carry = select(decision.mask(1), new, carry)


def while_loop(cond_fun: Callable[[T], Any], body_fun: Callable[[T], T], init_val: T) -> T:
    """``val = body_fun(val)`` while ``cond_fun(val)``, from ``init_val`` (``jax.lax.while_loop``).

    Differentiable in every mode, reverse included; under ``vmap`` each example stops on its
    own ``cond_fun`` (the loop runs until every example is done).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> from transforms import lax
        >>> def newton_sqrt(a):  # x <- (x + a / x) / 2 until converged
        ...     step = lambda x: (x + a / x) / 2
        ...     return lax.while_loop(lambda x: abs(step(x) - x) > 1e-12, step, a)
        >>> T.vmap(newton_sqrt)(np.array([4.0, 2.0, 100.0]))
        array([ 2.        ,  1.41421356, 10.        ])
        >>> T.grad(newton_sqrt)(4.0)  # d sqrt(a) / da = 1 / (2 sqrt(a))
        array(0.25)
    """
    leaves, tree = leaves_of(init_val)

    def run(*xs: Any) -> list[Any]:
        return _iterate("while_loop", cond_fun, body_fun, list(xs), tree)

    out: T = tree.unflatten(apply(while_loop_p, run, leaves))
    return out


def fori_loop(
    lower: Any,
    upper: Any,
    body_fun: Callable[[Any, T], T],
    init_val: T,
    *,
    unroll: int | bool | None = None,
) -> T:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)`` (``jax.lax.fori_loop``).

    ``i`` is a 0-d integer array. Bounds that a ``vmap`` batches make a ``while_loop`` per
    example. ``unroll`` is accepted for JAX's signature; eager execution has nothing to
    unroll.

    Example:
        >>> import transforms as T
        >>> from transforms import lax
        >>> power = lambda x: lax.fori_loop(0, 3, lambda i, y: y * x, 1.0)  # x ** 3
        >>> T.grad(power)(2.0)
        array(12.)
    """
    if unroll is not None and not isinstance(unroll, bool) and unroll < 1:
        raise ValueError(f"fori_loop: unroll must be a positive integer or a bool, got {unroll}")
    dtype = np.result_type(dtype_of(lower), dtype_of(upper))
    if not np.issubdtype(dtype, np.integer):
        raise TypeError(f"fori_loop: the bounds must be integers, got {dtype}")
    leaves, tree = leaves_of(init_val)
    counted, counted_tree = leaves_of((tnp.asarray(lower, dtype=dtype), init_val))

    def run(lo: Any, hi: Any, *xs: Any) -> list[Any]:
        if batched(lo) or batched(hi):
            return _iterate(
                "fori_loop",
                lambda c: c[0] < hi,
                lambda c: (c[0] + 1, body_fun(c[0], c[1])),
                [lo, *xs],
                counted_tree,
            )[1:]
        carry = list(xs)
        for i in range(int(concrete(lo)), int(concrete(hi))):
            out = body_fun(np.asarray(i, dtype=dtype), tree.unflatten(carry))
            carry = carry_like("fori_loop: body_fun's output", out, carry, tree)
        return carry

    out: T = tree.unflatten(apply(fori_loop_p, run, [counted[0], tnp.asarray(upper), *leaves]))
    return out
