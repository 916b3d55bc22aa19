"""Taylor mode: the ``jet`` interpreter, its rule registry and ``transforms.jet``.

A peer of ``forward``, ``reverse`` and ``batching``: ``JetTrace`` pushes truncated Taylor
series through primitives by their Taylor rules (``deftaylor``). ``ode_rule`` derives a
primitive's Taylor rule from its JVP rule, exactly; the families register cheaper rules for
linear, bilinear and recurrence-friendly primitives (``transforms/numpy/_taylor.py``).
"""

from ._api import derivative as derivative
from ._api import derivatives as derivatives
from ._api import directional_derivatives as directional_derivatives
from ._api import jet as jet
from ._collapsed import COLLAPSED as COLLAPSED
from ._collapsed import CollapsedRule as CollapsedRule
from ._collapsed import CollapsedTrace as CollapsedTrace
from ._collapsed import CollapsedTracer as CollapsedTracer
from ._collapsed import Deferred as Deferred
from ._collapsed import add_collapsed as add_collapsed
from ._collapsed import collapsed_elementwise as collapsed_elementwise
from ._collapsed import collapsed_jet as collapsed_jet
from ._collapsed import collapsed_linear as collapsed_linear
from ._collapsed import defcollapsed as defcollapsed
from ._collapsed import deferred_sum as deferred_sum
from ._collapsed import forced as forced
from ._rules import TaylorRule as TaylorRule
from ._rules import array_ops as array_ops
from ._rules import deftaylor as deftaylor
from ._rules import has_taylor_rule as has_taylor_rule
from ._trace import JetTrace as JetTrace
from ._trace import JetTracer as JetTracer
from ._trace import by_composition as by_composition
from ._trace import ode_rule as ode_rule

__all__ = [
    "COLLAPSED",
    "add_collapsed",
    "CollapsedRule",
    "CollapsedTrace",
    "CollapsedTracer",
    "collapsed_elementwise",
    "collapsed_jet",
    "collapsed_linear",
    "defcollapsed",
    "deferred_sum",
    "Deferred",
    "forced",
    "JetTrace",
    "JetTracer",
    "TaylorRule",
    "array_ops",
    "by_composition",
    "deftaylor",
    "derivative",
    "derivatives",
    "directional_derivatives",
    "has_taylor_rule",
    "jet",
    "ode_rule",
]
