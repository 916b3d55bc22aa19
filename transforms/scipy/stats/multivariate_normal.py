"""The multivariate normal distribution, ``scipy.stats.multivariate_normal``: ``logpdf`` and
``pdf`` differentiable in ``x``, ``mean`` and ``cov`` at every order, through the Cholesky
factor of ``cov`` (whose derivative takes ``cov`` symmetric: perturb both triangles alike).

SciPy's shapes: the last axis of ``x`` holds the ``d`` components (a 1-d ``x`` is one point,
or, when ``d == 1``, several), ``mean`` has ``d`` entries (default 0), ``cov`` is a ``(d,
d)`` matrix, a vector of variances or a scalar variance, and the result is squeezed as
SciPy's. ``cov`` must be positive definite: a singular ``cov`` (which SciPy takes, with
``allow_singular=True``, by a pseudo-inverse) is refused."""

from __future__ import annotations

import numpy as np

import transforms.numpy as tnp
from transforms.extend import ndim_of, shape_of
from transforms.typing import Array, ArrayLike

from ._common import LOG_2PI, promote

__all__ = ["logpdf", "pdf"]


def _parameters(
    x: ArrayLike, mean: ArrayLike | None, cov: ArrayLike
) -> tuple[Array, Array, Array, int]:
    """``(x, mean, cov)`` in SciPy's shapes: ``x`` as ``(..., d)``, ``cov`` as ``(d, d)``."""
    x, mean, cov = promote(x, 0.0 if mean is None else mean, cov)
    if ndim_of(cov) > 2 or ndim_of(mean) > 1:
        raise ValueError(
            "multivariate_normal: 'mean' must be a vector and 'cov' a matrix, a vector of "
            f"variances or a scalar, but mean.shape = {shape_of(mean)} and cov.shape = "
            f"{shape_of(cov)}"
        )
    dim = (shape_of(cov) or shape_of(mean) or (1,))[0]
    if ndim_of(cov) < 2:
        cov = (cov[..., None] if ndim_of(cov) == 1 else cov) * np.eye(dim)
    if shape_of(cov) != (dim, dim) or shape_of(mean) not in ((), (dim,)):
        raise ValueError(
            f"multivariate_normal: 'cov' must be ({dim}, {dim}) and 'mean' of {dim} entries, "
            f"but cov.shape = {shape_of(cov)} and mean.shape = {shape_of(mean)}"
        )
    if ndim_of(x) == 0:
        x = tnp.reshape(x, (1,))
    if ndim_of(x) == 1:
        x = tnp.reshape(x, (-1, 1) if dim == 1 else (1, -1))
    if shape_of(x)[-1] != dim:
        raise ValueError(
            f"multivariate_normal: the last axis of 'x' must have {dim} components, but "
            f"x.shape = {shape_of(x)}"
        )
    return x, mean, cov, dim


def logpdf(
    x: ArrayLike, mean: ArrayLike | None = None, cov: ArrayLike = 1, allow_singular: bool = False
) -> Array:
    """Differentiable ``scipy.stats.multivariate_normal.logpdf``: ``-(d log(2 pi) +
    log det(cov) + r^T cov^-1 r) / 2``, ``r = x - mean``, by the Cholesky factor ``L`` of
    ``cov`` (``log det = 2 sum log diag(L)``, ``r^T cov^-1 r = |L^-1 r|**2``).

    Raises ``numpy.linalg.LinAlgError`` when ``cov`` is not positive definite (with
    ``allow_singular=True`` too: a singular ``cov`` is not supported)."""
    x, mean, cov, dim = _parameters(x, mean, cov)
    try:
        factor = tnp.linalg.cholesky(cov)
    except np.linalg.LinAlgError as error:
        raise np.linalg.LinAlgError(
            "multivariate_normal.logpdf: 'cov' is not positive definite"
            + (" (a singular cov, allow_singular=True, is not supported)" if allow_singular else "")
        ) from error
    r = x - mean
    points = shape_of(r)[:-1]
    y = tnp.linalg.solve(factor, tnp.transpose(tnp.reshape(r, (-1, dim))))
    squared = tnp.reshape(tnp.sum(y * y, 0), points)
    log_det = 2 * tnp.sum(tnp.log(tnp.diagonal(factor)))
    return tnp.squeeze(-0.5 * (squared + log_det + dim * LOG_2PI))


def pdf(
    x: ArrayLike, mean: ArrayLike | None = None, cov: ArrayLike = 1, allow_singular: bool = False
) -> Array:
    """Differentiable ``scipy.stats.multivariate_normal.pdf``, ``exp(logpdf)``."""
    return tnp.exp(logpdf(x, mean, cov, allow_singular))
