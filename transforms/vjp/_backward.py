"""The backward pass: iterative, in reverse topological order, accumulating shared paths.

Nothing here recurses in the depth of the user's program, so a chain of a million
primitives runs in constant Python stack. A node is processed once all the nodes that use
it have handed it their cotangent contribution (counted in a first sweep); contributions
add up with ``+``, which dispatches to the differentiable ``add`` when an outer transform is
watching, so the backward pass is itself differentiable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._trace import Node, Slot

__all__ = ["backward"]


def backward(outputs: Sequence[tuple[Node, Any]], inputs: Sequence[Node]) -> list[Any]:
    """Push the output cotangents back to ``inputs``; ``None`` where no path reaches one."""
    pending: dict[Node, int] = {}  # how many users of each node have yet to hand it a ct
    stack = [node for node, _ in outputs]
    while stack:
        node = stack.pop()
        if node in pending:
            pending[node] += 1
        else:
            pending[node] = 1
            stack.extend(node.parents)

    cts: dict[Node, Any] = {}
    for node, ct in outputs:
        _accumulate(cts, node, ct)
        pending[node] -= 1
    ready = [node for node in dict.fromkeys(n for n, _ in outputs) if pending[node] == 0]
    wanted = set(inputs)
    while ready:
        node = ready.pop()
        parents = node.parents
        if not parents:  # an input, or a constant-free leaf: nothing to push
            continue
        ct = cts[node] if node in wanted else cts.pop(node)
        for parent, pullback in zip(parents, node.pullbacks, strict=True):
            _accumulate(cts, parent, pullback(ct))
            count = pending[parent] - 1
            pending[parent] = count
            if count == 0:
                ready.append(parent)
    return [cts.get(node) for node in inputs]


def _accumulate(cts: dict[Node, Any], node: Node, ct: Any) -> None:
    previous = cts.get(node)
    if type(ct) is Slot:  # into the node of a multiple-results primitive: a list, None = 0
        if previous is None:
            previous = cts[node] = [None] * ct.n
        held = previous[ct.k]
        previous[ct.k] = ct.ct if held is None else held + ct.ct
    elif previous is None:
        cts[node] = ct
    else:
        cts[node] = previous + ct
