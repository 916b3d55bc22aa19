"""Shared batching rules: how families of primitives act on operands with a batch axis.

Every rule moves batch axes where the primitive can treat them as ordinary data (usually
to the front) and says where the batch axis of the result is. The operands may be tracers
of outer transforms (``jvp(vmap(f))``), so axes are moved differentiably: by the methods
``transpose``/``reshape`` that arrays and tracers share, and by ``np.broadcast_to``, which
dispatches to the differentiable one for a tracer. That keeps this module below every
family, ``_shape``'s included, whose primitives use these helpers for their own rules.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from transforms.batching import BatchRule
from transforms.core import Primitive

from ._define import shape_of

__all__ = [
    "axis_size",
    "to_front",
    "elementwise_rule",
    "reduction_rule",
    "materialized",
    "identity_basis",
    "is_identity_basis",
    "detached",
]

# The identity bases made, by id, each held by a weak reference without a callback (a plain
# dict: cheaper to write and to read than a WeakValueDictionary). A later array at the
# address of a dead one is not mistaken for it (the lookup checks identity); dead entries
# are dropped when the dict grows.
_IDENTITIES: dict[int, weakref.ref[np.ndarray]] = {}


# Small bases are made once and shared, read-only (``np.eye`` of a 200-vector is a fifth of a
# 200 x 200 Jacobian's whole cost: 320 kB zeroed for 200 ones); larger ones are made per call.
_SHARED_BYTES = 1 << 20
_SHARED: dict[tuple[int, np.dtype[Any]], np.ndarray] = {}


def identity_basis(n: int, dtype: Any) -> np.ndarray:
    """``np.eye(n, dtype=dtype)``, the standard basis of an ``n``-vector stacked on axis 0,
    that batching rules recognise (``is_identity_basis``) while it is alive.

    ``jacfwd``/``jacrev`` push it through ``vmap``; a rule whose batched operand is this very
    array may compute its product in closed form (``matmul``: ``A @ e_i`` is column ``i`` of
    ``A``, an ``n``-fold product saved). Only the array object itself is recognised, never a
    view or a copy of it. It is read-only and never reaches the user (``detached``), so
    nothing writes into it while a rule relies on it or while it is shared: a basis of at
    most ``_SHARED_BYTES`` is made once per size and dtype and given to every call.
    """
    dtype = np.dtype(dtype)
    shared = n * n * dtype.itemsize <= _SHARED_BYTES
    if shared:
        basis = _SHARED.get((n, dtype))
        if basis is not None:
            return basis
    basis = np.eye(n, dtype=dtype)
    basis.flags.writeable = False
    if shared:
        if len(_SHARED) >= 32:  # (a bound on what is kept: the next calls make them again)
            _SHARED.clear()
        _SHARED[(n, dtype)] = basis
    if len(_IDENTITIES) >= 64:  # drop the dead, from a snapshot (other threads register
        # too; at worst one drops a basis just registered at a dead one's address, which
        # then takes the general path)
        for key, ref in _IDENTITIES.copy().items():  # (dict.copy is atomic; list() of a
            # view iterates, and a thread registering meanwhile makes it raise)
            if ref() is None:
                _IDENTITIES.pop(key, None)
    _IDENTITIES[id(basis)] = weakref.ref(basis)
    return basis


def detached(x: Any) -> Any:
    """``x``, or a copy of it where it is an identity basis or a view of one (a derivative
    that is the basis itself, ``jacfwd`` of the identity map): the user's result must own
    its memory, and a shared basis must never be handed out."""
    if type(x) is not np.ndarray or (id(x) not in _IDENTITIES and id(x.base) not in _IDENTITIES):
        return x  # (by id first: the common case, no basis, costs no call)
    return x.copy() if is_identity_basis(x) or is_identity_basis(x.base) else x


def is_identity_basis(x: object) -> bool:
    """Whether ``x`` is an array made by ``identity_basis`` (that very object)."""
    if type(x) is not np.ndarray:
        return False
    ref = _IDENTITIES.get(id(x))
    return ref is not None and ref() is x


def axis_size(values: Sequence[Any], dims: Sequence[int | None]) -> int:
    """The batch size, read off the first batched operand."""
    for value, dim in zip(values, dims, strict=True):
        if dim is not None:
            return shape_of(value)[dim]
    raise ValueError("a batching rule was called with no batched operand")


def to_front(x: Any, dim: int | None) -> Any:
    """``x`` with its batch axis moved to axis 0 (unchanged if already there)."""
    if dim is None or dim == 0:
        return x
    ndim = len(shape_of(x))
    dim %= ndim
    return x.transpose((dim, *(i for i in range(ndim) if i != dim)))


def materialized(values: Sequence[Any], dims: Sequence[int | None]) -> list[Any]:
    """Every operand with a batch axis at the front, unbatched ones broadcast (a view)."""
    size = axis_size(values, dims)
    return [
        np.broadcast_to(v, (size, *shape_of(v))) if d is None else to_front(v, d)
        for v, d in zip(values, dims, strict=True)
    ]


def elementwise_rule(primitive: Primitive, *, gufunc: bool = False) -> BatchRule:
    """Broadcasting n-ary elementwise primitives: batch axes to the front, ranks aligned.

    An unbatched operand is left as is: it broadcasts against the per-example axes from the
    right. A batched operand of lower per-example rank gets singleton axes after its batch
    axis so that its example axes line up with the others'.

    ``gufunc=True`` for a primitive that broadcasts over leading axes only, with core axes at
    the end (``solve``, the matrix functions): its batch axis must be in front of them, so
    the short paths that keep a batch axis elsewhere (last, or the same inner axis of two
    operands) are not taken.
    """

    def rule(
        values: Sequence[Any], dims: Sequence[int | None], **params: Any
    ) -> tuple[Any, int | None]:
        if len(values) == 1:  # one operand: an elementwise function acts wherever its
            # batch axis is (nothing to move), a gufunc's once it is in front of the core axes
            d = dims[0]
            if d == 0 or not gufunc:
                return primitive.bind(values[0], **params), d
        # The commonest case first: one batched operand and a number, or an array that
        # broadcasts against the per-example axes behind a leading batch axis. NumPy's own
        # broadcasting then keeps the batch axis where it is, with nothing to move.
        if len(values) == 2:
            a, b = values
            da, db = dims
            if (da is None) != (db is None):
                v, u, d = (a, b, da) if db is None else (b, a, db)
                tu = type(u)
                if tu is float or tu is int:
                    return primitive.bind(a, b, **params), d
                if tu is np.ndarray and u.ndim < len(v.shape):
                    if u.ndim == 0 or d == 0:
                        return primitive.bind(a, b, **params), d
                    if not gufunc and d == len(v.shape) - 1:
                        # batch axis last (``M @ ct`` batched): the array gets the
                        # singleton axis instead, behind its own
                        u = u[..., None]
                        pair = (a, u) if db is None else (u, b)
                        return primitive.bind(*pair, **params), d
            elif (
                da == db
                and (da == 0 or not gufunc)
                and type(a) is np.ndarray
                and type(b) is np.ndarray
                and a.ndim == b.ndim
            ):  # both batched at the same axis of the same rank (a cotangent sum in a
                # batched backward pass): the batch axes line up as they are
                return primitive.bind(a, b, **params), da
        # one pass for the shapes and the per-example rank (the hot path of every batched
        # elementwise operation: an ndarray's shape is read without a call)
        shapes = []
        rank = 0
        for v, d in zip(values, dims, strict=True):
            shape = v.shape if type(v) is np.ndarray else shape_of(v)
            shapes.append(shape)
            if len(shape) - (d is not None) > rank:
                rank = len(shape) - (d is not None)
        operands = list(values)
        for i, d in enumerate(dims):
            if d is None:
                continue
            v, shape = values[i], shapes[i]
            if d != 0:  # (to_front, with the shape known)
                ndim = len(shape)
                d %= ndim
                order = (d, *(j for j in range(ndim) if j != d))
                v, shape = v.transpose(order), tuple(shape[j] for j in order)
            if len(shape) - 1 < rank:
                v = v.reshape((shape[0],) + (1,) * (rank - len(shape) + 1) + shape[1:])
            operands[i] = v
        return primitive.bind(*operands, **params), 0

    return rule


def reduction_rule(primitive: Primitive) -> BatchRule:
    """Reductions over ``axes`` (with ``keepdims``): batch axis to the front, axes shifted."""

    def rule(
        values: Sequence[Any], dims: Sequence[int | None], *, axes: tuple[int, ...], **params: Any
    ) -> tuple[Any, int]:
        x = to_front(values[0], dims[0])
        return primitive.bind(x, axes=tuple(a + 1 for a in axes), **params), 0

    return rule
