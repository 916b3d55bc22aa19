"""The Cauchy distribution, ``scipy.stats.cauchy``: differentiable in ``x``, ``loc`` and
``scale`` at every order. The distribution function is ``arctan2(1, -z) / pi``, which equals
SciPy's ``1/2 + arctan(z)/pi`` and stays accurate in the lower tail, where that cancels."""

from __future__ import annotations

import math

import transforms.numpy as tnp
from transforms.typing import Array, ArrayLike

from ._common import NAN, log_probability, promote, select, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]

_LOG_PI = math.log(math.pi)


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.cauchy.logpdf``: ``-log(pi) - log1p(z**2) - log(scale)``."""
    z, log_scale, valid = standardize(*promote(x, loc, scale))
    return select(valid, -_LOG_PI - tnp.log1p(z * z) - log_scale, NAN)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.cauchy.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.cauchy.cdf``, ``arctan2(1, -z) / pi``."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, tnp.arctan2(1.0, -z) / math.pi, NAN)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.cauchy.sf``, ``arctan2(1, z) / pi``."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, tnp.arctan2(1.0, z) / math.pi, NAN)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.cauchy.logcdf``, ``log(cdf)``."""
    return log_probability(cdf(x, loc, scale), lambda: sf(x, loc, scale))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.cauchy.logsf``, ``log(sf)``."""
    return log_probability(sf(x, loc, scale), lambda: cdf(x, loc, scale))
