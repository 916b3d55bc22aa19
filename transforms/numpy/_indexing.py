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
from transforms.jvp import defjvp
from transforms.vjp import defvjp

from . import _shape
from ._define import shape_of

__all__: list[str] = []  # x[idx] is the operator; untake is internal


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
