"""Reverse mode: the VJP interpreter, its rule registry and the backward pass."""

from ._backward import backward as backward
from ._protect import Loan as Loan
from ._protect import closed_over as closed_over
from ._rules import ArgnumVJPMaker as ArgnumVJPMaker
from ._rules import Pullback as Pullback
from ._rules import VJPMaker as VJPMaker
from ._rules import defvjp as defvjp
from ._rules import defvjp_argnum as defvjp_argnum
from ._rules import has_vjp_rule as has_vjp_rule
from ._rules import vjp_makers as vjp_makers
from ._trace import Entry as Entry
from ._trace import VJPTrace as VJPTrace
from ._trace import VJPTracer as VJPTracer

__all__ = [
    "ArgnumVJPMaker",
    "Entry",
    "Loan",
    "Pullback",
    "VJPMaker",
    "VJPTrace",
    "VJPTracer",
    "backward",
    "closed_over",
    "defvjp",
    "defvjp_argnum",
    "has_vjp_rule",
    "vjp_makers",
]
