"""Shape, indexing and construction: NumPy's array-manipulation routines.

Almost everything here is a composite of the linear primitives of ``_shape`` and
``_indexing`` (reshape, transpose, broadcast_to, concatenate, ``x[idx]`` and its transpose
``untake``) and of ``where``, so derivatives, batching and every nesting come from their
rules. Three things are primitives of their own:

- ``split`` (one multiple-results primitive for all the pieces): its VJP concatenates the
  pieces' cotangents, where a composite of slices would add one full-size cotangent per
  piece (quadratic for ``split(x, len(x))``);
- the permutations behind ``sort`` and ``partition`` (``argsort``, ``argpartition``): no
  derivative, computed on primal values, batched by ``vmap`` like any value. The sorted
  array is ``take_along_axis(a, perm)``, so its derivative is the same permutation;
- the index normalisation of ``take(..., mode="wrap"|"clip")`` (no derivative).

Index arrays and masks carry no derivative. Under ``vmap`` an index array may differ
between examples (``vmap`` over the indices of ``take``/``take_along_axis``, or the
permutation of ``sort``): ``x[idx]`` then gathers with a batched index (see ``_indexing``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms.batching import defbatch
from transforms.core import Array, ArrayLike, Primitive, Tracer, arrays, concrete, native
from transforms.forward import defjvp
from transforms.reverse import defvjp
from transforms.sparsity import defsparsity, index_rule

from . import _batching
from ._define import checkable, dtype_of, ndim_of, nondifferentiable, normalize_axes, shape_of
from ._indexing import at, diagonal, diagonal_index, getitem, untake
from ._products import tensordot
from ._shape import (
    asarray,
    astype,
    broadcast_to,
    concatenate,
    expand_dims,
    moveaxis,
    ravel,
    reshape,
    transpose,
    where,
)

__all__ = [
    "swapaxes",
    "rollaxis",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "hstack",
    "vstack",
    "dstack",
    "column_stack",
    "append",
    "split",
    "array_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "tile",
    "repeat",
    "pad",
    "roll",
    "rot90",
    "flip",
    "fliplr",
    "flipud",
    "diag",
    "diagflat",
    "tril",
    "triu",
    "sort",
    "partition",
    "take",
    "take_along_axis",
    "put_along_axis",
    "select",
    "full",
    "full_like",
    "linspace",
]


def _operand(x: Any) -> Array:
    """Lists and tuples (possibly holding tracers) become arrays; arrays and tracers pass."""
    if isinstance(x, Tracer) or isinstance(x, np.ndarray):
        return x
    return asarray(x)


def _traced(*xs: Any) -> bool:
    """Whether any of ``xs`` (or an element of a list/tuple among them) is traced, or is
    another library's array: either takes the composite path (NumPy's own function would
    drop the derivative, or compute the Dask array)."""
    for x in xs:
        if isinstance(x, Tracer) or arrays.is_foreign(x):
            return True
        if isinstance(x, (list, tuple)) and _traced(*x):
            return True
    return False


def _axis(axis: int, ndim: int) -> int:
    return normalize_axes(axis, ndim)[0]


def _along(axis: int, entry: Any) -> tuple[Any, ...]:
    """The index that applies ``entry`` to ``axis`` and keeps every other axis."""
    return (slice(None),) * axis + (entry,)


# ---- axes: swapaxes, rollaxis (transposes) ---------------------------------------------------
def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    """Differentiable ``numpy.swapaxes``: a composite of ``transpose``."""
    a = _operand(a)
    ndim = ndim_of(a)
    i, j = _axis(axis1, ndim), _axis(axis2, ndim)
    perm = list(range(ndim))
    perm[i], perm[j] = j, i
    return transpose(a, perm)


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    """Differentiable ``numpy.rollaxis``: a composite of ``transpose``."""
    x = _operand(a)
    n = ndim_of(x)
    axis = _axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in"
        )
    if axis < start:
        start -= 1
    if axis == start:
        return x
    perm = [i for i in range(n) if i != axis]
    perm.insert(start, axis)
    return transpose(x, perm)


# ---- atleast_nd (reshapes) ----------------------------------------------------------------
def _atleast(arys: tuple[Any, ...], new_shape: Callable[[tuple[int, ...]], tuple[int, ...]]) -> Any:
    out = []
    for x in arys:
        x = _operand(x)
        out.append(reshape(x, new_shape(shape_of(x))))
    return out[0] if len(out) == 1 else tuple(out)  # NumPy 2: a tuple for 0 or 2+ arrays


def atleast_1d(*arys: ArrayLike) -> Any:
    """Differentiable ``numpy.atleast_1d``: a composite of ``reshape`` (a tuple for several)."""
    return _atleast(arys, lambda s: s if len(s) >= 1 else (1,))


def atleast_2d(*arys: ArrayLike) -> Any:
    """Differentiable ``numpy.atleast_2d``: a composite of ``reshape`` (a tuple for several)."""
    return _atleast(arys, lambda s: s if len(s) >= 2 else (1,) * (2 - len(s)) + s)


def _shape_3d(s: tuple[int, ...]) -> tuple[int, ...]:
    if len(s) == 0:
        return (1, 1, 1)
    if len(s) == 1:
        return (1, s[0], 1)
    if len(s) == 2:
        return (*s, 1)
    return s


def atleast_3d(*arys: ArrayLike) -> Any:
    """Differentiable ``numpy.atleast_3d``: a composite of ``reshape`` (a tuple for several)."""
    return _atleast(arys, _shape_3d)


# ---- stacking (concatenate) ----------------------------------------------------------------
def _as_list(arrays: Any) -> list[Any]:
    out = list(arrays) if isinstance(arrays, tuple) else [arrays]
    if not out:
        raise ValueError("need at least one array to concatenate")
    return out


def _cast_all(arrays: list[Any], dtype: Any, casting: str) -> list[Any]:
    if dtype is None:
        return arrays
    dtype = np.dtype(dtype)
    for x in arrays:
        if not np.can_cast(dtype_of(x), dtype, casting=casting):  # type: ignore[arg-type]
            raise TypeError(
                f"Cannot cast array data from {dtype_of(x)!r} to {dtype!r} according to the "
                f"rule {casting!r}"
            )
    return [astype(x, dtype) for x in arrays]


def _sequence(tup: Any, name: str) -> list[Any]:
    """The arrays to stack: any sequence NumPy accepts (a list, a tuple, an array or traced
    value iterated over its first axis) and, as autograd, a generator or other iterable."""
    try:
        return list(native(tup))  # a DataFrame: its rows, as NumPy, not its column labels
    except TypeError:  # a scalar, a 0-d array
        raise TypeError(
            f"{name}: arrays to stack must be passed as a sequence type (a list)"
        ) from None


def hstack(tup: Sequence[ArrayLike], *, dtype: Any = None, casting: str = "same_kind") -> Array:
    """Differentiable ``numpy.hstack``: a composite of ``atleast_1d`` and ``concatenate``."""
    arrays = _as_list(atleast_1d(*_sequence(tup, "hstack")))
    arrays = _cast_all(arrays, dtype, casting)
    return concatenate(arrays, axis=0 if ndim_of(arrays[0]) == 1 else 1)


def vstack(tup: Sequence[ArrayLike], *, dtype: Any = None, casting: str = "same_kind") -> Array:
    """Differentiable ``numpy.vstack``: a composite of ``atleast_2d`` and ``concatenate``."""
    arrays = _as_list(atleast_2d(*_sequence(tup, "vstack")))
    return concatenate(_cast_all(arrays, dtype, casting), axis=0)


def dstack(tup: Sequence[ArrayLike]) -> Array:
    """Differentiable ``numpy.dstack``: a composite of ``atleast_3d`` and ``concatenate``."""
    return concatenate(_as_list(atleast_3d(*_sequence(tup, "dstack"))), axis=2)


def column_stack(tup: Sequence[ArrayLike]) -> Array:
    """Differentiable ``numpy.column_stack``: a composite of ``reshape`` (0-d and 1-d inputs
    become columns) and ``concatenate``."""
    arrays = []
    for x in _sequence(tup, "column_stack"):
        x = _operand(x)
        if ndim_of(x) < 2:
            x = reshape(x, (-1, 1)) if ndim_of(x) == 1 else reshape(x, (1, 1))
        arrays.append(x)
    return concatenate(arrays, axis=1)


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Array:
    """Differentiable ``numpy.append``: a composite of ``concatenate`` (and ``ravel`` for
    ``axis=None``)."""
    arr, values = _operand(arr), _operand(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], axis=0)
    return concatenate([arr, values], axis=axis)


# ---- split: one multiple-results primitive -------------------------------------------------
def _split_impl(x: Any, bounds: tuple[tuple[int, int], ...], axis: int) -> tuple[Any, ...]:
    x = arrays.asarray(x)
    return tuple(x[_along(axis, slice(start, stop))] for start, stop in bounds)


split_p = Primitive("split", _split_impl, multiple_results=True)
defsparsity(split_p, index_rule(split_p))
defjvp(split_p, lambda t, ans, x, bounds, axis: split_p.bind(t, bounds=bounds, axis=axis))


def _split_vjp(ans: Any, x: Any, bounds: tuple[tuple[int, int], ...], axis: int) -> Any:
    shape = shape_of(x)
    starts = [start for start, _ in bounds]
    stops = [stop for _, stop in bounds]
    tiles = starts[0] == 0 and stops[-1] == shape[axis] and starts[1:] == stops[:-1]

    def pullback(cts: tuple[Any, ...]) -> Any:
        if tiles:  # the pieces tile the axis: their cotangents, side by side
            return concatenate(list(cts), axis=axis)
        total = None  # overlapping or missing pieces (unusual split points): add them up
        for ct, (start, stop) in zip(cts, bounds, strict=True):
            part = untake(ct, _along(axis, slice(start, stop)), shape)
            total = part if total is None else total + part
        return total

    return pullback


defvjp(split_p, _split_vjp)
defbatch(
    split_p,
    lambda values, dims, bounds, axis: (
        split_p.bind(_batching.to_front(values[0], dims[0]), bounds=bounds, axis=axis + 1),
        (0,) * len(bounds),
    ),
)


def _split(ary: Any, indices_or_sections: Any, axis: int, equal: bool) -> list[Array]:
    ary = _operand(ary)
    axis = _axis(axis, ndim_of(ary))
    n = shape_of(ary)[axis]
    try:
        points = [int(i) for i in indices_or_sections]
        div = [0, *points, n]
    except TypeError:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        if equal and n % sections:
            raise ValueError("array split does not result in an equal division") from None
        each, extras = divmod(n, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        div = [int(d) for d in np.cumsum(sizes)]
    # Python slicing semantics for each piece (negative or out-of-range split points)
    bounds = tuple(slice(div[i], div[i + 1]).indices(n)[:2] for i in range(len(div) - 1))
    bounds = tuple((start, max(start, stop)) for start, stop in bounds)
    return list(split_p.bind(ary, bounds=bounds, axis=axis))


def split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Differentiable ``numpy.split``: a list of pieces, the results of the primitive
    ``split`` (its VJP concatenates the pieces' cotangents)."""
    return _split(ary, indices_or_sections, axis, equal=True)


def array_split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Differentiable ``numpy.array_split`` (the primitive ``split``; sections of unequal
    sizes allowed)."""
    return _split(ary, indices_or_sections, axis, equal=False)


def hsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Differentiable ``numpy.hsplit``: a composite of ``split`` along axis 1 (0 for 1-d)."""
    ary = _operand(ary)
    if ndim_of(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ndim_of(ary) > 1 else 0)


def vsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Differentiable ``numpy.vsplit``: a composite of ``split`` along axis 0 (2+ dims)."""
    ary = _operand(ary)
    if ndim_of(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Differentiable ``numpy.dsplit``: a composite of ``split`` along axis 2 (3+ dims)."""
    ary = _operand(ary)
    if ndim_of(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


# ---- tile, repeat (broadcast_to and reshape; fancy indexing for per-element repeats) -----------
def tile(A: ArrayLike, reps: int | Sequence[int]) -> Array:
    """Differentiable ``numpy.tile``: a composite of ``reshape`` and ``broadcast_to`` (its
    VJP sums the copies)."""
    A = _operand(A)
    reps_t = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    if any(r < 0 for r in reps_t):
        raise ValueError(f"tile: negative repetitions {reps_t}")
    shape = shape_of(A)
    d = max(len(reps_t), len(shape))
    shape = (1,) * (d - len(shape)) + shape
    reps_t = (1,) * (d - len(reps_t)) + reps_t
    interleaved = tuple(v for n in shape for v in (1, n))
    spread = tuple(v for r, n in zip(reps_t, shape, strict=True) for v in (r, n))
    out = broadcast_to(reshape(A, interleaved), spread)
    return reshape(out, tuple(r * n for r, n in zip(reps_t, shape, strict=True)))


def repeat(a: ArrayLike, repeats: Any, axis: int | None = None) -> Array:
    """Differentiable ``numpy.repeat``: a composite of ``broadcast_to`` and ``reshape`` for one
    count, of a gather ``a[..., index, ...]`` for per-element counts (its VJP adds the copies
    back)."""
    if isinstance(repeats, Tracer):
        raise TypeError(
            "repeat: `repeats` must not be a traced value (the result's shape depends on it)"
        )
    a = _operand(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, ndim_of(a))
    shape = shape_of(a)
    n = shape[axis]
    counts = np.asarray(repeats)
    if counts.size == 1:
        r = int(counts.reshape(()))
        if r < 0:
            raise ValueError("repeat: negative dimensions are not allowed")
        out = broadcast_to(expand_dims(a, axis + 1), (*shape[: axis + 1], r, *shape[axis + 1 :]))
        return reshape(out, (*shape[:axis], n * r, *shape[axis + 1 :]))
    index = np.repeat(np.arange(n), counts)  # NumPy checks the counts
    return getitem(a, _along(axis, index))


# ---- pad ---------------------------------------------------------------------------------
def _pad_pairs(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    if isinstance(pad_width, dict):
        pairs = [(0, 0)] * ndim
        for ax, width in pad_width.items():
            b, a = np.broadcast_to(np.asarray(width), (2,))
            pairs[_axis(ax, ndim)] = (int(b), int(a))
        return pairs
    widths = np.asarray(pad_width)
    if not np.issubdtype(widths.dtype, np.integer):
        raise TypeError("`pad_width` must be of integral type.")
    widths = np.broadcast_to(widths, (ndim, 2))
    if np.any(widths < 0):
        raise ValueError("index can't contain negative values")
    return [(int(b), int(a)) for b, a in widths]


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad(array: ArrayLike, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Array:
    """Differentiable ``numpy.pad`` for modes constant, edge, reflect, symmetric and wrap.

    Axis by axis (later axes pad the corners, as in NumPy): ``constant`` concatenates blocks
    of ``constant_values`` (which take a derivative when traced); the other modes gather
    along the axis, with the index NumPy's own ``pad`` gives for ``arange``;
    ``reflect_type="odd"`` is a (linear) matrix product along the axis.
    """
    if not _traced(array, kwargs.get("constant_values")):
        return np.pad(array, pad_width, mode=mode, **kwargs)  # type: ignore[call-overload, no-any-return]
    if not isinstance(mode, str) or mode not in _PAD_MODES:
        raise NotImplementedError(
            f"tnp.pad: mode {mode!r} is not differentiable here; use one of {_PAD_MODES}"
        )
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"}}
    allowed["symmetric"] = allowed["reflect"]
    unexpected = set(kwargs) - allowed.get(mode, set())
    if unexpected:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unexpected}")
    x = _operand(array)
    ndim = ndim_of(x)
    pairs = _pad_pairs(pad_width, ndim)
    if mode == "constant":
        return _pad_constant(x, pairs, kwargs.get("constant_values", 0))  # type: ignore[no-any-return]
    reflect_type = kwargs.get("reflect_type", "even")
    for axis, (before, after) in enumerate(pairs):
        if before == after == 0:
            continue
        n = shape_of(x)[axis]
        if n == 0:
            raise ValueError(
                f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'"
            )
        if mode in ("reflect", "symmetric") and reflect_type == "odd":
            eye = np.eye(n, dtype=dtype_of(x))
            matrix = np.pad(eye, ((before, after), (0, 0)), mode=mode, reflect_type="odd")  # type: ignore[call-overload]
            x = moveaxis(tensordot(matrix, x, axes=([1], [axis])), 0, axis)
        else:
            index = np.pad(np.arange(n), (before, after), mode=mode)  # type: ignore[call-overload]
            x = getitem(x, _along(axis, index))
    return x


def _pad_constant(x: Any, pairs: list[tuple[int, int]], constant_values: Any) -> Any:
    ndim = ndim_of(x)
    dtype = dtype_of(x)
    values = _operand(constant_values)
    if dtype_of(values) != dtype:
        values = astype(values, dtype)
    values = broadcast_to(values, (ndim, 2))
    for axis, (before, after) in enumerate(pairs):
        if before == after == 0:
            continue
        shape = shape_of(x)
        blocks = []
        for side, width in ((0, before), (1, after)):
            block_shape = (*shape[:axis], width, *shape[axis + 1 :])
            blocks.append(broadcast_to(getitem(values, (axis, side)), block_shape))
        x = concatenate([blocks[0], x, blocks[1]], axis=axis)
    return x


# ---- roll, flip, rot90 (slices, concatenate, transpose) ------------------------------------------
def roll(
    a: ArrayLike, shift: int | Sequence[int], axis: int | Sequence[int] | None = None
) -> Array:
    """Differentiable ``numpy.roll``: a composite of slices and ``concatenate`` per axis."""
    x = _operand(a)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), shape_of(x))
    ndim = ndim_of(x)
    pairs = np.broadcast(shift, axis)
    if pairs.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = dict.fromkeys(range(ndim), 0)
    for sh, ax in pairs:
        shifts[_axis(int(ax), ndim)] += int(sh)
    for ax, sh in shifts.items():
        n = shape_of(x)[ax]
        offset = sh % n if n else 0
        if offset:
            x = concatenate(
                [
                    getitem(x, _along(ax, slice(n - offset, None))),
                    getitem(x, _along(ax, slice(None, n - offset))),
                ],
                axis=ax,
            )
    return x


def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.flip``: a composite of ``x[index]`` (reversing slices)."""
    m = _operand(m)
    axes = normalize_axes(axis, ndim_of(m))
    index = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(ndim_of(m)))
    return getitem(m, index)


def fliplr(m: ArrayLike) -> Array:
    """Differentiable ``numpy.fliplr``: a composite of ``flip`` along axis 1."""
    m = _operand(m)
    if ndim_of(m) < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


def flipud(m: ArrayLike) -> Array:
    """Differentiable ``numpy.flipud``: a composite of ``flip`` along axis 0."""
    m = _operand(m)
    if ndim_of(m) < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


def rot90(m: ArrayLike, k: int = 1, axes: Sequence[int] = (0, 1)) -> Array:
    """Differentiable ``numpy.rot90``: a composite of ``flip`` and ``transpose`` (NumPy's)."""
    x = _operand(m)
    axes = tuple(axes)
    ndim = ndim_of(x)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == ndim:
        raise ValueError("Axes must be different.")
    if not all(-ndim <= ax < ndim for ax in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={ndim}.")
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, axes[0]), axes[1])
    perm = list(range(ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return transpose(flip(x, axes[1]), perm)
    return flip(transpose(x, perm), axes[1])


# ---- diagonals and triangles -------------------------------------------------------------------
def diag(v: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.diag``: a composite. A 1-d input is scattered onto a diagonal
    of zeros (``untake``), a 2-d input gives its ``k``-th diagonal (``diagonal``)."""
    v = _operand(v)
    if ndim_of(v) == 1:
        n = shape_of(v)[0] + abs(k)
        rows, cols = diagonal_index(n, n, int(k))
        return untake(v, (rows, cols), (n, n))
    if ndim_of(v) == 2:
        return diagonal(v, k)
    raise ValueError("Input must be 1- or 2-d.")


def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.diagflat``: a composite of ``ravel`` and ``diag``."""
    return diag(ravel(_operand(v)), k)


def _triangle(m: Any, k: int, lower: bool) -> Array:
    m = _operand(m)
    shape = shape_of(m)
    if not shape:
        raise ValueError("tril/triu: the input must have at least one dimension")
    # NumPy: the last two axes; a 1-d input (n,) is broadcast to a square (n, n)
    n_rows, n_cols = (shape[0], shape[0]) if len(shape) == 1 else shape[-2:]
    mask = np.tri(n_rows, n_cols, k=k if lower else k - 1, dtype=bool)
    zero = np.zeros(1, dtype_of(m))
    return where(mask, m, zero) if lower else where(mask, zero, m)


def tril(m: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.tril``: a composite of ``where`` with a constant mask."""
    return _triangle(m, k, lower=True)


def triu(m: ArrayLike, k: int = 0) -> Array:
    """Differentiable ``numpy.triu``: a composite of ``where`` with a constant mask."""
    return _triangle(m, k, lower=False)


# ---- sort, partition: a permutation without derivative, then take_along_axis ------------------
def _argsort_impl(a: Any, axis: int, kind: Any, stable: Any) -> Any:
    return np.argsort(a, axis=axis, kind=kind, stable=stable)


def _argpartition_impl(a: Any, kth: Any, axis: int, kind: str) -> Any:
    return np.argpartition(a, kth, axis=axis, kind=kind)  # type: ignore[arg-type]


argsort_p = nondifferentiable("argsort", _argsort_impl)
argpartition_p = nondifferentiable("argpartition", _argpartition_impl)


def _along_axis_batch(primitive: Primitive) -> Any:
    def rule(values: Any, dims: Any, *, axis: int, **params: Any) -> tuple[Any, int]:
        x = _batching.to_front(values[0], dims[0])
        return primitive.bind(x, axis=axis + 1, **params), 0

    return rule


defbatch(argsort_p, _along_axis_batch(argsort_p))
defbatch(argpartition_p, _along_axis_batch(argpartition_p))


def _no_order(order: Any) -> None:
    if order is not None:
        raise NotImplementedError("order= (fields of structured arrays) is not supported")


def sort(
    a: ArrayLike, axis: int | None = -1, kind: Any = None, order: Any = None, *, stable: Any = None
) -> Array:
    """Differentiable ``numpy.sort``: a composite ``take_along_axis(a, argsort(a))``, so the
    derivative is permuted like the values (tied values take it in order of appearance)."""
    _no_order(order)
    a = _operand(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, ndim_of(a))
    if kind is None and stable is None:  # ties: the derivative in order of appearance
        stable = True
    perm = argsort_p.bind(a, axis=axis, kind=kind, stable=stable)
    return take_along_axis(a, perm, axis)


def partition(
    a: ArrayLike,
    kth: int | Sequence[int],
    axis: int | None = -1,
    kind: str = "introselect",
    order: Any = None,
) -> Array:
    """Differentiable ``numpy.partition``: a composite
    ``take_along_axis(a, argpartition(a, kth))``."""
    _no_order(order)
    a = _operand(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, ndim_of(a))
    kth = int(kth) if isinstance(kth, (int, np.integer)) else tuple(int(k) for k in kth)
    perm = argpartition_p.bind(a, kth=kth, axis=axis, kind=kind)
    return take_along_axis(a, perm, axis)


# ---- take, take_along_axis: gathers (the indices may be batched by vmap) ------------------------
def _wrap_index_impl(indices: Any, n: int, mode: str) -> Any:
    indices = np.asarray(indices)
    if mode == "wrap":
        if n == 0:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        return np.mod(indices, n)
    return np.clip(indices, 0, max(n - 1, 0))


wrap_index_p = nondifferentiable("take_index_mode", _wrap_index_impl)
defbatch(wrap_index_p, _batching.elementwise_rule(wrap_index_p))


def _index_operand(indices: Any) -> Any:
    if isinstance(indices, Tracer):
        return indices
    if isinstance(indices, (list, tuple)) and _traced(indices):
        return asarray(indices)
    return np.asarray(indices)


def take(
    a: ArrayLike, indices: Any, axis: int | None = None, out: Any = None, mode: str = "raise"
) -> Array:
    """Differentiable ``numpy.take``: a composite of the gather ``a[..., indices, ...]``
    (``mode`` raise, wrap or clip). ``indices`` may differ between the examples of a
    ``vmap``."""
    if out is not None:
        raise TypeError("take: out= is not supported (transforms.numpy returns new arrays)")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    a = _operand(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, ndim_of(a))
    index = _index_operand(indices)
    if mode != "raise":
        index = wrap_index_p.bind(index, n=shape_of(a)[axis], mode=mode)
    return getitem(a, _along(axis, index))


def take_along_axis(arr: ArrayLike, indices: Any, axis: int | None = -1) -> Array:
    """Differentiable ``numpy.take_along_axis``: a composite of a gather (broadcast
    ``arange`` indices on the other axes). ``indices`` may differ between the examples of
    a ``vmap``."""
    arr = _operand(arr)
    index = _index_operand(indices)
    if axis is None:
        if ndim_of(index) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = ravel(arr), 0
    ndim = ndim_of(arr)
    if ndim_of(index) != ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = _axis(axis, ndim)
    shape = shape_of(arr)
    parts = tuple(
        index if d == axis else np.arange(n).reshape((1,) * d + (n,) + (1,) * (ndim - d - 1))
        for d, n in enumerate(shape)
    )
    return getitem(arr, parts)


def put_along_axis(arr: ArrayLike, indices: Any, values: ArrayLike, axis: int | None) -> Array:
    """Differentiable ``numpy.put_along_axis``, functional as ``jax.numpy``'s: NumPy writes
    ``values`` into ``arr`` in place and returns ``None``; this returns a new array (``arr``
    unchanged), differentiable in ``arr`` (a written position gets no derivative) and in
    ``values`` (each written position's; where an index repeats, the last write wins, as
    NumPy). A composite of ``at[].set`` at the indices ``take_along_axis`` reads.

    Example:
        >>> import numpy as np
        >>> import transforms.numpy as tnp
        >>> tnp.put_along_axis(np.zeros((2, 2)), np.array([[1], [0]]), 5.0, axis=1)
        array([[0., 5.],
               [5., 0.]])
    """
    a = _operand(arr)
    index = _index_operand(indices)
    shape = shape_of(a)
    if axis is None:
        if ndim_of(index) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        flat = at(ravel(a))[index].set(values)
        return reshape(flat, shape)
    ndim = len(shape)
    if ndim_of(index) != ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = _axis(axis, ndim)
    index_shape = shape_of(index)
    parts = tuple(
        index if d == axis else np.arange(n).reshape((1,) * d + (n,) + (1,) * (ndim - d - 1))
        for d, n in enumerate(index_shape)
    )
    return at(a)[parts].set(values)


# ---- select (a chain of where) ------------------------------------------------------------
def select(
    condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike], default: Any = 0
) -> Array:
    """Differentiable ``numpy.select``: a composite of nested ``where`` (the first true
    condition wins)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    conds = [_operand(c) for c in condlist]
    for i, c in enumerate(conds):
        if dtype_of(c) != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    out = _operand(default) if isinstance(default, (list, tuple)) else default
    for cond, choice in zip(reversed(conds), reversed(list(choicelist)), strict=True):
        out = where(cond, _operand(choice) if isinstance(choice, (list, tuple)) else choice, out)
    return out


# ---- full, full_like, linspace: constructions from traced values ----------------------------
def full(shape: int | Sequence[int], fill_value: Any, dtype: Any = None, order: str = "C") -> Array:
    """Differentiable ``numpy.full``: a composite of ``broadcast_to`` of a traced
    ``fill_value`` (its derivative is the sum over the copies)."""
    if not _traced(fill_value):
        return np.full(shape, fill_value, dtype=dtype, order=order)  # type: ignore[call-overload, no-any-return]
    value = _operand(fill_value)
    if dtype is not None and np.dtype(dtype) != dtype_of(value):
        value = astype(value, dtype)
    return broadcast_to(value, shape)


def full_like(
    a: ArrayLike,
    fill_value: Any,
    dtype: Any = None,
    order: str = "K",
    subok: bool = True,
    shape: Any = None,
) -> Array:
    """Differentiable ``numpy.full_like``: a composite of ``full``; ``a`` gives only the
    shape and dtype (no derivative), a traced ``fill_value`` takes one."""
    if not _traced(a, fill_value):
        return np.full_like(a, fill_value, dtype=dtype, order=order, subok=subok, shape=shape)  # type: ignore[call-overload, no-any-return]
    target = shape_of(a) if shape is None else shape
    return full(target, fill_value, dtype=dtype_of(a) if dtype is None else dtype)


def linspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """Differentiable ``numpy.linspace`` in ``start`` and ``stop``: a composite of arithmetic
    and ``concatenate``, NumPy's own (``start + i * step``; the last sample is ``stop``)."""
    if not _traced(start, stop):
        return np.linspace(start, stop, num, endpoint, retstep, dtype, axis)  # type: ignore[call-overload]
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    # NumPy's computation dtype: Python scalars are weak, integers compute in float64
    weak = [
        x if isinstance(x, (int, float, complex)) else dtype_of(_operand(x)) for x in (start, stop)
    ]
    computed = np.result_type(*weak, 0.0)
    start, stop = astype(_operand(start), computed), astype(_operand(stop), computed)
    div = num - 1 if endpoint else num
    delta = stop - start
    steps = np.arange(num, dtype=computed).reshape((-1,) + (1,) * ndim_of(delta))
    step: Any = np.nan
    if div > 0:
        step = delta / div
        # NumPy divides first when some step underflows to zero (only the rounding differs;
        # the choice is made on primal values, for the whole batch under vmap).
        checked = checkable(step)
        if checked is None:  # another library's values: both ways, the choice a where
            underflow = np.any(concrete(step) == 0)
            y = where(underflow, steps / div * delta + start, steps * step + start)
        elif np.any(checked == 0):
            y = steps / div * delta + start
        else:
            y = steps * step + start
    else:  # no step: 0 samples, or 1 with the endpoint
        y = steps * delta + start
    if endpoint and num > 1:
        last = expand_dims(broadcast_to(stop, shape_of(y)[1:]), 0)
        y = concatenate([getitem(y, slice(None, -1)), last])
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if dtype is not None and np.dtype(dtype) != computed:
        y = _cast_samples(y, np.dtype(dtype))
    return (y, step) if retstep else y


def _cast_samples(y: Any, dtype: np.dtype[Any]) -> Any:
    if np.issubdtype(dtype, np.integer):  # NumPy floors before casting to an integer type
        truncated = astype(y, dtype)
        return truncated - astype(y < truncated, dtype)
    return astype(y, dtype)
