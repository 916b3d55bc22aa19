"""The binomial distribution, ``scipy.stats.binom`` (``n`` trials of probability ``p``).

``logpmf``/``pmf`` are differentiable in ``p`` at every order, and in ``n`` by the
continuous extension of the binomial coefficient (``gammaln``), as JAX's (SciPy itself
returns NaN at a non-integer ``n``, as this does); ``k`` as in ``poisson``. ``cdf``/``sf``
(``betaincc(floor(k) + 1, n - floor(k), p)`` and ``betainc``) and their logs are
differentiable in ``p``, refused in ``n`` (``NoRuleError`` naming ``betaincc``/``betainc``)."""

from __future__ import annotations

import math

import transforms.numpy as tnp
from transforms.scipy.special import betainc, betaincc, gammaln, xlog1py, xlogy
from transforms.typing import Array, ArrayLike

from ._common import NAN, guard, log_probability, promote, select

__all__ = ["cdf", "logcdf", "logpmf", "logsf", "pmf", "sf"]


def _trials(
    k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike
) -> tuple[Array, Array, Array, Array]:
    """``(k - loc, n, p, valid)``: ``valid`` is SciPy's ``n`` a non-negative integer and
    ``0 <= p <= 1``; where it fails, ``n`` and ``p`` are replaced by harmless values."""
    k, n, p, loc = promote(k, n, p, loc)
    valid = tnp.logical_and(
        tnp.logical_and(n >= 0, n == tnp.floor(n)), tnp.logical_and(p >= 0, p <= 1)
    )
    return k - loc, guard(valid, n, 1.0), guard(valid, p, 0.5), valid


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.binom.logpmf``: ``gammaln(n + 1) - gammaln(k + 1) -
    gammaln(n - k + 1) + xlogy(k, p) + xlog1py(n - k, -p)`` at the integers ``0..n``."""
    x, n, p, valid = _trials(k, n, p, loc)
    inside = tnp.logical_and(tnp.logical_and(x >= 0, x <= n), x == tnp.floor(x))
    x = guard(inside, x, 0.0)
    n = guard(inside, n, 1.0)
    combinations = gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1)
    out = combinations + xlogy(x, p) + xlog1py(n - x, -p)
    return select(valid, select(inside, out, -math.inf), NAN)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.binom.pmf``, ``exp(logpmf)``."""
    return tnp.exp(logpmf(k, n, p, loc))


def _floor(
    k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike
) -> tuple[Array, Array, Array, Array, Array, Array]:
    """``(floor(k) >= 0, floor(k) < n, floor(k), n, p, valid)``, with ``floor(k)`` and ``n``
    replaced by 0 and 1 outside ``[0, n)`` (where the distribution function is 0 or 1)."""
    x, n, p, valid = _trials(k, n, p, loc)
    m = tnp.floor(x)
    above, below = m >= 0, m < n
    inside = tnp.logical_and(above, below)
    return above, below, guard(inside, m, 0.0), guard(inside, n, 1.0), p, valid


def cdf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.binom.cdf``, ``betaincc(floor(k) + 1, n - floor(k), p)``
    (SciPy's ``bdtr``); refused in ``n``."""
    above, below, m, n, p, valid = _floor(k, n, p, loc)
    out = select(below, select(above, betaincc(m + 1, n - m, p), 0.0), 1.0)
    return select(valid, out, NAN)


def sf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.binom.sf``, ``betainc(floor(k) + 1, n - floor(k), p)``
    (SciPy's ``bdtrc``); refused in ``n``."""
    above, below, m, n, p, valid = _floor(k, n, p, loc)
    out = select(below, select(above, betainc(m + 1, n - m, p), 1.0), 0.0)
    return select(valid, out, NAN)


def logcdf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.binom.logcdf``, ``log(cdf)``; refused in ``n``."""
    return log_probability(cdf(k, n, p, loc), lambda: sf(k, n, p, loc))


def logsf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.binom.logsf``, ``log(sf)``; refused in ``n``."""
    return log_probability(sf(k, n, p, loc), lambda: cdf(k, n, p, loc))
