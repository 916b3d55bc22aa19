"""GLM gradients over Dask data on a LocalCluster: transforms against dask-glm (issue 34).

Run from the repository root: ``python -m benchmarks.dask_glm`` (2*10**7 x 20 float64, 3.2
GB, in chunks of 500,000 rows, on two worker processes of one thread; a few minutes), or
``--quick`` (2*10**5 rows, a smoke run for CI). The data are drawn by the workers
(``dask.array.random``) and persisted there, so what is timed is one gradient: building
its graph and computing it on the cluster.

For the logistic and the Poisson GLM (the losses exactly as dask-glm's ``loglike`` writes
them), ``T.grad`` of the loss is timed against dask-glm's hand-written
``pointwise_gradient`` (``X.T @ (sigmoid(X @ w) - y)``, ``X.T @ (exp(X @ w) - y)``), in
interleaved rounds (the order alternating, so drift in the machine's load hits both); the
report gives each median and their ratio. Both results must agree to 1e-12 of the
gradient's largest entry before anything is timed. When dask-glm is not installed (it is
in the ``bench`` extra), its formulas, copied from its ``dask_glm/families.py``, are timed
instead, and the report says so.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import transforms as T
import transforms.numpy as tnp


# ---- the losses, written as dask-glm's families.py writes them ------------------------------
def logistic(w: Any, X: Any, y: Any) -> Any:
    Xw = X @ w
    # dask-glm: (Xw + log1p(exp(-Xw))).sum() - dot(y, Xw); one sum here, because the VJP of
    # a vector dot product reshapes with order=, which Dask's reshape lacks today
    return tnp.sum(Xw + tnp.log1p(tnp.exp(-Xw)) - y * Xw)


def poisson(w: Any, X: Any, y: Any) -> Any:
    Xw = X @ w
    return tnp.sum(tnp.exp(Xw) - y * Xw)


class _Formulas:
    """dask-glm 0.4.0's gradients (dask_glm/families.py), for when it is not installed."""

    class Logistic:
        @staticmethod
        def pointwise_gradient(beta: Any, X: Any, y: Any) -> Any:
            Xbeta = X.dot(beta)
            return X.T.dot(1 / (1 + np.exp(-Xbeta)) - y)

    class Poisson:
        @staticmethod
        def pointwise_gradient(beta: Any, X: Any, y: Any) -> Any:
            return X.T.dot(np.exp(X.dot(beta)) - y)


def _peer() -> tuple[str, Any]:
    try:
        import dask_glm
        from dask_glm import families
    except ImportError:
        return "dask-glm's formulas (dask-glm not installed)", _Formulas
    return f"dask-glm {dask_glm.__version__}", families


def _data(rows: int, cols: int, chunk: int, client: Any) -> tuple[Any, Any, Any]:
    """X (rows, cols), a logistic and a Poisson response: drawn and persisted by the workers."""
    import dask.array as da
    from distributed import wait

    rng = da.random.default_rng(34)
    X = rng.normal(size=(rows, cols), chunks=(chunk, cols)) / np.sqrt(cols)
    z = X @ (np.linspace(-1.0, 1.0, cols))
    y_logistic = (rng.random(size=rows, chunks=chunk) < 1 / (1 + da.exp(-z))).astype(float)
    y_poisson = rng.poisson(da.exp(z)).astype(float)
    X, y_logistic, y_poisson = client.persist([X, y_logistic, y_poisson])
    wait([X, y_logistic, y_poisson])
    return X, y_logistic, y_poisson


def _timed(gradient: Callable[[], Any], client: Any) -> tuple[float, np.ndarray]:
    """One gradient: its graph built, then computed on the cluster."""
    start = time.perf_counter()
    out = np.asarray(client.compute(gradient()).result())
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--quick", action="store_true", help="2*10**5 rows, 3 rounds")
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--chunk", type=int, default=500_000, help="rows per chunk")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rows, chunk, rounds = args.rows, args.chunk, args.rounds
    if args.quick:
        rows, chunk, rounds = 200_000, 50_000, 3
    cols = 20

    from distributed import Client, LocalCluster

    peer_name, peer = _peer()
    memory = max(2e9, 1.5 * rows * (cols + 2) * 8 / 2)  # per worker: its half of the data
    with (
        LocalCluster(
            host="127.0.0.1",
            n_workers=2,
            threads_per_worker=1,
            memory_limit=memory,
            dashboard_address=":0",
        ) as cluster,
        Client(cluster) as client,
    ):
        X, y_logistic, y_poisson = _data(rows, cols, chunk, client)
        w = np.linspace(0.2, -0.2, cols)
        models = {
            "logistic": (logistic, peer.Logistic, y_logistic),
            "Poisson": (poisson, peer.Poisson, y_poisson),
        }
        lines = [
            f"GLM gradients, X {rows:,} x {cols} float64 in chunks of {chunk:,} rows, "
            f"LocalCluster of 2 worker processes x 1 thread; median of {rounds} rounds",
            "",
            "| model | implementation | time (median) | transforms / peer |",
            "| --- | --- | ---: | ---: |",
        ]
        targets = []
        for model, (loss, family, y) in models.items():
            ours = lambda loss=loss, y=y: T.grad(loss)(w, X, y)
            theirs = lambda family=family, y=y: family.pointwise_gradient(w, X, y)
            _, got = _timed(ours, client)
            _, expected = _timed(theirs, client)
            scale = float(np.max(np.abs(expected)))
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * scale)
            times: dict[str, list[float]] = {"transforms": [], "peer": []}
            for r in range(rounds):
                order = [("transforms", ours), ("peer", theirs)][:: 1 if r % 2 else -1]
                for name, fn in order:
                    times[name].append(_timed(fn, client)[0])
            ours_t, theirs_t = (statistics.median(times[k]) for k in ("transforms", "peer"))
            ratio = ours_t / theirs_t
            lines.append(f"| {model} | transforms `T.grad` | {ours_t:.3f} s | {ratio:.2f}x |")
            lines.append(f"| {model} | {peer_name} | {theirs_t:.3f} s | — |")
            verdict = "met" if ratio <= 1.1 else "missed"
            targets.append(f"- {model}: transforms / peer {ratio:.2f}x (target <= 1.1x): {verdict}")
        print("\n".join([*lines, "", "Equal to 1e-12 of the largest entry: checked.", *targets]))


if __name__ == "__main__":
    main()
