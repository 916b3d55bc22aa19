"""The Laplace distribution, ``scipy.stats.laplace``: differentiable in ``x``, ``loc`` and
``scale``. At ``x == loc``, where ``|z|`` has its kink, the derivative in ``x`` is 0 (the
convention of ``abs``: ``sign(0) == 0``), as JAX's."""

from __future__ import annotations

import math

import transforms.numpy as tnp
from transforms.typing import Array, ArrayLike

from ._common import NAN, promote, select, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]

_LOG_2 = math.log(2.0)


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.laplace.logpdf``: ``-log(2) - |z| - log(scale)``."""
    z, log_scale, valid = standardize(*promote(x, loc, scale))
    return select(valid, -_LOG_2 - tnp.abs(z) - log_scale, NAN)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.laplace.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, loc, scale))


def _tails(x: ArrayLike, loc: ArrayLike, scale: ArrayLike) -> tuple[Array, Array, Array]:
    """``(z < 0, |z|, valid)``: the smaller tail probability is ``exp(-|z|)/2``, which never
    overflows; the larger one is ``1 -`` it. ``|z|`` is taken as ``-z`` or ``z`` by a
    selection, not by ``abs``: at 0 its derivative is then the one of the side taken, which
    gives the distribution function its derivative there (the density 1/2), not 0."""
    z, _, valid = standardize(*promote(x, loc, scale))
    below = z < 0
    return below, tnp.where(below, -z, z), valid


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.laplace.cdf``: ``exp(z)/2`` below ``loc``,
    ``1 - exp(-z)/2`` above."""
    below, a, valid = _tails(x, loc, scale)
    tail = 0.5 * tnp.exp(-a)
    return select(valid, tnp.where(below, tail, 1 - tail), NAN)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.laplace.sf``, ``cdf(-z)``."""
    below, a, valid = _tails(x, loc, scale)
    tail = 0.5 * tnp.exp(-a)
    return select(valid, tnp.where(below, 1 - tail, tail), NAN)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.laplace.logcdf``: ``z - log(2)`` below ``loc``,
    ``log1p(-exp(-z)/2)`` above (accurate in both tails)."""
    below, a, valid = _tails(x, loc, scale)
    return select(valid, tnp.where(below, -_LOG_2 - a, tnp.log1p(-0.5 * tnp.exp(-a))), NAN)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Differentiable ``scipy.stats.laplace.logsf``, ``logcdf(-z)``."""
    below, a, valid = _tails(x, loc, scale)
    return select(valid, tnp.where(below, tnp.log1p(-0.5 * tnp.exp(-a)), -_LOG_2 - a), NAN)
