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

from ._protect import Guard
from ._rules import _RULES, Pullback, _Argnum

__all__ = ["Node", "Slot", "VJPTrace", "VJPTracer"]


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

    Plain ndarrays reaching a recorded primitive go through ``guard`` (see ``_protect``): a
    closure may read them in a backward pass long after, and the user must not be able to
    change them in between. Whoever owns the recorded graph calls ``guard.release()`` once
    no pullback can run any more.
    """

    __slots__ = ("guard",)

    def __init__(self, level: int, name: str = "vjp") -> None:
        super().__init__(level, name)
        self.guard = Guard()

    def process_primitive(
        self, primitive: Primitive, args: Sequence[object], params: dict[str, Any]
    ) -> object:
        primals = [
            a._primal
            if type(a) is VJPTracer and a._trace is self
            else (self.guard.protect(a) if isinstance(a, np.ndarray) else a)
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


class Slot:
    """The cotangent of output ``k`` of an ``n``-output primitive (the others are zero):
    the backward pass adds it into that slot only, so ``n`` outputs cost O(n), not O(n²)."""

    __slots__ = ("ct", "k", "n")

    def __init__(self, k: int, n: int, ct: Any) -> None:
        self.k, self.n, self.ct = k, n, ct


def _projection(k: int, n: int) -> Pullback:
    return lambda ct: Slot(k, n, ct)


def _with_zeros(pullback: Pullback, ans: tuple[Any, ...]) -> Pullback:
    """The pullback of a multiple-results primitive sees zeros for unused outputs.

    ``np.zeros_like`` dispatches to the differentiable namespace when ``ans`` is traced.
    """
    return lambda cts: pullback(
        tuple(np.zeros_like(a) if c is None else c for c, a in zip(cts, ans, strict=True))
    )
