"""The uniform distribution on ``[loc, loc + scale]``, ``scipy.stats.uniform``:
differentiable in ``x``, ``loc`` and ``scale`` (piecewise: the density ``1/scale`` depends on
``scale`` only; the distribution function is ``clip(z, 0, 1)``)."""

from __future__ import annotations

import math

import transforms.numpy as tnp
from transforms.typing import Array, ArrayLike

from ._common import NAN, log_probability, promote, select, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.uniform.logpdf``: ``-log(scale)`` on the support."""
    z, log_scale, valid = standardize(*promote(x, loc, scale))
    inside = tnp.logical_and(z >= 0, z <= 1)
    return select(valid, select(inside, -log_scale, -math.inf), NAN)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.uniform.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.uniform.cdf``, ``clip(z, 0, 1)``."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, tnp.clip(z, 0.0, 1.0), NAN)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.uniform.sf``, ``clip(1 - z, 0, 1)``."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, tnp.clip(1 - z, 0.0, 1.0), NAN)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.uniform.logcdf``, ``log(cdf)``."""
    return log_probability(cdf(x, loc, scale))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.uniform.logsf``, ``log(sf)``."""
    return log_probability(sf(x, loc, scale))
