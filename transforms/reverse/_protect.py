"""Protection of user-owned arrays that the backward pass may read later.

A VJP closure can capture a plain ndarray the user owns (a constant, an input) and read it
when the pullback runs, possibly long after; mutating the array in place meanwhile (through
it, another view of its memory, or the buffer under it) would give a silently wrong
derivative (autograd returns [5, 5, 5] for [1, 1, 1]). So reverse mode reads a read-only
copy, taken once per array per trace: copying costs one pass over the array, the price of
never being silently wrong (benchmarks/memory.py measures it).

A closed call (``grad``, ``value_and_grad``, ``hvp``, ``jacrev``, ``hessian``: the backward
pass runs before it returns) may instead *borrow* an array (``Loan``): an input held only by
the user's argument tree, or an array the function reads by name (a closure cell, a module
global) that nothing else holds. It reads it in place, read-only until the call returns.
That is exact only when no writeable reference to its memory exists outside our own, which
the reference count proves (see ``Loan.borrow``); otherwise the array is copied. A large
constant closed over by a loss (a data matrix) then costs no copy per call, in time or
memory; the price is that writing into it from inside the function raises (NumPy's
read-only error) instead of being allowed, which the copy would have made harmless.

The copies must not cost more than that: a fresh copy of a large array must not fault its
pages in on every call, which ``transforms.core._memory.prime_allocator`` prevents (it runs
when the first transform of the process starts, before any copy).
"""

from __future__ import annotations

import sys
import threading
from typing import Any, TypeVar

import numpy as np

from transforms.core.tree_util import tree_flatten

__all__ = ["Guard", "Loan", "closed_over"]

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
        copy = array.copy(order="K")  # keeps an ndarray subclass, and the layout of a
        # contiguous array (a borrowed one's: kernels may round differently on another)
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
# temporary, so no other call may trust them as read-only arrays (it copies them). Lending and
# giving back happen under ``_LENDING``: two threads deciding about one array at once could
# otherwise each undo the other's flag.
_LENT: dict[int, np.ndarray[Any, Any]] = {}
_LENDING = threading.Lock()


def _references(leaves: list[Any], i: int) -> int:
    """The reference count of ``leaves[i]``, read through this one call (see ``_SOLE``)."""
    return sys.getrefcount(leaves[i])


def _sole_count() -> int:
    """What ``_references`` reads for an array held by one container slot (a dict or list
    entry, a closure cell) and the list of leaves alone: measured, not assumed, as the
    interpreter's own references vary."""
    holder = {"leaf": np.empty(1)}
    leaves = [holder["leaf"]]
    return _references(leaves, 0)


_SOLE = _sole_count()


def _writeable_owner(array: np.ndarray[Any, Any]) -> bool:
    """Whether ``array`` owns its memory and may be written (a view's base could be written
    through another view; a read-only array is the user's, trusted by ``Guard`` as it is)."""
    flags = array.flags
    return bool(flags.writeable and flags.owndata and array.base is None)


def closed_over(fun: object) -> list[np.ndarray[Any, Any]]:
    """The ndarrays ``fun`` reads by name: the module globals its own code names and its
    closure cells' (not its callees': an array only they read is copied as before).
    Candidates for a ``Loan``; whether each is alone is for ``Loan.borrow`` to prove."""
    try:
        names = fun.__code__.co_names  # type: ignore[attr-defined]
        module = fun.__globals__  # type: ignore[attr-defined]
        cells = fun.__closure__  # type: ignore[attr-defined]
    except AttributeError:  # not a Python function (a builtin, a partial, a callable object)
        return []
    found = []
    for name in names:  # (loops, not comprehensions: this runs on every closed call)
        value = module.get(name)
        if type(value) is np.ndarray:
            found.append(value)
    if cells:
        for cell in cells:
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell (a name assigned later in the enclosing scope)
                continue
            if type(value) is np.ndarray:
                found.append(value)
    return found


class Loan:
    """Arrays that one closed call reads in place, read-only while it runs.

    ``grad(f)(params)`` copies each array a pullback captures so that a write into it before
    the backward pass cannot change the gradient. An array may be borrowed instead (no copy)
    when the only references to it are one slot of the user's (an entry of the argument
    tree: a dict, list, tuple or node; a closure cell or module global the function names)
    and ours: then every writer must go through a reference to the array itself (a view, a
    memoryview, a ``frombuffer`` array made before the call would each hold a reference, and
    count), so its read-only flag refuses every write until the call returns; views made
    meanwhile are read-only too. A bare array argument is never borrowed: the caller's own
    names for it cannot be counted. Writes through raw pointers (``ctypes`` addresses,
    ``__array_interface__``) are outside any protection.

    Used as a context manager around the forward and the backward pass: leaving it, by a
    return or an exception, makes the arrays writeable again.

    Args:
        closed_over: the arrays the function reads by name (``closed_over(fun)``).
        inputs: whether the inputs may be borrowed too (not when every one is bare).
    """

    __slots__ = ("_arrays", "_closed_over", "_inputs")

    def __init__(self, closed_over: list[np.ndarray[Any, Any]], *, inputs: bool) -> None:
        self._arrays: list[np.ndarray[Any, Any]] = []
        self._closed_over = closed_over
        self._inputs = inputs

    def __enter__(self) -> Loan:
        return self

    def __exit__(self, *exc_info: object) -> None:
        with _LENDING:
            for array in self._arrays:
                array.flags.writeable = True
                del _LENT[id(array)]  # after the flag: a concurrent call never trusts it
        self._arrays.clear()

    def borrow(self, leaves: list[Any], guard: Guard) -> None:
        """Borrow each input leaf and closed-over array it is exact to borrow (see the
        class), for ``guard``'s trace.

        ``leaves`` must be the only list of them that holds references at this point."""
        with _LENDING:
            if self._inputs:
                self._lend(leaves, guard)
            if self._closed_over:
                self._lend(self._closed_over, guard)
                self._closed_over = []  # its references would outlive the proof

    def _lend(self, arrays: list[Any], guard: Guard) -> None:
        for i in range(len(arrays)):  # by index: a loop variable would hold a reference
            if type(arrays[i]) is not np.ndarray or id(arrays[i]) in _LENT:
                continue
            if not _writeable_owner(arrays[i]):
                continue
            _LENT[id(arrays[i])] = arrays[i]  # before the flag: see ``Guard.protect``
            arrays[i].flags.writeable = False  # first: a view made from now on is read-only
            if _references(arrays, i) == _SOLE + 1:  # (the other reference: ``_LENT``'s)
                array = arrays[i]
                self._arrays.append(array)
                guard.keep(array)
            else:  # another reference, which may write: give it back, copy it instead
                arrays[i].flags.writeable = True
                del _LENT[id(arrays[i])]

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
