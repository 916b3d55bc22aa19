"""Colorings of sparsity patterns, and the index arithmetic that decompresses products.

- Columns (forward mode): two columns that share a row get different colors (a distance-2
  coloring of the column intersection graph), so ``J @ S``, with ``S`` the 0/1 seed matrix of
  the colors, holds every entry ``J[i, j]`` alone at ``(i, color[j])``. Rows (reverse mode):
  the same on ``J.T``. Greedy in the natural order: a banded matrix of bandwidth ``w`` (``w``
  non-zeros per row, consecutive) takes ``w`` colors.
- Symmetric (Hessians): a star coloring, built greedily with the exact condition the direct
  recovery needs (Coleman and Moré's symmetric structural orthogonality): for every non-zero
  ``H[i, j]``, either ``j`` is the only column of its color in row ``i`` (read it at
  ``(H S)[i, color[j]]``) or ``i`` is the only one of its color in row ``j`` (read it at
  ``(H S)[j, color[i]]``). A tridiagonal Hessian takes 3 colors, an arrowhead 2.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from transforms.sparsity import scipy_sparse

__all__ = ["column_coloring", "star_coloring", "column_positions", "star_positions"]

IntArray = np.ndarray[Any, np.dtype[np.int64]]


def column_coloring(pattern: Any) -> IntArray:
    """Colors of the columns of a boolean sparse ``pattern`` such that no two columns of one
    color have a non-zero in the same row."""
    csr = scipy_sparse().csr_array(pattern, dtype=bool)
    conflicts = (csr.T @ csr).tocsr()  # columns sharing a row (SciPy, in C)
    return _greedy(conflicts.indptr.tolist(), conflicts.indices.tolist(), csr.shape[1])


def _greedy(ptr: list[int], idx: list[int], n: int) -> IntArray:
    """The smallest color not taken by an earlier neighbour, vertex by vertex."""
    color = [-1] * n
    mark = [-1] * (n + 1)
    for j in range(n):
        for k in idx[ptr[j] : ptr[j + 1]]:
            c = color[k]
            if c >= 0:
                mark[c] = j
        c = 0
        while mark[c] == j:
            c += 1
        color[j] = c
    return np.asarray(color, dtype=np.int64)


def column_positions(pattern: Any, colors: IntArray) -> tuple[IntArray, IntArray]:
    """Where each stored entry of the csr ``pattern`` is read in the compressed ``J @ S``:
    ``(row, color of its column)``, in the csr order of ``pattern``."""
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    return rows.astype(np.int64), colors[pattern.indices]


def star_coloring(pattern: Any) -> IntArray:
    """A symmetric coloring of the square boolean ``pattern`` (a Hessian's) from which
    ``H S`` recovers every entry directly (see the module docstring)."""
    sym = scipy_sparse().csr_array(pattern + pattern.T, dtype=bool)
    sym.setdiag(False)
    sym.eliminate_zeros()
    n = sym.shape[0]
    ptr, idx = sym.indptr.tolist(), sym.indices.tolist()
    neighbours = [idx[ptr[i] : ptr[i + 1]] for i in range(n)]
    color = [-1] * n
    # count[i][c]: the colored vertices of color c among i and its neighbours
    count: list[dict[int, int]] = [{} for _ in range(n)]
    for v in range(n):
        near = neighbours[v]
        taken = {color[w] for w in near if color[w] >= 0}
        c = 0
        while c in taken or not _acceptable(v, c, near, neighbours, color, count):
            c += 1
        color[v] = c
        for i in (v, *near):
            count[i][c] = count[i].get(c, 0) + 1
    return np.asarray(color, dtype=np.int64)


def _acceptable(
    v: int,
    c: int,
    near: list[int],
    neighbours: list[list[int]],
    color: list[int],
    count: list[dict[int, int]],
) -> bool:
    """Whether coloring ``v`` with ``c`` keeps every entry between colored vertices directly
    recoverable. Only the counts of color ``c`` in the rows of ``v`` and its neighbours
    change, so only the entries ``(i, j)`` with ``i`` one of those rows and ``j`` of color
    ``c`` (``v`` included) need checking; row ``v`` itself has no other vertex of color ``c``
    (no neighbour of ``v`` has it), and an uncolored ``i`` is checked when it is colored."""
    for i in near:
        if count[i].get(c, 0) == 0:
            continue  # v alone of its color in row i: every (i, j) of color c reads there
        ci = color[i]
        if ci < 0:
            continue
        if count[v].get(ci, 0) != 1:  # (i, v): i must then be alone of its color in row v
            return False
        for j in neighbours[i]:
            if color[j] == c and count[j].get(ci, 0) != 1:
                return False
    return True


def star_positions(pattern: Any, colors: IntArray) -> tuple[IntArray, IntArray]:
    """Where each stored entry ``(i, j)`` of the csr ``pattern`` is read in ``(H S)``:
    ``(i, color[j])`` if ``j`` is alone of its color in row ``i``, else ``(j, color[i])``."""
    n = pattern.shape[0]
    ncolors = int(colors.max()) + 1 if n else 0
    # each row's members of each color, among its neighbours and itself (the diagonal is
    # always counted, as the coloring counts it: a sound over-count)
    closed = (pattern + pattern.T + scipy_sparse().eye_array(n, dtype=bool, format="csr")).tocsr()
    closed_rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(closed.indptr))
    members = np.bincount(closed_rows * ncolors + colors[closed.indices], minlength=n * ncolors)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(pattern.indptr))
    cols = pattern.indices.astype(np.int64)
    alone = members[rows * ncolors + colors[cols]] == 1
    return np.where(alone, rows, cols), np.where(alone, colors[cols], colors[rows])
