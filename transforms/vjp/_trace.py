"""The reverse-mode interpreter: record, for each primitive, a node that points to its parents.

The reverse graph is implicit: a ``Node`` holds its parents and, for each, the closure that
maps the node's cotangent to that parent's. The closures come from the rule's maker, run at
forward time, so they hold exactly the forward state their rule needs — never a tracer of
this trace, which is why a pullback still works after the trace has finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from transforms.core import NoRuleError, Primitive, Trace, Tracer

from ._rules import _RULES, Pullback, _Argnum

__all__ = ["Node", "VJPTrace", "VJPTracer"]


class Node:
    """One recorded primitive application (or an input, with no parents)."""

    __slots__ = ("parents", "pullbacks")

    def __init__(self, parents: tuple[Node, ...], pullbacks: tuple[Pullback, ...]) -> None:
        self.parents = parents
        self.pullbacks = pullbacks


class VJPTracer(Tracer):
    """A primal value (one level down) and the node that produced it."""

    __slots__ = ("_primal", "node")

    def __init__(self, trace: VJPTrace, primal: Any, node: Node) -> None:
        self._trace = trace
        self._primal = primal
        self.node = node

    @property
    def primal(self) -> Any:
        return self._primal


class VJPTrace(Trace[VJPTracer]):
    """One live ``vjp``: records nodes whose closures are made by the VJP makers.

    A plain ndarray that reaches a recorded primitive may be captured by a closure and read
    in the backward pass, possibly long after; the user could mutate it in place meanwhile.
    So it is replaced by a read-only snapshot, taken once per array per trace (autograd
    reads the mutated values and returns a silently wrong gradient).
    """

    __slots__ = ("_snapshots",)

    def __init__(self, level: int, name: str = "vjp") -> None:
        super().__init__(level, name)
        self._snapshots: dict[int, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = {}

    def snapshot(self, array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """A read-only copy of a user-owned ``array`` (the same copy for the same array)."""
        if not array.flags.writeable and array.base is None:
            return array  # owned by nobody who can write to it: already safe
        kept = self._snapshots.get(id(array))
        if kept is not None and kept[0] is array:
            return kept[1]
        copy = array.copy()
        copy.flags.writeable = False
        self._snapshots[id(array)] = (array, copy)  # holding `array` keeps its id unique
        return copy

    def process_primitive(
        self, primitive: Primitive, args: Sequence[object], params: dict[str, Any]
    ) -> object:
        primals = [
            a._primal
            if type(a) is VJPTracer and a._trace is self
            else (self.snapshot(a) if type(a) is np.ndarray else a)
            for a in args
        ]
        ans = primitive.bind(*primals, **params)
        if not primitive.differentiable:
            return ans
        rules = _RULES.get(primitive)
        if rules is None:
            raise NoRuleError(primitive.name, "vjp", self.first_owned(args), "transforms.defvjp")
        parents: list[Node] = []
        pullbacks: list[Pullback] = []
        for argnum, arg in enumerate(args):
            if type(arg) is not VJPTracer or arg._trace is not self:
                continue
            if type(rules) is _Argnum:
                pullback = rules.maker(argnum, ans, *primals, **params)
            else:
                if argnum >= len(rules):  # type: ignore[arg-type]
                    raise NoRuleError(primitive.name, "vjp", argnum, "transforms.defvjp")
                maker = rules[argnum]  # type: ignore[index]
                if maker is None:
                    continue
                pullback = maker(ans, *primals, **params)
            parents.append(arg.node)
            pullbacks.append(pullback)
        if not parents:
            return ans
        if not primitive.multiple_results:
            return VJPTracer(self, ans, Node(tuple(parents), tuple(pullbacks)))
        # One node for the primitive, whose cotangent is a tuple; each output points to it
        # through a projection that places its own cotangent in its slot.
        filled = tuple(_with_zeros(pullback, ans) for pullback in pullbacks)
        node = Node(tuple(parents), filled)
        n = len(ans)
        return tuple(
            VJPTracer(self, a, Node((node,), (_projection(k, n),))) for k, a in enumerate(ans)
        )


def _projection(k: int, n: int) -> Pullback:
    return lambda ct: tuple(ct if j == k else None for j in range(n))


def _with_zeros(pullback: Pullback, ans: tuple[Any, ...]) -> Pullback:
    """The pullback of a multiple-results primitive sees zeros for unused outputs.

    ``np.zeros_like`` dispatches to the differentiable namespace when ``ans`` is traced.
    """
    return lambda cts: pullback(
        tuple(np.zeros_like(a) if c is None else c for c, a in zip(cts, ans, strict=True))
    )
