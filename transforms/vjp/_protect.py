"""Protection of user-owned arrays that the backward pass may read later.

A VJP closure can capture a plain ndarray the user owns (a constant, an input) and read it
when the pullback runs, possibly long after; mutating the array in place meanwhile would
give a silently wrong derivative (autograd returns [5, 5, 5] for [1, 1, 1]). Two remedies,
by size:

- a small array (up to ``COPY_LIMIT`` bytes) is replaced by a read-only copy, once per array
  per trace: the copy costs less than the Python work around it, and the user keeps the
  freedom to reuse the buffer;
- a large array (a weight matrix) is not copied (that would double the memory traffic of a
  matrix-vector product) but made read-only, together with any writeable base it views,
  until every pullback that may read it is released: a mutation then raises NumPy's
  "assignment destination is read-only" instead of corrupting a derivative.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

__all__ = ["COPY_LIMIT", "Guard"]

COPY_LIMIT = 1 << 16  # bytes

_registry_lock = threading.Lock()
_locks: dict[int, tuple[np.ndarray[Any, Any], int]] = {}  # id -> (array, lock count)


def _lock(array: np.ndarray[Any, Any]) -> None:
    with _registry_lock:
        kept = _locks.get(id(array))
        if kept is not None and kept[0] is array:
            _locks[id(array)] = (array, kept[1] + 1)
        elif array.flags.writeable:
            array.flags.writeable = False
            _locks[id(array)] = (array, 1)


def _unlock(array: np.ndarray[Any, Any]) -> None:
    with _registry_lock:
        kept = _locks.get(id(array))
        if kept is None or kept[0] is not array:
            return
        if kept[1] > 1:
            _locks[id(array)] = (array, kept[1] - 1)
        else:
            del _locks[id(array)]
            array.flags.writeable = True


class Guard:
    """The protections one trace took; ``release`` undoes its locks (idempotent)."""

    __slots__ = ("_copies", "_locked")

    def __init__(self) -> None:
        self._copies: dict[int, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = {}
        self._locked: list[np.ndarray[Any, Any]] = []

    def protect(self, array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """``array``, or a read-only copy of it, safe to read in a later backward pass."""
        if not array.flags.writeable and array.base is None:
            return array  # nobody can write to it
        kept = self._copies.get(id(array))
        if kept is not None and kept[0] is array:
            return kept[1]
        if array.nbytes <= COPY_LIMIT:
            copy = array.copy()
            copy.flags.writeable = False
            self._copies[id(array)] = (array, copy)  # holding `array` keeps its id unique
            return copy
        self._copies[id(array)] = (array, array)
        view: Any = array
        while isinstance(view, np.ndarray):  # the array and every base it is a view of
            if view.flags.writeable:
                _lock(view)
                self._locked.append(view)
            view = view.base
        return array

    def release(self) -> None:
        locked, self._locked = self._locked, []
        for array in locked:
            _unlock(array)
