"""Reductions: sum, mean, prod, max, min, with NumPy's ``axis`` and ``keepdims``.

A reduction's VJP broadcasts the cotangent back over the reduced axes (``_expand``). ``max``
and ``min`` share the derivative equally among ties (autograd's convention), with weights
computed from primal values: the tie pattern is piecewise constant, so it carries no
derivative of its own. ``prod`` uses, for each element, the product of the *other*
elements of its group, built from two exclusive cumulative products; this is exact where
elements are zero (no division by ``x``) and differentiable to any order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from transforms.batch import defbatch
from transforms.core import Array, ArrayLike, Primitive
from transforms.jvp import defjvp
from transforms.vjp import defvjp

from . import _indexing, _shape
from ._batching import reduction_rule
from ._define import dtype_of, normalize_axes, shape_of

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin"]

Axis = int | Sequence[int] | None


def _expand(ct: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    """Broadcast the cotangent of a reduction over ``axes`` back to the operand's ``shape``."""
    if not keepdims:
        ct = _shape.reshape(ct, _kept_shape(shape, axes))
    return _shape.broadcast_to(ct, shape)


def _operand(a: ArrayLike) -> Any:
    return _shape.asarray(a) if isinstance(a, (list, tuple)) else a


# ---- sum ---------------------------------------------------------------------------------
sum_p = Primitive("sum", lambda x, axes, keepdims: np.sum(x, axis=axes, keepdims=keepdims))
defjvp(sum_p, lambda t, ans, x, axes, keepdims: sum_p.bind(t, axes=axes, keepdims=keepdims))
defvjp(sum_p, lambda ans, x, axes, keepdims: lambda ct: _expand(ct, shape_of(x), axes, keepdims))
defbatch(sum_p, reduction_rule(sum_p))


def sum(a: ArrayLike, axis: Axis = None, dtype: Any = None, *, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.sum``."""
    a = _operand(a)
    if dtype is not None:
        a = _shape.astype(a, dtype)
    axes = normalize_axes(axis, len(shape_of(a)))
    return sum_p.bind(a, axes=axes, keepdims=keepdims)  # type: ignore[no-any-return]


def mean(a: ArrayLike, axis: Axis = None, dtype: Any = None, *, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.mean`` (a composite: ``sum`` divided by the count)."""
    a = _operand(a)
    shape = shape_of(a)
    if not np.issubdtype(dtype_of(a), np.inexact) and dtype is None:
        dtype = np.float64
    count = math.prod(shape[i] for i in normalize_axes(axis, len(shape)))
    return sum(a, axis, dtype, keepdims=keepdims) / count


# ---- prod --------------------------------------------------------------------------------
def _exclusive_cumprod(y: Any) -> Any:
    """``[1, y0, y0*y1, ...]`` along the last axis, by a log-depth scan of multiplies."""
    shape = shape_of(y)
    n = shape[-1]
    if n == 0:
        return y
    ones = np.ones(shape[:-1] + (1,), dtype=dtype_of(y))
    scan = _shape.concatenate([ones, _indexing.getitem(y, (Ellipsis, slice(None, -1)))], axis=-1)
    k = 1
    while k < n:
        pad = np.ones(shape[:-1] + (k,), dtype=dtype_of(y))
        shifted = _indexing.getitem(scan, (Ellipsis, slice(None, -k)))
        scan = scan * _shape.concatenate([pad, shifted], axis=-1)
        k *= 2
    return scan


def _product_of_others(x: Any, axes: tuple[int, ...]) -> Any:
    """For each element of ``x``, the product of the other elements of its reduction group."""
    shape = shape_of(x)
    kept = [i for i in range(len(shape)) if i not in axes]
    perm = kept + list(axes)
    group = math.prod(shape[i] for i in axes)
    y = _shape.reshape(_shape.transpose(x, perm), tuple(shape[i] for i in kept) + (group,))
    reverse = (Ellipsis, slice(None, None, -1))
    left = _exclusive_cumprod(y)
    right = _indexing.getitem(_exclusive_cumprod(_indexing.getitem(y, reverse)), reverse)
    others = _shape.reshape(left * right, tuple(shape[i] for i in perm))
    return _shape.transpose(others, [int(i) for i in np.argsort(perm)])


prod_p = Primitive("prod", lambda x, axes, keepdims: np.prod(x, axis=axes, keepdims=keepdims))
defjvp(
    prod_p,
    lambda t, ans, x, axes, keepdims: sum_p.bind(
        t * _product_of_others(x, axes), axes=axes, keepdims=keepdims
    ),
)


def _prod_vjp(ans: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    others = _product_of_others(x, axes)
    return lambda ct: _expand(ct, shape_of(x), axes, keepdims) * others


defvjp(prod_p, _prod_vjp)
defbatch(prod_p, reduction_rule(prod_p))


def prod(a: ArrayLike, axis: Axis = None, dtype: Any = None, *, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.prod`` (exact derivative where elements are zero)."""
    a = _operand(a)
    if dtype is not None:
        a = _shape.astype(a, dtype)
    axes = normalize_axes(axis, len(shape_of(a)))
    return prod_p.bind(a, axes=axes, keepdims=keepdims)  # type: ignore[no-any-return]


# ---- max, min: ties share the derivative equally -------------------------------------------
def _tie_weights(ans: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """1/k on each of the k elements that attain the extremum of their group, 0 elsewhere.

    Built from comparisons (no derivative of their own), so it batches like any value.
    """
    if not keepdims:
        ans = _shape.reshape(ans, _kept_shape(shape_of(x), axes))
    hits = _shape.astype(x == ans, dtype_of(x))  # the operator: a comparison primitive
    return hits / sum(hits, axes, keepdims=True)


def _kept_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _extremum(name: str, impl: Any) -> Primitive:
    primitive = Primitive(name, lambda x, axes, keepdims: impl(x, axis=axes, keepdims=keepdims))
    defjvp(
        primitive,
        lambda t, ans, x, axes, keepdims: sum_p.bind(
            t * _tie_weights(ans, x, axes, keepdims), axes=axes, keepdims=keepdims
        ),
    )

    def maker(ans: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        weights = _tie_weights(ans, x, axes, keepdims)
        return lambda ct: _expand(ct, shape_of(x), axes, keepdims) * weights

    defvjp(primitive, maker)
    defbatch(primitive, reduction_rule(primitive))
    return primitive


max_p = _extremum("max", np.max)
min_p = _extremum("min", np.min)


def max(a: ArrayLike, axis: Axis = None, *, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.max``; tied maxima share the derivative equally."""
    a = _operand(a)
    axes = normalize_axes(axis, len(shape_of(a)))
    return max_p.bind(a, axes=axes, keepdims=keepdims)  # type: ignore[no-any-return]


def min(a: ArrayLike, axis: Axis = None, *, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.min``; tied minima share the derivative equally."""
    a = _operand(a)
    axes = normalize_axes(axis, len(shape_of(a)))
    return min_p.bind(a, axes=axes, keepdims=keepdims)  # type: ignore[no-any-return]


amax = max
amin = min
