"""The Taylor-mode rule registry, written only through ``deftaylor``.

A Taylor rule is ``rule(order, primals, series, ans, /, **params) -> series_out`` (its
first four arguments positional-only: a primitive's parameter may be called ``order``):

- ``order`` is the trace's truncation order ``K``;
- ``primals`` are the operands one level down (arrays, numbers or tracers of outer
  transforms), ``ans`` the primitive's value on them (a tuple for a multiple-results one);
- ``series[i]`` stacks the normalised Taylor coefficients ``x1 .. xK`` of operand ``i``
  (``x_k`` = k-th derivative / k!) in one array of shape ``(K, *shape)``, or is ``None``
  for a constant (zero series);
- it returns the stacked coefficients of ``ans`` (shape ``(K, *ans.shape)``), ``None`` for
  a zero series, or a tuple of those for a multiple-results primitive.

Rules are written with differentiable operations (tracer operators and the array
operations of ``array_ops``, which ``transforms.numpy`` fills at import), so that
``grad``/``vmap`` of a function that uses ``jet`` differentiate through them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from transforms.core import Primitive, register_interpreter

__all__ = ["TaylorRule", "RULES", "array_ops", "deftaylor", "has_taylor_rule"]

TaylorRule = Callable[..., Any]

RULES: dict[Primitive, TaylorRule] = {}

# Differentiable array operations the rules need beyond the tracer operators; filled by
# ``transforms.numpy`` (which this package must not import): concatenate, tensordot,
# broadcast_to, moveaxis.
array_ops: dict[str, Callable[..., Any]] = {}


def deftaylor(primitive: Primitive, rule: TaylorRule) -> None:
    """Define how ``primitive`` propagates truncated Taylor series (see the module docs).

    ``transforms.taylor.ode_rule(primitive)`` is the rule derived from the primitive's JVP
    rule (exact for every primitive, see ``_trace``); write a rule by hand when a
    recurrence or a structure (linear, bilinear) makes it cheaper.
    """
    RULES[primitive] = rule


def has_taylor_rule(primitive: Primitive, argnum: int = 0) -> bool:
    """Whether ``primitive`` has a Taylor rule (one rule covers every argument)."""
    return primitive in RULES


register_interpreter("jet", has_taylor_rule, define="transforms.taylor.deftaylor")
