"""Taylor-mode rules of the custom-rule primitives: each derived from its JVP rule.

``custom_jvp`` functions are expanded by the user's JVP rule (evaluated on jets, so it must
be written with differentiable operations, as for any higher-order use); ``custom_vjp``
ones by the JVP its forward mode uses; ``checkpoint`` by re-running its function under the
JVP; ``custom_linear_solve``'s (and ``custom_root``'s) solve, linear in its right-hand
side, solves for each Taylor coefficient (its operator, a matrix operand, is a constant).
"""

from __future__ import annotations

from typing import Any

from transforms.core import Primitive
from transforms.numpy._taylor import linear
from transforms.taylor import deftaylor, ode_rule

from ._checkpoint import checkpoint_call_p
from ._custom import custom_jvp_call_p, custom_vjp_call_p
from ._implicit import implicit_solve_p

_DERIVED: tuple[Primitive[Any], ...] = (custom_jvp_call_p, custom_vjp_call_p, checkpoint_call_p)
for _p in _DERIVED:
    deftaylor(_p, ode_rule(_p))
deftaylor(implicit_solve_p, linear(implicit_solve_p, static=lambda i: i == 1))  # 1: the operator
