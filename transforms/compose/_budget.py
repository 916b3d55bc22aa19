"""``memory_budget=``: pushing a Jacobian's basis in chunks sized to a number of bytes.

A Jacobian built by ``vmap`` over a basis holds, while a chunk of ``k`` rows is pushed,
about ``k`` times one row's intermediates, plus the rows already done. Given a budget in
bytes, the first row is pushed alone under ``tracemalloc`` (NumPy reports its arrays to
it): its peak is an upper bound on one row's working memory (it includes the fixed part
of a push). The result is then preallocated (``rows x`` one row's result) and filled chunk
by chunk, each chunk as large as the budget left after the result allows; nothing is
concatenated, so no second copy of the result is made. When the rows are traced values (a
Jacobian under an outer transform) they are concatenated, as without a budget.

A reverse-mode Jacobian (``jacrev``, and ``hessian``'s outer pass) runs the forward pass
once, before the pushes, and holds its residuals through all of them: for ``hessian`` the
tape of the whole gradient computation. With a budget that pass runs under ``tracemalloc``
too, and what it leaves allocated (``retained_bytes``) is taken off the budget before the
chunks are sized. Its own transient peak cannot be chunked.
"""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

import transforms.numpy as tnp
from transforms.numpy._batching import detached
from transforms.numpy._define import dtype_of, shape_of

__all__ = ["check_chunking", "chunks", "push_rows", "retained_bytes"]

T = TypeVar("T")


def check_chunking(chunk_size: int | None, memory_budget: int | None, transform: str) -> None:
    """At most one of the two, each a positive int."""
    if chunk_size is not None and memory_budget is not None:
        raise ValueError(f"{transform}: give chunk_size or memory_budget, not both")
    if memory_budget is not None and (
        not isinstance(memory_budget, int) or isinstance(memory_budget, bool) or memory_budget < 1
    ):
        raise ValueError(
            f"{transform}: memory_budget must be a positive int (bytes), got {memory_budget!r}"
        )


def chunks(total: int, chunk_size: int | None, start: int = 0) -> list[tuple[int, int]]:
    """``(start, stop)`` pairs covering rows ``start .. total`` in steps of ``chunk_size``."""
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int or None, got {chunk_size}")
    step = total - start if chunk_size is None else chunk_size
    return [(k, min(k + step, total)) for k in range(start, total, max(step, 1))]


def _peak_bytes(run: Callable[[], T]) -> tuple[T, int]:
    """``run()`` and the peak memory it allocated, by ``tracemalloc``: started and stopped
    here, or, when the caller traces already, by resetting its peak (tracemalloc keeps one
    peak per process: a peak the caller saw before this call is forgotten, the ones during
    and after it are still recorded)."""
    if tracemalloc.is_tracing():
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        out = run()
        _, peak = tracemalloc.get_traced_memory()
        return out, max(peak - before, 0)
    tracemalloc.start()
    try:
        out = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak


def retained_bytes(run: Callable[[], T]) -> tuple[T, int]:
    """``run()`` and the memory it allocated and still holds when it returns (its result
    and what that keeps alive: a pullback's residuals), by ``tracemalloc``."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        out = run()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        if not tracing:
            tracemalloc.stop()
    return out, max(after - before, 0)


def _concat(parts: list[Any]) -> Any:
    """The chunks' rows stacked; one chunk as it is, unless it is (a view of) the shared
    identity basis (``detached``)."""
    return detached(parts[0]) if len(parts) == 1 else tnp.concatenate(parts, axis=0)


def push_rows(
    total: int,
    chunk_size: int | None,
    memory_budget: int | None,
    push: Callable[[int, int], list[Any]],
    transform: str,
    held: int = 0,
) -> list[Any] | None:
    """``push(start, stop)`` (one stacked leaf per output, rows ``start:stop`` of the basis
    on axis 0) over all ``total`` rows, chunked by ``chunk_size`` or to fit
    ``memory_budget`` less ``held`` bytes (the forward pass's, held through the pushes);
    the leaves stacked over all rows (``None`` when ``total`` is 0)."""
    if total == 0:
        return None
    if memory_budget is None:
        parts = [push(a, b) for a, b in chunks(total, chunk_size)]
        return [_concat([p[i] for p in parts]) for i in range(len(parts[0]))]
    first, probe = _peak_bytes(lambda: push(0, 1))
    result = total * sum(math.prod(shape_of(leaf)) * dtype_of(leaf).itemsize for leaf in first)
    free = memory_budget - held - result
    plain = all(type(leaf) is np.ndarray for leaf in first)
    if plain and free < probe:
        forward = f", the forward pass's residuals ({held} bytes)" if held else ""
        raise ValueError(
            f"{transform}: memory_budget={memory_budget} bytes cannot hold the Jacobian "
            f"({result} bytes){forward} and one basis row's work ({probe} bytes); give at "
            f"least {held + result + probe}"
        )
    step = max(1, free // max(probe, 1))
    if not plain:  # traced rows: concatenated at the end, as without a budget
        parts = [first] + [push(a, b) for a, b in chunks(total, step, start=1)]
        return [_concat([p[i] for p in parts]) for i in range(len(parts[0]))]
    out = [np.empty((total, *leaf.shape[1:]), leaf.dtype) for leaf in first]
    for o, leaf in zip(out, first, strict=True):
        o[:1] = leaf
    del first
    for a, b in chunks(total, step, start=1):
        for o, leaf in zip(out, push(a, b), strict=True):
            o[a:b] = leaf
    return out
