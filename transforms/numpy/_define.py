"""How a primitive of ``transforms.numpy`` is defined, and the shape helpers its rules share.

The rule contract, for every family module:

- A JVP rule ``rule(t, ans, *args, **params)`` returns the tangent of ``ans`` for the tangent
  ``t`` of one argument, with ``ans``'s full shape (a rule broadcasts what it returns).
- A VJP maker ``maker(ans, *args, **params)`` runs at forward time and returns
  ``ct -> cotangent``, with the argument's shape: a rule sums a broadcast cotangent back with
  ``unbroadcast``. It captures only what its closure uses.
- Rules use differentiable operations (Python operators on arrays/tracers, or this
  package's functions), never raw NumPy on values that may be traced, so rules nest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms.core import Primitive, Tracer
from transforms.forward import defjvp
from transforms.reverse import defvjp

__all__ = [
    "shape_of",
    "ndim_of",
    "dtype_of",
    "normalize_axes",
    "is_traced",
    "elementwise",
    "nondifferentiable",
    "reject_out",
]


def is_traced(x: object) -> bool:
    return isinstance(x, Tracer)


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of an array, tracer or scalar."""
    return x.shape if isinstance(x, (np.ndarray, Tracer, np.generic)) else np.shape(x)


def ndim_of(x: Any) -> int:
    return len(shape_of(x))


def dtype_of(x: Any) -> np.dtype[Any]:
    return x.dtype if isinstance(x, (np.ndarray, Tracer, np.generic)) else np.result_type(x)


def normalize_axes(axis: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """``axis`` as a sorted tuple of non-negative axes (``None`` means all of them)."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise np.exceptions.AxisError(
                f"axis {a} is out of bounds for array of dimension {ndim}"
            )
        out.append(int(a) % max(ndim, 1))
    return tuple(sorted(out))


def elementwise(
    name: str, impl: Callable[..., Any], derivative: Callable[[Any, Any], Any] | None
) -> Primitive:
    """A one-argument elementwise primitive from its derivative ``derivative(ans, x)``.

    Both rules multiply by the same derivative: JVP ``t * d``, VJP ``ct * d`` (computed once
    at forward time, so a pullback called many times does not recompute it).
    ``derivative=None`` declares a zero derivative (``floor``, ``sign``).
    """
    primitive = Primitive(name, impl)
    if derivative is None:
        defjvp(primitive, None)
        defvjp(primitive, None)
        return primitive
    d = derivative
    defjvp(primitive, lambda t, ans, x: t * d(ans, x))

    def maker(ans: Any, x: Any) -> Callable[[Any], Any]:
        dx = d(ans, x)
        return lambda ct: ct * dx

    defvjp(primitive, maker)
    return primitive


def nondifferentiable(name: str, impl: Callable[..., Any]) -> Primitive:
    """A primitive whose result carries no derivative: interpreters evaluate it on primals."""
    return Primitive(name, impl, differentiable=False)


def reject_out(name: str, out: object) -> None:
    """NumPy's ``out=`` cannot hold a traced result: refuse it, naming the function."""
    if out is not None:
        raise TypeError(
            f"transforms.numpy.{name}: out= is not supported (a transformed result cannot be "
            "written into an array); use the returned array"
        )
