"""Frozen traces: user code run on the values of the live transforms, not on their tracers.

A solver inside ``custom_root`` or ``custom_linear_solve`` runs on plain values: the
derivatives of its result come from the implicit function theorem, never from its loop. The
function it solves closes over values of the transforms live at the call, and the solver may
differentiate that function itself (Newton's method with ``grad(f)``): those derivatives
must be the real ones, taken by new transforms above the live ones, which see the closed-over
values as the constants they are for the solver.

So the live traces are frozen for the solve: marked finished (``alive = False``, which sends
every tracer of theirs from the fast paths to ``bind``, as for a finished trace) with a
projection (``Trace.frozen``) that gives the value a tracer stands for: its primal, or one
example of a ``vmap``'s batch. ``bind`` binds those values in place of the tracers, so
nothing a frozen trace would record is recorded, and a trace opened by the solver sees plain
values below it. No cost on the hot paths: only ``bind``'s path for a finished trace looks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._trace import Trace, Tracer

__all__ = ["frozen", "thawed"]


def thawed(value: Any) -> Any:
    """The value a tracer of frozen traces stands for (``value`` itself if it is not one)."""
    while isinstance(value, Tracer):
        project = value._trace.frozen
        if project is None:
            return value
        value = project(value)
    return value


class frozen:  # lower case: used as a function, ``with frozen(...)``
    """Freeze ``traces`` for the duration of the block, each with its projection (a tracer of
    the trace -> the value one level down it stands for, frozen or plain)."""

    __slots__ = ("_traces",)

    def __init__(self, traces: Mapping[Trace[Any], Callable[[Any], Any]]) -> None:
        self._traces = dict(traces)

    def __enter__(self) -> None:
        for trace, project in self._traces.items():
            assert trace.alive and trace.frozen is None, "only a live trace can be frozen"
            trace.alive, trace.frozen = False, project

    def __exit__(self, *exc_info: object) -> None:
        for trace in self._traces:
            trace.alive, trace.frozen = True, None
