"""The error function family and the normal distribution function, differentiable.

Values are SciPy's ufuncs; derivatives are written with differentiable operations, so every
order works: ``erf' = 2/sqrt(pi) exp(-x**2)``, and the inverses by the inverse-function rule
on their own result (``erfinv' = sqrt(pi)/2 exp(erfinv(x)**2)``, ``ndtri' = sqrt(2 pi)
exp(ndtri(p)**2 / 2)``). ``log_ndtr' = ndtr'/ndtr`` is ``sqrt(2/pi) / erfcx(-x/sqrt(2))``
for ``x <= 0``, so it stays accurate in the far lower tail, where ``ndtr`` underflows (it
tends to ``-x``), and is formed in the exponent above 0.
"""

from __future__ import annotations

import math
from typing import Any

import scipy.special as sp

import transforms.numpy as tnp
from transforms.extend import unary

from ._doc import special_doc

__all__ = [
    "dawsn",
    "erf",
    "erfc",
    "erfcinv",
    "erfcx",
    "erfi",
    "erfinv",
    "log_ndtr",
    "ndtr",
    "ndtri",
]

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_HALF_SQRT_PI = math.sqrt(math.pi) / 2
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_SQRT_HALF = math.sqrt(0.5)

erf_p, erf = unary(
    "erf",
    sp.erf,
    lambda ans, x: _TWO_OVER_SQRT_PI * tnp.exp(-(x**2)),
    doc=special_doc("erf", "``2/sqrt(pi) exp(-x**2)``"),
)
erfc_p, erfc = unary(
    "erfc",
    sp.erfc,
    lambda ans, x: -_TWO_OVER_SQRT_PI * tnp.exp(-(x**2)),
    doc=special_doc("erfc", "``-2/sqrt(pi) exp(-x**2)``"),
)
erfinv_p, erfinv = unary(
    "erfinv",
    sp.erfinv,
    lambda ans, x: _HALF_SQRT_PI * tnp.exp(ans**2),
    doc=special_doc("erfinv", "``sqrt(pi)/2 exp(erfinv(x)**2)`` (the inverse-function rule)"),
)
erfcinv_p, erfcinv = unary(
    "erfcinv",
    sp.erfcinv,
    lambda ans, x: -_HALF_SQRT_PI * tnp.exp(ans**2),
    doc=special_doc("erfcinv", "``-sqrt(pi)/2 exp(erfcinv(x)**2)`` (the inverse-function rule)"),
)
erfcx_p, erfcx = unary(
    "erfcx",
    sp.erfcx,
    lambda ans, x: 2 * (x * ans) - _TWO_OVER_SQRT_PI,
    doc=special_doc("erfcx", "``2 x erfcx(x) - 2/sqrt(pi)``"),
)
erfi_p, erfi = unary(
    "erfi",
    sp.erfi,
    lambda ans, x: _TWO_OVER_SQRT_PI * tnp.exp(x**2),
    doc=special_doc("erfi", "``2/sqrt(pi) exp(x**2)``"),
)
dawsn_p, dawsn = unary(
    "dawsn",
    sp.dawsn,
    lambda ans, x: 1 - 2 * (x * ans),
    doc=special_doc("dawsn", "``1 - 2 x dawsn(x)``"),
)

# ---- the standard normal distribution function and its inverse ----------------------------------
ndtr_p, ndtr = unary(
    "ndtr",
    sp.ndtr,
    lambda ans, x: tnp.exp(-0.5 * (x**2)) / _SQRT_2PI,
    doc=special_doc("ndtr", "the normal density ``exp(-x**2/2) / sqrt(2 pi)``"),
)
ndtri_p, ndtri = unary(
    "ndtri",
    sp.ndtri,
    lambda ans, p: _SQRT_2PI * tnp.exp(0.5 * (ans**2)),
    doc=special_doc("ndtri", "``sqrt(2 pi) exp(ndtri(p)**2 / 2)`` (the inverse-function rule)"),
)


def _log_ndtr_derivative(ans: Any, x: Any) -> Any:
    """``phi(x) / ndtr(x)``: ``sqrt(2/pi) / erfcx(-x/sqrt(2))`` for ``x <= 0``, accurate far
    into the lower tail (where it tends to ``-x`` and ``ndtr`` underflows), and
    ``exp(-x**2/2 - log_ndtr(x)) / sqrt(2 pi)`` above, where ``erfcx(-x/sqrt(2))`` would
    overflow. Each branch sees only the inputs it is used for."""
    upper = x > 0
    below = tnp.where(upper, 0.0, x)
    above = tnp.where(upper, x, 0.0)
    tail = _SQRT_2_OVER_PI / erfcx(below * -_SQRT_HALF)
    body = tnp.exp(-0.5 * (above**2) - tnp.where(upper, ans, 0.0)) / _SQRT_2PI
    return tnp.where(upper, body, tail)


log_ndtr_p, log_ndtr = unary(
    "log_ndtr",
    sp.log_ndtr,
    _log_ndtr_derivative,
    doc=special_doc(
        "log_ndtr",
        "``ndtr'(x) / ndtr(x)``, by ``erfcx`` below 0: accurate in both tails",
    ),
)
