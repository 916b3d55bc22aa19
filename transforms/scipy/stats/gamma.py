"""The gamma distribution, ``scipy.stats.gamma`` (shape ``a``, support ``x >= loc``).

``logpdf``/``pdf`` are differentiable in ``x``, ``a``, ``loc`` and ``scale`` at every order;
``cdf``/``sf`` (``gammainc``/``gammaincc``) and their logs in ``x``, ``loc`` and ``scale``,
refused in ``a`` (the regularized incomplete gamma function's derivative in its shape has
no closed form: ``NoRuleError`` naming ``gammainc``)."""

from __future__ import annotations

import math

import transforms.numpy as tnp
from transforms.scipy.special import gammainc, gammaincc, gammaln, xlogy
from transforms.typing import Array, ArrayLike

from ._common import NAN, guard, log_probability, promote, select, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _standardized(
    x: ArrayLike, a: ArrayLike, loc: ArrayLike, scale: ArrayLike
) -> tuple[Array, Array, Array, Array, Array]:
    """``(inside, z, a, log(scale), valid)``: ``z`` replaced by 1 outside the support, ``a``
    by 1 where it is invalid (``a <= 0``)."""
    x, a, loc, scale = promote(x, a, loc, scale)
    z, log_scale, valid = standardize(x, loc, scale)
    positive = a > 0
    inside = z >= 0
    valid = tnp.logical_and(valid, positive)
    return inside, guard(inside, z, 1.0), guard(positive, a, 1.0), log_scale, valid


def logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.gamma.logpdf``: ``xlogy(a - 1, z) - z - gammaln(a) -
    log(scale)`` for ``z >= 0``."""
    inside, z, a, log_scale, valid = _standardized(x, a, loc, scale)
    out = xlogy(a - 1, z) - z - gammaln(a) - log_scale
    return select(valid, select(inside, out, -math.inf), NAN)


def pdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.gamma.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, a, loc, scale))


def cdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.gamma.cdf``, ``gammainc(a, z)``; refused in ``a``."""
    inside, z, a, _, valid = _standardized(x, a, loc, scale)
    return select(valid, select(inside, gammainc(a, z), 0.0), NAN)


def sf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.gamma.sf``, ``gammaincc(a, z)``; refused in ``a``."""
    inside, z, a, _, valid = _standardized(x, a, loc, scale)
    return select(valid, select(inside, gammaincc(a, z), 1.0), NAN)


def logcdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.gamma.logcdf``, ``log(cdf)``; refused in ``a``."""
    return log_probability(cdf(x, a, loc, scale), lambda: sf(x, a, loc, scale))


def logsf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.gamma.logsf``, ``log(sf)``; refused in ``a``."""
    return log_probability(sf(x, a, loc, scale), lambda: cdf(x, a, loc, scale))
