"""The family kit: one way to define a primitive with all its rules, for every namespace.

``transforms.numpy``, ``transforms.scipy`` and ``transforms.nn`` define their elementwise
functions with these constructors, and so can users (``transforms.extend`` re-exports them).
Each constructor registers the primitive's rules in every interpreter at once, so a family
author writes the mathematics (the derivative) and never an interpreter's plumbing; a new
interpreter that can derive its rules from these (Taylor mode from the derivative, sparsity
patterns from elementwise structure) is added here, once, for every family.

The rule contract the constructors implement:

- a derivative ``d(ans, *args)`` is written with differentiable operations (operators and
  ``transforms.numpy`` functions, never raw NumPy on values that may be traced), so the
  rules it makes are differentiable themselves and nest to any order;
- the JVP of argument ``i`` is ``t * d_i``, broadcast to the output's shape and dtype; its
  VJP is ``ct * d_i`` summed back to the argument's shape (``unbroadcast``) and cast to its
  dtype (the cotangent contract), with ``d_i`` computed once at forward time;
- ``None`` declares a zero derivative (``floor``); ``NO_DERIVATIVE`` declares that an
  argument has no derivative rule (``gammainc`` in its shape parameter): differentiating
  with respect to it raises ``NoRuleError`` with the reason, never a wrong number.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Final

from transforms.batching import defbatch
from transforms.core import Array, ArrayLike, NoRuleError, Primitive, quiet, unary_function
from transforms.forward import defjvp
from transforms.reverse import Pullback, defvjp
from transforms.sparsity import defsparsity, partials_rule
from transforms.taylor import collapsed_elementwise, defcollapsed, deftaylor, ode_rule

from ._batching import elementwise_rule
from ._define import nondifferentiable
from ._shape import operand, to_operand, to_output

__all__ = [
    "NO_DERIVATIVE",
    "Derivative",
    "unary",
    "elementwise",
    "elementwise_function",
    "elementwise_nondifferentiable",
]

Derivative = Callable[..., Any]
"""``d(ans, *args)``: the partial derivative of an elementwise function in one argument."""


class _NoDerivative:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DERIVATIVE"


NO_DERIVATIVE: Final = _NoDerivative()
"""A derivative that is declared not to be available: the rules refuse with ``NoRuleError``."""


def _refusal(name: str, argnum: int, reason: str) -> tuple[Any, Any]:
    def refuse(*_: Any, **__: Any) -> Any:
        raise NoRuleError(name, "derivative", argnum, "", reason)

    return refuse, refuse


def unary(
    name: str, impl: Callable[..., Any], derivative: Derivative | None, *, doc: str | None = None
) -> tuple[Primitive, Callable[[ArrayLike], Array]]:
    """A one-argument elementwise primitive and its public function, from ``d(ans, x)``.

    Both rules multiply by the same derivative: JVP ``t * d``, VJP ``ct * d`` (computed once
    at forward time, so a pullback called many times does not recompute it). Extra keyword
    parameters of ``impl`` (``round``'s ``decimals``) reach ``derivative`` too; the public
    function binds the operand alone.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> from transforms.extend import unary
        >>> import transforms.numpy as tnp
        >>> softsign_p, softsign = unary(
        ...     "softsign", lambda x: x / (1 + np.abs(x)), lambda ans, x: 1 / (1 + tnp.abs(x)) ** 2
        ... )
        >>> T.grad(softsign)(1.0)
        array(0.25)
    """
    primitive = Primitive(name, impl, module=_caller_module())
    if derivative is None:
        defjvp(primitive, None)
        defvjp(primitive, None)
    else:
        d = quiet(derivative)  # derivative code adds no NumPy warnings (see core._quiet)
        defjvp(primitive, quiet(lambda t, ans, x, **params: t * derivative(ans, x, **params)))

        def maker(ans: Any, x: Any, **params: Any) -> Pullback:
            dx = d(ans, x, **params)
            return lambda ct: ct * dx  # (the backward pass is quiet too)

        defvjp(primitive, maker)
    deftaylor(primitive, ode_rule(primitive))
    defcollapsed(primitive, collapsed_elementwise(primitive))
    defsparsity(primitive, None if derivative is None else partials_rule((derivative,)))
    defbatch(primitive, elementwise_rule(primitive))
    public = unary_function(
        primitive, operand, name, doc or f"Differentiable ``{name}`` (elementwise)."
    )
    return primitive, public


def elementwise(
    name: str,
    impl: Callable[..., Any],
    *derivatives: Derivative | _NoDerivative | None,
    doc: str | None = None,
    reason: str = "",
) -> tuple[Primitive, Callable[..., Array]]:
    """A broadcasting elementwise primitive of ``len(derivatives)`` arguments and its public
    function, from the partial derivatives ``d_i(ans, *args)``.

    JVP of argument ``i``: ``t * d_i`` broadcast to the output; VJP: ``ct * d_i`` summed back
    to the argument's shape and cast to its dtype. ``None`` declares a zero derivative,
    ``NO_DERIVATIVE`` one that is not available (``reason`` says why, in the error).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> from transforms.extend import elementwise
        >>> hypot_p, hypot = elementwise(
        ...     "hypot", np.hypot, lambda ans, x, y: x / ans, lambda ans, x, y: y / ans
        ... )
        >>> T.grad(hypot, argnums=(0, 1))(3.0, 4.0)
        (array(0.6), array(0.8))
    """
    primitive = Primitive(name, impl, module=_caller_module())
    jvps: list[Any] = []
    vjps: list[Any] = []
    for argnum, d in enumerate(derivatives):
        if d is None:
            jvps.append(None)
            vjps.append(None)
        elif isinstance(d, _NoDerivative):
            refuse_jvp, refuse_vjp = _refusal(name, argnum, reason or "it is not available")
            jvps.append(refuse_jvp)
            vjps.append(refuse_vjp)
        else:
            jvps.append(_partial_jvp(d))
            vjps.append(_partial_vjp(d, argnum))
    defjvp(primitive, *jvps)
    defvjp(primitive, *vjps)
    deftaylor(primitive, ode_rule(primitive))
    defcollapsed(primitive, collapsed_elementwise(primitive))
    partials: list[Derivative | None] = [
        _unknown if isinstance(d, _NoDerivative) else d for d in derivatives
    ]
    defsparsity(primitive, partials_rule(partials))
    return primitive, elementwise_function(
        primitive, doc or f"Differentiable ``{name}`` (elementwise)."
    )


def _unknown(ans: Any, *args: Any, **params: Any) -> Any:
    """For sparsity detection, a partial derivative that is not available varies with every
    argument (``ans`` does): every second derivative may be non-zero."""
    return ans


def _partial_jvp(d: Derivative) -> Any:
    return quiet(lambda t, ans, *args, **params: to_output(t * d(ans, *args, **params), ans))


def _partial_vjp(derivative: Derivative, argnum: int) -> Any:
    d = quiet(derivative)

    def maker(ans: Any, *args: Any, **params: Any) -> Pullback:
        weight, operand = d(ans, *args, **params), args[argnum]
        return lambda ct: to_operand(ct * weight, operand)

    return maker


def elementwise_nondifferentiable(
    name: str, impl: Callable[..., Any], *, doc: str | None = None
) -> tuple[Primitive, Callable[..., Any]]:
    """A broadcasting elementwise primitive whose result carries no derivative (comparisons,
    ``isnan``), and its public function; ``vmap`` evaluates it on batched operands."""
    primitive = nondifferentiable(name, impl)
    primitive.module = _caller_module()
    return primitive, elementwise_function(
        primitive, doc or f"``{name}`` (elementwise, no derivative)."
    )


def elementwise_function(primitive: Primitive, doc: str) -> Callable[..., Array]:
    """The batching rule and the public function of a broadcasting elementwise primitive
    (for one whose derivative rules are written by hand: ``add``, ``maximum``, ``where``).
    Lists and tuples among the operands become arrays (NumPy's ``np.add([1, x], 2)``)."""
    defbatch(primitive, elementwise_rule(primitive))
    bind = primitive.bind

    def fn(*args: ArrayLike) -> Array:
        for a in args:
            if isinstance(a, (list, tuple)):
                return bind(*[operand(v) for v in args])
        return bind(*args)

    fn.__name__ = fn.__qualname__ = primitive.name
    fn.__doc__ = doc
    return fn


def _caller_module() -> str:
    """The module that called the constructor (the family the primitive belongs to)."""
    return str(sys._getframe(2).f_globals.get("__name__", ""))
