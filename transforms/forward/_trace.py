"""The forward-mode interpreter: each tracer carries a primal and its tangent.

Zero tangents are symbolic: an argument that is not a tracer of this trace (a constant or a
value of an outer transform) simply contributes no term, so nothing is lifted or
materialised, and a primitive whose every contribution is zero returns its plain primal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transforms.core import NoRuleError, PrimalTracer, Primitive, Trace

from ._rules import _RULES

__all__ = ["JVPTrace", "JVPTracer"]


class JVPTracer(PrimalTracer):
    """A primal value (one level down) paired with its tangent."""

    __slots__ = ("tangent",)

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any) -> None:
        self._trace = trace
        self._primal = primal
        self.tangent = tangent


class JVPTrace(Trace[JVPTracer]):
    """One live ``jvp``: pushes tangents through primitives by their JVP rules."""

    __slots__ = ()

    def __init__(self, level: int, name: str = "jvp") -> None:
        super().__init__(level, name)

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        primals: list[Any] = []
        tangents: list[Any] = []
        traced = -1  # the position of the one traced argument; -2: several
        for i, a in enumerate(args):
            if type(a) is JVPTracer and a._trace is self:
                primals.append(a._primal)
                tangents.append(a.tangent)
                traced = i if traced == -1 else -2
            else:
                primals.append(a)
                tangents.append(None)
        ans = primitive.bind(*primals, **params)
        if not primitive.differentiable:
            return ans
        rules = _RULES.get(primitive)
        if rules is None:
            raise NoRuleError(primitive.name, "jvp", self.first_owned(args), "transforms.defjvp")
        per_argument = rules.per_argument
        if traced >= 0 and per_argument is not None and traced < len(per_argument):
            rule = per_argument[traced]  # one traced argument: its rule alone
            tangent = None if rule is None else rule(tangents[traced], ans, *primals, **params)
        else:
            tangent = rules.joint(tangents, ans, *primals, **params)
        if primitive.multiple_results:
            tangents_out = (None,) * len(ans) if tangent is None else tangent
            return tuple(
                a if t is None else JVPTracer(self, a, t)
                for a, t in zip(ans, tangents_out, strict=True)
            )
        if tangent is None:
            return ans
        return JVPTracer(self, ans, tangent)
