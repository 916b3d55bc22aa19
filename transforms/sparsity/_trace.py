"""The sparsity-detection interpreter: each tracer carries its value and its ``Pattern``.

The value is carried so that the program runs as usual (Python control flow on values takes
the path of the point given: the pattern found is that path's); the pattern says which
inputs (and, in a second-order detection, which pairs of inputs) each element depends on.
A primitive's rule maps its operands' patterns to its output's; an operand that is not a
tracer of this trace is a constant, whose values a rule may read (a constant zero factor
kills a dependency exactly, for every input).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms.core import NoRuleError, Primitive, Trace, Tracer, new_trace

from ._pattern import Pattern, identity, linear_map
from ._rules import _INLINE, _RULES

__all__ = ["SparsityTrace", "SparsityTracer", "dependencies"]


class SparsityTracer(Tracer):
    """A value (one level down) and the dependency pattern of its elements."""

    __slots__ = ("pattern", "value")

    def __init__(self, trace: SparsityTrace, value: Any, pattern: Pattern) -> None:
        self._trace = trace
        self.value = value
        self.pattern = pattern

    @property
    def primal(self) -> Any:
        return self.value


class SparsityTrace(Trace[SparsityTracer]):
    """One live detection over ``n`` inputs; ``second_order`` also follows Hessian pairs."""

    __slots__ = ("n", "second_order")

    def __init__(self, level: int, n: int, second_order: bool, name: str) -> None:
        super().__init__(level, name)
        self.n = n
        self.second_order = second_order

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        rule = _RULES.get(primitive, _MISSING)
        if rule is _INLINE:  # custom rules, checkpoint: the function itself, on our tracers
            return params["fun"](*args)
        values: list[Any] = []
        patterns: list[Pattern | None] = []
        for a in args:
            if type(a) is SparsityTracer and a._trace is self:
                values.append(a.value)
                patterns.append(a.pattern)
            else:
                values.append(a)
                patterns.append(None)
        ans = primitive.bind(*values, **params)
        if not primitive.differentiable or rule is None:
            return ans
        if rule is _MISSING:
            raise NoRuleError(
                primitive.name, self.name, self.first_owned(args), "transforms.sparsity.defsparsity"
            )
        out = rule(ans, values, patterns, **params)  # type: ignore[operator]
        if primitive.multiple_results:
            return tuple(self._wrap(a, p) for a, p in zip(ans, out, strict=True))
        return self._wrap(ans, out)

    def _wrap(self, ans: Any, pattern: Pattern | None) -> Any:
        if pattern is None or (pattern.g.nnz == 0 and (pattern.h is None or pattern.h.nnz == 0)):
            return ans  # depends on no input: a constant
        return SparsityTracer(self, ans, pattern)


_MISSING = object()


def dependencies(
    fun: Callable[..., Any], args: Sequence[Any], columns: Sequence[Sequence[int]], n: int
) -> frozenset[int]:
    """The inputs ``0 .. n-1`` that ``fun(*args)`` depends on, when every element of
    ``args[k]`` depends on the inputs ``columns[k]``: a first-order detection on these
    labels (how the family kit learns, from an elementwise function's partial derivative
    ``d_i``, which arguments it varies with, hence which second derivatives are non-zero)."""
    with new_trace(lambda level: SparsityTrace(level, n, False, "dependencies")) as trace:
        tracers = []
        for a, cols in zip(args, columns, strict=True):
            if not cols:
                tracers.append(a)
                continue
            m = int(np.size(a))
            rows = np.repeat(np.arange(m), len(cols))
            g = linear_map(rows, np.tile(np.asarray(cols, dtype=np.int64), m), (m, n))
            tracers.append(SparsityTracer(trace, a, Pattern(g, None, n)))
        out = fun(*tracers)
    if isinstance(out, SparsityTracer) and out._trace is trace:
        return frozenset(int(c) for c in out.pattern.g.indices)
    return frozenset()


def input_tracer(trace: SparsityTrace, value: Any, offset: int) -> SparsityTracer:
    """The tracer of an input whose elements are the inputs ``offset .. offset + size``."""
    return SparsityTracer(
        trace, value, identity(np.shape(value), offset, trace.n, trace.second_order)
    )
