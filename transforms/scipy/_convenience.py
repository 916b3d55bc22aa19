"""SciPy's convenience functions and information-theory functions, differentiable.

Every function is SciPy's own ufunc for the value; its derivative is written with
differentiable operations (``transforms.numpy`` and this family), so every order works. The
ones NumPy has too (``exp2``, ``expm1``, ``log1p``, ``cbrt``, ``sinc``) are
``transforms.numpy``'s. The conventions at the edges are SciPy's and JAX's:

- ``xlogy(x, y)`` (``x * log(y)``, 0 where ``x == 0``, also at ``y == 0``): derivative
  ``log(y)`` in ``x`` (JAX's; ``-inf`` at ``y == 0``) and ``x / y`` in ``y``, which is 0 where
  ``x == 0`` (``xlogy(0, y)`` is 0 for every ``y``), also at ``y == 0``. Its derivative in
  ``y`` keeps its own derivative in ``x``, ``1 / y``, at ``x == 0``, so mixed second
  derivatives are right there too; ``xlog1py`` likewise with ``log1p(y)`` and ``1 + y``.
- ``entr``, ``rel_entr``, ``kl_div``: the derivatives of the smooth formula where the
  arguments are positive (``-inf``/``inf`` at a zero argument, as the formula's).
- ``exprel`` (``(exp(x) - 1) / x``, 1 at 0): its derivative ``(exp(x) - exprel(x)) / x``
  cancels near 0, where a Taylor polynomial takes over (``|x| < 1/4``), exact at 0 (1/2,
  then 1/3, ...).
- ``round`` is piecewise constant: derivative 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import scipy.special as sp

import transforms.numpy as tnp
from transforms.extend import elementwise, unary
from transforms.typing import Array, ArrayLike

from ._doc import special_doc

__all__ = [
    "cbrt",
    "cosdg",
    "cosm1",
    "cotdg",
    "entr",
    "exp10",
    "exp2",
    "expm1",
    "exprel",
    "kl_div",
    "log1p",
    "powm1",
    "radian",
    "rel_entr",
    "round",
    "sindg",
    "sinc",
    "tandg",
    "xlog1py",
    "xlogy",
]

Unary = Callable[[ArrayLike], Array]
Binary = Callable[[ArrayLike, ArrayLike], Array]

# NumPy's own: the same functions as transforms.numpy's (SciPy's values agree to rounding).
cbrt = tnp.cbrt
exp2 = tnp.exp2
expm1 = tnp.expm1
log1p = tnp.log1p
sinc = tnp.sinc

_LN10 = math.log(10.0)
_DEGREE = math.pi / 180  # radians per degree

# ---- exponentials and trigonometry in degrees ---------------------------------------------------
sindg: Unary
cosdg: Unary
xlogy: Binary

exp10_p, exp10 = unary(
    "exp10", sp.exp10, lambda ans, x: ans * _LN10, doc=special_doc("exp10", "``ans * ln 10``")
)
cosm1_p, cosm1 = unary(
    "cosm1", sp.cosm1, lambda ans, x: -tnp.sin(x), doc=special_doc("cosm1", "``-sin(x)``")
)
sindg_p, sindg = unary(
    "sindg",
    sp.sindg,
    lambda ans, x: _DEGREE * cosdg(x),
    doc=special_doc("sindg", "``pi/180 * cosdg(x)``"),
)
cosdg_p, cosdg = unary(
    "cosdg",
    sp.cosdg,
    lambda ans, x: -_DEGREE * sindg(x),
    doc=special_doc("cosdg", "``-pi/180 * sindg(x)``"),
)
tandg_p, tandg = unary(
    "tandg",
    sp.tandg,
    lambda ans, x: _DEGREE * (1 + ans**2),
    doc=special_doc("tandg", "``pi/180 * (1 + tandg(x)**2)``"),
)
cotdg_p, cotdg = unary(
    "cotdg",
    sp.cotdg,
    lambda ans, x: -_DEGREE * (1 + ans**2),
    doc=special_doc("cotdg", "``-pi/180 * (1 + cotdg(x)**2)``"),
)
round_p, round = unary(
    "round", sp.round, None, doc=special_doc("round", "derivative 0 (piecewise constant)")
)

radian_p, radian = elementwise(
    "radian",
    sp.radian,
    lambda ans, d, m, s: _DEGREE,
    lambda ans, d, m, s: _DEGREE / 60,
    lambda ans, d, m, s: _DEGREE / 3600,
    doc=special_doc(
        "radian", "linear in degrees, minutes and seconds: ``pi/180 * (1, 1/60, 1/3600)``"
    ),
)
powm1_p, powm1 = elementwise(
    "powm1",
    sp.powm1,
    lambda ans, x, y: y * x ** (y - 1),
    lambda ans, x, y: xlogy(ans + 1, x),
    doc=special_doc("powm1", "``y * x**(y-1)`` in ``x``, ``x**y * log(x)`` in ``y``"),
)


# ---- exprel: a Taylor polynomial of its derivative near 0 ---------------------------------------
# exprel(x) = sum_n x^n / (n+1)!, so exprel'(x) = sum_{n>=1} n x^(n-1) / (n+1)!; for |x| < 1/4
# the terms through x^12 leave an error below 1e-19, and the polynomial's own derivatives are
# those of exprel to the same accuracy.
_EXPREL_SMALL = 0.25
_EXPREL_DERIVATIVE_TAYLOR = tuple(n / math.factorial(n + 1) for n in range(1, 14))


def _exprel_derivative(ans: Any, x: Any) -> Any:
    small = tnp.abs(x) < _EXPREL_SMALL
    safe_x = tnp.where(small, 1.0, x)  # each branch sees only inputs where it is accurate
    near = tnp.where(small, x, 0.0)
    poly: Any = _EXPREL_DERIVATIVE_TAYLOR[-1]
    for c in reversed(_EXPREL_DERIVATIVE_TAYLOR[:-1]):
        poly = poly * near + c
    return tnp.where(small, poly, (tnp.exp(x) - ans) / safe_x)


exprel_p, exprel = unary(
    "exprel",
    sp.exprel,
    _exprel_derivative,
    doc=special_doc("exprel", "``(exp(x) - exprel(x)) / x``, by a Taylor polynomial near 0"),
)


# ---- x log y: 0 where x == 0 --------------------------------------------------------------------
def _quotient(x: Any, y: Any) -> Any:
    """``x / y``, 0 where both are 0 (``y`` replaced by 1 there, so that the derivative of the
    quotient in ``x`` stays ``1 / y`` wherever ``y != 0``)."""
    both_zero = tnp.logical_and(x == 0, y == 0)
    return x / tnp.where(both_zero, 1.0, y)


xlogy_p, xlogy = elementwise(
    "xlogy",
    sp.xlogy,
    lambda ans, x, y: tnp.log(y),
    lambda ans, x, y: _quotient(x, y),
    doc=special_doc("xlogy", "``log(y)`` in ``x``, ``x / y`` in ``y`` (0 where ``x == 0``)"),
)
xlog1py_p, xlog1py = elementwise(
    "xlog1py",
    sp.xlog1py,
    lambda ans, x, y: tnp.log1p(y),
    lambda ans, x, y: _quotient(x, 1 + y),
    doc=special_doc(
        "xlog1py", "``log1p(y)`` in ``x``, ``x / (1 + y)`` in ``y`` (0 where ``x == 0``)"
    ),
)

# ---- information theory -------------------------------------------------------------------------
entr_p, entr = unary(
    "entr",
    sp.entr,
    lambda ans, x: -tnp.log(x) - 1,
    doc=special_doc("entr", "``-log(x) - 1`` (``x > 0``)"),
)
rel_entr_p, rel_entr = elementwise(
    "rel_entr",
    sp.rel_entr,
    lambda ans, x, y: tnp.log(x / y) + 1,
    lambda ans, x, y: -x / y,
    doc=special_doc("rel_entr", "``log(x / y) + 1`` in ``x``, ``-x / y`` in ``y``"),
)
kl_div_p, kl_div = elementwise(
    "kl_div",
    sp.kl_div,
    lambda ans, x, y: tnp.log(x / y),
    lambda ans, x, y: 1 - x / y,
    doc=special_doc("kl_div", "``log(x / y)`` in ``x``, ``1 - x / y`` in ``y``"),
)
