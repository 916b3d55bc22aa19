"""Protection of user-owned arrays that the backward pass may read later.

A VJP closure can capture a plain ndarray the user owns (a constant, an input) and read it
when the pullback runs, possibly long after; mutating the array in place meanwhile (through
it, another view of its memory, or the buffer under it) would give a silently wrong
derivative (autograd returns [5, 5, 5] for [1, 1, 1]). So reverse mode reads a read-only
copy, taken once per array per trace: copying costs one pass over the array, the price of
never being silently wrong (benchmarks/memory.py measures it).

A closed call (``grad``, ``value_and_grad``: the backward pass runs before it returns) may
instead *borrow* an input array (``Loan``): read it in place, read-only until the call
returns. That is exact only when no writeable reference to its memory exists outside our
own, which the reference count proves (see ``Loan.borrow``); otherwise the input is copied.

The copies must not cost more than that: a fresh copy of a large array must not fault its
pages in on every call, which ``transforms.core._memory.prime_allocator`` prevents (it runs
when the first transform of the process starts, before any copy).
"""

from __future__ import annotations

import sys
from typing import Any, TypeVar

import numpy as np

from transforms.core.tree_util import tree_flatten

__all__ = ["Guard", "Loan"]

TreeT = TypeVar("TreeT")


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
        if kept is not None and kept[0] is array:
            if kept[1] is array:
                return array  # borrowed by this call (``Loan``): read-only until it returns
            if _same_bytes(array, kept[1]):
                return kept[1]  # (the function may have written into it since its last use)
        flags = array.flags
        if not flags.writeable and flags.owndata and array.base is None and id(array) not in _LENT:
            return array  # an array nobody can write to (our copies included)
        copy = array.copy()  # keeps an ndarray subclass
        copy.flags.writeable = False
        self._copies[id(array)] = (array, copy)  # holding `array` keeps its id unique
        return copy

    def keep(self, array: np.ndarray[Any, Any]) -> None:
        """Read ``array`` in place from now on: a ``Loan`` holds it read-only."""
        self._copies[id(array)] = (array, array)

    def release(self) -> None:
        """Drop the copies' bookkeeping (the closures keep what they use)."""
        self._copies.clear()


# The arrays some live ``Loan`` holds read-only, by id: their read-only flag is ours and
# temporary, so no other call may trust them as read-only arrays (it copies them).
_LENT: dict[int, np.ndarray[Any, Any]] = {}


def _references(leaves: list[Any], i: int) -> int:
    """The reference count of ``leaves[i]``, read through this one call (see ``_SOLE``)."""
    return sys.getrefcount(leaves[i])


def _sole_count() -> int:
    """What ``_references`` reads for an array held by one container slot and the list of
    leaves alone: measured, not assumed, as the interpreter's own references vary."""
    holder = {"leaf": np.empty(1)}
    leaves = [holder["leaf"]]
    return _references(leaves, 0)


_SOLE = _sole_count()


class Loan:
    """Input arrays that one closed call reads in place, read-only while it runs.

    ``grad(f)(params)`` copies each input array so that a write into it before the backward
    pass cannot change the gradient. An input may be borrowed instead (no copy) when the
    only references to it are one slot of the user's argument tree (a dict, list, tuple or
    node) and our list of leaves: then every writer must go through a reference to the
    array itself (a view, a memoryview, a ``frombuffer`` array made before the call would
    each hold a reference, and count), so its read-only flag refuses every write until the
    call returns; views made meanwhile are read-only too. A bare array argument is never
    borrowed: the caller's own names for it cannot be counted. Writes through raw pointers
    (``ctypes`` addresses, ``__array_interface__``) are outside any protection.

    Used as a context manager around the forward and the backward pass: leaving it, by a
    return or an exception, makes the arrays writeable again.
    """

    __slots__ = ("_arrays",)

    def __init__(self) -> None:
        self._arrays: list[np.ndarray[Any, Any]] = []

    def __enter__(self) -> Loan:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for array in self._arrays:
            array.flags.writeable = True
            del _LENT[id(array)]  # after the flag: a concurrent call never trusts it
        self._arrays.clear()

    def borrow(self, leaves: list[Any], guard: Guard) -> None:
        """Borrow each leaf it is exact to borrow (see the class), for ``guard``'s trace.

        ``leaves`` must be the only list of them that holds references at this point."""
        for i in range(len(leaves)):  # by index: a loop variable would hold a reference
            if type(leaves[i]) is np.ndarray and _references(leaves, i) == _SOLE:
                array = leaves[i]
                flags = array.flags
                if flags.writeable and flags.owndata and array.base is None:
                    _LENT[id(array)] = array  # before the flag: see ``Guard.protect``
                    flags.writeable = False
                    self._arrays.append(array)
                    guard.keep(array)

    def settle(self, tree: TreeT) -> TreeT:
        """``tree`` (the call's results) with any array that shares memory with a borrowed
        one copied: a gradient may be an input itself (``1 * y`` is ``y``), and the user's
        results must not alias the user's inputs."""
        if not self._arrays:
            return tree
        leaves, treedef = tree_flatten(tree)
        ids = {id(a) for a in self._arrays}
        return treedef.unflatten(self._settled(leaf, ids) for leaf in leaves)

    def _settled(self, leaf: Any, ids: set[int]) -> Any:
        if type(leaf) is not np.ndarray:
            return leaf
        if leaf.base is None:  # it owns its memory: an alias only if it is a borrowed array
            return leaf.copy() if id(leaf) in ids else leaf
        return leaf.copy() if any(np.may_share_memory(leaf, a) for a in self._arrays) else leaf
