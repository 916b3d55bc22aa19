"""The forward-mode interpreter: each tracer carries a primal and its tangent.

Zero tangents are symbolic: an argument that is not a tracer of this trace (a constant or a
value of an outer transform) simply contributes no term, so nothing is lifted or
materialised, and a primitive whose every contribution is zero returns its plain primal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transforms.core import NoRuleError, Primitive, Trace, Tracer

from ._rules import _RULES, _Joint

__all__ = ["JVPTrace", "JVPTracer"]


class JVPTracer(Tracer):
    """A primal value (one level down) paired with its tangent."""

    __slots__ = ("_primal", "tangent")

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any) -> None:
        self._trace = trace
        self._primal = primal
        self.tangent = tangent

    @property
    def primal(self) -> Any:
        return self._primal


class JVPTrace(Trace[JVPTracer]):
    """One live ``jvp``: pushes tangents through primitives by their JVP rules."""

    __slots__ = ()

    def __init__(self, level: int, name: str = "jvp") -> None:
        super().__init__(level, name)

    def process_primitive(
        self, primitive: Primitive, args: Sequence[object], params: dict[str, Any]
    ) -> object:
        primals = [a._primal if type(a) is JVPTracer and a._trace is self else a for a in args]
        ans = primitive.bind(*primals, **params)
        if not primitive.differentiable:
            return ans
        rules = _RULES.get(primitive)
        if rules is None:
            raise NoRuleError(primitive.name, "jvp", self.first_owned(args), "transforms.defjvp")
        multiple = primitive.multiple_results
        if type(rules) is _Joint:
            tangents = [
                a.tangent if type(a) is JVPTracer and a._trace is self else None for a in args
            ]
            tangent = rules.rule(tangents, ans, *primals, **params)
        else:
            tangent = None
            for argnum, arg in enumerate(args):
                if type(arg) is not JVPTracer or arg._trace is not self:
                    continue
                if argnum >= len(rules):  # type: ignore[arg-type]
                    raise NoRuleError(primitive.name, "jvp", argnum, "transforms.defjvp")
                rule = rules[argnum]  # type: ignore[index]
                if rule is None:
                    continue
                term = rule(arg.tangent, ans, *primals, **params)
                tangent = (
                    _add(tangent, term)
                    if multiple
                    else (term if tangent is None else tangent + term)
                )
        if multiple:
            tangents_out = (None,) * len(ans) if tangent is None else tangent
            return tuple(
                a if t is None else JVPTracer(self, a, t)
                for a, t in zip(ans, tangents_out, strict=True)
            )
        if tangent is None:
            return ans
        return JVPTracer(self, ans, tangent)


def _add(acc: tuple[Any, ...] | None, term: tuple[Any, ...]) -> tuple[Any, ...]:
    """Sum tuples of tangents of a multiple-results primitive; ``None`` is a zero."""
    if acc is None:
        return tuple(term)
    return tuple(
        a if t is None else (t if a is None else a + t) for a, t in zip(acc, term, strict=True)
    )
