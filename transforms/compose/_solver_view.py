"""What a user's solver sees (``custom_root``, ``custom_linear_solve``): every live transform
frozen, and one example at a time of the ``vmap``s its problem is batched by.

The solver runs on plain values: the result's derivatives come from the implicit function
theorem, applied outside it. Inside, the transforms live at the call are frozen
(``core.frozen``): the function being solved still closes over their tracers, but computes
on the values they stand for, and a transform the solver opens itself (Newton's method with
``grad(f)`` or ``jacfwd(f)``) differentiates that function for real, with the closed-over
values as constants. A ``vmap`` whose batch the problem depends on is frozen at one example:
the solver runs once per example (its convergence loop needs no batching) and the results
are stacked back into a batched value (``stack``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from transforms.batching import BatchTrace, BatchTracer
from transforms.core import Trace, Tracer, current_traces, frozen, thawed
from transforms.core.tree_util import tree_map

__all__ = ["SolverView", "plain"]


def plain(value: Any) -> np.ndarray[Any, Any]:
    """The plain array a value stands for in the solver's view (every live trace frozen)."""
    return np.asarray(thawed(value))


def _batched_by(values: Sequence[Any]) -> set[BatchTrace]:
    """The ``vmap``s whose batch the values of ``values`` depend on: the batch traces met
    down their primal chains (a batched tangent, as in ``jacfwd``, is not a batched value)."""
    found: set[BatchTrace] = set()
    for value in values:
        while isinstance(value, Tracer):
            if isinstance(value, BatchTracer):
                found.add(value._trace)  # type: ignore[arg-type]
            value = value.primal
    return found


def _primal(tracer: Any) -> Any:
    return tracer.primal


class SolverView:
    """The live transforms at a solver's call, and the batch its problem has.

    ``values`` are what the problem is known to depend on (the initial guess and the
    function's value there, the right-hand side and the operator's value): the ``vmap``s
    found there are the batch. Iterate for each example's view (a context manager each).
    """

    def __init__(self, name: str, values: Sequence[Any]) -> None:
        self.name = name
        self.live: list[Trace[Any]] = [t for t in current_traces() if t.alive]
        batch = _batched_by(values)
        self.batch: list[BatchTrace] = [t for t in self.live if t in batch]  # lowest first
        self.sizes = tuple(t.axis_size for t in self.batch)

    @property
    def batched(self) -> bool:
        return bool(self.batch)

    def __iter__(self) -> Iterator[frozen]:
        """Per example (one only when nothing is batched), the view of that example."""
        for index in itertools.product(*(range(n) for n in self.sizes)):
            at = dict(zip(self.batch, index, strict=True))
            yield frozen({t: self._projection(t, at) for t in self.live})

    def _projection(self, trace: Trace[Any], at: dict[BatchTrace, int]) -> Callable[[Any], Any]:
        if not isinstance(trace, BatchTrace):
            return _primal
        if trace not in at:
            return self._unforeseen
        i = at[trace]
        return lambda t: np.take(np.asarray(thawed(t.value)), i, axis=t.bdim)

    def _unforeseen(self, tracer: Any) -> Any:
        raise NotImplementedError(
            f"{self.name}: the solver met a value batched by a vmap that the problem did not "
            "depend on where it was inspected (the initial guess, the function's value there: "
            "the right-hand side, the operator's value); vmap over that value outside "
            f"{self.name} instead"
        )

    def stack(self, parts: Sequence[Any]) -> Any:
        """One value per example (in iteration order) as one value batched like the problem
        (a batch axis first at every ``vmap``), the plain value itself if nothing is."""
        if not self.batch:
            return parts[0]
        arrays = [np.asarray(p) for p in parts]
        value: Any = np.stack(arrays).reshape(self.sizes + arrays[0].shape)
        for trace in self.batch:  # the lowest vmap's axis first: its tracer is innermost
            value = BatchTracer(trace, value, 0)
        return value

    def stack_tree(self, parts: Sequence[Any]) -> Any:
        """``stack`` of each leaf of a pytree given per example (a solver's ``aux``)."""
        if not self.batch:
            return parts[0]
        return tree_map(self._stack_leaf, parts[0], *parts[1:])

    def _stack_leaf(self, *leaves: Any) -> Any:
        if all(np.asarray(x).dtype.kind in "biufc" for x in leaves):
            return self.stack(leaves)
        if all(x == leaves[0] for x in leaves):
            return leaves[0]  # not an array (a message, a status): the same for every example
        raise NotImplementedError(
            f"{self.name}: under vmap the solver's aux differs per example and is not an "
            f"array: {leaves[0]!r}, {leaves[1]!r}, ...; return numbers or arrays as aux"
        )
