"""Deciding a predicate or an index, per example when a ``vmap`` batches it.

Eager execution knows every predicate's value, batched or not (``concrete``). A decision
every example shares is taken once, in Python, exactly as an ``if`` would (only that branch
runs). A decision that differs between examples runs each branch that some example takes and
selects per example (``where``), with two protections of the examples that do not take it:

- ``safe_inputs``: the branch receives, in place of such an example's operands, those of an
  example that does take it, so it never computes outside its domain (no ``sqrt`` of a
  negative number that the selection would then hide in the value but not in the derivative:
  the pullback of a zero cotangent through ``sqrt`` at ``-1`` is ``0 * nan``). A value the
  branch closes over cannot be replaced: pass per-example values as operands.
  Under nested ``vmap``s no single example can stand in: the operands' derivatives are
  stopped for those examples instead (NaN-free still), and their arithmetic is not warned
  about (``run_branch``);
- ``select``: the branch's results of those examples are dropped, values and derivatives
  (``where``'s rules route each example's derivative to the branch it takes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

import transforms.numpy as tnp
from transforms.batching import BatchTrace, BatchTracer
from transforms.compose._custom import stop_gradient
from transforms.core import Tracer, arrays, concrete, refuse_concrete
from transforms.core.tree_util import tree_flatten

__all__ = [
    "Decision",
    "batched",
    "leaves_of",
    "run_branch",
    "safe_inputs",
    "select",
]


def _as_array(x: Any) -> Any:
    """A leaf as an array: Python numbers become 0-d arrays (tracers and arrays stay)."""
    return x if isinstance(x, (Tracer, np.ndarray)) else arrays.asarray(x)


def leaves_of(tree: Any) -> tuple[list[Any], Any]:
    """The leaves of a pytree as arrays, and its structure."""
    leaves, treedef = tree_flatten(tree)
    return [_as_array(x) for x in leaves], treedef


def batched(x: Any) -> bool:
    """Whether ``x`` differs between the examples of some ``vmap``."""
    return _batch_tracer(x) is not None


def _batch_tracer(x: Any) -> BatchTracer | None:
    """The first batched level of ``x`` (``None``: the same for every example)."""
    while isinstance(x, Tracer):
        if isinstance(x, BatchTracer):
            return x
        x = x.primal
    return None


class Decision:
    """A scalar predicate or index: ``uniform`` the value every example shares (``None``
    when they differ), ``values`` the values of all examples (with their batch axes)."""

    __slots__ = ("batch", "masked", "uniform", "value", "values")

    def __init__(self, value: Any, what: str) -> None:
        self.value = value  # the per-example predicate or index, as the user's code sees it
        self.masked = False  # a branch ran on some examples' own out-of-domain operands
        if np.shape(value) != ():
            raise TypeError(f"{what} must be a scalar, got shape {np.shape(value)}")
        refuse_concrete(value, "bool()")  # a linear map being transposed has no branches
        values = np.asarray(concrete(value))
        self.values = values
        self.batch = _batch_tracer(value)
        first = values.flat[0] if values.size else 0
        self.uniform: int | None = int(first) if np.all(values == first) else None

    def mask(self, b: int) -> Any:
        """Per example, whether it takes branch ``b`` (a batched boolean)."""
        return tnp.equal(self.value, b)

    def first_taker(self, b: int) -> np.ndarray[Any, Any] | None:
        """For the examples of the innermost batch axis: the index of each one's own
        operands if it takes ``b``, else those of an example that does; ``None`` when the
        batch is nested (several axes), where ``safe_inputs`` falls back to masking."""
        batch = self.batch
        if batch is None or type(batch.value) is not np.ndarray or batch is not self.value:
            return None
        takes = self.values == b
        if takes.ndim != 1:
            return None
        return np.where(takes, np.arange(takes.size), int(np.argmax(takes)))


def safe_inputs(decision: Decision, b: int, leaves: Sequence[Any]) -> list[Any]:
    """The operands branch ``b`` runs on (see the module docs): for the examples that do not
    take it, those of an example that does (their derivative stays with their own example);
    under nested batching, where no single example can stand in, the operands with their
    derivative stopped for those examples."""
    src = decision.first_taker(b)
    out = []
    for x in leaves:
        bt = _batch_tracer(x)
        if bt is None:  # the same for every example: in the domain of a branch some take
            out.append(x)
        elif src is not None and decision.batch is not None and bt._trace is decision.batch._trace:
            trace = cast(BatchTrace, bt._trace)  # a BatchTracer's trace is its BatchTrace
            stand_in = BatchTracer(trace, tnp.take(bt.value, src, axis=bt.bdim), bt.bdim)
            out.append(stand_in if x is bt else tnp.where(decision.mask(b), x, stand_in))
        else:
            out.append(tnp.where(decision.mask(b), x, stop_gradient(x)))
            decision.masked = True
    return out


def run_branch(decision: Decision, branch: Callable[..., Any], *args: Any) -> Any:
    """``branch(*args)``; where masking left examples their own operands (nested
    batching), their out-of-domain arithmetic is not warned about: it is never selected."""
    if not decision.masked:
        return branch(*args)
    with np.errstate(all="ignore"):
        return branch(*args)


def select(mask: Any, new: Sequence[Any], old: Sequence[Any]) -> list[Any]:
    """Per example, ``new`` where ``mask`` holds, else ``old`` (leaf by leaf)."""
    return [tnp.where(mask, n, o) for n, o in zip(new, old, strict=True)]
