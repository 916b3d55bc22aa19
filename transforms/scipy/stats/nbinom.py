"""The negative binomial distribution, ``scipy.stats.nbinom`` (failures before the ``n``-th
success of probability ``p``; SciPy allows a real ``n > 0``).

``logpmf``/``pmf`` are differentiable in ``n`` and ``p`` at every order; ``k`` as in
``poisson``. ``cdf``/``sf`` (``betainc(n, floor(k) + 1, p)``, SciPy's ``nbdtr``, and
``betaincc``) and their logs are differentiable in ``p``, refused in ``n`` (``NoRuleError``
naming ``betainc``/``betaincc``)."""

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
    """``(k - loc, n, p, valid)``: ``valid`` is SciPy's ``n > 0`` and ``0 < p <= 1``; where it
    fails, ``n`` and ``p`` are replaced by harmless values."""
    k, n, p, loc = promote(k, n, p, loc)
    valid = tnp.logical_and(n > 0, tnp.logical_and(p > 0, p <= 1))
    return k - loc, guard(valid, n, 1.0), guard(valid, p, 0.5), valid


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.nbinom.logpmf``: ``gammaln(n + k) - gammaln(k + 1) -
    gammaln(n) + xlogy(n, p) + xlog1py(k, -p)`` at the non-negative integers."""
    x, n, p, valid = _trials(k, n, p, loc)
    inside = tnp.logical_and(x >= 0, x == tnp.floor(x))
    x = guard(inside, x, 0.0)
    out = gammaln(n + x) - gammaln(x + 1) - gammaln(n) + xlogy(n, p) + xlog1py(x, -p)
    return select(valid, select(inside, out, -math.inf), NAN)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.nbinom.pmf``, ``exp(logpmf)``."""
    return tnp.exp(logpmf(k, n, p, loc))


def _floor(
    k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike
) -> tuple[Array, Array, Array, Array, Array]:
    """``(floor(k) >= 0, floor(k), n, p, valid)``, the floor replaced by 0 below 0."""
    x, n, p, valid = _trials(k, n, p, loc)
    m = tnp.floor(x)
    inside = m >= 0
    return inside, guard(inside, m, 0.0), n, p, valid


def cdf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.nbinom.cdf``, ``betainc(n, floor(k) + 1, p)``; refused in
    ``n``."""
    inside, m, n, p, valid = _floor(k, n, p, loc)
    return select(valid, select(inside, betainc(n, m + 1, p), 0.0), NAN)


def sf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.nbinom.sf``, ``betaincc(n, floor(k) + 1, p)``; refused in
    ``n``."""
    inside, m, n, p, valid = _floor(k, n, p, loc)
    return select(valid, select(inside, betaincc(n, m + 1, p), 1.0), NAN)


def logcdf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.nbinom.logcdf``, ``log(cdf)``; refused in ``n``."""
    return log_probability(cdf(k, n, p, loc), lambda: sf(k, n, p, loc))


def logsf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Differentiable ``scipy.stats.nbinom.logsf``, ``log(sf)``; refused in ``n``."""
    return log_probability(sf(k, n, p, loc), lambda: cdf(k, n, p, loc))
