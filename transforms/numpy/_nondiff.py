"""Functions that carry no derivative: logical tests, arg-reductions, searches, queries.

Each array-valued one is a ``nondifferentiable`` primitive: under ``jvp`` and ``vjp`` it is
evaluated on the primal values and returns a plain array (a constant to the outer
computation), and under ``vmap`` its batching rule (beside it) evaluates it per example.
Elementwise ones batch with ``elementwise_rule``; the arg-reductions move the batch axis to
the front and shift ``axis``. ``argwhere`` and ``nonzero`` have data-dependent shapes, so
``vmap`` refuses them with an error that says so. Functions that return Python values
(``shape``, ``allclose``) read shapes and dtypes, or concrete values; under ``vmap`` the
value-reading ones refuse, since one Python value cannot vary per example.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from transforms.batching import defbatch
from transforms.core import Array, ArrayLike, Primitive, Tracer, arrays
from transforms.core.arrays import reduce

from . import _arithmetic, _shape
from ._batching import axis_size, materialized, reduction_rule, to_front
from ._define import (
    is_complex,
    ndim_of,
    nondifferentiable,
    normalize_axes,
    reject_out,
    shape_of,
)
from ._kit import elementwise_nondifferentiable
from ._shape import operand as _operand

__all__ = [
    "lexsort",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "invert",
    "bitwise_not",
    "isnan",
    "isinf",
    "isfinite",
    "iscomplex",
    "isreal",
    "isclose",
    "floor_divide",
    "argmax",
    "argmin",
    "argsort",
    "argwhere",
    "nonzero",
    "flatnonzero",
    "searchsorted",
    "count_nonzero",
    "all",
    "any",
    "allclose",
    "array_equal",
    "iscomplexobj",
    "isrealobj",
    "shape",
    "ndim",
    "size",
]


# ---- elementwise ----------------------------------------------------------------------------
def _elementwise(name: str, impl: Callable[..., Any]) -> tuple[Primitive, Callable[..., Array]]:
    return elementwise_nondifferentiable(name, impl, doc=f"``numpy.{name}`` (no derivative).")


logical_and_p, logical_and = _elementwise("logical_and", np.logical_and)
logical_or_p, logical_or = _elementwise("logical_or", np.logical_or)
logical_xor_p, logical_xor = _elementwise("logical_xor", np.logical_xor)
logical_not_p, logical_not = _elementwise("logical_not", np.logical_not)
bitwise_and_p, bitwise_and = _elementwise("bitwise_and", np.bitwise_and)
bitwise_or_p, bitwise_or = _elementwise("bitwise_or", np.bitwise_or)
bitwise_xor_p, bitwise_xor = _elementwise("bitwise_xor", np.bitwise_xor)
invert_p, invert = _elementwise("invert", np.invert)
bitwise_not = invert
isnan_p, isnan = _elementwise("isnan", np.isnan)
isinf_p, isinf = _elementwise("isinf", np.isinf)
isfinite_p, isfinite = _elementwise("isfinite", np.isfinite)
iscomplex_p, iscomplex = _elementwise("iscomplex", np.iscomplex)
isreal_p, isreal = _elementwise("isreal", np.isreal)
# floor_divide is piecewise constant: zero derivative almost everywhere, none at the jumps
floor_divide_p, floor_divide = _elementwise("floor_divide", np.floor_divide)

isclose_p, _ = elementwise_nondifferentiable(
    "isclose",
    lambda a, b, rtol, atol, equal_nan: np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan),
)


def isclose(
    a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Array:
    """``numpy.isclose`` (no derivative)."""
    return isclose_p.bind(_operand(a), _operand(b), rtol=rtol, atol=atol, equal_nan=equal_nan)


# ---- arg-reductions and sorts along one axis (``None``: the flattened array) ---------------
def _along_axis_rule(primitive: Primitive) -> Any:
    """Batch axis in front; ``axis`` shifted past it, or each example flattened for ``None``."""

    def rule(
        values: Sequence[Any], dims: Sequence[int | None], *, axis: int | None, **params: Any
    ) -> tuple[Any, int]:
        x = to_front(values[0], dims[0])
        if axis is not None:
            return primitive.bind(x, axis=axis + 1, **params), 0
        example = shape_of(x)[1:]
        flat = _shape.reshape(x, (shape_of(x)[0], -1))
        keepdims = params.get("keepdims", False)
        if keepdims:
            params = {**params, "keepdims": False}
        out = primitive.bind(flat, axis=1, **params)
        if keepdims:  # argmax(axis=None, keepdims=True): every example axis kept with size 1
            out = _shape.reshape(out, (shape_of(x)[0],) + (1,) * len(example))
        return out, 0

    return rule


def _arg_reduction(name: str, impl: Any) -> Primitive:
    primitive = nondifferentiable(
        name, lambda x, axis, keepdims: impl(x, axis=axis, keepdims=keepdims)
    )
    defbatch(primitive, _along_axis_rule(primitive))
    return primitive


argmax_p = _arg_reduction("argmax", np.argmax)
argmin_p = _arg_reduction("argmin", np.argmin)


def _one_axis(axis: int | None, ndim: int) -> int | None:
    return None if axis is None else normalize_axes(axis, ndim)[0]


def argmax(
    a: ArrayLike, axis: int | None = None, out: None = None, *, keepdims: bool = False
) -> Array:
    """``numpy.argmax`` (no derivative)."""
    reject_out("argmax", out)
    a = _operand(a)
    return argmax_p.bind(a, axis=_one_axis(axis, ndim_of(a)), keepdims=keepdims)


def argmin(
    a: ArrayLike, axis: int | None = None, out: None = None, *, keepdims: bool = False
) -> Array:
    """``numpy.argmin`` (no derivative)."""
    reject_out("argmin", out)
    a = _operand(a)
    return argmin_p.bind(a, axis=_one_axis(axis, ndim_of(a)), keepdims=keepdims)


argsort_p = nondifferentiable(
    "argsort", lambda x, axis, kind, stable: np.argsort(x, axis=axis, kind=kind, stable=stable)
)
defbatch(argsort_p, _along_axis_rule(argsort_p))


def argsort(
    a: ArrayLike,
    axis: int | None = -1,
    kind: str | None = None,
    order: None = None,
    *,
    stable: bool | None = None,
) -> Array:
    """``numpy.argsort`` (no derivative; ``order`` for structured arrays is not supported)."""
    if order is not None:
        raise TypeError("argsort: order= (structured arrays) is not supported")
    a = _operand(a)
    return argsort_p.bind(a, axis=_one_axis(axis, ndim_of(a)), kind=kind, stable=stable)


def _lexsort_impl(*keys: Any, axis: int) -> Any:
    return np.lexsort(keys, axis=axis)


lexsort_p = nondifferentiable("lexsort", _lexsort_impl)


def _lexsort_batch(
    values: Sequence[Any], dims: Sequence[int | None], *, axis: int
) -> tuple[Any, int]:
    # every key with the batch axis in front; ``axis`` counts from the end, so it still
    # names the same per-example axis
    return lexsort_p.bind(*materialized(values, dims), axis=axis), 0


defbatch(lexsort_p, _lexsort_batch)


def lexsort(keys: Any, axis: int = -1) -> Array:
    """``numpy.lexsort`` (no derivative): the indices that sort by the last key, then the
    one before it, and so on. ``keys`` is a sequence of arrays of one shape or a 2-d+ array
    whose first axis enumerates them."""
    keys = [_operand(k) for k in (keys if isinstance(keys, (list, tuple)) else _rows(keys))]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    ndim = ndim_of(keys[0])
    if ndim == 0:
        return np.asarray(np.lexsort([np.asarray(k) for k in keys], axis=axis))
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return lexsort_p.bind(*keys, axis=axis % ndim - ndim)


def _rows(keys: Any) -> list[Any]:
    """The keys of an array argument: its rows (a 1-d array: its elements, as in NumPy)."""
    keys = _operand(keys)
    if ndim_of(keys) == 0:
        return [keys]
    return [keys[i] for i in range(shape_of(keys)[0])]


# ---- data-dependent shapes: not batchable -----------------------------------------------------
def _data_dependent(name: str) -> Any:
    def rule(values: Sequence[Any], dims: Sequence[int | None], **params: Any) -> NoReturn:
        raise TypeError(
            f"vmap: {name}'s result has a data-dependent shape (the number of non-zero "
            "elements differs from example to example), so it cannot be batched. Use a mask "
            "with tnp.where instead, or call it outside vmap."
        )

    return rule


argwhere_p = nondifferentiable("argwhere", np.argwhere)
defbatch(argwhere_p, _data_dependent("argwhere"))
nonzero_p = Primitive(
    "nonzero", lambda x: tuple(np.nonzero(x)), differentiable=False, multiple_results=True
)
defbatch(nonzero_p, _data_dependent("nonzero"))


def argwhere(a: ArrayLike) -> Array:
    """``numpy.argwhere`` (no derivative; not batchable by ``vmap``: data-dependent shape)."""
    return argwhere_p.bind(_operand(a))


def nonzero(a: ArrayLike) -> tuple[Array, ...]:
    """``numpy.nonzero`` (no derivative; not batchable by ``vmap``: data-dependent shape)."""
    a = _operand(a)
    if ndim_of(a) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d first.")
    return tuple(nonzero_p.bind(a))


def flatnonzero(a: ArrayLike) -> Array:
    """``numpy.flatnonzero`` (no derivative; not batchable by ``vmap``)."""
    return nonzero(_shape.ravel(_operand(a)))[0]


# ---- searchsorted: batched as one search over keys that order (example, value) pairs ------
def _searchsorted_rows(a: Any, v: Any, side: str) -> Any:
    """``searchsorted(a[i], v[i])`` for every row ``i`` of ``a`` (``(B, n)``) and ``v``
    (``(B, ...)``), in one vectorised search.

    Values become ranks in their joint order (``unique``'s inverse; NaNs rank last, as in
    NumPy's sort); a key ``row * (ranks + 1) + rank`` orders rows first, so one sort and one
    ``searchsorted`` of the keys answer every row at once. Each row of ``a`` is searched as
    its sorted self (what a valid ``sorter`` describes).

    Another library's arrays (Dask has no ``unique`` of known size, no ``sort``) count, per
    value, the elements of its row before it in NumPy's sort order (NaN last): lazy, and the
    same ranks.
    """
    if arrays.is_foreign(a) or arrays.is_foreign(v):
        row = np.reshape(a, (a.shape[0],) + (1,) * (np.ndim(v) - 1) + (a.shape[1],))
        value = np.expand_dims(v, -1)
        if side == "right":
            before = (row <= value) | np.isnan(value)
        else:
            before = (row < value) | (np.isnan(value) & ~np.isnan(row))
        return np.sum(before, axis=-1).astype(np.intp)
    a, v = np.asarray(a), np.asarray(v)
    rows, n = a.shape
    if rows == 0 or v.size == 0:
        return np.zeros(v.shape, dtype=np.intp)
    ranks = np.unique(np.concatenate([a.ravel(), v.ravel()]), return_inverse=True)[1]
    span = int(ranks.max()) + 1
    row_a = np.repeat(np.arange(rows), n)
    row_v = np.repeat(np.arange(rows), v.size // rows)
    key_a = np.sort(row_a * span + ranks[: a.size])
    key_v = row_v * span + ranks[a.size :]
    found = np.searchsorted(key_a, key_v, side=side) - row_v * n  # type: ignore[call-overload]
    return found.reshape(v.shape).astype(np.intp)


searchsorted_rows_p = nondifferentiable("searchsorted_rows", _searchsorted_rows)


def _searchsorted_rows_batch(
    values: Sequence[Any], dims: Sequence[int | None], *, side: str
) -> tuple[Any, int]:
    """Nested ``vmap``: the two batch axes are merged into one of rows."""
    a, v = materialized(values, dims)
    outer, rows = shape_of(a)[:2]
    merged_a = _shape.reshape(a, (outer * rows, shape_of(a)[2]))
    merged_v = _shape.reshape(v, (outer * rows, *shape_of(v)[2:]))
    found = searchsorted_rows_p.bind(merged_a, merged_v, side=side)
    return _shape.reshape(found, shape_of(v)), 0


defbatch(searchsorted_rows_p, _searchsorted_rows_batch)


def _searchsorted_impl(a: Any, v: Any, *sorter: Any, side: str) -> Any:
    if type(a) is not np.ndarray or type(v) is not np.ndarray:  # (Dask's takes Dask's only)
        a, v = arrays.like(a, v), arrays.like(v, a)
        if arrays.is_foreign(v) and np.ndim(v) == 0:  # (and fails on a 0-d v)
            found = _searchsorted_impl(a, np.reshape(v, (1,)), *sorter, side=side)
            return np.reshape(found, ())
    return np.searchsorted(a, v, side=side, sorter=sorter[0] if sorter else None)  # type: ignore[call-overload]


searchsorted_p = nondifferentiable("searchsorted", _searchsorted_impl)


def _searchsorted_batch(
    values: Sequence[Any], dims: Sequence[int | None], *, side: str
) -> tuple[Any, int | None]:
    a, v = values[0], values[1]
    if dims[0] is None and (len(dims) < 3 or dims[2] is None):  # one `a` for all: plain search
        return searchsorted_p.bind(*values, side=side), dims[1]
    # a per-example `a`: the rows search sorts each row itself, which is what a sorter
    # (a sorting permutation of `a`) describes, so the sorter is not needed
    size = axis_size(values, dims)
    a = (
        to_front(a, dims[0])
        if dims[0] is not None
        else _shape.broadcast_to(a, (size, *shape_of(a)))
    )
    v = (
        to_front(v, dims[1])
        if dims[1] is not None
        else _shape.broadcast_to(v, (size, *shape_of(v)))
    )
    return searchsorted_rows_p.bind(a, v, side=side), 0


defbatch(searchsorted_p, _searchsorted_batch)


def searchsorted(
    a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None
) -> Array:
    """``numpy.searchsorted`` (no derivative). Under ``vmap`` with a batched ``a``, each
    example's ``a`` is searched as sorted (NumPy assumes it is, or that ``sorter`` sorts it).
    """
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    a, v = _operand(a), _operand(v)
    if ndim_of(a) != 1:
        raise ValueError("object too deep for desired array: searchsorted needs a 1-d `a`")
    operands = (a, v) if sorter is None else (a, v, _operand(sorter))
    return searchsorted_p.bind(*operands, side=side)


# ---- boolean and counting reductions ----------------------------------------------------------
count_nonzero_p = nondifferentiable(
    "count_nonzero",
    lambda x, axes, keepdims: (
        np.count_nonzero(x, axis=axes, keepdims=keepdims)
        if type(x) is np.ndarray or not arrays.is_foreign(x)
        else reduce(np.add, x != 0, axes, keepdims).astype(np.intp)  # (Dask's: no keepdims)
    ),
)
all_p = nondifferentiable("all", lambda x, axes, keepdims: np.all(x, axis=axes, keepdims=keepdims))
any_p = nondifferentiable("any", lambda x, axes, keepdims: np.any(x, axis=axes, keepdims=keepdims))
for _p in (count_nonzero_p, all_p, any_p):
    defbatch(_p, reduction_rule(_p))


def count_nonzero(
    a: ArrayLike, axis: int | Sequence[int] | None = None, *, keepdims: bool = False
) -> Any:
    """``numpy.count_nonzero`` (no derivative)."""
    a = _operand(a)
    return count_nonzero_p.bind(a, axes=normalize_axes(axis, ndim_of(a)), keepdims=keepdims)


def all(
    a: ArrayLike, axis: int | Sequence[int] | None = None, out: None = None, keepdims: bool = False
) -> Array:
    """``numpy.all`` (no derivative)."""
    reject_out("all", out)
    a = _operand(a)
    return all_p.bind(a, axes=normalize_axes(axis, ndim_of(a)), keepdims=keepdims)


def any(
    a: ArrayLike, axis: int | Sequence[int] | None = None, out: None = None, keepdims: bool = False
) -> Array:
    """``numpy.any`` (no derivative)."""
    reject_out("any", out)
    a = _operand(a)
    return any_p.bind(a, axes=normalize_axes(axis, ndim_of(a)), keepdims=keepdims)


# ---- Python-valued queries --------------------------------------------------------------------
def _python_bool(name: str, value: Any, instead: str) -> bool:
    """A Python bool from a (possibly traced) boolean scalar.

    Only a batched value can still be traced here (the primitives that made it carry no
    derivative), and one Python bool cannot vary per example: refuse, naming the fix.
    """
    if isinstance(value, Tracer):
        raise TypeError(
            f"vmap: {name} returns one Python bool, but its inputs vary per example; "
            f"use {instead}, which gives one result per example"
        )
    return bool(value)


def allclose(
    a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """``numpy.allclose``: a Python bool (a composite of ``isclose`` and ``all``); under
    ``vmap`` it refuses (use ``tnp.all(tnp.isclose(a, b), axis=...)``)."""
    close = all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    return _python_bool("allclose", close, "tnp.all(tnp.isclose(a, b))")


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> bool:
    """``numpy.array_equal``: a Python bool (a composite of ``equal`` and ``all``); under
    ``vmap`` it refuses (use ``tnp.all(a1 == a2)``)."""
    a1, a2 = _operand(a1), _operand(a2)
    if shape_of(a1) != shape_of(a2):
        return False
    same = _arithmetic.equal(a1, a2)
    if equal_nan:
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))
    return _python_bool("array_equal", all(same), "tnp.all(a1 == a2)")


def iscomplexobj(x: Any) -> bool:
    """``numpy.iscomplexobj``: whether the dtype is complex (works on traced values)."""
    return is_complex(_operand(x))


def isrealobj(x: Any) -> bool:
    """``numpy.isrealobj``: whether the dtype is not complex (works on traced values)."""
    return not iscomplexobj(x)


def shape(a: Any) -> tuple[int, ...]:
    """``numpy.shape``; for a value batched by ``vmap``, the shape of one example."""
    return shape_of(_operand(a))


def ndim(a: Any) -> int:
    """``numpy.ndim``; for a value batched by ``vmap``, that of one example."""
    return ndim_of(_operand(a))


def size(a: Any, axis: int | None = None) -> int:
    """``numpy.size``; for a value batched by ``vmap``, that of one example."""
    dims = shape_of(_operand(a))
    if axis is None:
        return int(np.prod(dims, dtype=np.intp))
    return dims[normalize_axes(axis, len(dims))[0]]
