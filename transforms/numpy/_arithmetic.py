"""Elementwise functions of two or more arguments, with NumPy broadcasting.

A JVP rule returns a tangent of the *output's* shape (``_spread`` broadcasts a term that
depends on one operand only); a VJP maker sums its cotangent back to the operand's shape
with ``unbroadcast``. Masks for ``maximum``/``minimum`` come from primal values (piecewise
constant) and ties share the derivative equally, as in autograd.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from transforms.batch import defbatch
from transforms.core import Array, ArrayLike, Primitive, Tracer
from transforms.jvp import defjvp
from transforms.vjp import defvjp

from ._batching import elementwise_rule
from ._define import dtype_of, nondifferentiable, shape_of
from ._elementwise import log
from ._shape import array, astype, broadcast_to, unbroadcast

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
    "where",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "equal",
    "not_equal",
]


def _spread(term: Any, ans: Any) -> Any:
    """Broadcast a one-operand tangent term to the output's shape."""
    shape = shape_of(ans)
    return term if shape_of(term) == shape else broadcast_to(term, shape)


def _back(ct: Any, operand: Any) -> Any:
    return unbroadcast(ct, shape_of(operand))


def _operands(*xs: ArrayLike) -> list[Any]:
    return [array(x) if isinstance(x, (list, tuple)) else x for x in xs]


def _binary(primitive: Primitive, doc: str) -> Callable[[ArrayLike, ArrayLike], Array]:
    defbatch(primitive, elementwise_rule(primitive))

    def fn(x1: ArrayLike, x2: ArrayLike) -> Array:
        if isinstance(x1, (list, tuple)) or isinstance(x2, (list, tuple)):
            x1, x2 = _operands(x1, x2)
        return primitive.bind(x1, x2)  # type: ignore[no-any-return]

    fn.__name__ = fn.__qualname__ = primitive.name
    fn.__doc__ = doc
    return fn


# ---- comparisons: defined on traced values, carry no derivative ----------------------------
def _comparison(name: str, impl: Any) -> Callable[[ArrayLike, ArrayLike], Any]:
    return _binary(nondifferentiable(name, impl), f"``numpy.{name}`` (no derivative).")


less = _comparison("less", np.less)
less_equal = _comparison("less_equal", np.less_equal)
greater = _comparison("greater", np.greater)
greater_equal = _comparison("greater_equal", np.greater_equal)
equal = _comparison("equal", np.equal)
not_equal = _comparison("not_equal", np.not_equal)


add_p = Primitive("add", np.add)
defjvp(add_p, lambda t, ans, x, y: _spread(t, ans), lambda t, ans, x, y: _spread(t, ans))
defvjp(add_p, lambda ans, x, y: lambda ct: _back(ct, x), lambda ans, x, y: lambda ct: _back(ct, y))

subtract_p = Primitive("subtract", np.subtract)
defjvp(subtract_p, lambda t, ans, x, y: _spread(t, ans), lambda t, ans, x, y: _spread(-t, ans))
defvjp(
    subtract_p,
    lambda ans, x, y: lambda ct: _back(ct, x),
    lambda ans, x, y: lambda ct: _back(-ct, y),
)

multiply_p = Primitive("multiply", np.multiply)
defjvp(
    multiply_p, lambda t, ans, x, y: _spread(t * y, ans), lambda t, ans, x, y: _spread(x * t, ans)
)
defvjp(
    multiply_p,
    lambda ans, x, y: lambda ct: _back(ct * y, x),
    lambda ans, x, y: lambda ct: _back(x * ct, y),
)

divide_p = Primitive("divide", np.true_divide)
defjvp(
    divide_p,
    lambda t, ans, x, y: _spread(t / y, ans),
    lambda t, ans, x, y: _spread(-t * ans / y, ans),
)
defvjp(
    divide_p,
    lambda ans, x, y: lambda ct: _back(ct / y, x),
    lambda ans, x, y: lambda ct: _back(-ct * ans / y, y),
)


# ---- power: d/dx = y x^(y-1); d/dy = log(x) x^y (0 where x == 0) -------------------------
def _dpower_dx(ans: Any, x: Any, y: Any) -> Any:
    if isinstance(y, Tracer):
        # y is being differentiated too: the exact formula, whose own y-derivatives are right
        # everywhere (a guard on y - 1 == 0 would zero d/dy of the coefficient at y == 1).
        return y * x ** (y - 1)
    # a constant exponent: x^0 := 1 where y == 0, so x = 0 gives 0, not 0 * inf
    if isinstance(y, (int, float)):
        return y * x ** (y - 1) if y != 0 else 0 * x
    return y * x ** where(not_equal(y, 0), y - 1, 1)


def _dpower_dy(ans: Any, x: Any, y: Any) -> Any:
    safe_x = where(not_equal(x, 0), x, 1)
    return log(safe_x) * ans


power_p = Primitive("power", np.power)
defjvp(
    power_p,
    lambda t, ans, x, y: _spread(t * _dpower_dx(ans, x, y), ans),
    lambda t, ans, x, y: _spread(t * _dpower_dy(ans, x, y), ans),
)


def _power_vjp_x(ans: Any, x: Any, y: Any) -> Callable[[Any], Any]:
    d = _dpower_dx(ans, x, y)
    return lambda ct: _back(ct * d, x)


def _power_vjp_y(ans: Any, x: Any, y: Any) -> Callable[[Any], Any]:
    d = _dpower_dy(ans, x, y)
    return lambda ct: _back(ct * d, y)


defvjp(power_p, _power_vjp_x, _power_vjp_y)

negative_p = Primitive("negative", np.negative)
defbatch(negative_p, elementwise_rule(negative_p))
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

    def jvp_x(t: Any, ans: Any, x: Any, y: Any) -> Any:
        return _spread(t * _choice_weights(ans, x, y, pick)[0], ans)

    def jvp_y(t: Any, ans: Any, x: Any, y: Any) -> Any:
        return _spread(t * _choice_weights(ans, x, y, pick)[1], ans)

    def vjp_x(ans: Any, x: Any, y: Any) -> Callable[[Any], Any]:
        wx = _choice_weights(ans, x, y, pick)[0]
        return lambda ct: _back(ct * wx, x)

    def vjp_y(ans: Any, x: Any, y: Any) -> Callable[[Any], Any]:
        wy = _choice_weights(ans, x, y, pick)[1]
        return lambda ct: _back(ct * wy, y)

    defjvp(primitive, jvp_x, jvp_y)
    defvjp(primitive, vjp_x, vjp_y)
    return primitive


maximum_p = _choice("maximum", np.maximum, lambda x, y: greater(x, y))
minimum_p = _choice("minimum", np.minimum, lambda x, y: less(x, y))


# ---- where: the condition is a parameter-like operand with no derivative ------------------
where_p = Primitive("where", np.where)
defbatch(where_p, elementwise_rule(where_p))
defjvp(
    where_p,
    None,
    lambda t, ans, c, x, y: _spread(where(c, t, 0), ans),
    lambda t, ans, c, x, y: _spread(where(c, 0, t), ans),
)
defvjp(
    where_p,
    None,
    lambda ans, c, x, y: lambda ct: _back(where(c, ct, 0), x),
    lambda ans, c, x, y: lambda ct: _back(where(c, 0, ct), y),
)


def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike) -> Array:
    """Differentiable three-argument ``numpy.where`` (the condition carries no derivative)."""
    c, a, b = _operands(condition, x, y)
    return where_p.bind(c, a, b)  # type: ignore[no-any-return]


add = _binary(add_p, "Differentiable ``numpy.add``.")
subtract = _binary(subtract_p, "Differentiable ``numpy.subtract``.")
multiply = _binary(multiply_p, "Differentiable ``numpy.multiply``.")
divide = _binary(divide_p, "Differentiable ``numpy.divide``.")
true_divide = divide
power = _binary(power_p, "Differentiable ``numpy.power``.")
maximum = _binary(maximum_p, "Differentiable ``numpy.maximum``; ties share the derivative.")
minimum = _binary(minimum_p, "Differentiable ``numpy.minimum``; ties share the derivative.")


def negative(x: ArrayLike) -> Array:
    """Differentiable ``numpy.negative``."""
    return negative_p.bind(*_operands(x))  # type: ignore[no-any-return]
