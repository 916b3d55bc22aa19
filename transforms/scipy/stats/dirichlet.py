"""The Dirichlet distribution, ``scipy.stats.dirichlet`` (concentrations ``alpha``, a 1-d
vector of ``K`` entries): differentiable in ``x`` and ``alpha`` at every order.

SciPy's layout: the components of ``x`` run along its *first* axis (``x.shape[0]`` is ``K``,
or ``K - 1``, the last component then being ``1 - sum``); the other axes are independent
points, and the result has their shape. ``x`` off the simplex and ``alpha <= 0`` raise
SciPy's ``ValueError``s (checked on the concrete values)."""

from __future__ import annotations

import numpy as np

import transforms.numpy as tnp
from transforms.core import concrete
from transforms.extend import shape_of
from transforms.scipy.special import gammaln, xlogy
from transforms.typing import Array, ArrayLike

from ._common import promote

__all__ = ["logpdf", "pdf"]


def _checked(x: ArrayLike, alpha: ArrayLike) -> tuple[Array, Array]:
    """``(x, alpha)`` checked as SciPy checks them, ``x`` completed to ``K`` components and
    ``alpha`` shaped to broadcast along ``x``'s first axis."""
    x, alpha = promote(x, alpha)
    a_shape = shape_of(alpha)  # the traced shape: under vmap the concrete one has the batch
    if len(a_shape) != 1:
        raise ValueError(
            f"dirichlet: parameter vector 'alpha' must be one dimensional, but alpha.shape = "
            f"{a_shape}"
        )
    if np.min(concrete(alpha)) <= 0:
        raise ValueError("dirichlet: all parameters 'alpha' must be greater than 0")
    k, shape = a_shape[0], shape_of(x)
    if not shape or shape[0] not in (k, k - 1):
        raise ValueError(
            "dirichlet: 'x' must have either the same number of entries as, or one entry "
            f"fewer than, 'alpha' along its first axis, but alpha.shape = {a_shape} and "
            f"x.shape = {shape}"
        )
    if shape[0] == k - 1:
        x = tnp.concatenate([x, 1 - tnp.sum(x, 0, keepdims=True)], 0)
    # checked on concrete values, layout-free (under vmap they hold the batch somewhere)
    if np.min(concrete(x)) < 0 or np.max(concrete(x)) > 1:
        raise ValueError("dirichlet: each entry of 'x' must lie in [0, 1]")
    alpha = tnp.reshape(alpha, (k,) + (1,) * (len(shape) - 1))
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
    return x, alpha


def logpdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Differentiable ``scipy.stats.dirichlet.logpdf``: ``gammaln(sum(alpha)) -
    sum(gammaln(alpha)) + sum(xlogy(alpha - 1, x))`` over the components."""
    x, alpha = _checked(x, alpha)
    log_norm = gammaln(tnp.sum(alpha, 0)) - tnp.sum(gammaln(alpha), 0)
    return log_norm + tnp.sum(xlogy(alpha - 1, x), 0)


def pdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Differentiable ``scipy.stats.dirichlet.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, alpha))
