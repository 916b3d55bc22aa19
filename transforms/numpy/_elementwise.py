"""One-argument elementwise functions, each defined by its derivative ``d(ans, x)``.

Both rules multiply by that derivative (see ``elementwise`` in ``_define``): JVP
``t * d``, VJP ``ct * d``. The derivative is written with differentiable operations, so
every function here has derivatives of every order. ``|x|`` has derivative 0 at 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from transforms.batch import defbatch
from transforms.core import Array, ArrayLike, Primitive

from ._batching import elementwise_rule
from ._define import elementwise

__all__ = ["sin", "cos", "tan", "exp", "log", "tanh", "sqrt", "abs", "absolute", "square", "sign"]


def _public(primitive: Primitive, doc: str) -> Callable[[ArrayLike], Array]:
    def fn(x: ArrayLike) -> Array:
        if isinstance(x, (list, tuple)):
            from ._shape import array

            x = array(x)
        return primitive.bind(x)  # type: ignore[no-any-return]

    fn.__name__ = fn.__qualname__ = primitive.name
    fn.__doc__ = doc
    return fn


def _unary(
    name: str, impl: Any, derivative: Callable[[Any, Any], Any] | None
) -> tuple[Primitive, Callable[[ArrayLike], Array]]:
    primitive = elementwise(name, impl, derivative)
    defbatch(primitive, elementwise_rule(primitive))
    return primitive, _public(primitive, f"Differentiable ``numpy.{name}``.")


# Forward declarations: the derivatives below refer to functions defined further down.
sin: Callable[[ArrayLike], Array]
cos: Callable[[ArrayLike], Array]
sign: Callable[[ArrayLike], Array]

sign_p, sign = _unary("sign", np.sign, None)
sin_p, sin = _unary("sin", np.sin, lambda ans, x: cos(x))
cos_p, cos = _unary("cos", np.cos, lambda ans, x: -sin(x))
tan_p, tan = _unary("tan", np.tan, lambda ans, x: 1 + ans * ans)
exp_p, exp = _unary("exp", np.exp, lambda ans, x: ans)
log_p, log = _unary("log", np.log, lambda ans, x: 1 / x)
tanh_p, tanh = _unary("tanh", np.tanh, lambda ans, x: 1 - ans * ans)
sqrt_p, sqrt = _unary("sqrt", np.sqrt, lambda ans, x: 0.5 / ans)
abs_p, abs = _unary("abs", np.abs, lambda ans, x: sign(x))
square_p, square = _unary("square", np.square, lambda ans, x: 2 * x)
absolute = abs
