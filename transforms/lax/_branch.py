"""Branching: ``cond`` and ``switch`` (one primitive, ``switch``), ``select`` and ``select_n``.

A predicate every example shares runs its branch alone, as a Python ``if`` would. Under
``vmap``, a predicate that differs between examples runs each branch some example takes on
safe inputs and selects per example (``_select``): nothing the untaken branch computes
reaches a value or a derivative, NaNs included.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import transforms.numpy as tnp
from transforms.core.tree_util import PyTreeDef
from transforms.numpy._define import dtype_of, shape_of

from ._construct import apply, construct
from ._select import Decision, leaves_of, run_branch, safe_inputs
from ._select import select as select_leaves
from ._signature import same_types

__all__ = ["cond", "select", "select_n", "switch"]

switch_p = construct("switch")

_NO_OPERAND = object()


def _branches(
    name: str, index: Any, branches: Sequence[Callable[..., Any]], operands: tuple[Any, ...]
) -> Any:
    leaves, tree = leaves_of(operands)
    out_tree: list[PyTreeDef[Any]] = []

    def run(i: Any, *xs: Any) -> list[Any]:
        decision = Decision(i, f"{name}'s index")
        if decision.uniform is not None:
            out, treedef = leaves_of(branches[decision.uniform](*tree.unflatten(xs)))
            out_tree[:] = [treedef]
            return out
        results: list[tuple[int, list[Any], PyTreeDef[Any]]] = []
        for b in sorted({int(v) for v in decision.values.flat}):
            safe = safe_inputs(decision, b, xs)
            out, treedef = leaves_of(run_branch(decision, branches[b], *tree.unflatten(safe)))
            if results:
                same_types(
                    f"{name}: branch {b}'s output",
                    out,
                    treedef,
                    f"branch {results[0][0]}'s",
                    results[0][1],
                    results[0][2],
                )
            results.append((b, out, treedef))
        acc = results[0][1]
        for b, out, _ in results[1:]:
            acc = select_leaves(decision.mask(b), out, acc)
        out_tree[:] = [results[0][2]]
        return acc

    out = apply(switch_p, run, [index, *leaves])
    return out_tree[0].unflatten(out)


def switch(
    index: Any, branches: Sequence[Callable[..., Any]], *operands: Any, operand: Any = _NO_OPERAND
) -> Any:
    """``branches[index](*operands)``, ``index`` clamped to the branches (``jax.lax.switch``).

    Under ``vmap`` a batched ``index`` runs each branch that some example takes and selects
    per example; no NaN of a branch an example does not take reaches its value or its
    derivatives (values a branch closes over are the exception: pass per-example values as
    ``operands``).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> from transforms import lax
        >>> branches = [lambda x: -x, tnp.sin, tnp.exp]
        >>> lax.switch(5, branches, 0.0)  # clamped: the last branch
        array(1.)
        >>> T.vmap(lambda i, x: lax.switch(i, branches, x))(np.array([0, 1]), np.array([2.0, 0.0]))
        array([-2.,  0.])
    """
    if operand is not _NO_OPERAND:
        operands = (*operands, operand)
    if not branches:
        raise ValueError("switch: at least one branch is required")
    if np.issubdtype(dtype_of(index), np.inexact):
        raise TypeError(f"switch: the index must be an integer, got {dtype_of(index)}")
    clamped = tnp.clip(index, 0, len(branches) - 1)
    return _branches("switch", clamped, list(branches), operands)


def cond(
    pred: Any,
    true_fun: Callable[..., Any],
    false_fun: Callable[..., Any],
    *operands: Any,
    operand: Any = _NO_OPERAND,
) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)`` (``jax.lax.cond``).

    Only the branch taken runs; under ``vmap`` with a per-example ``pred``, both run (each
    on safe inputs) and each example gets its own branch's value and derivatives.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> from transforms import lax
        >>> safe_sqrt = lambda x: lax.cond(x > 0, tnp.sqrt, lambda x: 0.0 * x, x)
        >>> T.vmap(T.grad(safe_sqrt))(np.array([4.0, -1.0]))  # no NaN from sqrt(-1)
        array([0.25, 0.  ])
    """
    if operand is not _NO_OPERAND:
        operands = (*operands, operand)
    return _branches("cond", tnp.not_equal(pred, 0), [false_fun, true_fun], operands)


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise (``jax.lax.select_n``): a boolean ``which`` picks between
    two cases, an integer one among all; ``which`` is a scalar or has the cases' shape."""
    if not cases:
        raise ValueError("select_n: at least one case is required")
    shapes = {shape_of(c) for c in cases}
    if len(shapes) != 1:
        raise TypeError(f"select_n: the cases must have one shape, got {sorted(shapes)}")
    if shape_of(which) not in {(), *shapes}:
        raise TypeError(
            f"select_n: which must be a scalar or have the cases' shape {shapes.pop()}, got "
            f"{shape_of(which)}"
        )
    if dtype_of(which) == np.bool_:
        if len(cases) != 2:
            raise TypeError(f"select_n: a boolean which selects between 2 cases, got {len(cases)}")
        return tnp.where(which, cases[1], cases[0])
    out = cases[0]
    for i, case in enumerate(cases[1:], start=1):
        out = tnp.where(tnp.equal(which, i), case, out)
    return out


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where the boolean ``pred`` holds, else ``on_false`` (``jax.lax.select``)."""
    if dtype_of(pred) != np.bool_:
        raise TypeError(f"select: pred must be boolean, got {dtype_of(pred)}")
    return select_n(pred, on_false, on_true)
