"""The Poisson distribution, ``scipy.stats.poisson`` (mean ``mu``): differentiable in ``mu``
(and ``loc``) at every order, the distribution function too (``gammaincc(floor(k) + 1, mu)``
is differentiable in ``mu``: its derivative is ``-pmf(floor(k), mu)``).

``k`` counts: the probability is 0 at a negative or non-integer ``k``, as SciPy's. A
derivative in ``k`` is the continuous extension's (``xlogy(k, mu) - gammaln(k + 1)``), as
JAX's; the distribution functions, piecewise constant in ``k``, have derivative 0 there."""

from __future__ import annotations

import math

import transforms.numpy as tnp
from transforms.scipy.special import gammainc, gammaincc, gammaln, xlogy
from transforms.typing import Array, ArrayLike

from ._common import NAN, guard, log_probability, promote, select

__all__ = ["cdf", "logcdf", "logpmf", "logsf", "pmf", "sf"]


def _counts(k: ArrayLike, mu: ArrayLike, loc: ArrayLike) -> tuple[Array, Array, Array]:
    """``(k - loc, mu, valid)``, ``mu`` replaced by 1 where it is invalid (``mu < 0``)."""
    k, mu, loc = promote(k, mu, loc)
    valid = mu >= 0
    return k - loc, guard(valid, mu, 1.0), valid


def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.logpmf``: ``xlogy(k, mu) - mu - gammaln(k + 1)``
    at the non-negative integers."""
    x, mu, valid = _counts(k, mu, loc)
    inside = tnp.logical_and(x >= 0, x == tnp.floor(x))
    x = guard(inside, x, 0.0)
    return select(valid, select(inside, xlogy(x, mu) - mu - gammaln(x + 1), -math.inf), NAN)


def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.pmf``, ``exp(logpmf)``."""
    return tnp.exp(logpmf(k, mu, loc))


def _floor(k: ArrayLike, mu: ArrayLike, loc: ArrayLike) -> tuple[Array, Array, Array, Array]:
    """``(floor(k - loc) >= 0, floor(k - loc), mu, valid)``, the floor replaced by 0 below 0."""
    x, mu, valid = _counts(k, mu, loc)
    m = tnp.floor(x)
    inside = m >= 0
    return inside, guard(inside, m, 0.0), mu, valid


def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.cdf``, ``gammaincc(floor(k) + 1, mu)``."""
    inside, m, mu, valid = _floor(k, mu, loc)
    return select(valid, select(inside, gammaincc(m + 1, mu), 0.0), NAN)


def sf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.sf``, ``gammainc(floor(k) + 1, mu)``."""
    inside, m, mu, valid = _floor(k, mu, loc)
    return select(valid, select(inside, gammainc(m + 1, mu), 1.0), NAN)


def logcdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.logcdf``, ``log(cdf)``."""
    return log_probability(cdf(k, mu, loc), lambda: sf(k, mu, loc))


def logsf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.poisson.logsf``, ``log(sf)``."""
    return log_probability(sf(k, mu, loc), lambda: cdf(k, mu, loc))
