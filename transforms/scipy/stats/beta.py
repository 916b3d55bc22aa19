"""The beta distribution, ``scipy.stats.beta`` (shapes ``a``, ``b``; support ``[loc, loc +
scale]``).

``logpdf``/``pdf`` are differentiable in ``x``, ``a``, ``b``, ``loc`` and ``scale`` at every
order; ``cdf``/``sf`` (``betainc``/``betaincc``) and their logs in ``x``, ``loc`` and
``scale``, refused in ``a`` and ``b`` (the regularized incomplete beta function's derivative
in its shapes has no closed form: ``NoRuleError`` naming ``betainc``)."""

from __future__ import annotations

import math

import transforms.numpy as tnp
from transforms.scipy.special import betainc, betaincc, betaln, xlog1py, xlogy
from transforms.typing import Array, ArrayLike

from ._common import NAN, guard, log_probability, promote, select, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]

_Standardized = tuple[Array, Array, Array, Array, Array, Array, Array]


def _standardized(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike, scale: ArrayLike
) -> _Standardized:
    """``(above_0, below_1, z, a, b, log(scale), valid)``: ``z`` replaced by 1/2 outside the
    support, ``a``, ``b`` by 1 where invalid (``<= 0``)."""
    x, a, b, loc, scale = promote(x, a, b, loc, scale)
    z, log_scale, valid = standardize(x, loc, scale)
    shapes_ok = tnp.logical_and(a > 0, b > 0)
    valid = tnp.logical_and(valid, shapes_ok)
    above, below = z >= 0, z <= 1
    z = guard(tnp.logical_and(above, below), z, 0.5)
    return above, below, z, guard(shapes_ok, a, 1.0), guard(shapes_ok, b, 1.0), log_scale, valid


def logpdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Differentiable ``scipy.stats.beta.logpdf``: ``xlogy(a - 1, z) + xlog1py(b - 1, -z) -
    betaln(a, b) - log(scale)`` on the support."""
    above, below, z, a, b, log_scale, valid = _standardized(x, a, b, loc, scale)
    out = xlogy(a - 1, z) + xlog1py(b - 1, -z) - betaln(a, b) - log_scale
    return select(valid, select(tnp.logical_and(above, below), out, -math.inf), NAN)


def pdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Differentiable ``scipy.stats.beta.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, a, b, loc, scale))


def cdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Differentiable ``scipy.stats.beta.cdf``, ``betainc(a, b, z)``; refused in ``a``, ``b``."""
    above, below, z, a, b, _, valid = _standardized(x, a, b, loc, scale)
    return select(valid, select(below, select(above, betainc(a, b, z), 0.0), 1.0), NAN)


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.beta.sf``, ``betaincc(a, b, z)``; refused in ``a``, ``b``."""
    above, below, z, a, b, _, valid = _standardized(x, a, b, loc, scale)
    return select(valid, select(below, select(above, betaincc(a, b, z), 1.0), 0.0), NAN)


def logcdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Differentiable ``scipy.stats.beta.logcdf``, ``log(cdf)``; refused in ``a``, ``b``."""
    return log_probability(cdf(x, a, b, loc, scale), lambda: sf(x, a, b, loc, scale))


def logsf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Differentiable ``scipy.stats.beta.logsf``, ``log(sf)``; refused in ``a``, ``b``."""
    return log_probability(sf(x, a, b, loc, scale), lambda: cdf(x, a, b, loc, scale))
