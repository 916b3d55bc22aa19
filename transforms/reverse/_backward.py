"""The backward pass: the trace's tape in reverse, accumulating shared paths.

The tape lists nodes in recording order, so in reverse every node comes after all the
nodes that use it: by the time it is reached, its cotangent is complete. Nothing recurses
in the depth of the user's program (a chain of a million primitives runs in constant
Python stack), and there is no graph search: a node no output reaches has no cotangent and
costs one list lookup. Contributions add up with ``+``, which dispatches to the
differentiable ``add`` when an outer transform is watching, so the backward pass is itself
differentiable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transforms.core import quiet

from ._trace import Entry, Slot

__all__ = ["backward"]


@quiet  # derivative code: no NumPy warnings of its own (see core._quiet)
def backward(outputs: Sequence[tuple[int, Any]], n_inputs: int, tape: Sequence[Entry]) -> list[Any]:
    """Push the output cotangents (at tape positions) back to the ``n_inputs`` inputs at the
    start of ``tape``; ``None`` where no path reaches one."""
    cts: list[Any] = [None] * len(tape)
    for index, ct in outputs:
        _accumulate(cts, index, ct)
    for i in range(len(tape) - 1, n_inputs - 1, -1):
        ct = cts[i]
        if ct is None:
            continue
        cts[i] = None  # release it as soon as it is used
        parents: Any
        pullbacks: Any
        parents, pullbacks = tape[i]
        if type(parents) is int:  # one parent: never a multiple-results slot
            contribution = pullbacks(ct)
            held = cts[parents]
            cts[parents] = contribution if held is None else held + contribution
            continue
        for parent, pullback in zip(parents, pullbacks, strict=True):
            contribution = pullback(ct)
            if type(contribution) is Slot:
                _accumulate(cts, parent, contribution)
                continue
            held = cts[parent]  # (_accumulate's common case, inline: a call per parent)
            cts[parent] = contribution if held is None else held + contribution
    return cts[:n_inputs]


def _accumulate(cts: list[Any], index: int, ct: Any) -> None:
    previous = cts[index]
    if type(ct) is Slot:  # into the entry of a multiple-results primitive: a list, None = 0
        if previous is None:
            previous = cts[index] = [None] * ct.n
        held = previous[ct.k]
        previous[ct.k] = ct.ct if held is None else held + ct.ct
    elif previous is None:
        cts[index] = ct
    else:
        cts[index] = previous + ct
