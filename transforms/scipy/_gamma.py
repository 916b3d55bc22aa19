"""The gamma and beta families, differentiable.

Values are SciPy's; derivatives are written with differentiable operations, so every order
works: ``gamma' = gamma digamma``, ``gammaln' = digamma`` (``gammaln`` is ``log|gamma|``, so
this holds for negative non-integer ``x`` too), ``polygamma(n, x)' = polygamma(n + 1, x)``,
``beta`` and ``betaln`` by ``digamma(a) - digamma(a + b)``.

- ``polygamma``'s order ``n`` is an integer: its derivative in ``n`` is 0, as in JAX (which
  defines it so; SciPy returns NaN at a non-integer order).
- The regularized incomplete functions are differentiable in ``x``: ``gammainc``'s
  derivative is the gamma density ``x**(a-1) e**-x / gamma(a)`` and ``betainc``'s the beta
  density ``x**(a-1) (1-x)**(b-1) / beta(a, b)``, both formed in the exponent (``xlogy``,
  ``gammaln``) so they neither overflow nor lose ``x == 0``. In the shape parameters they
  are refused: their derivatives there have no closed form.
- ``betaincc`` (``1 - betainc``, accurate where that is near 1) likewise, with the opposite
  sign; ``stdtr(df, t)``, Student's t distribution function, is differentiable in ``t`` (its
  density) and refused in ``df``, for the same reason.
- ``gammasgn`` is piecewise constant: derivative 0.
- Arrays of another library (Dask) stay in it: SciPy's ufuncs reach it through NumPy's
  protocol; ``polygamma``, a Python function that ``np.asarray``s its arguments, is written
  for them with the ufuncs it is made of; ``multigammaln`` cannot check ``a`` without
  computing it, and gives NaN where the condition fails instead of SciPy's ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special as sp

import transforms.numpy as tnp
from transforms.core import concrete
from transforms.core.arrays import is_foreign
from transforms.extend import NO_DERIVATIVE, cast_to, dtype_of, elementwise, unary
from transforms.typing import Array, ArrayLike

from ._convenience import xlog1py, xlogy
from ._doc import special_doc

__all__ = [
    "beta",
    "betainc",
    "betaincc",
    "betaln",
    "digamma",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "multigammaln",
    "polygamma",
    "psi",
    "rgamma",
    "stdtr",
]

digamma: Callable[[ArrayLike], Array]
polygamma: Callable[[ArrayLike, ArrayLike], Array]
gammaln: Callable[[ArrayLike], Array]
betaln: Callable[[ArrayLike, ArrayLike], Array]

_SHAPE_REASON = (
    "its derivative in the shape parameter(s) has no closed form and is not implemented; "
    "differentiate with respect to x only (pass the shape parameters as constants)"
)

# ---- gamma, log-gamma, digamma, polygamma -------------------------------------------------------
gamma_p, gamma = unary(
    "gamma",
    sp.gamma,
    lambda ans, x: ans * digamma(x),
    doc=special_doc("gamma", "``gamma(x) * digamma(x)``"),
)
gammaln_p, gammaln = unary(
    "gammaln",
    sp.gammaln,
    lambda ans, x: digamma(x),
    doc=special_doc("gammaln", "``digamma(x)`` (``gammaln`` is ``log|gamma(x)|``)"),
)
rgamma_p, rgamma = unary(
    "rgamma",
    sp.rgamma,
    lambda ans, x: -ans * digamma(x),
    doc=special_doc("rgamma", "``-rgamma(x) * digamma(x)``"),
)
gammasgn_p, gammasgn = unary(
    "gammasgn",
    sp.gammasgn,
    None,
    doc=special_doc("gammasgn", "derivative 0 (piecewise constant)"),
)
# SciPy's polygamma computes an integer order in float64: keep x's float32 in the derivative
digamma_p, digamma = unary(
    "digamma",
    sp.digamma,
    lambda ans, x: cast_to(polygamma(1, x), dtype_of(ans)),
    doc=special_doc("digamma", "``polygamma(1, x)``"),
)
psi = digamma


def _polygamma(n: Any, x: Any) -> Any:
    """``scipy.special.polygamma``; for an array of another library, SciPy's own formula in
    the ufuncs it is made of (``sp.polygamma`` itself ``np.asarray``s, computing a Dask array)."""
    if not (is_foreign(n) or is_foreign(x)):
        return sp.polygamma(n, x)
    return np.where(n == 0, sp.psi(x), (-1.0) ** (n + 1) * sp.gamma(n + 1.0) * sp.zeta(n + 1, x))


polygamma_p, polygamma = elementwise(
    "polygamma",
    _polygamma,
    None,
    lambda ans, n, x: polygamma(n + 1, x),
    doc=special_doc(
        "polygamma", "``polygamma(n + 1, x)`` in ``x``; 0 in the integer order ``n`` (as JAX)"
    ),
)


# ---- multigammaln: a composite of gammaln -------------------------------------------------------
def multigammaln(a: ArrayLike, d: int) -> Array:
    """Differentiable ``scipy.special.multigammaln``, the log of the multivariate gamma
    function of dimension ``d``: ``d (d-1)/4 log(pi) + sum_j gammaln(a - j/2)``, j < d (a
    composite of ``gammaln``, differentiable in ``a``). Like SciPy, it requires an integer
    ``d`` and ``a > (d - 1)/2`` (a ``ValueError`` otherwise)."""
    dim = np.asarray(d)
    if dim.ndim != 0 or np.floor(dim) != dim:
        raise ValueError("multigammaln: d should be a positive integer (dimension)")
    n = int(dim)
    a = tnp.asarray(a)
    lazy = is_foreign(concrete(a))  # checked where it is used, not computed here
    if not lazy and np.any(concrete(a) <= 0.5 * (n - 1)):
        raise ValueError(f"multigammaln: condition a > 0.5 * (d-1) ({0.5 * (n - 1)}) not met")
    halves = np.arange(n, dtype=np.result_type(dtype_of(a), 1.0)) / 2
    terms = gammaln(tnp.expand_dims(a, -1) - halves)
    out = tnp.sum(terms, -1) + (n * (n - 1) * 0.25) * math.log(math.pi)
    return tnp.where(a > 0.5 * (n - 1), out, math.nan) if lazy else out


# ---- beta and log-beta --------------------------------------------------------------------------
def _digamma_difference(a: Any, b: Any) -> Any:
    """``digamma(a) - digamma(a + b)``: the derivative of ``betaln(a, b)`` in ``a``."""
    return digamma(a) - digamma(a + b)


beta_p, beta = elementwise(
    "beta",
    sp.beta,
    lambda ans, a, b: ans * _digamma_difference(a, b),
    lambda ans, a, b: ans * _digamma_difference(b, a),
    doc=special_doc("beta", "``beta(a, b) (digamma(a) - digamma(a + b))`` in ``a``, alike in b"),
)
betaln_p, betaln = elementwise(
    "betaln",
    sp.betaln,
    lambda ans, a, b: _digamma_difference(a, b),
    lambda ans, a, b: _digamma_difference(b, a),
    doc=special_doc("betaln", "``digamma(a) - digamma(a + b)`` in ``a``, alike in ``b``"),
)


# ---- the regularized incomplete gamma and beta functions ----------------------------------------
def _gamma_density(a: Any, x: Any) -> Any:
    """``x**(a-1) exp(-x) / gamma(a)``, in the exponent."""
    return tnp.exp(xlogy(a - 1, x) - x - gammaln(a))


def _beta_density(a: Any, b: Any, x: Any) -> Any:
    """``x**(a-1) (1-x)**(b-1) / beta(a, b)``, in the exponent."""
    return tnp.exp(xlogy(a - 1, x) + xlog1py(b - 1, -x) - betaln(a, b))


gammainc_p, gammainc = elementwise(
    "gammainc",
    sp.gammainc,
    NO_DERIVATIVE,
    lambda ans, a, x: _gamma_density(a, x),
    doc=special_doc(
        "gammainc", "the gamma density ``x**(a-1) e**-x / gamma(a)`` in ``x``; refused in ``a``"
    ),
    reason=_SHAPE_REASON,
)
gammaincc_p, gammaincc = elementwise(
    "gammaincc",
    sp.gammaincc,
    NO_DERIVATIVE,
    lambda ans, a, x: -_gamma_density(a, x),
    doc=special_doc(
        "gammaincc",
        "minus the gamma density ``x**(a-1) e**-x / gamma(a)`` in ``x``; refused in ``a``",
    ),
    reason=_SHAPE_REASON,
)
betainc_p, betainc = elementwise(
    "betainc",
    sp.betainc,
    NO_DERIVATIVE,
    NO_DERIVATIVE,
    lambda ans, a, b, x: _beta_density(a, b, x),
    doc=special_doc(
        "betainc",
        "the beta density ``x**(a-1) (1-x)**(b-1) / beta(a, b)`` in ``x``; refused in ``a``, ``b``",
    ),
    reason=_SHAPE_REASON,
)
betaincc_p, betaincc = elementwise(
    "betaincc",
    sp.betaincc,
    NO_DERIVATIVE,
    NO_DERIVATIVE,
    lambda ans, a, b, x: -_beta_density(a, b, x),
    doc=special_doc(
        "betaincc",
        "minus the beta density ``x**(a-1) (1-x)**(b-1) / beta(a, b)`` in ``x``; refused in "
        "``a``, ``b``",
    ),
    reason=_SHAPE_REASON,
)


# ---- Student's t distribution function ----------------------------------------------------------
def _t_density(df: Any, t: Any) -> Any:
    """Student's t density, ``gamma((df+1)/2) / (sqrt(df pi) gamma(df/2)) (1 + t**2/df)**(
    -(df+1)/2)``, in the exponent."""
    half = 0.5 * df
    log_norm = gammaln(half + 0.5) - gammaln(half) - 0.5 * tnp.log(df * math.pi)
    return tnp.exp(log_norm - (half + 0.5) * tnp.log1p(t * t / df))


stdtr_p, stdtr = elementwise(
    "stdtr",
    sp.stdtr,
    NO_DERIVATIVE,
    lambda ans, df, t: _t_density(df, t),
    doc=special_doc(
        "stdtr", "Student's t density in ``t``; refused in the degrees of freedom ``df``"
    ),
    reason=_SHAPE_REASON,
)
