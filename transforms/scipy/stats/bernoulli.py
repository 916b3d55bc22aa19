"""The Bernoulli distribution, ``scipy.stats.bernoulli``: the binomial distribution of one
trial (a composite of ``transforms.scipy.stats.binom``), differentiable in ``p`` at every
order."""

from __future__ import annotations

from transforms.typing import Array, ArrayLike

from . import binom

__all__ = ["cdf", "logcdf", "logpmf", "logsf", "pmf", "sf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.bernoulli.logpmf``: ``log(p)`` at 1, ``log1p(-p)`` at 0."""
    return binom.logpmf(k, 1, p, loc)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.bernoulli.pmf``: ``p`` at 1, ``1 - p`` at 0."""
    return binom.pmf(k, 1, p, loc)


def cdf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.bernoulli.cdf``."""
    return binom.cdf(k, 1, p, loc)


def sf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.bernoulli.sf``."""
    return binom.sf(k, 1, p, loc)


def logcdf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.bernoulli.logcdf``."""
    return binom.logcdf(k, 1, p, loc)


def logsf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.bernoulli.logsf``."""
    return binom.logsf(k, 1, p, loc)
