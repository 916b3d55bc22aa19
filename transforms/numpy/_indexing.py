"""Indexing: ``x[idx]`` and its transpose, the scatter-add ``untake``.

``getitem`` is linear in ``x``; its VJP scatters the cotangent into zeros of ``x``'s shape
with ``untake``, which *adds* at repeated fancy indices (``x[[0, 0]]`` sends both
cotangents to ``x[0]``). ``untake`` is linear too, and its transpose is ``getitem`` again,
so the pair differentiates to any order. Indices are parameters, never traced.

An index array that is itself traced (in practice: batched by ``vmap``, as in
``vmap(lambda i: x[i])(idx)`` or ``tnp.take_along_axis(x, tnp.argsort(x))`` under ``vmap``)
cannot be a parameter: its per-example values differ. Such indices are operands of the
pair ``gather``/``scatter_add`` instead (still without a derivative), whose batching rule
indexes the batch axis with an ``arange`` next to the batched index arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from transforms.batching import defbatch
from transforms.core import Array, ArrayLibraryError, ArrayLike, Primitive, Tracer, arrays, concrete
from transforms.forward import defjvp, defjvp_joint
from transforms.reverse import defvjp, defvjp_argnum
from transforms.sparsity import defsparsity, index_rule, scatter_rule

from . import _batching, _shape
from ._define import dtype_of, ndim_of, normalize_axes, shape_of

__all__ = ["at", "diagonal"]  # x[idx] is the operator; getitem/untake are internal


def _is_basic(index: Any) -> bool:
    """Basic indices (ints, slices, None, Ellipsis) select each element at most once."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (slice, int, np.integer)) for p in parts)


def _zeros(ct: Any, shape: tuple[int, ...]) -> Any:
    """Zeros of ``shape`` in ``ct``'s dtype and array library (a Dask cotangent, Dask zeros)."""
    if type(ct) is np.ndarray or not arrays.is_foreign(ct):
        return np.zeros(shape, dtype=np.result_type(ct))
    return np.zeros_like(ct, shape=shape)


def _untake_impl(ct: Any, index: Any, shape: tuple[int, ...]) -> Any:
    out = _zeros(ct, shape)
    if type(out) is not np.ndarray:  # another library's array: a functional update
        return arrays.scatter_add(out, index, ct)
    if _is_basic(index):
        out[index] = ct
    else:
        np.add.at(out, index, ct)
    return out


getitem_p = Primitive(
    "getitem", lambda x, index: x[index] if type(x) is np.ndarray else arrays.getitem(x, index)
)
untake_p = Primitive("untake", _untake_impl)

defjvp(getitem_p, lambda t, ans, x, index: getitem_p.bind(t, index=index))
defvjp(getitem_p, lambda ans, x, index: lambda ct: untake(ct, index, shape_of(x)))
defjvp(untake_p, lambda t, ans, ct, index, shape: untake(t, index, shape))
defvjp(untake_p, lambda ans, ct, index, shape: lambda ct_out: getitem_p.bind(ct_out, index=index))


# ---- where NumPy puts the advanced-index axes ----------------------------------------------
@dataclass(frozen=True)
class _Slot:
    """In the index of ``gather``/``scatter_add``: the ``k``-th index-array operand."""

    k: int


@dataclass(frozen=True)
class _Layout:
    """Where the advanced-index axes of ``x[index]`` go (``None`` for a basic index).

    ``shape``: their broadcast shape; ``first``: NumPy puts them first (they are not
    consecutive in the index); else at ``position``; ``ndim``: the result's rank.
    """

    shape: tuple[int, ...]
    first: bool
    position: int
    ndim: int


def _parts(index: Any) -> tuple[Any, ...]:
    return index if isinstance(index, tuple) else (index,)


def _is_bool_scalar(p: Any) -> bool:
    return isinstance(p, (bool, np.bool_)) or (
        isinstance(p, np.ndarray) and p.ndim == 0 and p.dtype == np.bool_
    )


def _entry(p: Any, slot_shapes: Any) -> tuple[str, int, tuple[int, ...]]:
    """``(kind, axes consumed, advanced shape)`` of one index entry."""
    if p is None:
        return "none", 0, ()
    if p is Ellipsis:
        return "ellipsis", 0, ()
    if isinstance(p, slice):
        return "slice", 1, ()
    if isinstance(p, _Slot):
        return "array", 1, tuple(slot_shapes[p.k])
    if _is_bool_scalar(p):  # NumPy: a 0-d boolean adds an axis of length 1 (or 0)
        return "array", 0, (1 if p else 0,)
    if isinstance(p, (int, np.integer)):
        return "int", 1, ()
    a = np.asarray(p)
    if a.dtype == np.bool_:  # a mask stands for its nonzero() index arrays
        return "array", a.ndim, (int(np.count_nonzero(a)),)
    return "array", 1, a.shape


def _layout(index: Any, ndim: int, slot_shapes: Any = ()) -> _Layout | None:
    """NumPy's placement of the advanced-index axes of ``x[index]`` for ``x.ndim == ndim``.

    Integers count as advanced once an index array is present; the advanced entries go
    where they are when consecutive (no slice, ``None`` or ``Ellipsis`` -- even one that
    spans no axis -- between them), and first otherwise.
    """
    entries = [_entry(p, slot_shapes) for p in _parts(index)]
    if not any(kind == "array" for kind, _, _ in entries):
        return None
    spare = ndim - sum(n for _, n, _ in entries)  # the axes an Ellipsis or the end spans
    advanced = [i for i, (kind, _, _) in enumerate(entries) if kind in ("array", "int")]
    shape = np.broadcast_shapes(*(entries[i][2] for i in advanced))
    basic_out = sum(1 for kind, _, _ in entries if kind in ("slice", "none")) + spare
    out_ndim = len(shape) + basic_out
    if advanced[-1] - advanced[0] + 1 != len(advanced):
        return _Layout(shape, True, 0, out_ndim)
    position = sum(
        spare if kind == "ellipsis" else 1
        for kind, _, _ in entries[: advanced[0]]
        if kind in ("slice", "none", "ellipsis")
    )
    return _Layout(shape, False, position, out_ndim)


def _out_ndim(index: Any, ndim: int) -> int:
    """The rank of ``x[index]`` for ``x.ndim == ndim``."""
    layout = _layout(index, ndim)
    if layout is not None:
        return layout.ndim
    entries = [_entry(p, ()) for p in _parts(index)]
    spare = ndim - sum(n for _, n, _ in entries)
    return sum(1 for kind, _, _ in entries if kind in ("slice", "none")) + spare


def _result_bdim(index: Any, ndim: int) -> int:
    """The batch axis of ``x[(slice(None), *index)]`` for a batch axis in front of ``x``:
    it stays in front unless NumPy moves the (non-consecutive) advanced axes before it."""
    layout = _layout(index, ndim)
    return len(layout.shape) if layout is not None and layout.first else 0


# Batching: the batch axis goes in front and the index gets a leading full slice. A slice is
# not an advanced index, so NumPy places the advanced axes as it does per example (and in
# front of the batch axis when it puts them first).
def _getitem_batch(values: Any, dims: Any, *, index: Any) -> tuple[Any, int]:
    x = _batching.to_front(values[0], dims[0])
    ndim = len(shape_of(x)) - 1
    out = getitem_p.bind(x, index=(slice(None), *_parts(index)))
    return out, _result_bdim(index, ndim)


def _untake_batch(values: Any, dims: Any, *, index: Any, shape: tuple[int, ...]) -> tuple[Any, int]:
    ct, d = values[0], dims[0]
    size = shape_of(ct)[d]
    bdim = _result_bdim(index, len(shape))
    ct = ct if d == bdim else _shape.moveaxis(ct, d, bdim)
    return untake_p.bind(ct, index=(slice(None), *_parts(index)), shape=(size, *shape)), 0


defbatch(getitem_p, _getitem_batch)
defbatch(untake_p, _untake_batch)
defsparsity(getitem_p, index_rule(getitem_p))
defsparsity(untake_p, scatter_rule(lambda numbers, index, shape: numbers[index]))


def _plain_index(index: Any) -> Any:
    """Indices carry no derivative: traced integer/bool index arrays become plain arrays."""
    if isinstance(index, tuple):
        return tuple(concrete(i) for i in index)
    if isinstance(index, list):
        return np.asarray([concrete(i) for i in index])
    return concrete(index)


def getitem(x: ArrayLike, index: Any) -> Array:
    """``x[index]`` for basic, fancy (repeated indices accumulate), and boolean indices.

    Index arrays that vary along a ``vmap`` batch go through ``gather`` (see below).
    """
    template, operands = _traced_index(index)
    if operands:
        return gather_p.bind(x, *operands, index=template)
    return getitem_p.bind(x, index=_plain_index(template))


def untake(ct: ArrayLike, index: Any, shape: tuple[int, ...]) -> Array:
    """Zeros of ``shape`` with ``ct`` added at ``index`` (the transpose of ``getitem``)."""
    template, operands = _traced_index(index)
    if operands:
        return scatter_add_p.bind(ct, *operands, index=template, shape=shape)
    return untake_p.bind(ct, index=_plain_index(template), shape=shape)


# ---- index arrays that vary along a vmap batch: gather and its transpose scatter_add ---------
def _hides_batch_axis(value: Tracer) -> bool:
    """Whether a traced value stands for several examples of a ``vmap`` (its plain value has
    more axes than it shows). Otherwise its plain value *is* its value: an index array of an
    outer ``jvp``/``vjp`` level carries no derivative, and is used as is."""
    return bool(np.shape(concrete(value)) != value.shape)


_PLAIN = frozenset((int, slice, type(None), type(Ellipsis), np.ndarray))


def _traced_index(index: Any) -> tuple[Any, list[Any]]:
    """``index`` with each batched index array (or index array of another library) replaced
    by a ``_Slot`` and those arrays (the operands of ``gather``/``scatter_add``) listed; no
    operands for a plain index."""
    operands: list[Any] = []

    def entry(p: Any) -> Any:
        if isinstance(p, list) and any(isinstance(e, Tracer) for e in p):
            p = _shape.asarray(p)
        if not isinstance(p, Tracer):  # (a lazy index array, as searchsorted's: an operand)
            if type(p) in _PLAIN or not arrays.is_foreign(p):
                return p
        elif not _hides_batch_axis(p) and not arrays.is_foreign(concrete(p)):
            return p
        if dtype_of(p) == np.bool_ and isinstance(p, Tracer):
            raise IndexError(
                "x[mask] with a boolean mask that differs between the examples of a vmap: the "
                "per-example results would have different shapes. Use "
                "tnp.where(mask, x, 0) (or a reduction weighted by the mask) instead."
            )
        operands.append(p)
        return _Slot(len(operands) - 1)

    if isinstance(index, tuple):
        return tuple(entry(p) for p in index), operands
    return entry(index), operands


def _fill(index: Any, arrays: Any) -> Any:
    return tuple(arrays[p.k] if isinstance(p, _Slot) else p for p in _parts(index))


def _gather_impl(x: Any, *index_arrays: Any, index: Any) -> Any:
    return arrays.getitem(x, _fill(index, index_arrays))


def _scatter_add_impl(ct: Any, *index_arrays: Any, index: Any, shape: tuple[int, ...]) -> Any:
    return arrays.scatter_add(_zeros(ct, shape), _fill(index, index_arrays), ct)


gather_p = Primitive("gather", _gather_impl)
scatter_add_p = Primitive("scatter_add", _scatter_add_impl)


def _gather_jvp(tangents: Any, ans: Any, x: Any, *arrays: Any, index: Any) -> Any:
    t = tangents[0]
    return _shape.zeros_like(ans) if t is None else gather_p.bind(t, *arrays, index=index)


def _scatter_add_jvp(
    tangents: Any, ans: Any, ct: Any, *arrays: Any, index: Any, shape: tuple[int, ...]
) -> Any:
    t = tangents[0]
    if t is None:
        return _shape.zeros_like(ans)
    return scatter_add_p.bind(t, *arrays, index=index, shape=shape)


def _gather_vjp(argnum: int, ans: Any, x: Any, *arrays: Any, index: Any) -> Any:
    if argnum:  # an index array: no derivative
        return lambda ct: _shape.zeros_like(arrays[argnum - 1])
    shape = shape_of(x)
    return lambda ct: scatter_add_p.bind(ct, *arrays, index=index, shape=shape)


def _scatter_add_vjp(
    argnum: int, ans: Any, ct: Any, *arrays: Any, index: Any, shape: tuple[int, ...]
) -> Any:
    if argnum:
        return lambda ct_out: _shape.zeros_like(arrays[argnum - 1])
    return lambda ct_out: gather_p.bind(ct_out, *arrays, index=index)


defjvp_joint(gather_p, _gather_jvp)
defjvp_joint(scatter_add_p, _scatter_add_jvp)
defvjp_argnum(gather_p, _gather_vjp)
defvjp_argnum(scatter_add_p, _scatter_add_vjp)


def _batched_index(
    index: Any, ndim: int, arrays: Any, dims: Any, size: int
) -> tuple[Any, list[Any], _Layout]:
    """The index of the batched operand (batch axis in front) that does per example what
    ``index`` does: an ``arange`` over the batch, then each advanced entry with a batch axis
    (its own, or a broadcast one) in front of its per-example axes, aligned to their common
    rank. Its advanced axes always come first: ``(batch, *advanced, *basic)``."""
    slot_shapes = [
        shape_of(a) if d is None else shape_of(a)[:d] + shape_of(a)[d + 1 :]
        for a, d in zip(arrays, dims, strict=True)
    ]
    layout = _layout(index, ndim, slot_shapes)
    assert layout is not None  # a gather has at least one index array
    rank = len(layout.shape)

    parts: list[Any] = [np.arange(size).reshape((size,) + (1,) * rank)]
    operands: list[Any] = []
    spare = ndim - sum(_entry(p, slot_shapes)[1] for p in _parts(index))
    for p in _parts(index):
        if p is Ellipsis:
            parts.extend([slice(None)] * spare)
        elif isinstance(p, _Slot):
            a, d, s = arrays[p.k], dims[p.k], slot_shapes[p.k]
            if d is None:
                a = _shape.reshape(a, (1,) * (rank + 1 - len(s)) + s)
            else:
                a = _shape.reshape(_batching.to_front(a, d), (size,) + (1,) * (rank - len(s)) + s)
            parts.append(_Slot(len(operands)))
            operands.append(a)
        elif _is_bool_scalar(p):
            raise IndexError("a 0-d boolean index next to batched index arrays is not supported")
        elif isinstance(p, (np.ndarray, list)):
            a = np.asarray(p)
            for b in np.nonzero(a) if a.dtype == np.bool_ else (a,):
                parts.append(b.reshape((1,) * (rank + 1 - b.ndim) + b.shape))
        else:  # int, slice, None
            parts.append(p)
    return tuple(parts), operands, layout


def _from_batched_order(layout: _Layout) -> list[int]:
    """The permutation from ``(batch, *advanced, *basic)`` to the per-example order with the
    batch axis in front."""
    rank, n = len(layout.shape), layout.ndim
    if layout.first:
        return list(range(n + 1))
    basic = list(range(1 + rank, 1 + n))
    at = layout.position
    return [0, *basic[:at], *range(1, 1 + rank), *basic[at:]]


def _gather_batch(values: Any, dims: Any, *, index: Any) -> tuple[Any, int]:
    size = _batching.axis_size(values, dims)
    x, dx = values[0], dims[0]
    ndim = len(shape_of(x)) - (dx is not None)
    parts, operands, layout = _batched_index(index, ndim, values[1:], dims[1:], size)
    if dx is None:
        x = _shape.broadcast_to(x, (size, *shape_of(x)))
    else:
        x = _batching.to_front(x, dx)
    out = gather_p.bind(x, *operands, index=parts)
    perm = _from_batched_order(layout)
    return (out if perm == sorted(perm) else _shape.transpose(out, perm)), 0


def _scatter_add_batch(
    values: Any, dims: Any, *, index: Any, shape: tuple[int, ...]
) -> tuple[Any, int]:
    size = _batching.axis_size(values, dims)
    ct, dct = values[0], dims[0]
    parts, operands, layout = _batched_index(index, len(shape), values[1:], dims[1:], size)
    if dct is None:
        ct = _shape.broadcast_to(ct, (size, *shape_of(ct)))
    else:
        ct = _batching.to_front(ct, dct)
    perm = _from_batched_order(layout)
    if perm != sorted(perm):
        ct = _shape.transpose(ct, [int(i) for i in np.argsort(perm)])
    return scatter_add_p.bind(ct, *operands, index=parts, shape=(size, *shape)), 0


defbatch(gather_p, _gather_batch)
defbatch(scatter_add_p, _scatter_add_batch)
defsparsity(gather_p, index_rule(gather_p, data=(0,)))
defsparsity(
    scatter_add_p,
    scatter_rule(
        lambda numbers, *arrays, index, shape: _gather_impl(numbers, *arrays, index=index)
    ),
)


# ---- functional index update: tnp.at(x)[idx].set(v) / .add(v) / .multiply(v) ---------------
index_set_p = Primitive("index_set", lambda x, v, index: arrays.index_set(x, index, v))


def _index_set_jvp(tangents: Any, ans: Any, x: Any, v: Any, index: Any) -> Any:
    tx, tv = tangents
    tx = _shape.zeros_like(x) if tx is None else tx
    tv = 0 if tv is None else tv
    return index_set_p.bind(tx, tv, index=index)


def _winning_writes(shape: tuple[int, ...], index: Any) -> Any:
    """For ``x[index] = v`` with ``x`` of ``shape``: which elements of the selection are
    written last (NumPy's order), i.e. reach the result; ``None`` when none repeats."""
    if _is_basic(index):
        return None
    selected = np.zeros(shape, dtype=np.int8)[index].shape
    ids = np.arange(math.prod(selected)).reshape(selected)
    written = np.full(shape, -1)
    written[index] = ids
    winners = written[index] == ids
    return None if winners.all() else winners


def _index_set_vjp(argnum: int, ans: Any, x: Any, v: Any, index: Any) -> Any:
    if argnum == 0:  # the overwritten entries of x do not reach the output
        return lambda ct: index_set_p.bind(ct, 0, index=index)
    # v reaches the output only through the writes that win at a repeated index
    winners = _winning_writes(shape_of(x), index)
    if winners is None:
        return lambda ct: _shape.unbroadcast(getitem_p.bind(ct, index=index), shape_of(v))
    return lambda ct: _shape.unbroadcast(
        _shape.where(winners, getitem_p.bind(ct, index=index), 0), shape_of(v)
    )


def _index_set_batch(values: Any, dims: Any, *, index: Any) -> tuple[Any, int]:
    """Batch axis in front of ``x`` and a leading full slice in the index (as for
    ``getitem``); ``values`` gets a batch axis where the batched selection has it."""
    (x, v), (dx, dv) = values, dims
    size = _batching.axis_size(values, dims)
    if dx is None:
        x = _shape.broadcast_to(x, (size, *shape_of(x)))
    else:
        x = _batching.to_front(x, dx)
    ndim = len(shape_of(x)) - 1
    bdim = _result_bdim(index, ndim)
    selected = _out_ndim(index, ndim)
    v_shape = shape_of(v) if dv is None else shape_of(v)[:dv] + shape_of(v)[dv + 1 :]
    v_shape = v_shape[max(len(v_shape) - selected, 0) :]  # NumPy drops leading 1s here
    aligned = (1,) * (selected - len(v_shape)) + v_shape
    if dv is None:
        if len(v_shape) > selected - bdim:  # v reaches the axes before the batch axis
            v = _shape.expand_dims(_shape.reshape(v, aligned), bdim)
    else:
        v = _shape.reshape(_batching.to_front(v, dv), (size, *aligned))
        v = v if bdim == 0 else _shape.moveaxis(v, 0, bdim)
    return index_set_p.bind(x, v, index=(slice(None), *_parts(index))), 0


defjvp_joint(index_set_p, _index_set_jvp)
defvjp_argnum(index_set_p, _index_set_vjp)
defbatch(index_set_p, _index_set_batch)
defsparsity(index_set_p, index_rule(index_set_p, data=(0, 1)))


class _IndexRef:
    """``tnp.at(x)[index]``: the functional updates of ``x`` at ``index``."""

    __slots__ = ("_batched", "_index", "_lazy", "_x")

    def __init__(self, x: Any, index: Any) -> None:
        self._x = x
        _, operands = _traced_index(index)
        self._index = index if operands else _plain_index(index)
        self._batched = bool(operands)
        lazy = [concrete(p) for p in operands if arrays.is_foreign(concrete(p))]
        self._lazy = arrays.library_of(lazy[0]) if lazy else None

    def get(self) -> Array:
        """``x[index]``."""
        return getitem(self._x, self._index)

    def set(self, values: ArrayLike) -> Array:
        """A copy of ``x`` with ``x[index] = values`` (for repeated indices, one write wins,
        as in NumPy)."""
        if self._lazy is not None:
            raise ArrayLibraryError(
                "tnp.at(x)[idx].set(v) with a lazy index array (which write wins at a repeated "
                "index depends on its values; .add(v) is available)",
                self._lazy,
            )
        if self._batched:
            raise NotImplementedError(
                "tnp.at(x)[idx].set(v) with index arrays that differ between the examples of a "
                "vmap is not supported; .add(v) is (and, for indices that do not repeat, "
                "tnp.at(x)[idx].add(v - x[idx]) is the same as .set(v))"
            )
        return index_set_p.bind(self._x, values, index=self._index)

    def add(self, values: ArrayLike) -> Array:
        """A copy of ``x`` with ``values`` added at ``index``; repeated indices accumulate."""
        target = shape_of(getitem(self._x, self._index))
        spread = _shape.broadcast_to(values, target)
        return self._x + untake(spread, self._index, shape_of(self._x))  # type: ignore[no-any-return]

    def multiply(self, values: ArrayLike) -> Array:
        """A copy of ``x`` with ``x[index]`` multiplied by ``values`` (indices must not
        repeat: a repeated index is multiplied once)."""
        return self.set(getitem(self._x, self._index) * values)


class _AtIndexer:
    __slots__ = ("_x",)

    def __init__(self, x: Any) -> None:
        self._x = x

    def __getitem__(self, index: Any) -> _IndexRef:
        return _IndexRef(self._x, index)


def at(x: ArrayLike) -> _AtIndexer:
    """Functional index updates, differentiable in every mode (JAX's ``x.at[idx]``).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> x = np.zeros(3)
        >>> tnp.at(x)[0].set(5.0)  # a new array; x is unchanged
        array([5., 0., 0.])
        >>> tnp.at(x)[[0, 0, 2]].add(1.0)  # repeated indices accumulate
        array([2., 0., 1.])
        >>> T.grad(lambda v: tnp.sum(tnp.at(x)[[0, 0, 2]].add(v) ** 2))(1.0)
        array(10.)
    """
    return _AtIndexer(_shape.asarray(x) if isinstance(x, (list, tuple)) else x)


# ---- diagonals: the one gather of them (numpy's diagonal and trace, linalg's, diag) ---------
def diagonal_index(n1: int, n2: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns of the ``offset`` diagonal of an ``n1 x n2`` matrix."""
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    steps = np.arange(length)
    return steps + max(-offset, 0), steps + max(offset, 0)


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """Differentiable ``numpy.diagonal``: a composite of ``moveaxis`` and a gather, whose
    VJP scatters back onto the diagonal (the diagonal is the last axis of the result)."""
    a = _shape.operand(a)
    ndim = ndim_of(a)
    if ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    i, j = normalize_axes(axis1, ndim)[0], normalize_axes(axis2, ndim)[0]
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    x = _shape.moveaxis(a, (i, j), (-2, -1))
    n1, n2 = shape_of(x)[-2:]
    rows, cols = diagonal_index(n1, n2, int(offset))
    return getitem(x, (Ellipsis, rows, cols))
