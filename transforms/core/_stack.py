"""The context-local trace stack: where levels come from and where traces die.

Each thread and asyncio task sees its own stack (a ``ContextVar``), so concurrent
differentiations never share a level. Entering a transform pushes a fresh trace whose level
is the stack's height; leaving it, normally or by an exception, pops it and marks it dead, so
a tracer that escaped is caught the moment it reaches a primitive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from . import _memory
from ._trace import Trace

__all__ = ["new_trace", "current_traces"]

_STACK: ContextVar[tuple[Trace[Any], ...]] = ContextVar("transforms_trace_stack", default=())

TraceT = TypeVar("TraceT", bound=Trace[Any])


@contextmanager
def new_trace(make: Callable[[int], TraceT]) -> Iterator[TraceT]:
    """Push the trace ``make(level)`` for the duration of the block; kill it on exit."""
    if not _memory._primed:  # the first transform of the process
        _memory.prime_allocator()
    stack = _STACK.get()
    trace = make(len(stack))
    token = _STACK.set((*stack, trace))
    try:
        yield trace
    finally:
        trace.alive = False
        _STACK.reset(token)


def current_traces() -> tuple[Trace[Any], ...]:
    """The live traces of this context, lowest level first."""
    return _STACK.get()
