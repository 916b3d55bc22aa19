"""``check_grads``: compare a function's derivatives with finite differences, to any order.

Forward mode is checked against a central difference along a random direction; reverse mode
by duality with forward mode (``<ct, J t> == <J^T ct, t>``), or with the finite difference
when forward mode is not among ``modes``. Order ``k`` repeats the checks on the derivative
functions themselves (``t -> jvp(f)``, ``ct -> vjp(f)``), so every nesting is exercised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias

import numpy as np

from transforms.core.tree_util import tree_flatten, tree_map

from ._core_transforms import jvp_flat, vjp_flat

__all__ = ["Mode", "check_grads"]

#: A differentiation mode to check: forward (``jvp``) or reverse (``vjp``).
Mode: TypeAlias = Literal["fwd", "rev"]

_TOLERANCE = {np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5}


def _random_like(tree: Any, rng: np.random.Generator) -> Any:
    def leaf(x: Any) -> Any:
        x = np.asarray(x)
        values = rng.standard_normal(x.shape)
        if np.iscomplexobj(x):
            values = values + 1j * rng.standard_normal(x.shape)
        return values.astype(x.dtype)

    return tree_map(leaf, tree)


def _inner(a: Any, b: Any) -> float:
    """The pairing under which a VJP is the transpose of a JVP: ``Re(sum(a * b))``.

    Bilinear, not Hermitian: transforms follows JAX's complex convention (see README).
    """
    pairs = zip(tree_flatten(a)[0], tree_flatten(b)[0], strict=True)
    return float(sum(np.real(np.sum(np.asarray(x) * np.asarray(y))) for x, y in pairs))


def _assert_close(what: str, actual: Any, expected: Any, atol: float, rtol: float) -> None:
    for a, e in zip(tree_flatten(actual)[0], tree_flatten(expected)[0], strict=True):
        a, e = np.asarray(a), np.asarray(e)
        if a.shape != e.shape or not np.allclose(a, e, atol=atol, rtol=rtol):
            err = np.max(np.abs(a - e)) if a.shape == e.shape else "shape"
            raise AssertionError(
                f"check_grads: {what} disagrees (max abs error {err}, atol={atol}, "
                f"rtol={rtol}):\n actual   {a}\n expected {e}"
            )


def _finite_difference(f: Callable[..., Any], args: tuple[Any, ...], t: Any, eps: float) -> Any:
    def shifted(sign: float) -> Any:
        return f(*tree_map(lambda x, d: np.asarray(np.asarray(x) + sign * eps * d), args, t))

    plus, minus = shifted(1.0), shifted(-1.0)
    return tree_map(lambda p, m: (np.asarray(p) - np.asarray(m)) / (2 * eps), plus, minus)


def check_grads(
    fun: Callable[..., object],
    args: Sequence[object],
    order: int = 2,
    modes: Mode | Sequence[Mode] = ("fwd", "rev"),
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
    seed: int = 0,
) -> None:
    """Raise ``AssertionError`` unless ``fun``'s derivatives up to ``order`` are right.

    Args:
        fun: function of the positional ``args`` (arrays or pytrees of them).
        args: the point to check at.
        order: highest derivative order to check.
        modes: ``"fwd"``, ``"rev"``, or a sequence of them.
        atol: absolute tolerance (default by dtype: 1e-5 for float64, 2e-3 for float32).
        rtol: relative tolerance (the same defaults).
        eps: finite-difference step (default 1e-4 for float64, 1e-2 for float32).
        seed: seed of the random directions.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> T.check_grads(tnp.sin, (np.array([0.5, 1.0]),), order=3)  # passes: returns None
        >>> T.check_grads(T.stop_gradient, (np.array([0.5]),), order=1)  # its JVP is 0, not 1
        Traceback (most recent call last):
            ...
        AssertionError: check_grads: jvp vs finite differences disagrees ...
    """
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads: unknown mode(s) {sorted(unknown)}; use 'fwd' and/or 'rev'")
    args = tuple(args)
    leaves = tree_flatten(args)[0]
    lowest = min((np.asarray(x).dtype for x in leaves), key=lambda d: d.itemsize, default=None)
    single = lowest is not None and lowest.itemsize <= 4
    tol = _TOLERANCE[np.dtype(np.float32 if single else np.float64)]
    atol = tol if atol is None else atol
    rtol = tol if rtol is None else rtol
    eps = (1e-2 if single else 1e-4) if eps is None else eps
    rng = np.random.default_rng(seed)

    def check(f: Callable[..., Any], args: tuple[Any, ...], order: int) -> None:
        t = _random_like(args, rng)
        out, t_out, _ = jvp_flat(f, args, t, False, "check_grads")
        numeric = _finite_difference(f, args, t, eps)
        if "fwd" in modes:
            _assert_close("jvp vs finite differences", t_out, numeric, atol, rtol)
        if "rev" in modes:
            ct = _random_like(out, rng)
            _, pullback, _ = vjp_flat(f, args, False, "check_grads")
            ct_in = pullback(ct)
            reference = t_out if "fwd" in modes else numeric
            _assert_close(
                "vjp vs jvp (<ct, J t> == <J^T ct, t>)",
                _inner(ct_in, t),
                _inner(ct, reference),
                atol,
                rtol,
            )
        if order > 1:
            if "fwd" in modes:
                check(lambda *a: jvp_flat(f, a, t, False, "check_grads")[1], args, order - 1)
            if "rev" in modes:
                ct_fixed = _random_like(out, rng)
                check(lambda *a: vjp_flat(f, a, False, "check_grads")[1](ct_fixed), args, order - 1)

    check(fun, args, order)
