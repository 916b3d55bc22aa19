"""``make_trace``: the primitive program that one call of a function really executed.

A logging interpreter sits *below* every transform the function opens, so it sees each
primitive that reaches plain values: the forward pass, every backward pass and every
nested transform's rule applications, in execution order. Values are numbered as they are
produced; constants are shown by shape and dtype.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec

import numpy as np

from transforms.core import Primitive, Trace, Tracer, new_trace
from transforms.core.tree_util import tree_flatten

__all__ = ["make_trace", "Program", "Equation"]

P = ParamSpec("P")


def _aval(x: Any) -> str:
    shape = x.shape if isinstance(x, (np.ndarray, Tracer, np.generic)) else np.shape(x)
    dtype = x.dtype if isinstance(x, (np.ndarray, Tracer, np.generic)) else np.result_type(x)
    return f"{dtype}[{','.join(str(n) for n in shape)}]"


@dataclass(frozen=True)
class Equation:
    """One executed primitive: ``outputs = primitive(inputs)``."""

    primitive: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    def __str__(self) -> str:
        return f"{', '.join(self.outputs)} = {self.primitive} {' '.join(self.inputs)}"


@dataclass(frozen=True)
class Program:
    """The executed primitive program of one call: inputs, equations, outputs."""

    inputs: tuple[str, ...]
    equations: tuple[Equation, ...]
    outputs: tuple[str, ...]

    def __str__(self) -> str:
        lines = [f"{{ lambda {' '.join(self.inputs)} ."]
        lines += [f"    {eq}" for eq in self.equations]
        lines.append(f"  in ({', '.join(self.outputs)}) }}")
        return "\n".join(lines)


class _LoggingTracer(Tracer):
    __slots__ = ("_value", "name")

    def __init__(self, trace: _LoggingTrace, value: Any, name: str) -> None:
        self._trace = trace
        self._value = value
        self.name = name

    @property
    def primal(self) -> Any:
        return self._value


class _LoggingTrace(Trace[_LoggingTracer]):
    __slots__ = ("count", "equations")

    def __init__(self, level: int) -> None:
        super().__init__(level, "make_trace")
        self.equations: list[Equation] = []
        self.count = 0

    def new(self, value: Any) -> _LoggingTracer:
        self.count += 1
        return _LoggingTracer(self, value, f"%{self.count}:{_aval(value)}")

    def describe(self, x: object) -> str:
        if isinstance(x, _LoggingTracer) and x._trace is self:
            return x.name
        if isinstance(x, (int, float, complex)):
            return repr(x)
        return f"const:{_aval(x)}"

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        values = [
            a.primal if isinstance(a, _LoggingTracer) and a._trace is self else a for a in args
        ]
        ans = primitive.bind(*values, **params)
        outs = [self.new(a) for a in ans] if primitive.multiple_results else [self.new(ans)]
        inputs = tuple(self.describe(a) for a in args)
        self.equations.append(Equation(primitive.name, inputs, tuple(o.name for o in outs)))
        return tuple(outs) if primitive.multiple_results else outs[0]


def make_trace(fun: Callable[P, object]) -> Callable[P, Program]:
    """A function that runs ``fun`` once and returns the primitive program it executed.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> print(T.make_trace(T.grad(lambda x: tnp.sum(tnp.sin(x))))(np.ones(3)))
        { lambda %1:float64[3] .
            %2:float64[3] = sin %1:float64[3]
            %3:float64[3] = cos %1:float64[3]
            %4:float64[] = sum %2:float64[3]
            %5:float64[3] = multiply const:float64[3] %3:float64[3]
          in (%5:float64[3]) }
    """

    @functools.wraps(fun)
    def traced(*args: P.args, **kwargs: P.kwargs) -> Program:
        leaves, tree = tree_flatten(args)
        with new_trace(_LoggingTrace) as trace:
            tracers = [
                trace.new(np.asarray(x)) if isinstance(x, (np.ndarray, float, complex)) else x
                for x in leaves
            ]
            out = fun(*tree.unflatten(tracers), **kwargs)
            inputs = tuple(t.name for t in tracers if trace.owns(t))
            outputs = tuple(trace.describe(o) for o in tree_flatten(out)[0])
        return Program(inputs, tuple(trace.equations), outputs)

    return traced
