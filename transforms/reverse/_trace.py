"""The reverse-mode interpreter: record, for each primitive, an entry on the trace's tape.

The reverse graph is implicit: a tape entry holds the positions of its parents on the tape
and, for each, the closure that maps the entry's cotangent to that parent's. The closures
come from the rule's maker, run at forward time, so they hold exactly the forward state
their rule needs — never a tracer of this trace, which is why a pullback still works after
the trace has finished. Entries are plain tuples and parents are list positions: recording
costs no Python call and the backward pass indexes a list instead of hashing nodes.

Under nesting, a trace shares repeated applications (``SharingVJPTrace``): the VJP makers of
the traces above it recompute, on its tracers, what its own makers computed one level down
(``grad(grad(sin))``: both levels' makers take ``cos`` of the same value, and ``cos``'s maker
takes ``sin`` again), so without sharing the work per level grows faster than the derivative
itself requires.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from transforms.core import (
    NoRuleError,
    PrimalTracer,
    Primitive,
    Trace,
    current_traces,
    refuse_concrete,
)

from ._protect import Guard
from ._rules import _RULES, Pullback

__all__ = [
    "Entry",
    "OuterVJPTracer",
    "SharingVJPTrace",
    "Slot",
    "VJPTrace",
    "VJPTracer",
]

Entry = tuple[int, Pullback] | tuple[tuple[int, ...], tuple[Pullback, ...]]
"""One recorded primitive application: its parent's tape position and pullback, or (with
several parents, or none for an input) a tuple of each. One parent, the common case, costs
no extra tuples to record and no ``zip`` to pull back."""

_INPUT: Entry = ((), ())

# Primitives without a derivative whose result does not depend on their operand's values:
# allowed on a transposing trace (see ``Trace.transposing``); every other one (comparisons,
# argmax, isfinite...) reads values, which a linear map being transposed must not do.
_VALUE_FREE = frozenset(("zeros_like", "ones_like"))


class VJPTracer(PrimalTracer):
    """A primal value (one level down) and the tape position of the entry that produced it."""

    __slots__ = ("index",)

    def __init__(self, trace: VJPTrace, primal: Any, index: int) -> None:
        self._trace = trace
        self._primal = primal
        self.index = index


class OuterVJPTracer(VJPTracer):
    """A tracer of a trace with another reverse trace above it, whose shape and dtype are
    attributes, read off its primal when it is made.

    The VJP makers of the trace above ask the shape and dtype of every operand and result
    they see, which are these tracers: an attribute costs a tenth of the property (and the
    property of a tracer whose primal is a tracer asks that one in turn, down to the
    array). A top trace's tracers do not read them: most of them are never asked.
    """

    __slots__ = ("dtype", "shape")

    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    def __init__(self, trace: VJPTrace, primal: Any, index: int) -> None:
        self._trace = trace
        self._primal = primal
        self.index = index
        try:
            self.shape, self.dtype = primal.shape, primal.dtype
        except AttributeError:  # a Python scalar
            self.shape, self.dtype = np.shape(primal), np.result_type(primal)


class VJPTrace(Trace[VJPTracer]):
    """One live ``vjp``: records tape entries whose pullbacks are made by the VJP makers.

    ``tape`` lists the entries in the order they were recorded, inputs first: an entry comes
    after every entry it points to, so the backward pass walks it in reverse with no search.

    Plain ndarrays reaching a recorded primitive go through ``guard`` (see ``_protect``): a
    closure may read them in a backward pass long after, and the user must not be able to
    change them in between. Whoever owns the recorded graph calls ``guard.release()`` once
    no pullback can run any more.

    Opening a trace makes every ``VJPTrace`` below it make ``OuterVJPTracer``s from then on
    (``tracer_class``), and turns every one below the nearest into a ``SharingVJPTrace``
    (``memo`` is that one's). A tracer is this trace's if it is a ``VJPTracer`` or an
    ``OuterVJPTracer`` (by exact type: the cheapest test) whose trace is this one.
    """

    __slots__ = ("guard", "memo", "tape", "tracer_class")

    def __init__(self, level: int, name: str = "vjp") -> None:
        super().__init__(level, name)
        self.guard = Guard()
        self.tape: list[Entry] = []
        self.memo: dict[tuple[Any, ...], tuple[Any, int]] = {}
        self.tracer_class: type[VJPTracer] = VJPTracer
        # (this one is not pushed yet; the nearest reverse trace below has only it above)
        below = [t for t in current_traces() if isinstance(t, VJPTrace)]
        for trace in below:
            trace.tracer_class = OuterVJPTracer
        for trace in below[:-1]:
            trace.__class__ = SharingVJPTrace

    def input(self, value: Any) -> VJPTracer:
        """A new input of this trace (recorded before any primitive reads it)."""
        if isinstance(value, np.ndarray):
            value = self.guard.protect(value)
        self.tape.append(_INPUT)
        return self.tracer_class(self, value, len(self.tape) - 1)

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        # The hot path of reverse mode. NumPy is called directly when nothing below can be
        # traced (the lowest trace: bind has already refused any other trace's tracer). One
        # argument (then it is this trace's tracer: bind chose this trace for it), two with
        # one of them traced (a one-parent entry) and two traced ones with a rule for each
        # take short paths; the general path below handles every other case. The short
        # paths call nothing with ``**params`` when there are none (arithmetic and the
        # elementwise functions: the common case): an empty one still costs a dictionary
        # and a slower call. Two operands with parameters take the general path.
        n = len(args)
        if n == 1 and not primitive.multiple_results:
            rules: Any = _RULES.get(primitive)
            if type(rules) is tuple and rules:
                tracer: Any = args[0]
                x = tracer._primal
                maker = rules[0]
                if params:
                    ans = (
                        primitive.impl(x, **params)
                        if self.level == 0
                        else primitive.bind(x, **params)
                    )
                    if maker is None:
                        return ans
                    pullback = maker(ans, x, **params)
                else:
                    ans = primitive.impl(x) if self.level == 0 else primitive.bind(x)
                    if maker is None:
                        return ans
                    pullback = maker(ans, x)
                tape = self.tape
                tape.append((tracer.index, pullback))
                tracer_class = self.tracer_class  # (a call of self.tracer_class(...) costs more)
                return tracer_class(self, ans, len(tape) - 1)
        if n == 2 and not params and not primitive.multiple_results:
            a: Any = args[0]
            b: Any = args[1]
            kind = type(a)
            mine_a = (kind is VJPTracer or kind is OuterVJPTracer) and a._trace is self
            kind = type(b)
            mine_b = (kind is VJPTracer or kind is OuterVJPTracer) and b._trace is self
            if mine_a != mine_b:  # one traced operand of two (first: the commonest)
                rules = _RULES.get(primitive)
                if type(rules) is tuple and len(rules) == 2:
                    if mine_a:
                        tracer, i, x = a, 0, a._primal
                        y = self.guard.protect(b) if isinstance(b, np.ndarray) else b
                    else:
                        tracer, i, y = b, 1, b._primal
                        x = self.guard.protect(a) if isinstance(a, np.ndarray) else a
                    ans = primitive.impl(x, y) if self.level == 0 else primitive.bind(x, y)
                    maker = rules[i]
                    if maker is None:
                        return ans
                    tape = self.tape
                    tape.append((tracer.index, maker(ans, x, y)))
                    tracer_class = self.tracer_class
                    return tracer_class(self, ans, len(tape) - 1)
            elif mine_a:  # both traced (a backward pass under nesting: most binaries)
                rules = _RULES.get(primitive)
                if type(rules) is tuple and len(rules) == 2 and rules[0] and rules[1]:
                    x, y = a._primal, b._primal
                    ans = primitive.impl(x, y) if self.level == 0 else primitive.bind(x, y)
                    tape = self.tape
                    tape.append(((a.index, b.index), (rules[0](ans, x, y), rules[1](ans, x, y))))
                    tracer_class = self.tracer_class
                    return tracer_class(self, ans, len(tape) - 1)
        primals = list(args)
        owned: list[int] = []  # positions of this trace's tracers
        i = 0
        for a in args:
            kind = type(a)
            if (kind is VJPTracer or kind is OuterVJPTracer) and a._trace is self:
                primals[i] = a._primal
                owned.append(i)
            elif isinstance(a, np.ndarray):
                primals[i] = self.guard.protect(a)
            i += 1
        if self.level == 0:
            ans = primitive.impl(*primals, **params)
        else:
            ans = primitive.bind(*primals, **params)
        rules = _RULES.get(primitive)  # makers indexed by argument position
        if rules is None:
            if not primitive.differentiable:
                if self.transposing is not None and primitive.name not in _VALUE_FREE:
                    refuse_concrete(args[owned[0]], f"'{primitive.name}'")
                return ans
            raise NoRuleError(primitive.name, "vjp", owned[0], "transforms.defvjp")
        parents: list[int] = []
        pullbacks: list[Pullback] = []
        n = len(rules)
        for i in owned:
            if i >= n:
                raise NoRuleError(primitive.name, "vjp", i, "transforms.defvjp")
            maker = rules[i]
            if maker is None:
                continue
            parents.append(args[i].index)  # type: ignore[attr-defined]
            pullbacks.append(maker(ans, *primals, **params))
        if not parents:
            return ans
        tape = self.tape
        if not primitive.multiple_results:
            tape.append((tuple(parents), tuple(pullbacks)))
            return self.tracer_class(self, ans, len(tape) - 1)
        # One entry for the primitive, whose cotangent is a tuple; each output points to it
        # through a projection that places its own cotangent in its slot.
        tape.append((tuple(parents), tuple(_with_zeros(pullback, ans) for pullback in pullbacks)))
        main, n = len(tape) - 1, len(ans)
        tape.extend(((main,), (_projection(k, n),)) for k in range(n))
        return tuple(self.tracer_class(self, a, main + 1 + k) for k, a in enumerate(ans))


# The constants that may name an application in ``SharingVJPTrace.memo``: immutable numbers,
# each with its type (``2``, ``2.0`` and ``np.float64(2)`` promote differently). Zero is left
# out: ``0.0 == -0.0`` as keys, but ``x * -0.0`` is not ``x * 0.0`` (signed zeros).
_NUMBERS = frozenset((int, float, np.float64))


class SharingVJPTrace(VJPTrace):
    """A ``VJPTrace`` with two or more ``vjp``s above it: a repeated application is shared.

    The makers of the traces above repeat this trace's work on its tracers, so here (and
    only here: alone, a trace sees only what the user's code repeats, and with one trace
    above, grad of grad, the lookups cost more than they save: 4.5% of W5 at k=2) ``memo``
    maps an application without parameters — a primitive and its operands, this trace's
    tracers by tape position and numbers by type and value, in one order for a
    commutative primitive (the makers above multiply in either order) — to the value and
    tape entry it gave. Applying it again returns a tracer of that entry: the same value
    (primitives are pure functions of their operands), and one entry whose cotangent
    gathers both uses, pulled back once. The memo holds the shared values (not this
    trace's tracers: no reference cycle) until the trace is dropped at the end of its
    ``vjp``; in nested reverse mode the pullbacks hold most of them anyway.
    """

    __slots__ = ()  # the layout of VJPTrace: an instance's class is switched to this one

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        if params or primitive.multiple_results:
            return VJPTrace.process_primitive(self, primitive, args, params)
        key: tuple[object, ...]
        if len(args) == 1:  # then it is this trace's tracer (bind chose this trace for it)
            key = (primitive, args[0].index)  # type: ignore[attr-defined]
        else:  # (built inline, not by a helper: this runs on every application)
            parts: list[object] = [primitive]
            a: Any
            for a in args:
                kind = type(a)
                if (kind is VJPTracer or kind is OuterVJPTracer) and a._trace is self:
                    parts.append(a.index)
                elif kind in _NUMBERS and a:
                    parts.append((kind, a))
                else:  # an operand that cannot name its value (an array): not shared
                    return VJPTrace.process_primitive(self, primitive, args, params)
            if primitive.commutative:  # one order: this trace's tracers first, by position
                first: Any = parts[1]
                second: Any = parts[2]
                if type(first) is tuple or (type(second) is int and second < first):
                    parts[1], parts[2] = second, first
            key = tuple(parts)
        shared = self.memo.get(key)
        if shared is not None:
            return OuterVJPTracer(self, *shared)
        out = VJPTrace.process_primitive(self, primitive, args, params)
        if type(out) is OuterVJPTracer and out._trace is self:  # recorded: a new entry
            self.memo[key] = (out._primal, out.index)
        return out


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
