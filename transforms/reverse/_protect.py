"""Protection of user-owned arrays that the backward pass may read later.

A VJP closure can capture a plain ndarray the user owns (a constant, an input) and read it
when the pullback runs, possibly long after; mutating the array in place meanwhile (through
it, another view of its memory, or the buffer under it) would give a silently wrong
derivative (autograd returns [5, 5, 5] for [1, 1, 1]). So reverse mode reads a read-only
copy, taken once per array per trace: copying costs one pass over the array, the price of
never being silently wrong (benchmarks/memory.py measures it).

The copies must not cost more than that. glibc's malloc hands blocks above an adaptive
threshold (128 KiB at start) back to the system when they are freed, so a fresh copy of a
large array, and then every large intermediate, faults its pages in again on each call: on
the MLP benchmark (3 MB of weights and data) the faults cost as much as the forward pass.
Freeing one block just under glibc's cap (32 MiB) raises the threshold for the process, as
any NumPy program that frees a 32 MB array does; ``_prime_allocator`` does that once, before
the first large copy. Elsewhere it is one harmless allocation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Guard"]

_LARGE = 1 << 18  # bytes: a copy this large is where page faults start to matter
_primed = False


def _prime_allocator() -> None:
    global _primed
    _primed = True
    block = np.empty((31 << 20) // 8)  # untouched: mapped and unmapped, never faulted in
    del block


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
        if not _primed and array.nbytes >= _LARGE:
            _prime_allocator()
        copy = array.copy()  # keeps an ndarray subclass
        copy.flags.writeable = False
        self._copies[id(array)] = (array, copy)  # holding `array` keeps its id unique
        return copy

    def release(self) -> None:
        """Drop the copies' bookkeeping (the closures keep what they use)."""
        self._copies.clear()
