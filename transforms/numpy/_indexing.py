"""Indexing: ``x[idx]`` and its transpose, the scatter-add ``untake``.

``getitem`` is linear in ``x``; its VJP scatters the cotangent into zeros of ``x``'s shape
with ``untake``, which *adds* at repeated fancy indices (``x[[0, 0]]`` sends both
cotangents to ``x[0]``). ``untake`` is linear too, and its transpose is ``getitem`` again,
so the pair differentiates to any order. Indices are parameters, never traced.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from transforms.batch import defbatch
from transforms.core import Array, ArrayLike, Primitive, concrete
from transforms.jvp import defjvp, defjvp_joint
from transforms.vjp import defvjp, defvjp_argnum

from . import _shape
from ._define import shape_of

__all__ = ["at"]  # x[idx] is the operator; getitem/untake are internal


def _is_basic(index: Any) -> bool:
    """Basic indices (ints, slices, None, Ellipsis) select each element at most once."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (slice, int, np.integer)) for p in parts)


def _untake_impl(ct: Any, index: Any, shape: tuple[int, ...]) -> Any:
    out = np.zeros(shape, dtype=np.result_type(ct))
    if _is_basic(index):
        out[index] = ct
    else:
        np.add.at(out, index, ct)
    return out


getitem_p = Primitive("getitem", lambda x, index: np.asarray(x)[index])
untake_p = Primitive("untake", _untake_impl)

defjvp(getitem_p, lambda t, ans, x, index: getitem_p.bind(t, index=index))
defvjp(getitem_p, lambda ans, x, index: lambda ct: untake(ct, index, shape_of(x)))
defjvp(untake_p, lambda t, ans, ct, index, shape: untake(t, index, shape))
defvjp(untake_p, lambda ans, ct, index, shape: lambda ct_out: getitem_p.bind(ct_out, index=index))


# Batching: the batch axis goes last, where an index (with its Ellipsis spelled out) leaves
# it untouched as a trailing full slice, wherever NumPy puts the advanced-index axes.
def _spell_out_ellipsis(index: Any, ndim: int) -> Any:
    parts = index if isinstance(index, tuple) else (index,)
    if not any(p is Ellipsis for p in parts):
        return parts
    used = sum(
        np.ndim(p) if _is_bool_array(p) else 1 for p in parts if p is not None and p is not Ellipsis
    )
    at = next(i for i, p in enumerate(parts) if p is Ellipsis)
    return parts[:at] + (slice(None),) * (ndim - used) + parts[at + 1 :]


def _is_bool_array(p: Any) -> bool:
    return isinstance(p, (np.ndarray, list)) and np.asarray(p).dtype == np.bool_


def _to_back(x: Any, d: int) -> Any:
    n = len(shape_of(x))
    return x if d == n - 1 else _shape.moveaxis(x, d, -1)


def _getitem_batch(values: Any, dims: Any, *, index: Any) -> tuple[Any, int]:
    x, d = values[0], dims[0]
    out = getitem_p.bind(_to_back(x, d), index=_spell_out_ellipsis(index, len(shape_of(x)) - 1))
    return out, len(shape_of(out)) - 1


def _untake_batch(values: Any, dims: Any, *, index: Any, shape: tuple[int, ...]) -> tuple[Any, int]:
    ct, d = values[0], dims[0]
    size = shape_of(ct)[d]
    index = _spell_out_ellipsis(index, len(shape))
    return untake_p.bind(_to_back(ct, d), index=index, shape=(*shape, size)), len(shape)


defbatch(getitem_p, _getitem_batch)
defbatch(untake_p, _untake_batch)


def _plain_index(index: Any) -> Any:
    """Indices carry no derivative: traced integer/bool index arrays become plain arrays."""
    if isinstance(index, tuple):
        return tuple(concrete(i) for i in index)
    if isinstance(index, list):
        return np.asarray([concrete(i) for i in index])
    return concrete(index)


def getitem(x: ArrayLike, index: Any) -> Array:
    """``x[index]`` for basic, fancy (repeated indices accumulate), and boolean indices."""
    return getitem_p.bind(x, index=_plain_index(index))  # type: ignore[no-any-return]


def untake(ct: ArrayLike, index: Any, shape: tuple[int, ...]) -> Array:
    """Zeros of ``shape`` with ``ct`` added at ``index`` (the transpose of ``getitem``)."""
    return untake_p.bind(ct, index=index, shape=shape)  # type: ignore[no-any-return]


# ---- functional index update: tnp.at(x)[idx].set(v) / .add(v) / .multiply(v) ---------------
def _index_set_impl(x: Any, v: Any, index: Any) -> Any:
    out = np.array(x, copy=True)
    out[index] = v
    return out


index_set_p = Primitive("index_set", _index_set_impl)


def _index_set_jvp(tangents: Any, ans: Any, x: Any, v: Any, index: Any) -> Any:
    tx, tv = tangents
    tx = _shape.zeros_like(x) if tx is None else tx
    tv = 0 if tv is None else tv
    return index_set_p.bind(tx, tv, index=index)


def _index_set_vjp(argnum: int, ans: Any, x: Any, v: Any, index: Any) -> Any:
    if argnum == 0:  # the overwritten entries of x do not reach the output
        return lambda ct: index_set_p.bind(ct, 0, index=index)
    return lambda ct: _shape.unbroadcast(getitem_p.bind(ct, index=index), shape_of(v))


def _index_set_batch(values: Any, dims: Any, *, index: Any) -> tuple[Any, int]:
    (x, v), (dx, dv) = values, dims
    size = shape_of(x)[dx] if dx is not None else shape_of(v)[dv]
    if dx is None:
        x = _shape.broadcast_to(_shape.expand_dims(x, -1), (*shape_of(x), size))
    else:
        x = _to_back(x, dx)
    if dv is None:
        v = _shape.expand_dims(v, -1) if len(shape_of(v)) else v
    else:
        v = _to_back(v, dv)
    index = _spell_out_ellipsis(index, len(shape_of(x)) - 1)
    return index_set_p.bind(x, v, index=index), len(shape_of(x)) - 1


defjvp_joint(index_set_p, _index_set_jvp)
defvjp_argnum(index_set_p, _index_set_vjp)
defbatch(index_set_p, _index_set_batch)


class _IndexRef:
    """``tnp.at(x)[index]``: the functional updates of ``x`` at ``index``."""

    __slots__ = ("_index", "_x")

    def __init__(self, x: Any, index: Any) -> None:
        self._x = x
        self._index = _plain_index(index)

    def get(self) -> Array:
        """``x[index]``."""
        return getitem(self._x, self._index)

    def set(self, values: ArrayLike) -> Array:
        """A copy of ``x`` with ``x[index] = values`` (for repeated indices, one write wins,
        as in NumPy)."""
        return index_set_p.bind(self._x, values, index=self._index)  # type: ignore[no-any-return]

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
        >>> tnp.at(x)[0].set(1.0)  # doctest: +SKIP
        >>> tnp.at(x)[[0, 0, 2]].add(v)  # repeated indices accumulate  # doctest: +SKIP
    """
    return _AtIndexer(_shape.asarray(x) if isinstance(x, (list, tuple)) else x)
