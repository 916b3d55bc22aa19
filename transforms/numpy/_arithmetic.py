"""Elementwise functions of two or more arguments, with NumPy broadcasting.

A JVP rule returns a tangent of the *output's* shape and dtype (``_spread`` broadcasts a
term that depends on one operand only); a VJP maker sums its cotangent back to the operand's
shape with ``unbroadcast`` and casts it to the operand's dtype (``_back``: a float32 operand
of a float64 result gets a float32 cotangent, a real operand of a complex result the real
part, the transpose of NumPy's implicit promotion under JAX's bilinear pairing). Masks for
``maximum``/``minimum``/``fmax``/``fmin`` come from comparisons of primal values (piecewise
constant) and ties share the derivative equally, as in autograd. Most binary functions are
defined by their two partial derivatives ``d(ans, x, y)`` (``_partials``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from transforms.batching import defbatch
from transforms.core import Array, ArrayLike, Primitive, Tracer, quiet
from transforms.forward import defjvp
from transforms.reverse import defvjp
from transforms.sparsity import defsparsity, multiply_rule
from transforms.sparsity import elementwise_rule as sparsity_elementwise

from ._batching import elementwise_rule
from ._define import dtype_of, is_complex, shape_of
from ._elementwise import exp, exp2, floor, imag, log, positive, real, sign, trunc
from ._kit import elementwise, elementwise_function, elementwise_nondifferentiable, unary
from ._shape import astype, to_operand, to_output, where
from ._shape import operands as _operands

__all__ = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "power",
    "negative",
    "maximum",
    "minimum",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "equal",
    "not_equal",
    "float_power",
    "arctan2",
    "hypot",
    "logaddexp",
    "logaddexp2",
    "fmax",
    "fmin",
    "mod",
    "remainder",
    "fmod",
    "copysign",
    "heaviside",
    "clip",
    "angle",
]


def _binary(primitive: Primitive, doc: str) -> Callable[[ArrayLike, ArrayLike], Array]:
    return elementwise_function(primitive, doc)


# ---- comparisons: defined on traced values, carry no derivative ----------------------------
def _comparison(name: str, impl: Any) -> Callable[[ArrayLike, ArrayLike], Any]:
    return elementwise_nondifferentiable(name, impl, doc=f"``numpy.{name}`` (no derivative).")[1]


less = _comparison("less", np.less)
less_equal = _comparison("less_equal", np.less_equal)
greater = _comparison("greater", np.greater)
greater_equal = _comparison("greater_equal", np.greater_equal)
equal = _comparison("equal", np.equal)
not_equal = _comparison("not_equal", np.not_equal)


def _reverse(operand: Any, ans: Any, term: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The pullback ``ct -> term(ct)`` summed and cast back to ``operand``. Whether that is
    needed is decided once, at forward time: when the operand already has the result's shape
    and dtype (the common case), so does ``term(ct)`` and the pullback is just ``term``."""
    try:  # arrays, NumPy scalars and tracers
        same = operand.shape == ans.shape and operand.dtype == ans.dtype
    except AttributeError:  # a Python scalar
        same = shape_of(operand) == shape_of(ans) and dtype_of(operand) == dtype_of(ans)
    if same:
        return term
    return lambda ct: to_operand(term(ct), operand)


def _same(ct: Any) -> Any:
    return ct


def _product(a: Any, b: Any) -> Any:
    """``a * b``, a tracer on the left when only ``b`` is one: ``ndarray * tracer`` reaches
    the tracer through NumPy's ufunc override (``__array_ufunc__``), several times the cost
    of the tracer's own operator (the second operand's pullback under nesting: a plain
    operand, a traced cotangent; the first's, ``ct * y``, has the cotangent on the left
    already). The product is the same: multiplication commutes exactly."""
    return b * a if type(a) is np.ndarray and isinstance(b, Tracer) else a * b


add_p = Primitive("add", np.add, commutative=True)
defsparsity(add_p, sparsity_elementwise())
defjvp(add_p, lambda t, ans, x, y: to_output(t, ans), lambda t, ans, x, y: to_output(t, ans))
defvjp(
    add_p,
    lambda ans, x, y: _reverse(x, ans, _same),
    lambda ans, x, y: _reverse(y, ans, _same),
)

subtract_p = Primitive("subtract", np.subtract)
defsparsity(subtract_p, sparsity_elementwise())
defjvp(subtract_p, lambda t, ans, x, y: to_output(t, ans), lambda t, ans, x, y: to_output(-t, ans))
defvjp(
    subtract_p,
    lambda ans, x, y: _reverse(x, ans, _same),
    lambda ans, x, y: _reverse(y, ans, lambda ct: -ct),
)

multiply_p = Primitive("multiply", np.multiply, commutative=True)
defsparsity(multiply_p, multiply_rule)
defjvp(
    multiply_p,
    lambda t, ans, x, y: to_output(t * y, ans),
    lambda t, ans, x, y: to_output(x * t, ans),
)
defvjp(
    multiply_p,
    lambda ans, x, y: _reverse(x, ans, lambda ct: ct * y),
    lambda ans, x, y: _reverse(y, ans, lambda ct: _product(x, ct)),
)

divide_p = Primitive("divide", np.true_divide)
defsparsity(divide_p, sparsity_elementwise(((0, 1), (1, 1))))
defjvp(  # quiet: no warnings of their own (a tangent over a tiny y overflows silently, as JAX)
    divide_p,
    quiet(lambda t, ans, x, y: to_output(t / y, ans)),
    quiet(lambda t, ans, x, y: to_output(-t * ans / y, ans)),
)
defvjp(
    divide_p,
    lambda ans, x, y: _reverse(x, ans, lambda ct: ct / y),
    lambda ans, x, y: _reverse(y, ans, lambda ct: -ct * ans / y),
)


# ---- power: d/dx = y x^(y-1); d/dy = log(x) x^y (0 where x == 0) -------------------------
def _dpower_dx(ans: Any, x: Any, y: Any) -> Any:
    """``d(x^y)/dx``; ``None`` for exactly 1 (``y == 1``), so the rules pass ``t`` through."""
    if isinstance(y, Tracer):
        # y is being differentiated too: the exact formula, whose own y-derivatives are right
        # everywhere (a guard on y - 1 == 0 would zero d/dy of the coefficient at y == 1).
        return y * x ** (y - 1)
    # a constant exponent: x^0 := 1 where y == 0, so x = 0 gives 0, not 0 * inf; y == 1 and
    # y == 2 (``_twice``, which the rules test for first) take no power at all (a nested
    # derivative of x**2 would otherwise differentiate x**1, then x**0, at every level)
    if isinstance(y, (int, float)):
        if y == 1:
            return None
        return y * x ** (y - 1) if y != 0 else 0 * x
    return y * x ** where(not_equal(y, 0), y - 1, 1)


def _dpower_dy(ans: Any, x: Any, y: Any) -> Any:
    safe_x = where(not_equal(x, 0), x, 1)
    return log(safe_x) * ans


power_p = Primitive("power", np.power)
defsparsity(power_p, sparsity_elementwise(((0, 0), (0, 1), (1, 1))))
defjvp(  # quiet: the derivatives of x^y are infinite at x = 0 for y < 1, without warnings
    power_p,
    quiet(lambda t, ans, x, y: to_output(_power_jvp_x(t, ans, x, y), ans)),
    quiet(lambda t, ans, x, y: to_output(t * _dpower_dy(ans, x, y), ans)),
)


def _times(t: Any, d: Any) -> Any:
    return t if d is None else t * d


def _is_two(y: Any) -> bool:
    """A constant exponent 2 (as ``_dpower_dx`` tells constants: NumPy's float64 counts)."""
    return isinstance(y, (int, float)) and y == 2


def _twice(c: Any, x: Any) -> Any:
    """``c * 2x``, the tangent or cotangent of ``x**2`` (the commonest power), with ``c``
    scaled first when it is not traced: when ``x`` is (a tangent or a seed meeting an
    outer transform's input) that is one traced operation instead of two, ``2*x`` and the
    product. The results are the same either way, as doubling is exact."""
    return c * (2 * x) if isinstance(c, Tracer) else x * (2 * c)  # (see ``_product``)


def _power_jvp_x(t: Any, ans: Any, x: Any, y: Any) -> Any:
    return _twice(t, x) if _is_two(y) else _times(t, _dpower_dx(ans, x, y))


@quiet
def _power_vjp_x(ans: Any, x: Any, y: Any) -> Callable[[Any], Any]:
    if _is_two(y):
        return _reverse(x, ans, lambda ct: _twice(ct, x))
    d = _dpower_dx(ans, x, y)
    return _reverse(x, ans, lambda ct: _times(ct, d))


@quiet
def _power_vjp_y(ans: Any, x: Any, y: Any) -> Callable[[Any], Any]:
    d = _dpower_dy(ans, x, y)  # (float64 when x is a Python number: always cast back)
    return lambda ct: to_operand(ct * d, y)


defvjp(power_p, _power_vjp_x, _power_vjp_y)

negative_p = Primitive("negative", np.negative)
defbatch(negative_p, elementwise_rule(negative_p))
defsparsity(negative_p, sparsity_elementwise())
defjvp(negative_p, lambda t, ans, x: -t)
defvjp(negative_p, lambda ans, x: lambda ct: -ct)


# ---- maximum, minimum: the larger/smaller operand takes the derivative; ties split it -------
def _choice_weights(ans: Any, x: Any, y: Any, pick: Any) -> tuple[Any, Any]:
    """Constant weights (no derivative of their own): 1 for the chosen operand, 1/2 at ties."""
    dtype = dtype_of(ans)
    wx = astype(where(equal(x, y), 0.5, pick(x, y)), dtype)
    return wx, astype(where(equal(x, y), 0.5, pick(y, x)), dtype)


def _choice(name: str, impl: Any, pick: Any) -> Primitive:
    primitive = Primitive(name, impl)
    defsparsity(primitive, sparsity_elementwise())  # piecewise linear

    @quiet  # an infinite tangent times a zero weight: NaN, silently (derivative code)
    def jvp_x(t: Any, ans: Any, x: Any, y: Any) -> Any:
        return to_output(t * _choice_weights(ans, x, y, pick)[0], ans)

    @quiet
    def jvp_y(t: Any, ans: Any, x: Any, y: Any) -> Any:
        return to_output(t * _choice_weights(ans, x, y, pick)[1], ans)

    def vjp_x(ans: Any, x: Any, y: Any) -> Callable[[Any], Any]:
        wx = _choice_weights(ans, x, y, pick)[0]
        return lambda ct: to_operand(ct * wx, x)

    def vjp_y(ans: Any, x: Any, y: Any) -> Callable[[Any], Any]:
        wy = _choice_weights(ans, x, y, pick)[1]
        return lambda ct: to_operand(ct * wy, y)

    defjvp(primitive, jvp_x, jvp_y)
    defvjp(primitive, vjp_x, vjp_y)
    return primitive


maximum_p = _choice("maximum", np.maximum, lambda x, y: greater(x, y))
minimum_p = _choice("minimum", np.minimum, lambda x, y: less(x, y))


add = _binary(add_p, "Differentiable ``numpy.add``.")
subtract = _binary(subtract_p, "Differentiable ``numpy.subtract``.")


# ---- the unit seed of a gradient ----------------------------------------------------------
# ``grad`` seeds its backward pass with a one; every pullback of the output multiplies by it,
# and under nesting each such product is recorded and differentiated again. The seed is a
# shared read-only 0-d one that ``multiply`` recognizes: for real floating dtypes ``1 * y``
# is ``y`` exactly (signed zeros, infinities and NaN included), so no operation is run.
def _unit(dtype: Any) -> np.ndarray[Any, Any]:
    one = np.ones((), dtype)
    one.flags.writeable = False
    return one


_ONE_F64, _ONE_F32 = _unit(np.float64), _unit(np.float32)


def unit_seed(dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """A 0-d one of ``dtype``: the shared recognizable one for float64/float32, else a new
    one. It must never reach the user (``is_unit_seed``): products with it alias."""
    if dtype == _ONE_F64.dtype:
        return _ONE_F64
    if dtype == _ONE_F32.dtype:
        return _ONE_F32
    return np.ones((), dtype)


def is_unit_seed(x: object) -> bool:
    """Whether ``x`` is the shared unit seed or a view of it (it must be copied out)."""
    base = getattr(x, "base", None)
    return x is _ONE_F64 or x is _ONE_F32 or base is _ONE_F64 or base is _ONE_F32


def _times_unit(unit: Any, other: Any) -> Any:
    """``unit * other`` without an operation when that is exactly ``other``; else None."""
    if isinstance(other, (np.ndarray, Tracer)) and other.dtype == unit.dtype:
        return other
    return None


def multiply(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Differentiable ``numpy.multiply``."""
    if x1 is _ONE_F64 or x1 is _ONE_F32:
        product = _times_unit(x1, x2)
        if product is not None:
            return product  # type: ignore[no-any-return]
    elif x2 is _ONE_F64 or x2 is _ONE_F32:
        product = _times_unit(x2, x1)
        if product is not None:
            return product  # type: ignore[no-any-return]
    if isinstance(x1, (list, tuple)) or isinstance(x2, (list, tuple)):
        x1, x2 = _operands(x1, x2)
    return multiply_p.bind(x1, x2)


defbatch(multiply_p, elementwise_rule(multiply_p))
divide = _binary(divide_p, "Differentiable ``numpy.divide``.")
true_divide = divide
power = _binary(power_p, "Differentiable ``numpy.power``.")
maximum = _binary(maximum_p, "Differentiable ``numpy.maximum``; ties share the derivative.")
minimum = _binary(minimum_p, "Differentiable ``numpy.minimum``; ties share the derivative.")


def negative(x: ArrayLike) -> Array:
    """Differentiable ``numpy.negative``."""
    return negative_p.bind(*_operands(x))


# ---- binary functions defined by their partial derivatives ---------------------------------
Partial = Callable[[Any, Any, Any], Any]


def _partials(
    name: str, impl: Any, dx: Partial | None, dy: Partial | None, doc: str
) -> tuple[Primitive, Callable[[ArrayLike, ArrayLike], Array]]:
    """A broadcasting binary primitive (and its public function) from ``d(ans, x, y)`` for
    each operand (see ``_kit.elementwise``). ``None`` declares a zero."""
    return elementwise(name, impl, dx, dy, doc=doc)


def _r2(x: Any, y: Any) -> Any:
    return x * x + y * y


arctan2_p, arctan2 = _partials(
    "arctan2",
    np.arctan2,
    lambda ans, x, y: y / _r2(x, y),
    lambda ans, x, y: -x / _r2(x, y),
    "Differentiable ``numpy.arctan2(x1, x2)``, the angle of the point ``(x2, x1)``.",
)
hypot_p, hypot = _partials(
    "hypot",
    np.hypot,
    lambda ans, x, y: x / ans,
    lambda ans, x, y: y / ans,
    "Differentiable ``numpy.hypot``.",
)
logaddexp_p, logaddexp = _partials(
    "logaddexp",
    np.logaddexp,
    lambda ans, x, y: exp(x - ans),
    lambda ans, x, y: exp(y - ans),
    "Differentiable ``numpy.logaddexp``.",
)
logaddexp2_p, logaddexp2 = _partials(
    "logaddexp2",
    np.logaddexp2,
    lambda ans, x, y: exp2(x - ans),
    lambda ans, x, y: exp2(y - ans),
    "Differentiable ``numpy.logaddexp2``.",
)
# x - y * floor(x / y): derivative 1 in x and -floor(x / y) in y (the quotient is constant
# between its jumps); ``fmod`` truncates the quotient instead.
remainder_p, remainder = _partials(
    "remainder",
    np.remainder,
    lambda ans, x, y: 1,
    lambda ans, x, y: -floor(x / y),
    "Differentiable ``numpy.remainder``: derivatives 1 and ``-floor(x1 / x2)``.",
)
mod = remainder
fmod_p, fmod = _partials(
    "fmod",
    np.fmod,
    lambda ans, x, y: 1,
    lambda ans, x, y: -trunc(x / y),
    "Differentiable ``numpy.fmod``: derivatives 1 and ``-trunc(x1 / x2)``.",
)
# |x1| with the sign of x2: derivative +-1 in x1 (0 at x1 == 0, like abs), 0 in x2.
copysign_p, copysign = _partials(
    "copysign",
    np.copysign,
    lambda ans, x, y: sign(x) * sign(ans),
    None,
    "Differentiable ``numpy.copysign``: derivative 0 in ``x2``.",
)
# 0 or 1, except x2 where x1 == 0: derivative 0 in x1, and 1 in x2 exactly where it is chosen.
heaviside_p, heaviside = _partials(
    "heaviside",
    np.heaviside,
    None,
    lambda ans, x, y: equal(x, 0),
    "Differentiable ``numpy.heaviside``: derivative 0 in ``x1``; 1 in ``x2`` where x1 == 0.",
)


# ---- fmax, fmin: maximum/minimum, except that a NaN loses to a number -----------------------
def _fpick(compare: Any) -> Any:
    """x is chosen where it wins the comparison, or where y is NaN and x is not."""
    return lambda x, y: where(not_equal(y, y), equal(x, x), compare(x, y))


fmax_p = _choice("fmax", np.fmax, _fpick(greater))
fmin_p = _choice("fmin", np.fmin, _fpick(less))
# Ties share, as in maximum/minimum (JAX gives a tie to the second operand): fmax is maximum
# wherever no NaN is involved, in value and derivative.
fmax = _binary(fmax_p, "Differentiable ``numpy.fmax``; ties share, a NaN operand gets none.")
fmin = _binary(fmin_p, "Differentiable ``numpy.fmin``; ties share, a NaN operand gets none.")


# ---- composites ------------------------------------------------------------------------------
def _float64(x: Any) -> Any:
    if isinstance(x, (bool, int, float)):
        return float(x)
    if isinstance(x, complex):
        return x
    dtype = dtype_of(x)
    wide = np.result_type(dtype, np.float64)
    return x if dtype == wide else astype(x, wide)


def float_power(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Differentiable ``numpy.float_power``: a composite of ``astype`` (to float64, or
    complex128) and ``power``."""
    x1, x2 = _operands(x1, x2)
    return power(_float64(x1), _float64(x2))


def clip(
    a: ArrayLike,
    a_min: ArrayLike | None = None,
    a_max: ArrayLike | None = None,
    *,
    min: ArrayLike | None = None,
    max: ArrayLike | None = None,
) -> Array:
    """Differentiable ``numpy.clip``: a composite, ``minimum(maximum(a, a_min), a_max)`` (as
    NumPy defines it; a NaN bound gives NaN). Derivative 1 in ``a`` strictly inside the
    bounds, 0 outside (the selected bound gets it), and at a bound shared like any tie of
    ``maximum``/``minimum``: 1/2 to ``a``, 1/2 to the bound, as in JAX. ``None``: no bound."""
    if (a_min is not None and min is not None) or (a_max is not None and max is not None):
        raise TypeError("clip: pass each bound once, as a_min/a_max or as min/max")
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    (out,) = _operands(a)
    if lo is not None:
        (lo,) = _operands(lo)
        out = maximum(out, lo)
    if hi is not None:
        (hi,) = _operands(hi)
        out = minimum(out, hi)
    return out if lo is not None or hi is not None else positive(out)


# ---- angle: arctan2(imag, real) for complex values; piecewise constant for real ones --------
_angle_real_p, _ = unary("angle", lambda x, deg: np.angle(x, deg), None)


def angle(z: ArrayLike, deg: bool = False) -> Array:
    """Differentiable ``numpy.angle``: for complex ``z`` a composite of ``arctan2``, ``imag``
    and ``real``; for real ``z`` (0 or pi) derivative 0."""
    (v,) = _operands(z)
    if not is_complex(v):
        return _angle_real_p.bind(v, deg=deg)
    a = arctan2(imag(v), real(v))
    return a * (180 / math.pi) if deg else a
