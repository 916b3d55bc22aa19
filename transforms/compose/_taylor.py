"""Taylor-mode rules of the custom-rule primitives: each derived from its JVP rule.

``custom_jvp`` functions are expanded by the user's JVP rule (evaluated on jets, so it must
be written with differentiable operations, as for any higher-order use); ``custom_vjp``
ones by the JVP its forward mode uses; ``checkpoint`` by re-running its function under the
JVP; ``stop_gradient``'s zero JVP gives a zero series.
"""

from __future__ import annotations

from transforms.taylor import deftaylor, ode_rule

from ._checkpoint import checkpoint_call_p
from ._custom import custom_jvp_call_p, custom_vjp_call_p, stop_gradient_p

for _p in (custom_jvp_call_p, custom_vjp_call_p, checkpoint_call_p, stop_gradient_p):
    deftaylor(_p, ode_rule(_p))
