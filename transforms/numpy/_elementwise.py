"""One-argument elementwise functions, each defined by its derivative ``d(ans, x)``.

Both rules multiply by that derivative (see ``elementwise`` in ``_define``): JVP
``t * d``, VJP ``ct * d``. The derivative is written with differentiable operations, so
every function here has derivatives of every order. ``|x|`` has derivative 0 at 0;
``sign``, ``floor``, ``ceil``, ``round``, ``trunc``, ``rint`` and ``fix`` have derivative 0
(they are piecewise constant: defined, not an error).

Complex inputs follow JAX's convention: a VJP is the transpose of the JVP under the bilinear
pairing ``Re(sum(a * b))``. Holomorphic functions therefore use the same rule for real and
complex inputs (no conjugation: the VJP of ``sin`` is ``ct * cos(z)``); ``abs``, ``real``,
``imag``, ``conj`` and ``angle`` are not holomorphic and have their own rules below.

This module is imported by ``_arithmetic`` (and possibly by other families), so it imports
``_arithmetic``/``_shape`` inside functions, at call time, never at import time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from transforms.batching import defbatch
from transforms.core import (
    Array,
    ArrayLibraryError,
    ArrayLike,
    Primitive,
    arrays,
    concrete,
    unary_function,
)
from transforms.forward import defjvp
from transforms.reverse import defvjp
from transforms.sparsity import defsparsity
from transforms.sparsity import elementwise_rule as sparsity_elementwise

from ._batching import elementwise_rule
from ._define import dtype_of, is_complex, is_traced
from ._kit import unary
from ._shape import operand as _operand
from ._shape import where, zeros_like

__all__ = [
    "i0",
    "sin",
    "cos",
    "tan",
    "exp",
    "log",
    "tanh",
    "sqrt",
    "abs",
    "absolute",
    "square",
    "sign",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "cbrt",
    "conj",
    "conjugate",
    "cosh",
    "deg2rad",
    "degrees",
    "exp2",
    "expm1",
    "fabs",
    "imag",
    "log10",
    "log1p",
    "log2",
    "nan_to_num",
    "positive",
    "rad2deg",
    "radians",
    "real",
    "real_if_close",
    "reciprocal",
    "sinc",
    "sinh",
    "floor",
    "ceil",
    "round",
    "around",
    "trunc",
    "rint",
    "fix",
]


def _unary(
    name: str, impl: Any, derivative: Callable[[Any, Any], Any] | None
) -> tuple[Primitive, Callable[[ArrayLike], Array]]:
    return unary(name, impl, derivative, doc=f"Differentiable ``numpy.{name}``.")


# Forward declarations: the derivatives below refer to functions defined further down.
sin: Callable[[ArrayLike], Array]
cos: Callable[[ArrayLike], Array]
sinh: Callable[[ArrayLike], Array]
cosh: Callable[[ArrayLike], Array]
sign: Callable[[ArrayLike], Array]
sqrt: Callable[[ArrayLike], Array]
exp2: Callable[[ArrayLike], Array]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

# ---- holomorphic (one rule for real and complex inputs) -------------------------------------
sin_p, sin = _unary("sin", np.sin, lambda ans, x: cos(x))
cos_p, cos = _unary("cos", np.cos, lambda ans, x: -sin(x))
tan_p, tan = _unary("tan", np.tan, lambda ans, x: 1 + ans**2)
exp_p, exp = _unary("exp", np.exp, lambda ans, x: ans)
log_p, log = _unary("log", np.log, lambda ans, x: 1 / x)
tanh_p, tanh = _unary("tanh", np.tanh, lambda ans, x: 1 - ans**2)
sqrt_p, sqrt = _unary("sqrt", np.sqrt, lambda ans, x: 0.5 / ans)
square_p, square = _unary("square", np.square, lambda ans, x: 2 * x)
sinh_p, sinh = _unary("sinh", np.sinh, lambda ans, x: cosh(x))
cosh_p, cosh = _unary("cosh", np.cosh, lambda ans, x: sinh(x))
exp2_p, exp2 = _unary("exp2", np.exp2, lambda ans, x: ans * _LN2)
expm1_p, expm1 = _unary("expm1", np.expm1, lambda ans, x: ans + 1)
log2_p, log2 = _unary("log2", np.log2, lambda ans, x: 1 / (x * _LN2))
log10_p, log10 = _unary("log10", np.log10, lambda ans, x: 1 / (x * _LN10))
log1p_p, log1p = _unary("log1p", np.log1p, lambda ans, x: 1 / (1 + x))
reciprocal_p, reciprocal = _unary("reciprocal", np.reciprocal, lambda ans, x: -(ans**2))
arcsin_p, arcsin = _unary("arcsin", np.arcsin, lambda ans, x: 1 / sqrt(1 - x**2))
arccos_p, arccos = _unary("arccos", np.arccos, lambda ans, x: -1 / sqrt(1 - x**2))
arctan_p, arctan = _unary("arctan", np.arctan, lambda ans, x: 1 / (1 + x**2))
arcsinh_p, arcsinh = _unary("arcsinh", np.arcsinh, lambda ans, x: 1 / sqrt(1 + x**2))
# sqrt(x-1) sqrt(x+1), not sqrt(x^2-1): the same for real x > 1, the right branch for complex x
arccosh_p, arccosh = _unary("arccosh", np.arccosh, lambda ans, x: 1 / (sqrt(x - 1) * sqrt(x + 1)))
arctanh_p, arctanh = _unary("arctanh", np.arctanh, lambda ans, x: 1 / (1 - x**2))

# ---- real only ------------------------------------------------------------------------------
cbrt_p, cbrt = _unary("cbrt", np.cbrt, lambda ans, x: 1 / (3 * ans**2))
fabs_p, fabs = _unary("fabs", np.fabs, lambda ans, x: sign(x))
deg2rad_p, deg2rad = _unary("deg2rad", np.deg2rad, lambda ans, x: math.pi / 180)
rad2deg_p, rad2deg = _unary("rad2deg", np.rad2deg, lambda ans, x: 180 / math.pi)
radians = deg2rad
degrees = rad2deg

# ---- piecewise constant: derivative 0 (defined, not an error) -------------------------------
sign_p, sign = _unary("sign", np.sign, None)
floor_p, floor = _unary("floor", np.floor, None)
ceil_p, ceil = _unary("ceil", np.ceil, None)
trunc_p, trunc = _unary("trunc", np.trunc, None)
rint_p, rint = _unary("rint", np.rint, None)
fix_p, fix = _unary("fix", np.fix, None)
round_p, _ = unary("round", lambda x, decimals: np.round(x, decimals), None)


def round(a: ArrayLike, decimals: int = 0) -> Array:
    """Differentiable ``numpy.round`` (derivative 0: piecewise constant)."""
    return round_p.bind(_operand(a), decimals=decimals)


around = round


# ---- i0, the modified Bessel function of order 0 ------------------------------------------------
# NumPy has ``i0`` but no ``i1``, its derivative: ``_i1`` is a private primitive, by its power
# series ``sum_k (x/2)^(2k+1) / (k! (k+1)!)``, whose terms are all of one sign (no
# cancellation: a few ulps, the terms summed until they no longer change the sum; it overflows
# where i0 does). Its own derivative is ``i0(x) - i1(x)/x`` (1/2 at 0), so every order nests.
def _i1_series(x: Any) -> Any:
    if arrays.is_foreign(x):  # the loop below tests values: a Dask array, block by block
        return arrays.blockwise(_i1_series, x)
    x = np.asarray(x)
    quarter = (x * x) / 4
    term = x / 2
    total = term.copy()
    k = 0
    with np.errstate(over="ignore", invalid="ignore"):
        while True:
            term = term * quarter / ((k + 1) * (k + 2))
            k += 1
            new = total + term
            if np.all((new == total) | ~np.isfinite(new)):
                return np.where(np.isinf(np.i0(x)), np.copysign(np.inf, x), new)
            total = new


# i1(x)/x = sum_k (x^2/4)^k / (2 k! (k+1)!): near 0, this series in x^2, so that the
# derivatives of i1' (every order of i0) do not cancel two huge terms i1'/x and i1/x^2
_I1_OVER_X = [0.5 / (math.factorial(k) * math.factorial(k + 1)) for k in range(8)]


def _i1_derivative(ans: Any, x: Any) -> Any:
    small = abs(x) < 0.125
    u = where(small, x, 0) ** 2 / 4
    series: Any = _I1_OVER_X[-1]
    for c in reversed(_I1_OVER_X[:-1]):
        series = series * u + c
    return i0(x) - where(small, series, ans / where(small, 1, x))


_i1_p, _i1 = unary("i1", _i1_series, _i1_derivative, doc="The modified Bessel function I1.")
i0_p, i0 = unary(
    "i0",
    np.i0,
    lambda ans, x: _i1(x),
    doc="Differentiable ``numpy.i0`` (real input, as NumPy's); its derivative is I1.",
)

# ---- stop_gradient: the identity with derivative 0 -------------------------------------------
# Not a NumPy name (not in __all__): the one primitive behind ``transforms.stop_gradient``, here
# so that composites of this layer (``logsumexp``'s shift by its maximum) can hold a value
# constant without importing ``compose``.
stop_gradient_p, stop_gradient = unary(
    "stop_gradient",
    lambda x: x,
    None,
    doc="``x`` itself, with no derivative flowing through it (``transforms.stop_gradient``).",
)


# ---- complex parts: linear, not holomorphic ---------------------------------------------------
# Under the bilinear pairing the VJP of ``real`` embeds the (real) cotangent as ``ct + 0j``,
# and that of ``imag`` is ``-1j * ct``; ``conj`` is its own transpose.
conjugate_p = Primitive("conjugate", np.conjugate)
defbatch(conjugate_p, elementwise_rule(conjugate_p))
defsparsity(conjugate_p, sparsity_elementwise())
defjvp(conjugate_p, lambda t, ans, x: conjugate(t))
defvjp(conjugate_p, lambda ans, x: conjugate)

real_p = Primitive("real", np.real)
defbatch(real_p, elementwise_rule(real_p))
defsparsity(real_p, sparsity_elementwise())
defjvp(real_p, lambda t, ans, x: real(t))
defvjp(real_p, lambda ans, x: lambda ct: ct + 0j)

imag_p = Primitive("imag", np.imag)
defbatch(imag_p, elementwise_rule(imag_p))
defsparsity(imag_p, sparsity_elementwise())
defjvp(imag_p, lambda t, ans, x: imag(t))
defvjp(imag_p, lambda ans, x: lambda ct: ct * -1j)


def conjugate(x: ArrayLike) -> Array:
    """Differentiable ``numpy.conjugate`` (the identity on real traced values)."""
    x = _operand(x)
    if is_traced(x) and not is_complex(x):
        return x
    return conjugate_p.bind(x)


def real(val: ArrayLike) -> Array:
    """Differentiable ``numpy.real`` (the identity on real traced values)."""
    x = _operand(val)
    if is_traced(x) and not is_complex(x):
        return x
    return real_p.bind(x)


def imag(val: ArrayLike) -> Array:
    """Differentiable ``numpy.imag`` (zeros, with no derivative, for real values)."""
    x = _operand(val)
    if is_traced(x) and not is_complex(x):
        return zeros_like(x)
    return imag_p.bind(x)


conj = conjugate


# ---- abs: sign(x) for real x; for complex z, JVP Re(conj(z) t)/|z| and VJP ct conj(z)/|z| ----
def _abs_derivative(ans: Any, x: Any) -> Any:
    if not is_complex(x):
        return sign(x)
    return conjugate(x) / where(ans == 0, 1, ans)  # 0 at z == 0, like the real case


abs_p = Primitive("abs", np.abs)
defbatch(abs_p, elementwise_rule(abs_p))


def _abs_sparsity(ans: Any, values: Any, patterns: Any) -> Any:
    """Piecewise linear for real values (no second derivative), nonlinear for complex ones."""
    pairs = ((0, 0),) if is_complex(values[0]) else ()
    return sparsity_elementwise(pairs)(ans, values, patterns)


defsparsity(abs_p, _abs_sparsity)
defjvp(abs_p, lambda t, ans, x: real(t * _abs_derivative(ans, x)))


def _abs_vjp(ans: Any, x: Any) -> Callable[[Any], Any]:
    d = _abs_derivative(ans, x)
    return lambda ct: ct * d


defvjp(abs_p, _abs_vjp)
abs = unary_function(
    abs_p,
    _operand,
    "abs",
    "Differentiable ``numpy.abs``; derivative 0 at 0, for complex values too.",
)
absolute = abs


# ---- nan_to_num: derivative 1 where x is finite, 0 where it is replaced ----------------------
def _nan_to_num_impl(x: Any, nan: float, posinf: float | None, neginf: float | None) -> Any:
    def replace(v: Any) -> Any:
        return np.nan_to_num(v, nan=nan, posinf=posinf, neginf=neginf)

    # (Dask's nan_to_num has no nan/posinf/neginf: block by block, NumPy's own)
    return replace(x) if type(x) is np.ndarray else arrays.blockwise(replace, x)


nan_to_num_p = Primitive("nan_to_num", _nan_to_num_impl)
defbatch(nan_to_num_p, elementwise_rule(nan_to_num_p))
defsparsity(nan_to_num_p, sparsity_elementwise())


def _finite(x: Any) -> Any:
    return abs(x) < math.inf  # a comparison: the mask carries no derivative


defjvp(nan_to_num_p, lambda t, ans, x, **params: where(_finite(x), t, 0))


def _nan_to_num_vjp(ans: Any, x: Any, **params: Any) -> Callable[[Any], Any]:
    mask = _finite(x)
    return lambda ct: where(mask, ct, 0)


defvjp(nan_to_num_p, _nan_to_num_vjp)


def nan_to_num(
    x: ArrayLike,
    copy: bool = True,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
) -> Array:
    """Differentiable ``numpy.nan_to_num``: derivative 1 where ``x`` is finite, 0 where a
    value is replaced (for complex ``x``, part by part). Always returns a new array."""
    x = _operand(x)
    params = {"nan": nan, "posinf": posinf, "neginf": neginf}
    if is_traced(x) and is_complex(x):
        parts = [nan_to_num_p.bind(part, **params) for part in (real(x), imag(x))]
        return parts[0] + 1j * parts[1]
    return nan_to_num_p.bind(x, **params)


def positive(x: ArrayLike) -> Array:
    """Differentiable ``numpy.positive``: the identity (a composite of nothing)."""
    v = _operand(x)
    return v if is_traced(v) else arrays.asarray(np.positive(v))  # an array, not a NumPy scalar


def real_if_close(a: ArrayLike, tol: float = 100) -> Array:
    """Differentiable ``numpy.real_if_close``: ``real(a)`` if every imaginary part is within
    ``tol`` (machine epsilons, if ``tol > 1``) of 0, else ``a``. The choice is made on the
    primal value (the output's dtype depends on it); under ``vmap`` on the whole batch."""
    a = _operand(a)
    if arrays.is_foreign(concrete(a)):  # a real one is itself; a complex one is refused
        if is_complex(a):
            raise _value_dependent_dtype(concrete(a))
        return a  # type: ignore[return-value]  # (another library's array)
    if not is_traced(a):
        return np.real_if_close(a, tol)
    if not is_complex(a):
        return a
    if tol > 1:
        tol = float(np.finfo(dtype_of(a)).eps) * tol
    return real(a) if bool(np.all(np.abs(np.imag(concrete(a))) < tol)) else a


def _value_dependent_dtype(a: Any) -> ArrayLibraryError:
    return ArrayLibraryError(
        "real_if_close (its result's dtype depends on the values: it would compute them)",
        arrays.library_of(a),
    )


# ---- sinc: a Taylor polynomial near 0, where sin(y)/y and its derivatives cancel ------------
# sin(y)/y = sum_n (-1)^n y^(2n) / (2n+1)!; for |y| < 1/4 the terms through y^12 leave an
# error below 1e-20 (and below 1e-17 in the second derivative), and the polynomial's
# derivatives are exact at every order: 0 at x == 0, then -pi**2/3, ...
_SINC_SMALL = 0.25
_SINC_TAYLOR = tuple((-1) ** n / math.factorial(2 * n + 1) for n in range(7))


def sinc(x: ArrayLike) -> Array:
    """Differentiable ``numpy.sinc`` (``sin(pi x)/(pi x)``, 1 at 0): a composite of
    ``where``, ``sin`` and, for ``|pi x| < 1/4``, a Taylor polynomial, so that derivatives of
    every order are accurate near 0 and exact at 0 (0, then ``-pi**2/3``)."""
    v = _operand(x)
    y = math.pi * v
    small = abs(y) < _SINC_SMALL
    # each branch sees only inputs where it is finite, so the other's derivative stays finite
    safe_y = where(small, 1, y)
    u = where(small, y, 0) ** 2
    poly: Any = _SINC_TAYLOR[-1]
    for c in reversed(_SINC_TAYLOR[:-1]):
        poly = poly * u + c
    return where(small, poly, sin(safe_y) / safe_y)
