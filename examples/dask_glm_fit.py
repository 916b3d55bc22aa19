"""Fit a logistic GLM on a chunked Dask dataset with scipy.optimize and ``T.value_and_grad``.

The data ``X`` (n x d) and ``y`` are drawn by the workers of a ``dask.distributed``
``LocalCluster`` chunk by chunk (``dask.array.random``) and kept there (``persist``), never
gathered on the client but for the final check against NumPy.
``scipy.optimize.minimize(jac=True)`` asks for the loss and its gradient at every iteration;
``T.value_and_grad`` of the loss, written once with ``transforms.numpy``, returns both as
lazy Dask arrays of ONE task graph (nothing is computed while it is built), and one
``dask.compute`` per iteration runs that graph on the cluster. The fit must converge
(L-BFGS's own test), and its coefficients must equal those of the same fit run in NumPy,
with the hand-written gradient, on the gathered data.

The full run ends with the memory case: the gradient of the same loss over data four times
the workers' total memory limit (two workers of 250 MB, X of 2 GB), drawn by the workers and
streamed chunk by chunk, never held whole anywhere, with dask's progress bar.
"""

# Most of dask's and distributed's functions carry no annotations: calling them is fine here.
# mypy: disable-error-code="no-untyped-call"
from __future__ import annotations

import time
from typing import Any

import dask.array as da
import numpy as np
import scipy.optimize
from _cli import parse_args
from dask.base import compute  # dask.compute
from distributed import Client, LocalCluster, progress, wait

import transforms as T
import transforms.numpy as tnp


def loss(w: Any, X: Any, y: Any) -> Any:
    """The logistic GLM's negative log-likelihood, plus a small ridge term."""
    z = X @ w
    return tnp.sum(tnp.logaddexp(0.0, z) - y * z) + 0.5 * tnp.sum(w * w)


value_and_grad = T.value_and_grad(loss)


def draw(n: int, d: int, chunk: int, seed: int) -> tuple[da.Array, da.Array]:
    """X and y drawn lazily: the graph holds seeds, the workers draw each chunk."""
    rng = da.random.default_rng(seed)
    X = rng.normal(size=(n, d), chunks=(chunk, d)) / np.sqrt(d)
    w_true = np.linspace(-2.0, 2.0, d)
    p = 1.0 / (1.0 + da.exp(-(X @ w_true)))
    y = (rng.random(size=n, chunks=chunk) < p).astype(np.float64)
    return X, y


def fit(X: Any, y: Any) -> scipy.optimize.OptimizeResult:
    """L-BFGS on the cluster: one graph, one ``dask.compute`` per loss-and-gradient."""

    def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = value_and_grad(w, X, y)  # lazy: nothing has run yet
        value, grad = compute(value, grad)  # one graph, on the cluster
        return float(value), np.asarray(grad, dtype=np.float64)

    return scipy.optimize.minimize(
        fun, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options={"gtol": 1e-8}
    )


def fit_in_numpy(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The same fit on NumPy arrays, with the hand-written gradient: the reference."""

    def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = X @ w
        p = 1.0 / (1.0 + np.exp(-z))
        value = np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * w @ w
        return float(value), X.T @ (p - y) + w

    w0 = np.zeros(X.shape[1])
    result = scipy.optimize.minimize(fun, w0, jac=True, method="L-BFGS-B", options={"gtol": 1e-8})
    return np.asarray(result.x)


def streamed_gradient() -> None:
    """The gradient over data 4x the workers' total memory, with a progress bar."""
    n, d, chunk, limit = 12_500_000, 20, 125_000, 250e6
    with (
        LocalCluster(
            host="127.0.0.1",
            n_workers=2,
            threads_per_worker=1,
            memory_limit=limit,
            dashboard_address=":0",
        ) as cluster,
        Client(cluster) as small,
    ):
        X, y = draw(n, d, chunk, seed=1)
        print(f"X is {X.nbytes / 1e9:.1f} GB, the 2 workers may hold {2 * limit / 1e9:.1f} GB;")
        print(f"the dashboard (task stream, memory per worker): {small.dashboard_link}")
        start = time.perf_counter()
        (grad,) = small.compute([T.grad(loss)(np.full(d, 0.1), X, y)])
        progress(grad)  # a text progress bar in a terminal, a widget in a notebook
        g = np.asarray(grad.result())
        print(
            f"\ngradient over {n:,} rows in {time.perf_counter() - start:.1f} s: |g| = "
            f"{np.linalg.norm(g):.4g}"
        )
        assert np.all(np.isfinite(g))


def main() -> None:
    args = parse_args(__doc__)
    n, d, chunk = (100_000, 10, 25_000) if args.quick else (2_000_000, 20, 250_000)
    with (
        LocalCluster(
            host="127.0.0.1",
            n_workers=2,
            threads_per_worker=1,
            memory_limit="1GB",
            dashboard_address=":0",
        ) as cluster,
        Client(cluster) as client,  # the default scheduler of dask.compute from here on
    ):
        X, y = client.persist(list(draw(n, d, chunk, seed=0)))
        wait([X, y])
        start = time.perf_counter()
        result = fit(X, y)
        elapsed = time.perf_counter() - start
        print(
            f"L-BFGS on {n:,} x {d} Dask rows: {result.nit} iterations, {result.nfev} "
            f"loss-and-gradient graphs in {elapsed:.1f} s; |gradient| = "
            f"{np.linalg.norm(result.jac):.2e}"
        )
        print("coefficients:", np.round(result.x, 3))
        assert result.success and np.linalg.norm(result.jac) < 1e-4 * n

        X_np, y_np = compute(X, y)  # (fits in memory at this size: for the check only)
        reference = fit_in_numpy(X_np, y_np)
        np.testing.assert_allclose(result.x, reference, rtol=1e-5, atol=1e-6)
        print("equal to the NumPy fit with the hand-written gradient")
        if not args.quick:
            streamed_gradient()


if __name__ == "__main__":
    main()
