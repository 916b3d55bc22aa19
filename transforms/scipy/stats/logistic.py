"""The logistic distribution, ``scipy.stats.logistic``: differentiable in ``x``, ``loc`` and
``scale`` at every order, by ``expit`` and ``log_expit`` (accurate in both tails)."""

from __future__ import annotations

import transforms.numpy as tnp
from transforms.scipy.special import expit, log_expit
from transforms.typing import Array, ArrayLike

from ._common import NAN, promote, select, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.logistic.logpdf``: ``log_expit(z) + log_expit(-z) -
    log(scale)`` (the density is ``expit(z) expit(-z) / scale``)."""
    z, log_scale, valid = standardize(*promote(x, loc, scale))
    return select(valid, log_expit(z) + log_expit(-z) - log_scale, NAN)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.logistic.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.logistic.cdf``, ``expit(z)``."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, expit(z), NAN)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.logistic.sf``, ``expit(-z)``."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, expit(-z), NAN)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.logistic.logcdf``, ``log_expit(z)``."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, log_expit(z), NAN)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.logistic.logsf``, ``log_expit(-z)``."""
    z, _, valid = standardize(*promote(x, loc, scale))
    return select(valid, log_expit(-z), NAN)
