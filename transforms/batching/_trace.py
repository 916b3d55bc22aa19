"""The batching interpreter: each tracer is a value with one extra (batch) axis.

A ``BatchTracer`` stands for one example of the batch: its ``shape`` omits the batch axis,
so user code and other interpreters' rules see per-example shapes. Operands that are not
tracers of this trace are unbatched and are left alone (no broadcasting is materialised).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

from transforms.core import NoRuleError, Primitive, Trace, Tracer, TracerBoolConversionError

from ._rules import _RULES

__all__ = ["BatchTrace", "BatchTracer"]


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, (Tracer, np.ndarray)) else np.shape(x)


class BatchTracer(Tracer):
    """A batched value (one level down) and the axis of its batch dimension."""

    __slots__ = ("bdim", "value")

    def __init__(self, trace: BatchTrace, value: Any, bdim: int) -> None:
        self._trace = trace
        self.value = value
        self.bdim = bdim

    @property
    def primal(self) -> Any:
        return self.value

    @property
    def shape(self) -> tuple[int, ...]:
        value = self.value
        shape = value.shape if type(value) is np.ndarray else _shape(value)
        bdim = self.bdim
        return shape[1:] if bdim == 0 else shape[:bdim] + shape[bdim + 1 :]

    @property
    def dtype(self) -> np.dtype[Any]:
        value = self.value
        return value.dtype if type(value) is np.ndarray else super().dtype

    def __bool__(self) -> NoReturn:
        raise TracerBoolConversionError(
            "vmap: bool() of a batched value: Python control flow (if, while) cannot branch "
            "per example. Use transforms.lax.cond (or lax.switch) for a per-example if, "
            "transforms.lax.while_loop for a per-example while, or tnp.where to select per "
            "example."
        )


class BatchTrace(Trace[BatchTracer]):
    """One live ``vmap``: applies batching rules to batched operands."""

    __slots__ = ("axis_size",)

    def __init__(self, level: int, axis_size: int, name: str = "vmap") -> None:
        super().__init__(level, name)
        self.axis_size = axis_size

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        values: list[Any] = []
        dims: list[int | None] = []
        for arg in args:
            if type(arg) is BatchTracer and arg._trace is self:
                values.append(arg.value)
                dims.append(arg.bdim)
            else:
                values.append(arg)
                dims.append(None)
        rule = _RULES.get(primitive)
        if rule is None:
            raise NoRuleError(
                primitive.name, "vmap", self.first_owned(args), "transforms.batching.defbatch"
            )
        out, out_dim = rule(values, dims, **params)
        if primitive.multiple_results:
            return tuple(
                o if d is None else BatchTracer(self, o, d)
                for o, d in zip(out, out_dim, strict=True)
            )
        if out_dim is None:
            return out
        return BatchTracer(self, out, out_dim)


def is_batched(value: object) -> bool:
    """Whether any level of ``value`` (a tracer whose primal may be another's) is batched by
    a ``vmap``: what a rule that cannot run per example asks before it refuses."""
    while isinstance(value, Tracer):
        if isinstance(value, BatchTracer):
            return True
        value = value.primal
    return False
