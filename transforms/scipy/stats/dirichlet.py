"""The Dirichlet distribution, ``scipy.stats.dirichlet`` (concentrations ``alpha``, a 1-d
vector of ``K`` entries): differentiable in ``x`` and ``alpha`` at every order.

SciPy's layout: the components of ``x`` run along its *first* axis (``x.shape[0]`` is ``K``,
or ``K - 1``, the last component then being ``1 - sum``); the other axes are independent
points, and the result has their shape. ``x`` off the simplex and ``alpha <= 0`` raise
SciPy's ``ValueError``s (checked on the concrete values). Values of another library (Dask)
are not computed to be checked: a point that fails a check gets NaN instead."""

from __future__ import annotations

import numpy as np

import transforms.numpy as tnp
from transforms.core import concrete
from transforms.core.arrays import is_foreign
from transforms.extend import dtype_of, shape_of
from transforms.scipy.special import gammaln, xlogy
from transforms.typing import Array, ArrayLike

from ._common import NAN, guard, promote, select

__all__ = ["logpdf", "pdf"]


def _checked(x: ArrayLike, alpha: ArrayLike) -> tuple[Array, Array, Array | None]:
    """``(x, alpha, valid)``: ``x`` completed to ``K`` components and ``alpha`` shaped to
    broadcast along ``x``'s first axis, checked as SciPy checks them; for values of another
    library, which are not computed to be checked, ``valid`` says where the checks hold (of
    each point: the result's shape), ``None`` otherwise."""
    x, alpha = promote(x, alpha)
    lazy = is_foreign(concrete(x)) or is_foreign(concrete(alpha))
    x, alpha = _shaped(x, alpha)
    if lazy:
        return _lazily_checked(x, alpha)
    if np.min(concrete(alpha)) <= 0:
        raise ValueError("dirichlet: all parameters 'alpha' must be greater than 0")
    # checked on concrete values, layout-free (under vmap they hold the batch somewhere)
    if np.min(concrete(x)) < 0 or np.max(concrete(x)) > 1:
        raise ValueError("dirichlet: each entry of 'x' must lie in [0, 1]")
    if np.any(concrete(tnp.logical_and(x == 0, alpha < 1))):
        raise ValueError(
            "dirichlet: each entry of 'x' must be greater than zero where its alpha is less "
            "than one"
        )
    # SciPy's tolerance, widened to the rounding of a sum in a low precision (float32)
    sums = concrete(tnp.sum(x, 0))
    tolerance = max(1e-9, 100 * float(np.finfo(sums.dtype).eps))
    if np.any(np.abs(sums - 1.0) > tolerance):
        raise ValueError(
            f"dirichlet: 'x' must lie on the simplex (sum to 1 along its first axis), but its "
            f"sums are {sums}"
        )
    return x, alpha, None


def _shaped(x: Array, alpha: Array) -> tuple[Array, Array]:
    """``x`` completed to ``K`` components, ``alpha`` shaped to broadcast along its first axis
    (SciPy's shape checks, on the traced shapes: under vmap the concrete ones hold the batch)."""
    a_shape, shape = shape_of(alpha), shape_of(x)
    if len(a_shape) != 1:
        raise ValueError(
            f"dirichlet: parameter vector 'alpha' must be one dimensional, but alpha.shape = "
            f"{a_shape}"
        )
    k = a_shape[0]
    if not shape or shape[0] not in (k, k - 1):
        raise ValueError(
            "dirichlet: 'x' must have either the same number of entries as, or one entry "
            f"fewer than, 'alpha' along its first axis, but alpha.shape = {a_shape} and "
            f"x.shape = {shape}"
        )
    if shape[0] == k - 1:
        x = tnp.concatenate([x, 1 - tnp.sum(x, 0, keepdims=True)], 0)
    return x, tnp.reshape(alpha, (k,) + (1,) * (len(shape) - 1))


def _lazily_checked(x: Array, alpha: Array) -> tuple[Array, Array, Array]:
    """SciPy's checks as a condition on each point, without computing anything; ``x`` is
    replaced by the centre of the simplex where they fail, so the formula (whose result
    ``select`` replaces there) stays finite, its derivative too."""
    tolerance = max(1e-9, 100 * float(np.finfo(dtype_of(x)).eps))
    inside = tnp.logical_and(tnp.logical_and(x >= 0, x <= 1), tnp.logical_or(x != 0, alpha >= 1))
    valid = tnp.logical_and(tnp.all(inside, 0), tnp.abs(tnp.sum(x, 0) - 1.0) <= tolerance)
    positive = tnp.all(alpha > 0)
    valid = tnp.logical_and(valid, positive)
    return guard(valid, x, 1.0 / shape_of(x)[0]), guard(positive, alpha, 1.0), valid


def logpdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Differentiable ``scipy.stats.dirichlet.logpdf``: ``gammaln(sum(alpha)) -
    sum(gammaln(alpha)) + sum(xlogy(alpha - 1, x))`` over the components."""
    x, alpha, valid = _checked(x, alpha)
    log_norm = gammaln(tnp.sum(alpha, 0)) - tnp.sum(gammaln(alpha), 0)
    out = log_norm + tnp.sum(xlogy(alpha - 1, x), 0)
    return out if valid is None else select(valid, out, NAN)


def pdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Differentiable ``scipy.stats.dirichlet.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, alpha))
