"""The context-local trace stack: where levels come from and where traces die.

Each thread and asyncio task sees its own stack (a ``ContextVar``), so concurrent
differentiations never share a level. Entering a transform pushes a fresh trace whose level
is the stack's height; leaving it, normally or by an exception, pops it and marks it dead, so
a tracer that escaped is caught the moment it reaches a primitive.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from typing import Any, Generic, TypeVar

from . import _memory
from . import arrays as _arrays
from ._trace import Trace

__all__ = ["new_trace", "current_traces"]

_STACK: ContextVar[tuple[Trace[Any], ...]] = ContextVar("transforms_trace_stack", default=())

TraceT = TypeVar("TraceT", bound=Trace[Any])


class new_trace(Generic[TraceT]):  # lower case: it is used as a function, `with new_trace(...)`
    """Push the trace ``make(level)`` for the duration of the block; kill it on exit.

    A class rather than a ``contextlib.contextmanager``: every transform enters one per call,
    and a generator-based manager costs several Python calls more to enter and leave.
    """

    __slots__ = ("_make", "_token", "_trace")

    def __init__(self, make: Callable[[int], TraceT]) -> None:
        self._make = make

    def __enter__(self) -> TraceT:
        if not _memory._primed:  # the first transform of the process
            _memory.prime_allocator()
        stack = _STACK.get()
        trace = self._trace = self._make(len(stack))
        self._token: Token[tuple[Trace[Any], ...]] = _STACK.set((*stack, trace))
        return trace

    def __exit__(self, *exc_info: object) -> None:
        self._trace.alive = False
        _STACK.reset(self._token)
        if _arrays._HELD.get() and not _STACK.get():  # the outermost transform is done
            _arrays.release()


def current_traces() -> tuple[Trace[Any], ...]:
    """The live traces of this context, lowest level first."""
    return _STACK.get()
