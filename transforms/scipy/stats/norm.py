"""The normal distribution, ``scipy.stats.norm``: differentiable in ``x``, ``loc`` and
``scale`` at every order (``ndtr``, ``log_ndtr`` and ``ndtri`` carry their own rules, accurate
in both tails)."""

from __future__ import annotations

import transforms.numpy as tnp
from transforms.scipy.special import log_ndtr, ndtr, ndtri
from transforms.typing import Array, ArrayLike

from ._common import LOG_2PI, NAN, promote, select, standardize

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.norm.logpdf``: ``-z**2/2 - log(2 pi)/2 - log(scale)``,
    ``z = (x - loc) / scale``."""
    z, log_scale, valid = standardize(*promote(x, loc, scale))
    return select(valid, -0.5 * (z * z) - 0.5 * LOG_2PI - log_scale, NAN)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.norm.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.norm.cdf``, ``ndtr(z)``."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, ndtr(z), NAN)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.norm.logcdf``, ``log_ndtr(z)`` (accurate far into the
    lower tail)."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, log_ndtr(z), NAN)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.norm.sf``, ``ndtr(-z)``."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, ndtr(-z), NAN)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.norm.logsf``, ``log_ndtr(-z)``."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, log_ndtr(-z), NAN)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.norm.ppf``, the quantile function: ``loc + scale *
    ndtri(q)`` (NaN outside ``[0, 1]`` and for ``scale <= 0``)."""
    q, loc, scale = promote(q, loc, scale)
    valid = scale > 0
    return select(valid, loc + scale * ndtri(q), NAN)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.norm.isf``, the inverse survival function: ``loc - scale
    * ndtri(q)``."""
    q, loc, scale = promote(q, loc, scale)
    valid = scale > 0
    return select(valid, loc - scale * ndtri(q), NAN)
