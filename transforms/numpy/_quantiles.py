"""``quantile`` and ``percentile``: every method NumPy has, differentiable in ``a``.

A composite of ``sort`` and ``take`` (a permutation and a gather: exact derivatives) and of
NumPy's own interpolation formula, written out as NumPy computes it (``_lerp``: ``a + (b -
a) t``, or ``b - (b - a)(1 - t)`` for ``t >= 0.5``), so values agree with NumPy's to the
rounding and the derivative in ``a`` is that formula's: the weights ``1 - t`` and ``t`` of
the two neighbouring order statistics for the continuous methods, the selected element's
for the discontinuous ones (``lower``, ``higher``, ``nearest``, ``inverted_cdf``,
``closest_observation``; ``midpoint`` and ``averaged_inverted_cdf`` halve it between two).
At a tie between sorted values the quantile has a kink; the derivative then goes to the
element ``sort`` places there. The quantile levels ``q`` select positions: they carry no
derivative here, and a traced ``q`` is refused (``NoRuleError``), never dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from transforms.core import Array, ArrayLike, NoRuleError, Tracer

from . import _arithmetic, _construct, _nondiff, _shape
from ._define import dtype_of, normalize_axes, reject_out, shape_of
from ._shape import operand as _operand

__all__ = ["percentile", "quantile"]

Index = Callable[[int, np.ndarray], np.ndarray]


def _boundaries(index: np.ndarray, take_previous: np.ndarray) -> np.ndarray:
    """NumPy's ``_discrete_interpolation_to_boundaries``: ``floor(index)`` where
    ``take_previous``, else the next position; never below 0."""
    previous = np.floor(index)
    chosen = np.where(take_previous, previous, previous + 1).astype(np.intp)
    return np.maximum(chosen, 0)  # type: ignore[no-any-return]


def _inverted_cdf(n: int, q: np.ndarray) -> np.ndarray:
    index = n * q - 1
    return _boundaries(index, index - np.floor(index) == 0)


def _closest_observation(n: int, q: np.ndarray) -> np.ndarray:
    index = n * q - 1 - 0.5
    gamma = index - np.floor(index)
    return _boundaries(index, (gamma == 0) & (np.floor(index) % 2 == 1))


def _hyndman_fan(alpha: float, beta: float) -> Index:
    return lambda n, q: n * q + (alpha + q * (1 - alpha - beta)) - 1


# method -> (virtual index, gamma fix: None for the methods that select one element)
_METHODS: dict[str, tuple[Index, Callable[[np.ndarray, np.ndarray], np.ndarray] | None]] = {
    "inverted_cdf": (_inverted_cdf, None),
    "averaged_inverted_cdf": (
        lambda n, q: n * q - 1,
        lambda gamma, index: np.where(gamma == 0, 0.5, 1.0),
    ),
    "closest_observation": (_closest_observation, None),
    "interpolated_inverted_cdf": (_hyndman_fan(0, 1), lambda gamma, index: gamma),
    "hazen": (_hyndman_fan(0.5, 0.5), lambda gamma, index: gamma),
    "weibull": (_hyndman_fan(0, 0), lambda gamma, index: gamma),
    "linear": (lambda n, q: (n - 1) * q, lambda gamma, index: gamma),
    "median_unbiased": (_hyndman_fan(1 / 3.0, 1 / 3.0), lambda gamma, index: gamma),
    "normal_unbiased": (_hyndman_fan(3 / 8.0, 3 / 8.0), lambda gamma, index: gamma),
    "lower": (lambda n, q: np.floor((n - 1) * q).astype(np.intp), None),
    "higher": (lambda n, q: np.ceil((n - 1) * q).astype(np.intp), None),
    "midpoint": (
        lambda n, q: 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q)),
        lambda gamma, index: np.where(index % 1 == 0, 0.0, 0.5),
    ),
    "nearest": (lambda n, q: np.around((n - 1) * q).astype(np.intp), None),
}


def quantile(
    a: ArrayLike,
    q: ArrayLike,
    axis: int | tuple[int, ...] | None = None,
    out: None = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: None = None,
    interpolation: str | None = None,
) -> Array:
    """Differentiable ``numpy.quantile`` (in ``a``; ``q`` carries no derivative), every one
    of NumPy's thirteen ``method``\\ s; a composite of ``sort``, ``take`` and NumPy's
    interpolation formula. ``weights`` (NumPy's ``inverted_cdf`` weighting) is not
    supported.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> T.grad(lambda a: tnp.quantile(a, 0.25))(np.array([4.0, 1.0, 3.0, 2.0]))
        array([0.  , 0.25, 0.  , 0.75])
    """
    reject_out("quantile", out)
    if weights is not None:
        raise NotImplementedError("transforms.numpy.quantile: weights= is not supported")
    if interpolation is not None:
        method = interpolation
    return _quantile("quantile", a, q, 1.0, axis, method, keepdims)


def percentile(
    a: ArrayLike,
    q: ArrayLike,
    axis: int | tuple[int, ...] | None = None,
    out: None = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: None = None,
    interpolation: str | None = None,
) -> Array:
    """Differentiable ``numpy.percentile``: ``quantile`` at ``q / 100`` (see ``quantile``).

    Example:
        >>> import numpy as np
        >>> import transforms.numpy as tnp
        >>> tnp.percentile(np.array([1.0, 2.0, 3.0, 4.0]), 50, method="lower")
        array(2.)
    """
    reject_out("percentile", out)
    if weights is not None:
        raise NotImplementedError("transforms.numpy.percentile: weights= is not supported")
    if interpolation is not None:
        method = interpolation
    return _quantile("percentile", a, q, 100.0, axis, method, keepdims)


def _quantile(
    name: str,
    a: ArrayLike,
    q: ArrayLike,
    unit: float,
    axis: int | tuple[int, ...] | None,
    method: str,
    keepdims: bool,
) -> Array:
    if isinstance(q, Tracer):
        raise NoRuleError(
            name,
            "derivative",
            1,
            "",
            "the quantile levels q select positions; pass them as"
            " concrete values (no derivative is taken with respect to q)",
        )
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {list(_METHODS)}")
    weak_q = type(q) in (int, float)  # NumPy: a Python number keeps a's precision
    levels = np.true_divide(q, unit) if unit != 1.0 else np.asanyarray(q)
    levels = np.asanyarray(levels)
    if levels.dtype.kind not in "fiu" or not (np.all(levels >= 0) and np.all(levels <= 1)):
        bound = "[0, 100]" if unit != 1.0 else "[0, 1]"
        word = "Percentiles" if unit != 1.0 else "Quantiles"
        raise ValueError(f"{word} must be in the range {bound}")
    x = _operand(a)
    shape = shape_of(x)
    axes = normalize_axes(axis, len(shape))
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    n = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    # the reduced axes first, merged into one: positions along axis 0
    x = _shape.reshape(_shape.transpose(x, axes + kept), (n,) + tuple(shape[i] for i in kept))
    ordered = _construct.sort(x, axis=0)
    get_index, fix_gamma = _METHODS[method]
    index = np.asanyarray(get_index(n, levels))
    if fix_gamma is None or (method == "linear" and index.dtype.kind in "iu"):  # an integer q
        result = _construct.take(ordered, index, axis=0)
    else:
        previous = np.floor(index)
        above, below = index >= n - 1, index < 0
        lo = np.where(above, -1, np.where(below, 0, previous)).astype(np.intp)
        hi = np.where(above, -1, np.where(below, 0, previous + 1)).astype(np.intp)
        gamma = np.asanyarray(fix_gamma(index - previous, index), dtype=index.dtype)
        t: Any = float(gamma) if weak_q else gamma.reshape(gamma.shape + (1,) * len(kept))
        result = _lerp(
            _construct.take(ordered, lo, axis=0), _construct.take(ordered, hi, axis=0), t
        )
    if np.issubdtype(dtype_of(ordered), np.inexact):  # a NaN in a slice: NaN, as NumPy
        last = _construct.take(ordered, -1, axis=0)
        result = _shape.where(_nondiff.isnan(last), last, result)
    if keepdims:
        full = tuple(1 if i in axes else shape[i] for i in range(len(shape)))
        result = _shape.reshape(result, levels.shape + full)
    return result


def _lerp(a: Any, b: Any, t: Any) -> Any:
    """NumPy's ``_lerp``: ``a + (b - a) t``, or ``b - (b - a)(1 - t)`` where ``t >= 0.5``."""
    diff = _arithmetic.subtract(b, a)
    upper = _arithmetic.subtract(b, _arithmetic.multiply(diff, 1 - t))  # t: a weight, untraced
    lower = _arithmetic.add(a, _arithmetic.multiply(diff, t))
    return _shape.where(np.asarray(t) >= 0.5, upper, lower)
