"""NumPy functions researchers reach for beyond the core families: grids and sequences
(``meshgrid``, ``logspace``, ``geomspace``, ``r_``, ``c_``, ``block``), interpolation and
signals (``interp``, ``convolve``, ``correlate``, ``polyval``, ``trapezoid``), statistics
(``cov``, ``corrcoef``), ``divmod`` (and the ``%``/``divmod`` operators), one-argument
``where``, and the index and counting functions whose results carry no derivative
(``tril_indices``..., ``isin``, ``unique``, ``digitize``, ``histogram``...).

Every differentiable one is a composite of the families' primitives, written as NumPy (or
JAX) computes it, so its derivatives are those of NumPy's formula in every mode and nesting:
``interp`` is piecewise linear in ``x``, ``xp`` and ``fp`` (at a knot, the segment to its
right, as JAX); ``convolve``/``correlate`` are slices of the library's one convolution
primitive (``_convolution``, shared with ``transforms.scipy.signal``; bilinear in both
signals); ``unique``'s values are gathered from their first occurrences
(derivative of each value: that entry's). Functions whose result's shape depends on the
values (``unique``, ``histogram``, the ``bincount`` length) need concrete values: under
``vmap`` they refuse with a ``TypeError`` (as JAX without ``size=``).
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from transforms.batching import BatchTracer
from transforms.core import Array, ArrayLibraryError, ArrayLike, Tracer, arrays, concrete

from . import (
    _arithmetic,
    _construct,
    _convolution,
    _elementwise,
    _indexing,
    _linalg,
    _nondiff,
    _products,
    _reductions,
    _scans,
    _shape,
)
from ._define import checkable, dtype_of, is_complex, ndim_of, shape_of
from ._shape import operand as _operand

__all__ = [
    "bincount",
    "block",
    "c_",
    "convolve",
    "corrcoef",
    "correlate",
    "cov",
    "digitize",
    "divmod",
    "geomspace",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
    "interp",
    "isin",
    "logspace",
    "meshgrid",
    "polyfit",
    "polyval",
    "r_",
    "row_stack",
    "trapezoid",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
    "unique",
    "where",
]


def _values(name: str, *xs: Any) -> list[Any]:
    """The concrete values of ``xs`` for a function whose result's shape depends on them;
    refused under ``vmap``, where each example could give a different shape, and for another
    library's array, which would be computed."""
    for x in xs:
        t = x
        while isinstance(t, Tracer):
            if isinstance(t, BatchTracer):
                raise TypeError(
                    f"transforms.numpy.{name}: not supported under vmap (the shape of its "
                    "result depends on the values of each example); call it outside vmap"
                )
            t = t.primal
    values = [None if x is None else concrete(x) for x in xs]
    for v in values:
        if arrays.is_foreign(v):  # (the values would have to be computed)
            raise ArrayLibraryError(
                f"transforms.numpy.{name} (the shape of its result depends on the values)",
                arrays.library_of(v),
            )
    return [None if v is None else np.asarray(v) for v in values]


# ---- where with one argument, divmod, row_stack ------------------------------------------
@overload
def where(condition: ArrayLike, /) -> tuple[Array, ...]: ...
@overload
def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike, /) -> Array: ...
def where(
    condition: ArrayLike, x: ArrayLike | None = None, y: ArrayLike | None = None, /
) -> Array | tuple[Array, ...]:
    """Differentiable ``numpy.where``: ``x`` where ``condition``, else ``y`` (the condition
    carries no derivative); with the condition alone, ``nonzero(condition)``."""
    if x is None and y is None:
        return _nondiff.nonzero(condition)
    if x is None or y is None:
        raise ValueError(
            "transforms.numpy.where: either both or neither of x and y should be given"
        )
    return _shape.where(condition, x, y)


def divmod(x1: ArrayLike, x2: ArrayLike, /) -> tuple[Array, Array]:
    """Differentiable ``numpy.divmod``: ``(floor_divide(x1, x2), mod(x1, x2))``, the quotient
    piecewise constant (no derivative), the remainder ``x1 - floor(x1 / x2) * x2``. Also the
    ``divmod(x, y)`` builtin on traced values."""
    return _nondiff.floor_divide(x1, x2), _arithmetic.mod(x1, x2)


def row_stack(tup: Sequence[ArrayLike], *, dtype: Any = None, casting: str = "same_kind") -> Array:
    """Differentiable ``numpy.row_stack`` (NumPy's deprecated alias of ``vstack``)."""
    return _construct.vstack(tup, dtype=dtype, casting=casting)


# ---- grids and sequences -----------------------------------------------------------------
def meshgrid(
    *xi: ArrayLike, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> tuple[Array, ...]:
    """Differentiable ``numpy.meshgrid``: each 1-d coordinate reshaped onto its own axis and
    (unless ``sparse``) broadcast to the grid; ``indexing="xy"`` swaps the first two axes."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    out = []
    for i, x in enumerate(xi):
        shape = [1] * ndim
        shape[i] = -1
        if indexing == "xy" and ndim > 1 and i < 2:
            shape[i], shape[1 - i] = 1, -1
        out.append(_shape.reshape(_shape.ravel(_operand(x)), tuple(shape)))
    if not sparse:
        target = np.broadcast_shapes(*(shape_of(o) for o in out))
        out = [_shape.broadcast_to(o, target) for o in out]
    return tuple(out)


def logspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    base: ArrayLike = 10.0,
    dtype: Any = None,
    axis: int = 0,
) -> Array:
    """Differentiable ``numpy.logspace`` in ``start``, ``stop`` and ``base``:
    ``base ** linspace(start, stop, ...)`` (an array ``base`` broadcasts as NumPy's)."""
    y = _construct.linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    if ndim_of(base):
        ndmax = len(np.broadcast_shapes(shape_of(start), shape_of(stop), shape_of(base)))
        base = _shape.reshape(base, (1,) * (ndmax - ndim_of(base)) + shape_of(base))
        base = _shape.expand_dims(base, axis)
    out = _arithmetic.power(base, y)
    return out if dtype is None else _shape.astype(out, dtype)


def geomspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    dtype: Any = None,
    axis: int = 0,
) -> Array:
    """Differentiable ``numpy.geomspace`` in ``start`` and ``stop`` (real, of one sign):
    ``sign * logspace(log10|start|, log10|stop|)``, with the endpoints exactly ``start`` and
    ``stop`` as NumPy sets them."""
    start, stop = _operand(start), _operand(stop)
    if is_complex(start) or is_complex(stop):
        raise TypeError("transforms.numpy.geomspace: complex start/stop are not supported")
    s, e = checkable(start), checkable(stop)
    if (s is not None and np.any(s == 0)) or (e is not None and np.any(e == 0)):
        raise ValueError("Geometric sequence cannot include zero")
    shape = np.broadcast_shapes(shape_of(start), shape_of(stop))
    start, stop = _shape.broadcast_to(start, shape), _shape.broadcast_to(stop, shape)
    sign = _elementwise.sign(start)  # NumPy: both of one sign; traced, so per example under vmap
    log_start = _elementwise.log10(_elementwise.abs(start))
    log_stop = _elementwise.log10(_elementwise.abs(stop))
    middle = logspace(log_start, log_stop, num=num, endpoint=endpoint)
    out: Any = sign * middle
    if num > 0:
        pieces = [_shape.expand_dims(start, 0), _indexing.getitem(out, slice(1, None))]
        if num > 1 and endpoint:
            pieces[1] = _indexing.getitem(out, slice(1, -1))
            pieces.append(_shape.expand_dims(stop, 0))
        out = _shape.concatenate(pieces, axis=0)
    if axis != 0:
        out = _shape.moveaxis(out, 0, axis)
    result_dtype = np.result_type(dtype_of(start), dtype_of(stop), 1.0) if dtype is None else dtype
    return _shape.astype(out, result_dtype)


def block(arrays: Any) -> Array:
    """Differentiable ``numpy.block``: nested lists concatenated along the last axis at the
    innermost level, the one before it one level up, and so on (a composite of
    ``concatenate``)."""
    depth, max_ndim = _block_depth(arrays, ())
    ndim = builtins.max(depth, max_ndim)

    def assemble(a: Any, level: int) -> Any:
        if level == depth:
            a = _operand(a) if isinstance(a, (np.ndarray, Tracer)) else _shape.asarray(a)
            return _shape.reshape(a, (1,) * (ndim - ndim_of(a)) + shape_of(a))
        return _shape.concatenate([assemble(x, level + 1) for x in a], axis=level - depth)

    return _shape.asarray(assemble(arrays, 0))


def _block_depth(arrays: Any, index: tuple[int, ...]) -> tuple[int, int]:
    """The nesting depth of the lists (checked to be the same everywhere) and the largest
    ndim of the arrays at the bottom."""
    if isinstance(arrays, tuple):
        raise TypeError(
            f"arrays{''.join(f'[{i}]' for i in index)} is a tuple. Only lists can be used to "
            "arrange blocks, and np.block does not allow implicit conversion from tuple to ndarray."
        )
    if not isinstance(arrays, list):
        return 0, ndim_of(arrays)
    if not arrays:
        raise ValueError(f"List at arrays{''.join(f'[{i}]' for i in index)} cannot be empty")
    found = [_block_depth(a, (*index, i)) for i, a in enumerate(arrays)]
    if builtins.any(d != found[0][0] for d, _ in found):
        raise ValueError("List depths are mismatched in transforms.numpy.block")
    return found[0][0] + 1, builtins.max(n for _, n in found)


class _Concatenator:
    """``np.r_`` / ``np.c_``: slices become ranges (``arange``, or ``linspace`` for a complex
    step), arrays are promoted to ``ndmin`` dimensions (1-d ones turned as ``trans1d``
    says), and everything is concatenated along ``axis``; a leading string ``"axis"``,
    ``"axis,ndmin"`` or ``"axis,ndmin,trans1d"`` changes those, as NumPy's."""

    def __init__(self, axis: int, ndmin: int, trans1d: int) -> None:
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key: Any) -> Array:
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        pieces = []
        for k, item in enumerate(items):
            if isinstance(item, str):
                if k:
                    raise ValueError("transforms.numpy.r_/c_: a string is allowed first only")
                spec = [int(v) for v in item.split(",")]
                axis, ndmin, trans1d = (*spec, *(ndmin, trans1d)[len(spec) - 1 :])[:3]
                continue
            if isinstance(item, slice):
                piece: Any = _slice_range(item)
                item_ndim = 1
            else:
                piece = _shape.asarray(item)
                item_ndim = ndim_of(piece)
            if item_ndim < ndmin:
                piece = _shape.reshape(piece, (1,) * (ndmin - item_ndim) + shape_of(piece))
                if trans1d != -1:
                    k2, k1 = ndmin - item_ndim, trans1d
                    if k1 < 0:
                        k1 += k2 + 1
                    axes = list(range(ndmin))
                    piece = _shape.transpose(piece, axes[:k1] + axes[k2:] + axes[k1:k2])
            pieces.append(piece)
        if not pieces:
            return np.array([])
        return _shape.concatenate(pieces, axis=axis)


def _slice_range(s: slice) -> np.ndarray:
    start = 0 if s.start is None else s.start
    step: Any = 1 if s.step is None else s.step
    if isinstance(step, complex | np.complexfloating):
        return np.linspace(start, s.stop, int(np.abs(step)))
    return np.arange(start, s.stop, step)


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)


# ---- interpolation, polynomials, integration ----------------------------------------------
def interp(
    x: ArrayLike,
    xp: ArrayLike,
    fp: ArrayLike,
    left: ArrayLike | None = None,
    right: ArrayLike | None = None,
    period: ArrayLike | None = None,
) -> Array:
    """Differentiable ``numpy.interp`` in ``x``, ``xp`` and ``fp`` (and ``left``/``right``):
    piecewise linear, JAX's formula (at a knot, the slope of the segment to its right; below
    ``xp[0]`` ``left``, above ``xp[-1]`` ``right``, which default to ``fp[0]``/``fp[-1]``)."""
    x, xp, fp = _operand(x), _operand(xp), _operand(fp)
    if ndim_of(xp) != 1 or ndim_of(fp) != 1:
        raise ValueError("transforms.numpy.interp: xp and fp must be one-dimensional")
    if shape_of(xp) != shape_of(fp):
        raise ValueError("fp and xp are not of the same length.")
    if shape_of(xp)[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        p = checkable(period)
        if p is not None and p == 0:
            raise ValueError("period must be a non-zero value")
        period = _elementwise.abs(period)
        x, xp = _arithmetic.mod(x, period), _arithmetic.mod(xp, period)
        order = _nondiff.argsort(xp)
        xp, fp = _indexing.getitem(xp, order), _indexing.getitem(fp, order)
        xp = _shape.concatenate(
            [
                _indexing.getitem(xp, slice(-1, None)) - period,
                xp,
                _indexing.getitem(xp, slice(0, 1)) + period,
            ]
        )
        fp = _shape.concatenate(
            [_indexing.getitem(fp, slice(-1, None)), fp, _indexing.getitem(fp, slice(0, 1))]
        )
        left = right = None
    n = shape_of(xp)[0]
    if n == 1:
        i: Any = np.zeros(shape_of(x), np.intp)
        f: Array = _shape.broadcast_to(_indexing.getitem(fp, i), shape_of(x))
    else:
        i = _arithmetic.clip(_nondiff.searchsorted(xp, x, side="right"), 1, n - 1)
        x0, x1 = _indexing.getitem(xp, i - 1), _indexing.getitem(xp, i)
        f0, f1 = _indexing.getitem(fp, i - 1), _indexing.getitem(fp, i)
        dx = x1 - x0
        flat = dx == 0
        f = _shape.where(flat, f1, f0 + (x - x0) / _shape.where(flat, 1.0, dx) * (f1 - f0))
    first, last = _indexing.getitem(xp, 0), _indexing.getitem(xp, -1)
    if period is None:
        below = _indexing.getitem(fp, 0) if left is None else left
        above = _indexing.getitem(fp, -1) if right is None else right
        f = _shape.where(x < first, below, _shape.where(x > last, above, f))
    return f


def polyval(p: ArrayLike, x: ArrayLike) -> Array:
    """Differentiable ``numpy.polyval`` in the coefficients ``p`` (highest degree first) and
    ``x``: Horner's scheme."""
    coefficients: Any = _operand(p)
    x = _operand(x)
    y: Array = _shape.zeros_like(x)
    for coefficient in coefficients:
        y = y * x + coefficient
    return y


def polyfit(
    x: ArrayLike,
    y: ArrayLike,
    deg: int,
    rcond: float | None = None,
    full: bool = False,
    w: ArrayLike | None = None,
    cov: bool | str = False,
) -> Any:
    """Differentiable ``numpy.polyfit`` (in ``x``, ``y`` and ``w``; ``full`` and ``cov`` as
    NumPy): NumPy's own steps, a composite of the Vandermonde matrix (built by products,
    so ``x = 0`` differentiates), its column scaling and ``linalg.lstsq``, whose derivative
    is that of the pseudo-inverse at constant rank (exact for a well-posed fit).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> x = np.array([0.0, 1.0, 2.0, 3.0])
        >>> T.grad(lambda y: tnp.polyfit(x, y, 1)[0])(np.array([1.0, 3.0, 5.0, 7.0]))
        array([-0.3, -0.1,  0.1,  0.3])
    """
    order = int(deg) + 1
    x = _arithmetic.add(_operand(x), 0.0)
    y = _arithmetic.add(_operand(y), 0.0)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if ndim_of(x) != 1:
        raise TypeError("expected 1D vector for x")
    n = shape_of(x)[0]
    if n == 0:
        raise TypeError("expected non-empty vector for x")
    if ndim_of(y) < 1 or ndim_of(y) > 2:
        raise TypeError("expected 1D or 2D array for y")
    if shape_of(y)[0] != n:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = n * float(np.finfo(dtype_of(x)).eps)
    powers = [_shape.ones_like(x)]
    for _ in range(order - 1):
        powers.append(_arithmetic.multiply(powers[-1], x))
    lhs: Any = _shape.stack(powers[::-1], axis=1)  # NumPy's vander: highest power first
    rhs: Any = y
    if w is not None:
        w = _arithmetic.add(_operand(w), 0.0)
        if ndim_of(w) != 1:
            raise TypeError("expected a 1-d array for weights")
        if shape_of(w)[0] != n:
            raise TypeError("expected w and y to have the same length")
        column = _shape.reshape(w, (n, 1))
        lhs = _arithmetic.multiply(lhs, column)
        rhs = _arithmetic.multiply(rhs, column if ndim_of(rhs) == 2 else w)
    scale = _elementwise.sqrt(_reductions.sum(_arithmetic.multiply(lhs, lhs), axis=0))
    lhs = _arithmetic.divide(lhs, scale)
    c, resids, rank, s = _linalg.lstsq(lhs, rhs, rcond)
    c = _shape.transpose(_arithmetic.divide(_shape.transpose(c), scale))
    rank_value = concrete(rank)  # (a Dask array's rank is not computed for a warning)
    if not full and not arrays.is_foreign(rank_value) and np.any(np.asarray(rank_value) != order):
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    base = _linalg.inv(_products.dot(_shape.transpose(lhs), lhs))
    base = _arithmetic.divide(base, _products.outer(scale, scale))
    if cov == "unscaled":
        fac: Any = 1
    else:
        if n <= order:
            raise ValueError(
                "the number of data points must exceed order to scale the covariance matrix"
            )
        fac = _arithmetic.divide(resids, n - order)
    if ndim_of(y) == 1:
        return c, _arithmetic.multiply(base, fac)
    return c, _arithmetic.multiply(_shape.reshape(base, (order, order, 1)), fac)


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float = 1.0, axis: int = -1) -> Array:
    """Differentiable ``numpy.trapezoid`` in ``y`` and ``x``: ``sum(d * (y[1:] + y[:-1]) / 2)``
    along ``axis``, with ``d = diff(x)`` (a 1-d ``x`` lies along ``axis``) or ``dx``."""
    y = _operand(y)
    nd = ndim_of(y)
    axis = axis % nd
    if x is None:
        d: Any = dx
    else:
        x = _operand(x)
        if ndim_of(x) == 1:
            d = _scans.diff(x)
            d = _shape.reshape(d, tuple(-1 if i == axis else 1 for i in range(nd)))
        else:
            d = _scans.diff(x, axis=axis)
    upper = tuple(slice(1, None) if i == axis else slice(None) for i in range(nd))
    lower = tuple(slice(None, -1) if i == axis else slice(None) for i in range(nd))
    pairs = _indexing.getitem(y, upper) + _indexing.getitem(y, lower)
    return _reductions.sum(d * pairs / 2.0, axis)


# ---- signals: slices of the one convolution (``_convolution``) ----------------------------
def _signals(name: str, a: Any, v: Any, mode: str) -> tuple[Any, Any]:
    a, v = _operand(a), _operand(v)
    if ndim_of(a) != 1 or ndim_of(v) != 1:
        raise ValueError(f"transforms.numpy.{name}: a and v must be one-dimensional")
    if shape_of(a)[0] == 0:
        raise ValueError("a cannot be empty")
    if shape_of(v)[0] == 0:
        raise ValueError("v cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    return a, v


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full") -> Array:
    """Differentiable ``numpy.convolve`` of two 1-d signals, bilinear in both, with NumPy's
    ``mode`` ("full", "same", "valid"): NumPy puts the longer signal first, and its modes are
    then SciPy's."""
    a, v = _signals("convolve", a, v, mode)
    if shape_of(a)[0] < shape_of(v)[0]:
        a, v = v, a
    return _convolution.mode_of(a, v, mode, None)


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid") -> Array:
    """Differentiable ``numpy.correlate`` of two 1-d signals (``sum_n a[n + k] conj(v[n])``),
    with NumPy's ``mode``: the convolution of ``a`` with ``conj(v)`` reversed."""
    a, v = _signals("correlate", a, v, mode)
    if shape_of(a)[0] >= shape_of(v)[0]:
        return _convolution.mode_of(a, _construct.flip(_elementwise.conj(v)), mode, None)
    # NumPy correlates the longer signal with the shorter and reverses: the same numbers
    reversed_ = _convolution.mode_of(_elementwise.conj(v), _construct.flip(a), mode, None)
    return _construct.flip(reversed_)


# ---- statistics --------------------------------------------------------------------------
def cov(
    m: ArrayLike,
    y: ArrayLike | None = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights: ArrayLike | None = None,
    aweights: ArrayLike | None = None,
    *,
    dtype: Any = None,
) -> Array:
    """Differentiable ``numpy.cov`` in the data (and ``aweights``): NumPy's formula, with its
    ``rowvar``, ``bias``, ``ddof`` and integer frequency weights ``fweights``."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    x = _construct.atleast_2d(_operand(m))
    if ndim_of(x) > 2:
        raise ValueError("m has more than 2 dimensions")
    if not rowvar and shape_of(x)[0] != 1:
        x = _shape.transpose(x)
    if y is not None:
        y2 = _construct.atleast_2d(_operand(y))
        if not rowvar and shape_of(y2)[0] != 1:
            y2 = _shape.transpose(y2)
        x = _shape.concatenate([x, y2], axis=0)
    if dtype is None:
        dtype = np.result_type(dtype_of(x), np.float64)
    x = _shape.astype(x, dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    w: Any = None
    if fweights is not None:
        f = checkable(fweights)
        if f is not None and not np.all(f == np.around(f)):
            raise TypeError("fweights must be integer")
        if f is not None and np.any(f < 0):
            raise ValueError("fweights cannot be negative")
        w = _shape.astype(_operand(fweights), np.float64)  # traced: per example under vmap
    if aweights is not None:
        a = checkable(aweights)
        if a is not None and np.any(a < 0):
            raise ValueError("aweights cannot be negative")
        w = _operand(aweights) if w is None else w * _operand(aweights)
    avg = _reductions.average(x, axis=1, weights=w)
    w_sum = shape_of(x)[1] if w is None else _reductions.sum(w)
    if w is None:
        fact: Any = w_sum - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * _reductions.sum(w * _operand(aweights)) / w_sum
    x = x - _shape.expand_dims(avg, 1)
    x_w = x if w is None else x * w
    c = _products.matmul(x_w, _elementwise.conj(_shape.transpose(x))) / fact
    return _shape.squeeze(c)


def corrcoef(
    x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, *, dtype: Any = None
) -> Array:
    """Differentiable ``numpy.corrcoef``: ``cov`` scaled by the standard deviations (real
    results clipped to ``[-1, 1]``, as NumPy)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if ndim_of(c) == 0:
        return _arithmetic.divide(c, c)  # an array, not NumPy's 0-d scalar
    stddev = _elementwise.sqrt(_elementwise.real(_indexing.diagonal(c)))
    c = c / stddev[:, None] / stddev[None, :]
    if np.iscomplexobj(np.empty(0, dtype_of(c))):
        return c
    return _arithmetic.clip(c, -1, 1)


# ---- index and counting functions: no derivative ------------------------------------------
tril_indices = np.tril_indices
triu_indices = np.triu_indices


def tril_indices_from(arr: ArrayLike, k: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.tril_indices_from`` (no derivative: it reads only the shape of ``arr``)."""
    shape = shape_of(arr)
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return np.tril_indices(shape[-2], k=k, m=shape[-1])


def triu_indices_from(arr: ArrayLike, k: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.triu_indices_from`` (no derivative: it reads only the shape of ``arr``)."""
    shape = shape_of(arr)
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return np.triu_indices(shape[-2], k=k, m=shape[-1])


def isin(
    element: ArrayLike,
    test_elements: ArrayLike,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    kind: str | None = None,
) -> Array:
    """``numpy.isin`` (no derivative): whether each element equals some test element; works
    under ``vmap`` (a comparison against every test element)."""
    element, tests = _operand(element), _shape.ravel(_operand(test_elements))
    hits = _nondiff.any(_shape.expand_dims(element, -1) == tests, axis=-1)
    return _nondiff.logical_not(hits) if invert else hits


def unique(
    ar: ArrayLike,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
) -> Any:
    """``numpy.unique`` with differentiable values: each unique value (or slice along
    ``axis``) is gathered from its first occurrence, so it carries that entry's derivative;
    the indices, inverse and counts carry none. Not under ``vmap`` (the number of unique
    values depends on each example)."""
    (values,) = _values("unique", ar)
    found: Any = np.unique(  # type: ignore[call-overload]
        values,
        return_index=True,
        return_inverse=return_inverse,
        return_counts=return_counts,
        axis=axis,
        equal_nan=equal_nan,
    )
    first = found[1]
    operand = _operand(ar)
    if axis is None:
        gathered = _indexing.getitem(_shape.ravel(operand), first)
    else:
        gathered = _construct.take(operand, first, axis=axis)
    rest = ((first,) if return_index else ()) + tuple(found[2:])
    return (gathered, *rest) if rest else gathered


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False) -> Array:
    """``numpy.digitize`` (no derivative): ``searchsorted`` of ``x`` in monotonic ``bins``."""
    b = np.asarray(concrete(bins))
    if b.ndim != 1:
        raise ValueError("object too deep for desired array")
    steps = np.diff(b)
    if not (np.all(steps >= 0) or np.all(steps <= 0)):
        raise ValueError("bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    if b.size > 1 and b[0] > b[-1]:  # decreasing bins
        return b.size - _nondiff.searchsorted(_construct.flip(bins), x, side=side)
    return _nondiff.searchsorted(bins, x, side=side)


def bincount(x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0) -> np.ndarray:
    """``numpy.bincount`` (no derivative; not under ``vmap``: its length is ``max(x) + 1``)."""
    xv, wv = _values("bincount", x, weights)
    return np.bincount(xv, wv, minlength)


def histogram(
    a: ArrayLike,
    bins: Any = 10,
    range: tuple[float, float] | None = None,
    density: bool | None = None,
    weights: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.histogram`` of the values (no derivative; not under ``vmap``)."""
    av, bv, wv = _values("histogram", a, bins if not isinstance(bins, str) else None, weights)
    return np.histogram(av, bins if bv is None else bv, range, density, wv)


def histogram_bin_edges(
    a: ArrayLike,
    bins: Any = 10,
    range: tuple[float, float] | None = None,
    weights: ArrayLike | None = None,
) -> np.ndarray:
    """``numpy.histogram_bin_edges`` of the values (no derivative; not under ``vmap``)."""
    av, bv, wv = _values(
        "histogram_bin_edges", a, bins if not isinstance(bins, str) else None, weights
    )
    return np.histogram_bin_edges(av, bins if bv is None else bv, range, wv)


def histogram2d(
    x: ArrayLike,
    y: ArrayLike,
    bins: Any = 10,
    range: Any = None,
    density: bool | None = None,
    weights: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``numpy.histogram2d`` of the values (no derivative; not under ``vmap``)."""
    xv, yv, wv = _values("histogram2d", x, y, weights)
    return np.histogram2d(xv, yv, bins, range, density, wv)


def histogramdd(
    sample: ArrayLike,
    bins: Any = 10,
    range: Any = None,
    density: bool | None = None,
    weights: ArrayLike | None = None,
) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """``numpy.histogramdd`` of the values (no derivative; not under ``vmap``)."""
    sv, wv = _values("histogramdd", sample, weights)
    return np.histogramdd(sv, bins, range, density, wv)
