"""``Primitive``: a named operation that every interpreter knows how to transform.

``bind`` is the one entry point: with no tracer among the arguments it runs the NumPy
implementation; otherwise the highest-level trace among them interprets it (see ``_trace``).
Parameters (axis, shape, index, ...) travel as keyword arguments and are never traced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._trace import Tracer, find_top_trace

__all__ = ["Primitive", "primitive"]


class Primitive:
    """A differentiable operation: ``impl`` on plain values, rules in each interpreter.

    Args:
        name: shown in every error that concerns this primitive.
        impl: the NumPy implementation, called on plain (untraced) values.
        differentiable: ``False`` for operations whose result carries no derivative
            (comparisons, ``argmax``): interpreters evaluate them on primal values.
        multiple_results: ``impl`` returns a tuple of arrays (``eigh``, ``svd``); its JVP
            rules return a tuple of tangents (``None`` for a zero one), its VJP pullbacks
            receive a tuple of cotangents, its batching rule returns a tuple of batch axes.
    """

    __slots__ = ("differentiable", "impl", "multiple_results", "name")

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        *,
        differentiable: bool = True,
        multiple_results: bool = False,
    ) -> None:
        self.name = name
        self.impl = impl
        self.differentiable = differentiable
        self.multiple_results = multiple_results

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive, letting the highest-level trace among ``args`` interpret it."""
        top = None
        for arg in args:
            if isinstance(arg, Tracer):
                if top is None:
                    top = arg._trace
                elif arg._trace is not top:  # several traces: the full check picks one
                    top = find_top_trace(self, args)
                    break
        if top is None:  # nothing is traced
            return self.impl(*args, **params)
        if not top.alive:
            top = find_top_trace(self, args)  # raises EscapedTracerError
        return top.process_primitive(self, args, params)  # type: ignore[union-attr]

    __call__ = bind

    def __repr__(self) -> str:
        return f"Primitive({self.name!r})"


def primitive(fun: Callable[..., Any]) -> Primitive:
    """Make ``fun`` (a NumPy implementation) a primitive, autograd-style; give it rules with
    ``defjvp``/``defvjp`` (and ``defbatch`` for ``vmap``).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> @T.primitive
        ... def log1p(x):
        ...     return np.log1p(x)
        >>> T.defjvp(log1p, lambda t, ans, x: t / (1 + x))
        >>> T.defvjp(log1p, lambda ans, x: lambda ct: ct / (1 + x))
        >>> T.grad(log1p)(1.0)
        array(0.5)
    """
    return Primitive(getattr(fun, "__name__", "primitive"), fun)
