"""Scans and differences: cumsum, cumprod (primitives); diff, gradient (composites).

``cumsum`` is linear: its JVP is ``cumsum`` of the tangent and its VJP the reversed
cumulative sum of the cotangent. ``cumprod``'s rules never divide by ``x`` (so they are exact
where elements are zero): with ``P = cumprod(x)`` and ``E`` the exclusive products
``[1, P_0, ..., P_{n-2}]``, the tangent obeys the linear recurrence
``dP_i = x_i dP_{i-1} + t_i E_i``, solved by a log-depth scan of multiplies and adds
(``_linear_recurrence``); the VJP runs the transposed recurrence backwards,
``g_i = ct_i + x_{i+1} g_{i+1}``, and returns ``g * E``. Both are written with this
package's differentiable operations, so they nest to any order. ``diff`` and ``gradient``
are slices, subtractions and divisions, with NumPy's formulas and operation order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms.batching import defbatch
from transforms.core import Array, ArrayLike, Primitive
from transforms.forward import defjvp
from transforms.reverse import defvjp
from transforms.sparsity import defsparsity, scan_rule

from . import _indexing, _shape
from ._batching import to_front
from ._define import dtype_of, ndim_of, normalize_axes, reject_out, shape_of
from ._shape import operand as _operand

__all__ = ["cumsum", "cumprod", "diff", "gradient"]


def _along(axis: int, ndim: int, part: slice) -> tuple[slice, ...]:
    """The index that applies ``part`` on ``axis`` and keeps every other axis whole."""
    return (slice(None),) * axis + (part,)


def _reverse(x: Any, axis: int) -> Any:
    return _indexing.getitem(x, _along(axis, ndim_of(x), slice(None, None, -1)))


def _scan_batch(primitive: Primitive) -> Callable[..., tuple[Any, int]]:
    """Batch axis in front, the scanned axis shifted past it."""

    def rule(values: Sequence[Any], dims: Sequence[int | None], *, axis: int) -> tuple[Any, int]:
        return primitive.bind(to_front(values[0], dims[0]), axis=axis + 1), 0

    return rule


def _prepared(
    name: str, a: ArrayLike, axis: int | None, dtype: Any, out: object
) -> tuple[Any, int]:
    """The operand (flattened for ``axis=None``, cast to ``dtype``) and its scan axis."""
    reject_out(name, out)
    a = _operand(a)
    if dtype is not None:
        a = _shape.astype(a, dtype)
    if axis is None:
        return _shape.ravel(a), 0
    return a, normalize_axes(axis, ndim_of(a))[0]


# ---- cumsum ------------------------------------------------------------------------------------
cumsum_p = Primitive("cumsum", lambda x, axis: np.cumsum(x, axis=axis))
defjvp(cumsum_p, lambda t, ans, x, axis: cumsum_p.bind(t, axis=axis))
defvjp(
    cumsum_p,
    lambda ans, x, axis: lambda ct: _reverse(cumsum_p.bind(_reverse(ct, axis), axis=axis), axis),
)
defbatch(cumsum_p, _scan_batch(cumsum_p))
defsparsity(cumsum_p, scan_rule(False))


def cumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Array:
    """Differentiable ``numpy.cumsum``."""
    x, ax = _prepared("cumsum", a, axis, dtype, out)
    return cumsum_p.bind(x, axis=ax)


# ---- cumprod -----------------------------------------------------------------------------------
def _shifted(x: Any, k: int, fill: float) -> Any:
    """``x`` moved ``k`` places along the last axis, the first ``k`` places set to ``fill``."""
    shape = shape_of(x)
    pad = np.full(shape[:-1] + (k,), fill, dtype=dtype_of(x))
    return _shape.concatenate([pad, _indexing.getitem(x, (Ellipsis, slice(None, -k)))], axis=-1)


def _linear_recurrence(a: Any, b: Any) -> Any:
    """``z`` with ``z_i = a_i z_{i-1} + b_i`` (``z_{-1} = 0``) along the last axis.

    A log-depth (Hillis-Steele) scan of the affine maps ``z -> a z + b``: after the step of
    stride ``k`` each pair composes the maps of ``2k`` consecutive elements. Multiplies and
    adds only, so it is exact where ``a`` has zeros and differentiable in ``a`` and ``b``.
    """
    n = shape_of(b)[-1]
    k = 1
    while k < n:
        b = a * _shifted(b, k, 0) + b
        if 2 * k < n:  # the last step needs no composed coefficients
            a = a * _shifted(a, k, 1)
        k *= 2
    return b


def _to_last(x: Any, axis: int) -> Any:
    return x if axis == ndim_of(x) - 1 else _shape.moveaxis(x, axis, -1)


def _from_last(x: Any, axis: int) -> Any:
    return x if axis == ndim_of(x) - 1 else _shape.moveaxis(x, -1, axis)


def _exclusive(ans: Any) -> Any:
    """``[1, P_0, ..., P_{n-2}]`` along the last axis, from the inclusive products ``P``."""
    return _shifted(ans, 1, 1) if shape_of(ans)[-1] else ans


def _cumprod_jvp(t: Any, ans: Any, x: Any, axis: int) -> Any:
    y, p = _to_last(x, axis), _to_last(ans, axis)
    return _from_last(_linear_recurrence(y, _to_last(t, axis) * _exclusive(p)), axis)


def _cumprod_vjp(ans: Any, x: Any, axis: int) -> Callable[[Any], Any]:
    y, p = _to_last(x, axis), _to_last(ans, axis)
    exclusive = _exclusive(p)
    n = shape_of(y)[-1]
    # g_i = ct_i + y_{i+1} g_{i+1}: reversed, the coefficient of step r is y_{n-r}
    if n:
        ones = np.ones(shape_of(y)[:-1] + (1,), dtype=dtype_of(y))
        after = _shape.concatenate([_indexing.getitem(y, (Ellipsis, slice(1, None))), ones], -1)
        coefficients = _reverse(after, ndim_of(y) - 1)

    def pullback(ct: Any) -> Any:
        if not n:
            return ct
        last = ndim_of(y) - 1
        g = _reverse(_linear_recurrence(coefficients, _reverse(_to_last(ct, axis), last)), last)
        return _from_last(g * exclusive, axis)

    return pullback


cumprod_p = Primitive("cumprod", lambda x, axis: np.cumprod(x, axis=axis))
defjvp(cumprod_p, _cumprod_jvp)
defvjp(cumprod_p, _cumprod_vjp)
defbatch(cumprod_p, _scan_batch(cumprod_p))
defsparsity(cumprod_p, scan_rule(True))


def cumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Array:
    """Differentiable ``numpy.cumprod``, exact where elements are zero (no division by
    ``a``); its rules are log-depth scans, ``O(n log n)`` along the axis."""
    x, ax = _prepared("cumprod", a, axis, dtype, out)
    return cumprod_p.bind(x, axis=ax)


# ---- diff --------------------------------------------------------------------------------------
class _NoValue:
    """Marks ``prepend``/``append`` as not given (``None`` is a value NumPy would use)."""

    def __repr__(self) -> str:
        return "<no value>"


_NO_VALUE: Any = _NoValue()


def _edge(value: Any, shape: tuple[int, ...], axis: int) -> Any:
    """``prepend``/``append`` as NumPy takes it: a scalar spans the other axes."""
    value = _operand(value)
    if ndim_of(value) == 0:
        return _shape.broadcast_to(value, shape[:axis] + (1,) + shape[axis + 1 :])
    return value


def diff(
    a: ArrayLike, n: int = 1, axis: int = -1, prepend: Any = _NO_VALUE, append: Any = _NO_VALUE
) -> Array:
    """Differentiable ``numpy.diff`` (a composite of slices and ``subtract``), in ``a`` and
    in ``prepend``/``append``."""
    x = _operand(a)
    if n == 0:
        return x  # type: ignore[no-any-return]
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    ndim = ndim_of(x)
    if ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axes(axis, ndim)[0]
    parts = []
    if prepend is not _NO_VALUE:
        parts.append(_edge(prepend, shape_of(x), axis))
    parts.append(x)
    if append is not _NO_VALUE:
        parts.append(_edge(append, shape_of(x), axis))
    if len(parts) > 1:
        x = _shape.concatenate(parts, axis=axis)
    later, earlier = _along(axis, ndim, slice(1, None)), _along(axis, ndim, slice(None, -1))
    for _ in range(n):
        x = _indexing.getitem(x, later) - _indexing.getitem(x, earlier)
    return x  # type: ignore[no-any-return]


# ---- gradient ----------------------------------------------------------------------------------
def _spacings(varargs: tuple[Any, ...], axes: tuple[int, ...]) -> list[Any]:
    """One spacing per axis: a scalar (uniform) or the coordinates along the axis."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and ndim_of(varargs[0]) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    return [_operand(v) for v in varargs]


def _gradient_uniform(f: Any, axis: int, h: Any, edge_order: int) -> Any:
    ndim = ndim_of(f)

    def at(part: slice) -> Any:
        return _indexing.getitem(f, _along(axis, ndim, part))

    interior = (at(slice(2, None)) - at(slice(None, -2))) / (2.0 * h)
    if edge_order == 1:
        first = (at(slice(1, 2)) - at(slice(0, 1))) / h
        last = (at(slice(-1, None)) - at(slice(-2, -1))) / h
    else:
        first = -1.5 / h * at(slice(0, 1)) + 2.0 / h * at(slice(1, 2)) - 0.5 / h * at(slice(2, 3))
        last = (
            0.5 / h * at(slice(-3, -2))
            - 2.0 / h * at(slice(-2, -1))
            + 1.5 / h * at(slice(-1, None))
        )
    return _shape.concatenate([first, interior, last], axis=axis)


def _gradient_coordinates(f: Any, axis: int, x: Any, edge_order: int) -> Any:
    """NumPy's second-order-accurate formulas for non-uniform coordinates ``x``."""
    ndim = ndim_of(f)

    def at(part: slice) -> Any:
        return _indexing.getitem(f, _along(axis, ndim, part))

    def along(c: Any) -> Any:  # a coefficient per position along `axis`
        return _shape.reshape(c, (-1,) + (1,) * (ndim - axis - 1))

    dx = _indexing.getitem(x, slice(1, None)) - _indexing.getitem(x, slice(None, -1))
    dx1, dx2 = _indexing.getitem(dx, slice(0, -1)), _indexing.getitem(dx, slice(1, None))
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    interior = (
        along(a) * at(slice(None, -2)) + along(b) * at(slice(1, -1)) + along(c) * at(slice(2, None))
    )
    d0, d_1 = dx[0], dx[-1]
    if edge_order == 1:
        first = (at(slice(1, 2)) - at(slice(0, 1))) / d0
        last = (at(slice(-1, None)) - at(slice(-2, -1))) / d_1
    else:
        d1, d_2 = dx[1], dx[-2]
        a0 = -(2.0 * d0 + d1) / (d0 * (d0 + d1))
        b0 = (d0 + d1) / (d0 * d1)
        c0 = -d0 / (d1 * (d0 + d1))
        first = a0 * at(slice(0, 1)) + b0 * at(slice(1, 2)) + c0 * at(slice(2, 3))
        a1 = d_1 / (d_2 * (d_1 + d_2))
        b1 = -(d_1 + d_2) / (d_2 * d_1)
        c1 = (2.0 * d_1 + d_2) / (d_1 * (d_2 + d_1))
        last = a1 * at(slice(-3, -2)) + b1 * at(slice(-2, -1)) + c1 * at(slice(-1, None))
    return _shape.concatenate([first, interior, last], axis=axis)


def _gradient_along(f: Any, axis: int, spacing: Any, edge_order: int) -> Any:
    """One axis of ``gradient``, in ``f``'s dtype (NumPy writes into an array of it)."""
    if ndim_of(spacing) == 0:
        out = _gradient_uniform(f, axis, spacing, edge_order)
    else:
        if ndim_of(spacing) != 1:
            raise ValueError("distances must be either scalars or 1d")
        if shape_of(spacing)[0] != shape_of(f)[axis]:
            raise ValueError(
                "when 1d, distances must match the length of the corresponding dimension"
            )
        if isinstance(spacing, np.ndarray) and np.issubdtype(spacing.dtype, np.integer):
            spacing = spacing.astype(np.float64)  # as NumPy: no modular arithmetic in diff
        steps = np.diff(spacing) if isinstance(spacing, np.ndarray) else None
        if steps is not None and np.all(steps == steps[0]):  # evenly spaced: one step
            out = _gradient_uniform(f, axis, steps[0], edge_order)
        else:
            out = _gradient_coordinates(f, axis, spacing, edge_order)
    return out if dtype_of(out) == dtype_of(f) else _shape.astype(out, dtype_of(f))


def gradient(
    f: ArrayLike, *varargs: Any, axis: int | Sequence[int] | None = None, edge_order: int = 1
) -> Any:
    """Differentiable ``numpy.gradient`` (a composite of slices and arithmetic), in ``f`` and
    in the spacings.

    Spacing as in NumPy: none (unit), one scalar for every axis, or one per axis, each a
    scalar or the coordinates along that axis; ``edge_order`` 1 or 2. Several axes give a
    tuple of arrays (NumPy 2), one axis a single array.
    """
    f = _operand(f)
    ndim = ndim_of(f)
    axes = tuple(range(ndim)) if axis is None else normalize_axes(axis, ndim)
    if axis is not None and not isinstance(axis, (int, np.integer)):
        axes = tuple(int(ax) % ndim for ax in axis)  # in the order given, as NumPy returns
    if edge_order > 2 or edge_order < 1:
        raise ValueError("'edge_order' greater than 2 not supported")
    if not np.issubdtype(dtype_of(f), np.inexact):
        f = _shape.astype(f, np.float64)
    outs = []
    for ax, spacing in zip(axes, _spacings(varargs, axes), strict=True):
        if shape_of(f)[ax] < edge_order + 1:
            raise ValueError(
                "Shape of array too small to calculate a numerical gradient, "
                "at least (edge_order + 1) elements are required."
            )
        outs.append(_gradient_along(f, ax, spacing, edge_order))
    return outs[0] if len(outs) == 1 else tuple(outs)
