"""The chi-squared distribution, ``scipy.stats.chi2``: the gamma distribution of shape
``df / 2`` and scale ``2 * scale`` (a composite of ``transforms.scipy.stats.gamma``, with its
derivatives: ``logpdf``/``pdf`` in every argument, ``cdf``/``sf`` and their logs refused in
``df``)."""

from __future__ import annotations

from transforms.typing import Array, ArrayLike

from . import gamma
from ._common import promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _as_gamma(
    x: ArrayLike, df: ArrayLike, loc: ArrayLike, scale: ArrayLike
) -> tuple[ArrayLike, ArrayLike, ArrayLike, ArrayLike]:
    x, df, loc, scale = promote(x, df, loc, scale)
    return x, 0.5 * df, loc, 2 * scale


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.chi2.logpdf``, ``gamma.logpdf(x, df/2, loc, 2 scale)``."""
    return gamma.logpdf(*_as_gamma(x, df, loc, scale))


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.chi2.pdf``, ``gamma.pdf(x, df/2, loc, 2 scale)``."""
    return gamma.pdf(*_as_gamma(x, df, loc, scale))


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.chi2.cdf``, ``gammainc(df/2, z/2)``; refused in ``df``."""
    return gamma.cdf(*_as_gamma(x, df, loc, scale))


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.chi2.sf``, ``gammaincc(df/2, z/2)``; refused in ``df``."""
    return gamma.sf(*_as_gamma(x, df, loc, scale))


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.chi2.logcdf``; refused in ``df``."""
    return gamma.logcdf(*_as_gamma(x, df, loc, scale))


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.chi2.logsf``; refused in ``df``."""
    return gamma.logsf(*_as_gamma(x, df, loc, scale))
