"""The exponential distribution, ``scipy.stats.expon`` (support ``x >= loc``): differentiable
in ``x``, ``loc`` and ``scale``. At ``x == loc`` the derivatives are those from inside the
support (the one-sided ones)."""

from __future__ import annotations

import math

import transforms.numpy as tnp
from transforms.typing import Array, ArrayLike

from ._common import NAN, guard, log_probability, promote, select, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _support(x: ArrayLike, loc: ArrayLike, scale: ArrayLike) -> tuple[Array, Array, Array, Array]:
    """``(inside, z, log(scale), valid)``, ``z`` replaced by 0 outside the support."""
    z, log_scale, valid = standardize(*promote(x, loc, scale))
    inside = z >= 0
    return inside, guard(inside, z, 0.0), log_scale, valid


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.expon.logpdf``: ``-z - log(scale)`` for ``z >= 0``."""
    inside, z, log_scale, valid = _support(x, loc, scale)
    return select(valid, select(inside, -z - log_scale, -math.inf), NAN)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.expon.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.expon.cdf``: ``-expm1(-z)`` for ``z >= 0``."""
    inside, z, _, valid = _support(x, loc, scale)
    return select(valid, select(inside, -tnp.expm1(-z), 0.0), NAN)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.expon.sf``: ``exp(-z)`` for ``z >= 0``."""
    inside, z, _, valid = _support(x, loc, scale)
    return select(valid, select(inside, tnp.exp(-z), 1.0), NAN)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.expon.logcdf``: ``log(-expm1(-z))``."""
    return log_probability(cdf(x, loc, scale), lambda: sf(x, loc, scale))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.expon.logsf``: ``-z`` for ``z >= 0`` (exact far in the
    tail)."""
    inside, z, _, valid = _support(x, loc, scale)
    return select(valid, select(inside, -z, 0.0), NAN)
