"""Protection of user-owned arrays that the backward pass may read later.

A VJP closure can capture a plain ndarray the user owns (a constant, an input) and read it
when the pullback runs, possibly long after; mutating the array in place meanwhile (through
it, another view of its memory, or the buffer under it) would give a silently wrong
derivative (autograd returns [5, 5, 5] for [1, 1, 1]). So reverse mode reads a read-only
copy, taken once per array per trace: copying costs one pass over the array, the price of
never being silently wrong (benchmarks/memory.py measures it).

The copies must not cost more than that: a fresh copy of a large array must not fault its
pages in on every call, which ``transforms.core._memory.prime_allocator`` prevents (it runs
when the first transform of the process starts, before any copy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Guard"]


class Guard:
    """The copies one trace took, so that each array is copied at most once."""

    __slots__ = ("_copies",)

    def __init__(self) -> None:
        self._copies: dict[int, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = {}

    def protect(self, array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """A read-only copy of ``array``, safe to read in a later backward pass."""
        kept = self._copies.get(id(array))  # first: an array is usually seen many times
        if kept is not None and kept[0] is array:
            return kept[1]
        flags = array.flags
        if not flags.writeable and flags.owndata and array.base is None:
            return array  # an array nobody can write to (our copies included)
        copy = array.copy()  # keeps an ndarray subclass
        copy.flags.writeable = False
        self._copies[id(array)] = (array, copy)  # holding `array` keeps its id unique
        return copy

    def release(self) -> None:
        """Drop the copies' bookkeeping (the closures keep what they use)."""
        self._copies.clear()
