"""Custom rules that read, through their closure, a traced value of the transform applying
them: refused as JAX refuses them (``UnexpectedTracerError``).

A ``custom_jvp`` / ``custom_vjp`` function and its rules run inside the rules of the trace
that interprets the call (its *owner*: the highest trace among the arguments), on values
one level down. A value of the owner (or of a trace above it) read from a closure is then
neither an argument the rules differentiate nor a constant: its primitives would be
recorded mid-rule or handed to NumPy, a crash or a derivative that misses it. (A value of a
trace below the owner is a constant there and works, as in JAX for ``vmap``'s; a call with
no traced argument runs the function as it is, like any other code.)

So while the user's code runs, ``guarded`` holds those traces (``alive`` false) but the
ones whose tracers it was handed as arguments (sparsity detection runs the function on its
own tracers), and a ``_GuardTrace`` adopts any primitive reaching a held or finished trace's
tracer (``Trace.adopts_finished``): that primitive raises, naming the function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

from transforms.core import (
    Primitive,
    Trace,
    Tracer,
    UnexpectedTracerError,
    current_traces,
    new_trace,
)

__all__ = ["guarded", "owner_and_above"]

R = TypeVar("R")


class _GuardTrace(Trace[Tracer]):
    """Interprets nothing of its own: it only adopts the primitives that read a held trace's
    tracer, and refuses them."""

    __slots__ = ("what",)
    adopts_finished = True

    def __init__(self, level: int) -> None:
        super().__init__(level, "custom rule")
        self.what = ""

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> NoReturn:
        raise UnexpectedTracerError(
            f"{self.what} reads a value traced by the transform that differentiates or batches "
            f"it without taking it as an argument (primitive '{primitive.name}' received it "
            "from a closure, a global or a container): its rules would not give that value's "
            "derivative. Pass the value as an argument of the function (nondiff_argnums for "
            "one that is not differentiated), or use T.checkpoint, which converts closures"
        )


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
        held = [t for t in forbidden if t not in mine]
        was_alive = [t.alive for t in held]
        with new_trace(_GuardTrace) as trace:
            trace.what = what
            for t in held:
                t.alive = False
            try:
                return fn(*args)
            finally:
                for t, alive in zip(held, was_alive, strict=True):
                    t.alive = alive

    return run
