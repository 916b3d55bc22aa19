"""Student's t distribution, ``scipy.stats.t``: ``logpdf``/``pdf`` differentiable in ``x``,
``df``, ``loc`` and ``scale``; ``cdf``/``sf`` (by ``scipy.special.stdtr``) and their logs
differentiable in ``x``, ``loc`` and ``scale``, refused in ``df`` (``stdtr``'s derivative in
the degrees of freedom has no closed form: ``NoRuleError``)."""

from __future__ import annotations

import math

import transforms.numpy as tnp
from transforms.scipy.special import gammaln, stdtr
from transforms.typing import Array, ArrayLike

from ._common import NAN, guard, log_probability, promote, select, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.t.logpdf``: ``gammaln((df+1)/2) - gammaln(df/2) -
    log(df pi)/2 - (df+1)/2 log1p(z**2/df) - log(scale)`` (NaN for ``df <= 0``)."""
    x, df, loc, scale = promote(x, df, loc, scale)
    z, log_scale, valid = standardize(x, loc, scale)
    valid = tnp.logical_and(valid, df > 0)
    df = guard(df > 0, df, 1.0)
    half = 0.5 * df
    log_norm = gammaln(half + 0.5) - gammaln(half) - 0.5 * tnp.log(df * math.pi)
    out = log_norm - (half + 0.5) * tnp.log1p(z * z / df) - log_scale
    return select(valid, out, NAN)


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.t.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, df, loc, scale))


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.t.cdf``, ``stdtr(df, z)``; refused in ``df``."""
    x, df, loc, scale = promote(x, df, loc, scale)
    z, _, valid = standardize(x, loc, scale)
    return select(valid, stdtr(df, z), NAN)


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.t.sf``, ``stdtr(df, -z)``; refused in ``df``."""
    x, df, loc, scale = promote(x, df, loc, scale)
    z, _, valid = standardize(x, loc, scale)
    return select(valid, stdtr(df, -z), NAN)


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.t.logcdf``, ``log(cdf)``; refused in ``df``."""
    return log_probability(cdf(x, df, loc, scale), lambda: sf(x, df, loc, scale))


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.t.logsf``, ``log(sf)``; refused in ``df``."""
    return log_probability(sf(x, df, loc, scale), lambda: cdf(x, df, loc, scale))
