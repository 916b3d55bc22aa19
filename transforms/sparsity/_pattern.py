"""Sparsity patterns: which inputs each element of a value depends on (first order), and which
pairs of inputs interact in it (second order).

A traced value of ``m`` elements, in a detection over ``n`` inputs, carries

- ``g``: a boolean ``scipy.sparse.csr_array`` of shape ``(m, n)``; row ``k`` is the set of
  inputs that element ``k`` (row-major) depends on: the structure of its gradient;
- ``h``: ``None`` in a first-order detection; otherwise a boolean ``csr_array`` of shape
  ``(m, n * n)``, row ``k`` holding the pairs ``(i, j)`` (as ``i * n + j``, both orders) whose
  second derivative of element ``k`` may be non-zero: the structure of its Hessian.

Rules combine patterns with three operations: a *linear map* ``S`` (a boolean ``out x in``
matrix saying which operand elements feed which output element: ``g' = S g``, ``h' = S h``),
*unions*, and *cross* terms (a product ``a b`` adds, per element, the pairs ``g_a x g_b``; a
nonlinear ``f(a)`` adds ``g_a x g_a``). SciPy is an optional dependency (the ``scipy`` extra),
imported when a detection runs, never at import time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

__all__ = [
    "Pattern",
    "scipy_sparse",
    "linear_map",
    "union",
    "cross",
    "broadcast",
    "gather",
    "h_apply",
    "h_union",
]


def scipy_sparse() -> ModuleType:
    """``scipy.sparse``, or an ImportError that names the extra to install."""
    try:
        import scipy.sparse
    except ImportError as e:
        raise ImportError(
            "sparsity detection and sparse Jacobians/Hessians need SciPy (their results are "
            "scipy.sparse arrays): pip install 'transforms[scipy]'"
        ) from e
    return scipy.sparse


class Pattern:
    """The first-order (``g``) and, in a second-order detection, the second-order (``h``)
    dependency structure of a value's elements (see the module docstring)."""

    __slots__ = ("g", "h", "n")

    def __init__(self, g: Any, h: Any, n: int) -> None:
        self.g = g
        self.h = h
        self.n = n

    @property
    def size(self) -> int:
        return int(self.g.shape[0])

    def apply(self, s: Any) -> Pattern:
        """The pattern of ``S @ value`` for a boolean linear map ``S`` (out x self.size)."""
        return Pattern(s @ self.g, None if self.h is None else h_apply(s, self.h), self.n)

    def with_h(self, h: Any) -> Pattern:
        return Pattern(self.g, h, self.n)


def empty(m: int, n: int, second_order: bool) -> Pattern:
    """The pattern of a constant of ``m`` elements."""
    sparse = scipy_sparse()
    g = sparse.csr_array((m, n), dtype=bool)
    return Pattern(g, sparse.csr_array((m, n * n), dtype=bool) if second_order else None, n)


def identity(shape: tuple[int, ...], offset: int, n: int, second_order: bool) -> Pattern:
    """The pattern of the inputs ``offset .. offset + size`` themselves."""
    sparse = scipy_sparse()
    m = math.prod(shape)
    rows = np.arange(m)
    g = sparse.csr_array((np.ones(m, bool), (rows, rows + offset)), shape=(m, n))
    return Pattern(g, sparse.csr_array((m, n * n), dtype=bool) if second_order else None, n)


def linear_map(rows: Any, cols: Any, shape: tuple[int, int]) -> Any:
    """The boolean ``csr_array`` with ones at ``(rows[k], cols[k])`` (repeats are one entry);
    entries with a negative column (no source) are dropped."""
    rows = np.asarray(rows, dtype=np.int64).ravel()
    cols = np.asarray(cols, dtype=np.int64).ravel()
    keep = cols >= 0
    if not keep.all():
        rows, cols = rows[keep], cols[keep]
    data = np.ones(rows.size, dtype=bool)
    return scipy_sparse().csr_array((data, (rows, cols)), shape=shape)


def gather(p: Pattern, src: Any) -> Pattern:
    """The pattern of ``value.ravel()[src]``: output element ``k`` is a copy of element
    ``src[k]`` (none where ``src[k] < 0``)."""
    src = np.asarray(src, dtype=np.int64).ravel()
    if src.size == p.size and np.array_equal(src, np.arange(src.size)):
        return p
    return p.apply(linear_map(np.arange(src.size), src, (src.size, p.size)))


def broadcast(p: Pattern, shape: tuple[int, ...], out_shape: tuple[int, ...]) -> Pattern:
    """The pattern of ``np.broadcast_to(value, out_shape)`` for a value of ``shape``."""
    if shape == out_shape:
        return p
    src = np.broadcast_to(np.arange(math.prod(shape)).reshape(shape), out_shape)
    return gather(p, src)


def union(patterns: Sequence[Pattern]) -> Pattern:
    """Element by element, the union of patterns of the same size."""
    first = patterns[0]
    g, h = first.g, first.h
    for p in patterns[1:]:
        g = g + p.g
        if h is not None and p.h is not None:
            h = h_union(h, p.h)
    return Pattern(g, h, first.n)


def cross(a: Any, b: Any, n: int) -> Any:
    """Row by row, the pairs ``a[k] x b[k]`` and ``b[k] x a[k]`` as an ``(m, n * n)`` boolean
    ``csr_array``: the second-order terms of a product of the two rows' values."""
    m = a.shape[0]
    la, lb = np.diff(a.indptr), np.diff(b.indptr)
    counts = la * lb
    total = int(counts.sum())
    sparse = scipy_sparse()
    if total == 0:
        return sparse.csr_array((m, n * n), dtype=bool)
    rows = np.repeat(np.arange(m), counts)
    t = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    width = lb[rows]
    ca = a.indices[a.indptr[rows] + t // width].astype(np.int64)
    cb = b.indices[b.indptr[rows] + t % width].astype(np.int64)
    all_rows = np.concatenate([rows, rows])
    cols = np.concatenate([ca * n + cb, cb * n + ca])
    return _from_entries(all_rows, cols, (m, n * n))


# Second-order rows have n * n columns: SciPy's sparse products and general sums allocate work
# arrays of the column count, so these two operations on them are written with sorting.
def _from_entries(rows: Any, keys: Any, shape: tuple[int, int]) -> Any:
    """The canonical boolean csr_array with ones at ``(rows[k], keys[k])``."""
    width = shape[1]
    combined = np.asarray(rows, dtype=np.int64) * width + keys
    combined.sort()
    if combined.size:
        combined = combined[np.concatenate(([True], combined[1:] != combined[:-1]))]
    rows, keys = np.divmod(combined, width)
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    out = scipy_sparse().csr_array((np.ones(keys.size, dtype=bool), keys, indptr), shape=shape)
    out.has_canonical_format = True
    return out


def _entries(h: Any) -> tuple[Any, Any]:
    rows = np.repeat(np.arange(h.shape[0], dtype=np.int64), np.diff(h.indptr))
    return rows, h.indices.astype(np.int64)


def h_apply(s: Any, h: Any) -> Any:
    """``s @ h`` for a boolean linear map ``s`` (csr) and second-order rows ``h``."""
    s = s.tocsr()
    out_rows = np.repeat(np.arange(s.shape[0], dtype=np.int64), np.diff(s.indptr))
    sources = s.indices.astype(np.int64)
    counts = np.diff(h.indptr)[sources]
    total = int(counts.sum())
    starts = np.repeat(h.indptr[sources].astype(np.int64) - (np.cumsum(counts) - counts), counts)
    keys = h.indices[starts + np.arange(total)].astype(np.int64)
    return _from_entries(np.repeat(out_rows, counts), keys, (s.shape[0], h.shape[1]))


def h_union(a: Any, b: Any) -> Any:
    """Row by row, the union of two second-order structures."""
    (ra, ka), (rb, kb) = _entries(a), _entries(b)
    return _from_entries(np.concatenate([ra, rb]), np.concatenate([ka, kb]), a.shape)


def nonlinear(p: Pattern) -> Pattern:
    """The pattern of ``f(value)`` for a nonlinear elementwise ``f``: each element's own
    pairs are added to its second-order structure."""
    if p.h is None:
        return p
    return p.with_h(h_union(p.h, cross(p.g, p.g, p.n)))


def dense(patterns: Sequence[Pattern], m: int, nonlinear_: bool) -> Pattern:
    """Every one of ``m`` output elements depends on every element of every pattern (linear
    algebra, where the structure is dense): one row, repeated."""
    sparse = scipy_sparse()
    n = patterns[0].n
    ones = np.ones((1, patterns[0].size), dtype=bool)
    g = sparse.csr_array(ones) @ patterns[0].g
    h = None if patterns[0].h is None else h_apply(sparse.csr_array(ones), patterns[0].h)
    for p in patterns[1:]:
        row = sparse.csr_array(np.ones((1, p.size), dtype=bool))
        g = g + row @ p.g
        if h is not None and p.h is not None:
            h = h_union(h, h_apply(row, p.h))
    if h is not None and nonlinear_:
        h = h_union(h, cross(g, g, n))
    repeat = sparse.csr_array(np.ones((m, 1), dtype=bool))
    return Pattern(repeat @ g, None if h is None else h_apply(repeat, h), n)
