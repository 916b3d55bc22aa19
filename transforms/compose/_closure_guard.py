"""Custom rules that read, through their closure, a traced value of the transform applying
them: refused as JAX refuses them (``UnexpectedTracerError``).

A ``custom_jvp`` / ``custom_vjp`` function and its rules run inside the rules of the trace
that interprets the call (its *owner*: the highest trace among the arguments), on values
one level down. A value of the owner (or of a trace above it) read from a closure is then
neither an argument the rules differentiate nor a constant: its primitives would be
recorded mid-rule or handed to NumPy, a crash or a derivative that misses it. (A value of a
trace below the owner is a constant there and works, as in JAX for ``vmap``'s; a call with
no traced argument runs the function as it is, like any other code.)

So while the user's code runs, ``guarded`` holds those traces (``alive`` false, and
``held_by`` naming the function) but the ones whose tracers it was handed as arguments
(sparsity detection runs the function on its own tracers): a primitive reaching a held
trace's tracer takes ``find_top_trace``'s path for a finished trace, which raises
``UnexpectedTracerError`` naming the function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from transforms.core import Trace, Tracer, current_traces

__all__ = ["guarded", "owner_and_above"]

R = TypeVar("R")


def owner_and_above(leaves: Sequence[Any]) -> tuple[Trace[Any], ...]:
    """The live traces a call binding its primitive on ``leaves`` must not read from a
    closure: the one that will interpret it (the highest among the leaves') and all above
    it; none for plain leaves."""
    levels = [x._trace.level for x in leaves if isinstance(x, Tracer)]
    if not levels:
        return ()
    return tuple(t for t in current_traces() if t.level >= max(levels))


def _traces_of(args: tuple[Any, ...]) -> list[Trace[Any]]:
    """The traces of the tracers among ``args`` and the items of its lists and tuples (the
    custom rules' callers pass leaves, or lists of leaves: no deeper search is needed)."""
    traces = []
    for a in args:
        if isinstance(a, Tracer):
            traces.append(a._trace)
        elif type(a) is list or type(a) is tuple:
            traces.extend(b._trace for b in a if isinstance(b, Tracer))
    return traces


def guarded(fn: Callable[..., R], forbidden: tuple[Trace[Any], ...], what: str) -> Callable[..., R]:
    """``fn``, refusing any primitive on a tracer of ``forbidden`` but those of the traces
    of its own arguments; ``what`` names the function in the error."""
    if not forbidden:
        return fn

    def run(*args: Any) -> R:
        mine = _traces_of(args)
        held = [(t, t.alive, t.held_by) for t in forbidden if t not in mine]
        for t, _, _ in held:
            t.alive, t.held_by = False, what
        try:
            return fn(*args)
        finally:
            for t, alive, held_by in held:
                t.alive, t.held_by = alive, held_by

    return run
