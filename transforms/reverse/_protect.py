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


def _same_bytes(array: np.ndarray[Any, Any], copy: np.ndarray[Any, Any]) -> bool:
    """Whether ``array`` still holds exactly ``copy``'s bits (a pass, no allocation of its
    size): compared as unsigned integers, so that -0.0 differs from 0.0 and a NaN equals
    itself. Dtypes with no unsigned integer of their size count as changed (copied again)."""
    if array.shape != copy.shape or array.dtype != copy.dtype:
        return False
    bits = _BITS.get(array.dtype.itemsize)
    if bits is None or array.dtype.hasobject:
        return False
    return bool(np.array_equal(array.view(bits), copy.view(bits)))


_BITS: dict[int, np.dtype[np.unsignedinteger[Any]]] = {
    1: np.dtype(np.uint8),
    2: np.dtype(np.uint16),
    4: np.dtype(np.uint32),
    8: np.dtype(np.uint64),
}


class Guard:
    """The copies one trace took, so that each array is copied at most once while it is
    not written to."""

    __slots__ = ("_copies",)

    def __init__(self) -> None:
        self._copies: dict[int, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = {}

    def protect(self, array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """A read-only copy of ``array``, safe to read in a later backward pass."""
        kept = self._copies.get(id(array))  # first: an array is usually seen many times
        if kept is not None and kept[0] is array and _same_bytes(array, kept[1]):
            return kept[1]  # (the function may have written into it since its last use)
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
