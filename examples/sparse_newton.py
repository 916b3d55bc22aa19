"""A 2-D nonlinear PDE solved by Newton's method with a sparse Jacobian.

The Bratu-type problem ``-laplace(u) + lam * exp(u) = f`` on the unit square, zero boundary
values, discretised by the 5-point stencil on an N x N interior grid: the residual is
ordinary NumPy-style code on the grid (slices of a padded array). ``T.sparse_jacobian``
detects its 5-point structure by tracing, colors the columns (a handful of colors, whatever
N is), and computes the whole N^2 x N^2 Jacobian with one JVP per color as a
``scipy.sparse.csr_array``; each Newton step solves with ``scipy.sparse.linalg.spsolve``.
Detection and coloring happen once: every later step reuses them.

Checked: Newton converges quadratically to a residual below 1e-10, the sparse Jacobian
equals the dense ``jacfwd`` on a small grid, and the solution matches a manufactured one.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import scipy.sparse.linalg
from _cli import parse_args

import transforms as T
import transforms.numpy as tnp

LAM = 1.0


def manufactured(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The exact solution u* = sin(pi x) sin(pi y) on the interior grid, and the f it makes
    (from the *discrete* operator, so Newton must recover u* to round-off)."""
    h = 1.0 / (n + 1)
    s = np.linspace(h, 1 - h, n)
    exact = np.outer(np.sin(np.pi * s), np.sin(np.pi * s)).ravel()
    return exact, np.asarray(operator(exact, n, 0.0))


def operator(u: T.Array, n: int, f: T.Array | float) -> T.Array:
    """``-laplace(u) + lam exp(u) - f`` at the interior points (row-major, N^2 values)."""
    h2 = (1.0 / (n + 1)) ** 2
    grid = tnp.pad(tnp.reshape(u, (n, n)), 1)  # zero boundary values
    centre = grid[1:-1, 1:-1]
    laplace = grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:] - 4 * centre
    return tnp.ravel(-laplace / h2 + LAM * tnp.exp(centre)) - f


def newton(n: int, tol: float = 1e-10) -> tuple[np.ndarray, list[float], np.ndarray]:
    exact, f = manufactured(n)
    jacobian = T.sparse_jacobian(operator)  # detects and colors on the first call only
    u = np.zeros(n * n)
    norms = []
    for _ in range(20):
        r = np.asarray(operator(u, n, f))
        norms.append(float(np.linalg.norm(r, np.inf)))
        if norms[-1] < tol:
            break
        J = jacobian(u, n, f)
        u = u - scipy.sparse.linalg.spsolve(J.tocsr(), r)
    return u, norms, exact


def main() -> None:
    args = parse_args(__doc__)
    n = 24 if args.quick else 120

    # the sparse Jacobian is the dense one, on a small grid
    u0 = np.random.default_rng(0).normal(size=36)
    J = T.sparse_jacobian(operator)(u0, 6, 0.0)
    dense = np.asarray(T.jacfwd(operator)(u0, 6, 0.0))
    assert np.allclose(J.toarray(), dense, rtol=1e-12, atol=1e-9)
    assert T.jacobian_sparsity(operator)(u0, 6, 0.0).nnz == 5 * 36 - 4 * 6  # the 5-point stencil

    start = time.perf_counter()
    u, norms, exact = newton(n)
    seconds = time.perf_counter() - start
    print(f"N = {n}: {n * n} unknowns, {len(norms) - 1} Newton steps in {seconds:.2f} s")
    for k, norm in enumerate(norms):
        print(f"  step {k}: |residual|_inf = {norm:.3e}")
    assert norms[-1] < 1e-10, norms
    pairs = [(a, b) for a, b in itertools.pairwise(norms) if b > 1e-9]
    assert all(b < 10 * a * a for a, b in pairs), "quadratic convergence"
    error = float(np.max(np.abs(u - exact)))
    print(f"max |u - u*| = {error:.2e}")
    assert error < 1e-9


if __name__ == "__main__":
    main()
