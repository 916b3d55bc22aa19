"""Forward mode: the JVP interpreter and its rule registry."""

from ._rules import JointJVPRule as JointJVPRule
from ._rules import JVPRule as JVPRule
from ._rules import JVPRules as JVPRules
from ._rules import defjvp as defjvp
from ._rules import defjvp_joint as defjvp_joint
from ._rules import has_jvp_rule as has_jvp_rule
from ._rules import jvp_rule as jvp_rule
from ._trace import JVPTrace as JVPTrace
from ._trace import JVPTracer as JVPTracer

__all__ = [
    "JVPRule",
    "JVPRules",
    "JointJVPRule",
    "JVPTrace",
    "JVPTracer",
    "defjvp",
    "defjvp_joint",
    "has_jvp_rule",
    "jvp_rule",
]
