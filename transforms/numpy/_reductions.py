"""Reductions: sum, mean, prod, max, min, median (primitives) and the composites built on
them (average, var, std, ptp, trace, logsumexp, the nan-ignoring nan* family), with NumPy's
``axis`` (int, tuple, negative, None), ``keepdims`` and, where NumPy has it, ``dtype``.

A reduction's VJP broadcasts the cotangent back over the reduced axes (``_expand``). ``max``
and ``min`` share the derivative equally among ties (autograd's convention), with weights
computed from primal values: the tie pattern is piecewise constant, so it carries no
derivative of its own. ``median`` does the same with the one or two middle order statistics
(half each for an even count, as NumPy averages them), each shared among the elements equal
to it. ``prod`` uses, for each element, the product of the *other* elements of its group,
built from two exclusive cumulative products; this is exact where elements are zero (no
division by ``x``) and differentiable to any order.

Conventions at kinks: ``std`` (and ``nanstd``) has derivative 0 where the variance is exactly
0 (like ``|x|`` at 0), never NaN; the nan* functions give NaN elements a zero derivative.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

import numpy as np

from transforms.batching import defbatch
from transforms.core import Array, ArrayLike, Primitive, arrays, peek
from transforms.core.arrays import reduce
from transforms.forward import defjvp
from transforms.reverse import defvjp
from transforms.sparsity import defsparsity
from transforms.sparsity import reduction_rule as sparsity_reduction

from . import _arithmetic, _elementwise, _indexing, _nondiff, _shape
from ._batching import reduction_rule, to_front
from ._define import checkable, dtype_of, nondifferentiable, normalize_axes, reject_out, shape_of
from ._shape import operand as _operand

__all__ = [
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "average",
    "var",
    "std",
    "ptp",
    "median",
    "trace",
    "logsumexp",
    "nansum",
    "nanprod",
    "nanmean",
    "nanmax",
    "nanmin",
    "nanvar",
    "nanstd",
]

Axis = int | Sequence[int] | None


def _expand(ct: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """Broadcast the cotangent of a reduction over ``axes`` back to the shape of ``x``.

    Reduced leading axes (a full reduction, the common case) come back by broadcasting alone.
    An operand of another library (a Dask array) gets the cotangent in its own layout, as
    ``ones_like(x) * ct`` (exact: ``1 * c`` is ``c``): ``grad``'s NumPy seed broadcast to the
    data's shape would be a NumPy array of the data's size, built on the client and shipped
    in the task graph, where this one is computed chunk by chunk where the data lives.
    """
    shape = shape_of(x)
    if not keepdims and axes != tuple(range(len(axes))):
        ct = _shape.reshape(ct, _kept_shape(shape, axes))
    if type(x) is not np.ndarray and arrays.is_foreign(peek(x)):
        return _arithmetic.multiply(_shape.ones_like(x, dtype=dtype_of(ct)), ct)
    return _shape.broadcast_to(ct, shape)


def _reducing(ufunc: np.ufunc) -> Callable[..., Any]:
    """A reduction's implementation: ``ufunc.reduce`` called on an ndarray directly, through
    the seam (``arrays.reduce``) for another library's array."""

    def impl(x: Any, axes: Any, keepdims: bool) -> Any:
        if type(x) is np.ndarray:
            return ufunc.reduce(x, axes, keepdims=keepdims)
        return reduce(ufunc, x, axes, keepdims)

    return impl


# ---- sum ---------------------------------------------------------------------------------
# The impls call the ufuncs' ``reduce``: what ``np.sum``/``np.prod``/``np.max`` call after
# their ``__array_function__`` dispatch and keyword handling (a microsecond per call, which a
# reduction inside every pullback and batching rule pays many times over).
sum_p = Primitive("sum", _reducing(np.add))
defjvp(sum_p, lambda t, ans, x, axes, keepdims: sum_p.bind(t, axes=axes, keepdims=keepdims))
defvjp(sum_p, lambda ans, x, axes, keepdims: lambda ct: _expand(ct, x, axes, keepdims))
defbatch(sum_p, reduction_rule(sum_p))
defsparsity(sum_p, sparsity_reduction(False))


def sum(
    a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False
) -> Array:
    """Differentiable ``numpy.sum``."""
    reject_out("sum", out)
    a = _operand(a)
    if dtype is not None:
        a = _shape.astype(a, dtype)
    axes = normalize_axes(axis, len(shape_of(a)))
    total = sum_p.bind(a, axes=axes, keepdims=keepdims)
    # NumPy's sum widens a small integer (int32, bool) to the platform's int unless asked
    if dtype is not None and dtype_of(total) != dtype:
        return _shape.astype(total, dtype)
    return total


def mean(
    a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False
) -> Array:
    """Differentiable ``numpy.mean`` (a composite: ``sum`` divided by the count)."""
    reject_out("mean", out)
    a = _operand(a)
    shape = shape_of(a)
    if not np.issubdtype(dtype_of(a), np.inexact) and dtype is None:
        dtype = np.float64
    count = math.prod(shape[i] for i in normalize_axes(axis, len(shape)))
    # divide, not ``/``: NumPy's operators on 0-d arrays return NumPy scalars, not arrays
    return _arithmetic.divide(sum(a, axis, dtype, keepdims=keepdims), count)


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


prod_p = Primitive("prod", _reducing(np.multiply))
defjvp(
    prod_p,
    lambda t, ans, x, axes, keepdims: sum_p.bind(
        t * _product_of_others(x, axes), axes=axes, keepdims=keepdims
    ),
)


def _prod_vjp(ans: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    others = _product_of_others(x, axes)
    return lambda ct: _expand(ct, x, axes, keepdims) * others


defvjp(prod_p, _prod_vjp)
defbatch(prod_p, reduction_rule(prod_p))
defsparsity(prod_p, sparsity_reduction(True))


def prod(
    a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False
) -> Array:
    """Differentiable ``numpy.prod`` (exact derivative where elements are zero)."""
    reject_out("prod", out)
    a = _operand(a)
    if dtype is not None:
        a = _shape.astype(a, dtype)
    axes = normalize_axes(axis, len(shape_of(a)))
    return prod_p.bind(a, axes=axes, keepdims=keepdims)


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


def _extremum(name: str, ufunc: np.ufunc) -> Primitive:
    primitive = Primitive(name, _reducing(ufunc))
    defjvp(
        primitive,
        lambda t, ans, x, axes, keepdims: sum_p.bind(
            t * _tie_weights(ans, x, axes, keepdims), axes=axes, keepdims=keepdims
        ),
    )

    def maker(ans: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        weights = _tie_weights(ans, x, axes, keepdims)
        return lambda ct: _expand(ct, x, axes, keepdims) * weights

    defvjp(primitive, maker)
    defbatch(primitive, reduction_rule(primitive))
    defsparsity(primitive, sparsity_reduction(False))  # piecewise linear
    return primitive


max_p = _extremum("max", np.maximum)
min_p = _extremum("min", np.minimum)


def max(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.max``; tied maxima share the derivative equally."""
    reject_out("max", out)
    a = _operand(a)
    axes = normalize_axes(axis, len(shape_of(a)))
    return max_p.bind(a, axes=axes, keepdims=keepdims)


def min(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.min``; tied minima share the derivative equally."""
    reject_out("min", out)
    a = _operand(a)
    axes = normalize_axes(axis, len(shape_of(a)))
    return min_p.bind(a, axes=axes, keepdims=keepdims)


amax = max
amin = min


# ---- median: the middle order statistic(s), ties sharing their weight ----------------------
def _median_weights_impl(x: Any, axes: tuple[int, ...]) -> Any:
    """Weights (same shape as ``x``) that pick the median of each reduction group.

    An odd count weighs the middle order statistic 1; an even count weighs each of the two
    middle ones 1/2 (NumPy averages them). Each order statistic's weight is shared equally
    by the elements equal to it, so the weights do not depend on how a sort breaks ties.
    A NaN order statistic (NumPy's median is NaN there) gives no element a weight.
    """
    if arrays.is_foreign(x):
        return _lazy_median_weights(x, axes)
    x = np.asarray(x)
    dtype = x.real.dtype if np.issubdtype(x.dtype, np.inexact) else np.dtype(np.float64)
    kept = [i for i in range(x.ndim) if i not in axes]
    perm = kept + list(axes)
    group = math.prod(x.shape[i] for i in axes)
    y = np.transpose(x, perm).reshape(tuple(x.shape[i] for i in kept) + (group,))
    w = np.zeros(y.shape, dtype=dtype)
    if group:
        ordered = np.sort(y, axis=-1)
        middle = {(group - 1) // 2, group // 2}
        for k in middle:
            hits = y == ordered[..., k : k + 1]
            count = hits.sum(axis=-1, keepdims=True)
            share = np.divide(1.0 / len(middle), count, where=count > 0, out=np.zeros(count.shape))
            w += hits * share.astype(dtype)
    w = w.reshape(tuple(x.shape[i] for i in perm))
    return np.transpose(w, [int(i) for i in np.argsort(perm)])


def _lazy_median_weights(x: Any, axes: tuple[int, ...]) -> Any:
    """``_median_weights_impl`` for another library's array (Dask has no sort): the middle
    order statistics from the median ``m`` itself. For an odd count it is ``m``; for an even
    one, ``m`` lies between the two middle ones ``a <= m <= b`` (rounding keeps a midpoint
    between its ends), so ``a`` is the largest element below ``m`` if at least half the
    elements are below it, else ``m`` (and ``b`` likewise above). Where the median is NaN no
    element has a weight."""
    dtype = x.real.dtype if np.issubdtype(x.dtype, np.inexact) else np.dtype(np.float64)
    kept = [i for i in range(x.ndim) if i not in axes]
    perm = kept + list(axes)
    group = math.prod(x.shape[i] for i in axes)
    transposed = tuple(x.shape[i] for i in perm)
    if group == 0:
        return np.zeros_like(x, dtype=dtype)
    y = np.reshape(np.transpose(x, perm), tuple(x.shape[i] for i in kept) + (group,))
    m = np.median(y, axis=-1, keepdims=True)
    if group % 2:
        middle = [m]
    else:
        half = group // 2
        # (a + b overflows to inf where both are huge: the midpoint of the quarters, exact)
        quarters = np.median(y * 0.25, axis=-1, keepdims=True) * 4
        m = np.where(np.isinf(m) & np.isfinite(quarters), quarters, m)
        below = np.max(np.where(y < m, y, -np.inf), axis=-1, keepdims=True)
        above = np.min(np.where(y > m, y, np.inf), axis=-1, keepdims=True)
        middle = [
            np.where(np.sum(y < m, axis=-1, keepdims=True) >= half, below, m),
            np.where(np.sum(y > m, axis=-1, keepdims=True) >= half, above, m),
        ]
    w: Any = 0
    for statistic in middle:
        hits = y == statistic
        count = np.sum(hits, axis=-1, keepdims=True)
        share = np.where(count > 0, (1.0 / len(middle)) / np.maximum(count, 1), 0.0)
        w = w + hits * share.astype(dtype)
    w = np.reshape(w, transposed)
    return np.transpose(w, [int(i) for i in np.argsort(perm)]).astype(dtype)


median_weights_p = nondifferentiable("median_weights", _median_weights_impl)
defbatch(
    median_weights_p,
    lambda values, dims, axes: (
        median_weights_p.bind(to_front(values[0], dims[0]), axes=tuple(a + 1 for a in axes)),
        0,
    ),
)

median_p = Primitive("median", lambda x, axes, keepdims: np.median(x, axis=axes, keepdims=keepdims))
defjvp(
    median_p,
    lambda t, ans, x, axes, keepdims: sum_p.bind(
        t * median_weights_p.bind(x, axes=axes), axes=axes, keepdims=keepdims
    ),
)


def _median_vjp(ans: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    weights = median_weights_p.bind(x, axes=axes)
    return lambda ct: _expand(ct, x, axes, keepdims) * weights


defvjp(median_p, _median_vjp)
defbatch(median_p, reduction_rule(median_p))
defsparsity(median_p, sparsity_reduction(False))  # piecewise linear


def median(
    a: ArrayLike,
    axis: Axis = None,
    out: None = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Array:
    """Differentiable ``numpy.median``.

    The derivative goes to the middle element (odd count) or half to each of the two middle
    elements (even count, as NumPy averages them); elements tied with a middle value share
    its weight equally (like tied maxima in ``max``).
    """
    reject_out("median", out)
    a = _operand(a)
    axes = normalize_axes(axis, len(shape_of(a)))
    return median_p.bind(a, axes=axes, keepdims=keepdims)


def ptp(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.ptp`` (a composite: ``max - min``, ties sharing)."""
    reject_out("ptp", out)
    a = _operand(a)
    return _arithmetic.subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


# ---- average, var, std ------------------------------------------------------------------------
def _group_size(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return math.prod(shape[i] for i in axes)


def _abs2(d: Any) -> Any:
    """``|d|**2`` as ``d * d`` for real ``d`` (exact, smooth at 0); ``Re(d * conj(d))`` for
    complex ``d`` (real, as NumPy's ``var`` of complex data)."""
    if not np.issubdtype(dtype_of(d), np.complexfloating):
        return d * d
    return _elementwise.real(d * _elementwise.conj(d))


def _inexact(a: Any, dtype: Any) -> Any:
    """``a`` cast to ``dtype``, or to float64 if it is an integer/bool array (as NumPy's
    ``mean``/``var`` compute)."""
    if dtype is not None:
        return _shape.astype(a, dtype)
    if not np.issubdtype(dtype_of(a), np.inexact):
        return _shape.astype(a, np.float64)
    return a


def _ddof(ddof: float, correction: float | None) -> float:
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(
    a: ArrayLike,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    ddof: float = 0,
    keepdims: bool = False,
    *,
    correction: float | None = None,
) -> Array:
    """Differentiable ``numpy.var`` (a composite: mean of ``|a - mean(a)|**2``).

    ``ddof`` (or its array-API name ``correction``) divides by ``N - ddof``; ``where=`` and
    ``mean=`` are not supported.
    """
    reject_out("var", out)
    x = _inexact(_operand(a), dtype)
    axes = normalize_axes(axis, len(shape_of(x)))
    n = _group_size(shape_of(x), axes)
    d = x - sum(x, axes, keepdims=True) / n
    denominator = n - _ddof(ddof, correction)
    return _arithmetic.divide(
        sum(_abs2(d), axes, keepdims=keepdims), denominator if denominator > 0 else 0
    )


def _safe_sqrt(v: Any) -> Array:
    """``sqrt(v)`` whose derivative is 0, not NaN, where ``v == 0`` exactly.

    ``sqrt``'s derivative is infinite at 0, and a zero tangent times it is NaN. Here the
    square root is taken only of positive ``v`` (of 1 elsewhere, and discarded), and ``v``
    that is 0 or NaN passes as itself, 0 as a constant: so no NaN enters either mode, at
    any order, and a NaN variance whose tangent is 0 (``nanstd`` of an all-NaN group) keeps
    a zero derivative.
    """
    positive = _arithmetic.greater(v, 0)
    root = _elementwise.sqrt(_shape.where(positive, v, 1))
    rest = _shape.where(_arithmetic.equal(v, 0), 0, v)
    return _shape.where(positive, root, rest)


def std(
    a: ArrayLike,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    ddof: float = 0,
    keepdims: bool = False,
    *,
    correction: float | None = None,
) -> Array:
    """Differentiable ``numpy.std`` (a composite: the square root of ``var``).

    At zero variance (all elements of a group equal) the derivative is 0 (the middle of the
    one-sided derivatives ``±std(t)``, like ``|x|`` at 0), never NaN.
    """
    reject_out("std", out)
    v = var(a, axis, dtype, ddof=ddof, keepdims=keepdims, correction=correction)
    return _safe_sqrt(v)


def average(
    a: ArrayLike,
    axis: Axis = None,
    weights: ArrayLike | None = None,
    returned: bool = False,
    *,
    keepdims: bool = False,
) -> Any:
    """Differentiable ``numpy.average`` (a composite of ``sum`` and ``divide``), in ``a``
    and in ``weights``.

    With ``returned=True``, returns ``(average, sum_of_weights)``, the latter broadcast to
    the average's shape, as NumPy does.
    """
    a = _operand(a)
    a_shape = shape_of(a)
    axes = normalize_axes(axis, len(a_shape))
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        if not returned:
            return avg
        count = _group_size(a_shape, axes)
        return avg, np.full(shape_of(avg), count, dtype=dtype_of(avg))
    w = _operand(weights)
    w_shape = shape_of(w)
    if w_shape != a_shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        # axes in the order given (NumPy lines weights' axes up with `axis` as written)
        given = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        order = [int(ax) % len(a_shape) for ax in given]
        if w_shape != tuple(a_shape[ax] for ax in order):
            raise ValueError(
                "Shape of weights must be consistent with shape of a along specified axis."
            )
        w = _shape.transpose(w, [int(i) for i in np.argsort(order)]) if len(order) > 1 else w
        w = _shape.reshape(w, tuple(n if i in axes else 1 for i, n in enumerate(a_shape)))
    inexact = np.issubdtype(dtype_of(a), np.inexact)
    dtype = np.result_type(dtype_of(a), dtype_of(w), *(() if inexact else (np.float64,)))
    if dtype_of(w) != dtype:
        w = _shape.astype(w, dtype)
    if dtype_of(a) != dtype:
        a = _shape.astype(a, dtype)
    scale = sum(_shape.broadcast_to(w, a_shape), axes, keepdims=keepdims)
    checked = checkable(scale)
    if checked is not None and np.any(checked == 0):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = _arithmetic.divide(sum(a * w, axes, keepdims=keepdims), scale)
    if not returned:
        return avg
    return avg, _shape.broadcast_to(scale, shape_of(avg))


# ---- trace -------------------------------------------------------------------------------------
def trace(
    a: ArrayLike,
    offset: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    dtype: Any = None,
    out: None = None,
) -> Array:
    """Differentiable ``numpy.trace``: ``sum`` of the ``diagonal`` (whose VJP writes the
    cotangent back onto the diagonal)."""
    reject_out("trace", out)
    return sum(_indexing.diagonal(a, offset, axis1, axis2), -1, dtype)


# ---- logsumexp, softmax, log_softmax ------------------------------------------------------
# The one implementation of the softmax family: ``transforms.scipy.special`` and
# ``transforms.nn`` re-export these (softmax and log_softmax are not NumPy names: not in
# ``__all__``). Each is shifted by the maximum ``m`` of its input along the axes, held constant
# (``stop_gradient``): the result does not depend on it, so the derivatives are exactly the
# unshifted formula's at every order, whatever ``max`` does at ties, and an entry at ``-inf``
# has derivative exactly 0 (``exp(-inf - m) == 0``). In ``logsumexp`` with scale factors
# ``b``, the maximum is over the entries with ``b != 0`` (SciPy's rule: a dominant entry with
# ``b == 0`` must not underflow the others), and such an entry keeps its derivative
# ``exp(a - logsumexp(a, b=b))`` in ``b``.
@overload
def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: Literal[False] = False,
) -> Array: ...
@overload
def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    *,
    return_sign: Literal[True],
) -> tuple[Array, Array]: ...
@overload
def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
) -> Array | tuple[Array, Array]: ...
def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
) -> Array | tuple[Array, Array]:
    """``log(sum(b * exp(a)))`` over ``axis``, numerically stable, with the arguments and
    results of ``scipy.special.logsumexp``.

    A composite: ``log(sum(b * exp(a - m))) + m`` with ``m`` the (constant) maximum over the
    entries with ``b != 0``. Differentiable in ``a`` and in ``b``: the derivative in ``a`` is
    ``b * exp(a - logsumexp(...))`` (``softmax`` when ``b`` is absent), exactly 0 at ``-inf``
    entries; in ``b`` it is ``exp(a - logsumexp(...))``, also where ``b == 0``. A negative sum
    gives NaN, or, with ``return_sign=True``, ``(log|s|, sign(s))`` (the sign has derivative
    0). Real inputs.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> a = np.array([0.0, np.log(3.0), -np.inf])
        >>> float(tnp.logsumexp(a))  # log(1 + 3 + 0)
        1.3862943611198906
        >>> T.grad(tnp.logsumexp)(a)  # softmax: the -inf entry gets exactly 0
        array([0.25, 0.75, 0.  ])
        >>> float(tnp.logsumexp(np.array([5.0, 0.0]), b=np.array([0.0, 2.0])))  # log(2)
        0.6931471805599453
    """
    a = _shape.asarray(a)
    if b is not None:
        b = _shape.asarray(b)
        target = np.broadcast_shapes(shape_of(a), shape_of(b))
        a, b = _shape.broadcast_to(a, target), _shape.broadcast_to(b, target)
    if not shape_of(a):  # SciPy takes a 0-d input as 1-d (keepdims then keeps one axis)
        a = _shape.reshape(a, (1,))
        b = None if b is None else _shape.reshape(b, (1,))
    axes = normalize_axes(axis, len(shape_of(a)))
    if 0 in shape_of(a):
        return _empty_logsumexp(a, axes, keepdims, return_sign)
    held = _elementwise.stop_gradient(a)
    if b is not None:
        held = _shape.where(b != 0, held, -np.inf)
    m = max(held, axes, keepdims=True)
    m = _shape.where(_nondiff.isfinite(m), m, 0.0)
    z = a - m
    if b is None:
        e = _elementwise.exp(z)
    else:
        # an entry with b == 0 above the others' maximum: 0 * exp(z) must stay 0, not NaN
        limit = float(np.log(np.finfo(np.result_type(dtype_of(z), 1.0)).max))
        e = b * _elementwise.exp(_shape.where(b == 0, _arithmetic.minimum(z, limit), z))
    s = sum(e, axes, keepdims=keepdims)
    if not keepdims:
        m = _shape.reshape(m, shape_of(s))
    with np.errstate(divide="ignore"):  # log(0) = -inf: every entry is -inf (or b == 0)
        if b is None and not return_sign:  # s >= 0
            return _arithmetic.add(_elementwise.log(s), m)  # an array, not NumPy's scalar
        out = _arithmetic.add(_elementwise.log(_elementwise.abs(s)), m)
    sign = _elementwise.sign(s)
    if return_sign:
        return out, sign
    return _shape.where(sign < 0, np.nan, out)


def _empty_logsumexp(
    a: Any, axes: tuple[int, ...], keepdims: bool, return_sign: bool
) -> Array | tuple[Array, Array]:
    """SciPy's value for no elements: ``-inf`` (with sign ``sign(-inf) == -1``)."""
    dtype = np.result_type(dtype_of(a), 1.0)
    shape = np.sum(np.empty(shape_of(a)), axis=axes, keepdims=keepdims).shape
    out = np.full(shape, -np.inf, dtype)
    return (out, np.sign(out)) if return_sign else out


def softmax(x: ArrayLike, axis: Axis = None) -> Array:
    """``exp(x) / sum(exp(x))`` over ``axis`` (``scipy.special.softmax``; ``transforms.nn``'s
    defaults to the last axis).

    A composite of what SciPy computes, ``exp(x - m) / sum(exp(x - m))`` with ``m`` the
    maximum (a constant: the result does not depend on it).
    """
    x = _shape.asarray(x)
    e = _elementwise.exp(x - max(_elementwise.stop_gradient(x), axis, keepdims=True))
    return _arithmetic.divide(e, sum(e, axis, keepdims=True))


def log_softmax(x: ArrayLike, axis: Axis = None) -> Array:
    """``x - logsumexp(x)`` over ``axis`` (``scipy.special.log_softmax``).

    A composite of what SciPy computes, ``(x - m) - log(sum(exp(x - m)))`` with ``m`` the
    maximum (a constant, 0 where it is infinite), so that it is accurate where
    ``log(softmax(x))`` would underflow.
    """
    x = _shape.asarray(x)
    m = max(_elementwise.stop_gradient(x), axis, keepdims=True)
    shifted = x - _shape.where(_nondiff.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):  # log(0) = -inf: every entry is -inf
        return _arithmetic.subtract(
            shifted, _elementwise.log(sum(_elementwise.exp(shifted), axis, keepdims=True))
        )


# ---- nan-ignoring reductions: NaNs replaced by a neutral value (zero derivative there) --------
def _nan_filled(a: Any, fill: float) -> tuple[Any, Any]:
    """``a`` with NaNs replaced by ``fill`` (by ``where``: no derivative reaches them), and
    the NaN mask; ``None`` mask for integer/bool data, which holds no NaN."""
    if not np.issubdtype(dtype_of(a), np.inexact):
        return a, None
    mask = _nondiff.isnan(a)
    return _shape.where(mask, fill, a), mask


def _nan_count(a: Any, mask: Any, axes: tuple[int, ...], keepdims: bool, dtype: Any) -> Any:
    """The number of non-NaN elements of each group, in the (floating) ``dtype``."""
    if mask is None:
        return _group_size(shape_of(a), axes)
    present = _shape.astype(_nondiff.logical_not(mask), np.intp)
    return _shape.astype(sum(present, axes, keepdims=keepdims), dtype)


def nansum(
    a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False
) -> Array:
    """Differentiable ``numpy.nansum`` (a composite: NaNs replaced by 0, then ``sum``)."""
    reject_out("nansum", out)
    filled, _ = _nan_filled(_operand(a), 0)
    return sum(filled, axis, dtype, keepdims=keepdims)


def nanprod(
    a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False
) -> Array:
    """Differentiable ``numpy.nanprod`` (a composite: NaNs replaced by 1, then ``prod``)."""
    reject_out("nanprod", out)
    filled, _ = _nan_filled(_operand(a), 1)
    return prod(filled, axis, dtype, keepdims=keepdims)


def nanmean(
    a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False
) -> Array:
    """Differentiable ``numpy.nanmean`` (a composite: ``nansum`` over the non-NaN count).
    An all-NaN group gives NaN, as in NumPy (without its warning), with zero derivative."""
    reject_out("nanmean", out)
    a = _inexact(_operand(a), dtype)
    filled, mask = _nan_filled(a, 0)
    axes = normalize_axes(axis, len(shape_of(a)))
    total = sum(filled, axes, keepdims=keepdims)
    count = _nan_count(a, mask, axes, keepdims, dtype_of(total))
    return _divide_by_count(total, count, mask)


def _divide_by_count(total: Array, count: Any, mask: Any) -> Array:
    """``total / count``, NaN (with zero derivative, and no warning) where ``count <= 0``."""
    if mask is None:  # a plain count of every element
        return _arithmetic.divide(total, count if count > 0 else 0)
    positive = _arithmetic.greater(count, 0)
    return _shape.where(positive, total / _shape.where(positive, count, 1), np.nan)


def _nan_extremum(
    reduce: Callable[..., Array], fill: float, a: Any, axis: Axis, keepdims: bool
) -> Array:
    a = _operand(a)
    filled, mask = _nan_filled(a, fill)
    result = reduce(filled, axis, keepdims=keepdims)
    if mask is None:
        return result
    axes = normalize_axes(axis, len(shape_of(a)))
    all_nan = _nondiff.all(mask, axes, keepdims=keepdims)
    return _shape.where(all_nan, np.nan, result)


def nanmax(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.nanmax`` (a composite: NaNs replaced by ``-inf``, then ``max``;
    an all-NaN group gives NaN). Tied maxima share the derivative."""
    reject_out("nanmax", out)
    return _nan_extremum(max, -np.inf, a, axis, keepdims)


def nanmin(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    """Differentiable ``numpy.nanmin`` (a composite: NaNs replaced by ``inf``, then ``min``;
    an all-NaN group gives NaN). Tied minima share the derivative."""
    reject_out("nanmin", out)
    return _nan_extremum(min, np.inf, a, axis, keepdims)


def nanvar(
    a: ArrayLike,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    ddof: float = 0,
    keepdims: bool = False,
    *,
    correction: float | None = None,
) -> Array:
    """Differentiable ``numpy.nanvar`` (a composite, like ``var`` over the non-NaN elements;
    a group with no more than ``ddof`` of them gives NaN, as in NumPy)."""
    reject_out("nanvar", out)
    a = _inexact(_operand(a), dtype)
    filled, mask = _nan_filled(a, 0)
    axes = normalize_axes(axis, len(shape_of(a)))
    count = _nan_count(a, mask, axes, True, dtype_of(filled))
    d = filled - _divide_by_count(sum(filled, axes, keepdims=True), count, mask)
    if mask is not None:
        d = _shape.where(mask, 0, d)
    squares = sum(_abs2(d), axes, keepdims=keepdims)
    dof = count - _ddof(ddof, correction)
    if not keepdims and mask is not None:
        dof = _shape.reshape(dof, shape_of(squares))
    return _divide_by_count(squares, dof, mask)


def nanstd(
    a: ArrayLike,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    ddof: float = 0,
    keepdims: bool = False,
    *,
    correction: float | None = None,
) -> Array:
    """Differentiable ``numpy.nanstd`` (a composite: the square root of ``nanvar``; derivative
    0 where the variance is exactly 0, as for ``std``)."""
    reject_out("nanstd", out)
    v = nanvar(a, axis, dtype, ddof=ddof, keepdims=keepdims, correction=correction)
    return _safe_sqrt(v)
