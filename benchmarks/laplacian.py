"""Laplacians, order-k derivatives and Jacobians within a memory budget (issue 35; a script,
not a test).

Run from the repository root: ``python -m benchmarks.laplacian`` (about two minutes;
``--quick`` for a smoke run). BLAS/OpenMP/XLA are pinned to one thread before NumPy loads
(``benchmarks/_env.py``). Every result is checked against a reference before it is timed.

1. **Laplacian of a 3-layer tanh MLP** R^100 -> 128 -> 128 -> R at a batch of 256 points:
   ``T.vmap(T.laplacian(f))`` (one collapsed Taylor pass) against the same ``n`` order-2
   jets not collapsed (``vmap`` over the basis), ``trace(T.hessian(f))`` (vmapped), a
   Python loop of 100 vmapped ``T.hvp`` calls (one per basis vector), and JAX's
   ``jnp.trace(jax.hessian(f))`` vmapped, eager and under ``jax.jit`` (float64). Targets:
   Laplacian <= 0.3x the Hessian trace and <= 0.5x the HVP loop; faster than JAX eager and
   jit.
2. **Order-k derivatives**: ``T.derivative(f, order=k)``, k = 1 .. 8, of W8's scalar
   function ``sin(x) exp(-x**2/4)`` at 0.7 (checked against k nested ``grad``) and, for
   scale, of the MLP along a direction at the 256 points (``vmap``); the cost per extra
   order t(k)/t(k-1). Target: <= 1.3x for k = 2 .. 8.
3. **jacrev within a memory budget**: the 2000 x 2000 Jacobian of
   ``tanh(cumsum(sin(x)) * x)`` (dense, 32 MB) with ``memory_budget=50 MB``; the peak traced
   by ``tracemalloc`` against the whole basis at once. Target: peak <= 60 MB.

Timing: the best of several batches of about ``--target`` seconds each (``_worker.measure``),
the median of that over ``--rounds`` rounds; in part 1 every round times each implementation
once, the order rotating, so that a load drifting on a shared machine weighs on all alike.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import transforms as T
import transforms.numpy as tnp
from benchmarks._worker import measure


def _mlp_params(d: int, h: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [
        rng.normal(size=(d, h)) / math.sqrt(d),
        rng.normal(size=h) * 0.1,
        rng.normal(size=(h, h)) / math.sqrt(h),
        rng.normal(size=h) * 0.1,
        rng.normal(size=h) / math.sqrt(h),
    ]


def _mlp(np_like: Any, params: Sequence[Any]) -> Callable[[Any], Any]:
    W1, b1, W2, b2, w3 = params

    def f(x: Any) -> Any:
        a = np_like.tanh(x @ W1 + b1)
        a = np_like.tanh(a @ W2 + b2)
        return a @ w3

    return f


def _median_time(fn: Callable[[], object], rounds: int, target: float) -> float:
    fn()
    return statistics.median(measure(fn, target, 3) for _ in range(rounds))


def _check(name: str, got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    err = float(np.max(np.abs(got - want))) / max(1.0, float(np.max(np.abs(want))))
    if not err <= 1e-9:
        raise SystemExit(f"{name}: result differs from the reference by {err:.2e}")


def laplacian_table(d: int, h: int, batch: int, rounds: int, target: float) -> dict[str, float]:
    params = _mlp_params(d, h)
    f = _mlp(tnp, params)
    X = np.random.default_rng(1).normal(size=(batch, d))
    basis = np.eye(d)
    lap = T.vmap(T.laplacian(f))
    trace = T.vmap(lambda x: tnp.trace(T.hessian(f)(x)))
    hvp = T.vmap(lambda x, v: tnp.dot(v, T.hvp(f, (x,), (v,))[1][0]), (0, None))

    def hvp_loop() -> Any:
        total = hvp(X, basis[0])
        for i in range(1, d):
            total = total + hvp(X, basis[i])
        return total

    zeros = np.zeros(d)

    def jets(x: Any) -> Any:  # the same directions, not collapsed: n order-2 jets
        return tnp.sum(T.vmap(lambda e: T.jet(f, (x,), ([e, zeros],))[1][1])(basis))

    vmapped_jets = T.vmap(jets)
    reference = trace(X)
    impls: dict[str, Callable[[], Any]] = {
        "T.laplacian (collapsed Taylor)": lambda: lap(X),
        f"sum of {d} vmapped order-2 T.jet": lambda: vmapped_jets(X),
        "trace(T.hessian)": lambda: trace(X),
        f"loop of {d} T.hvp": hvp_loop,
    }
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)  # type: ignore[no-untyped-call]
        fj = _mlp(jnp, [jnp.asarray(p) for p in params])
        eager = jax.vmap(lambda x: jnp.trace(jax.hessian(fj)(x)))
        jitted = jax.jit(eager)
        Xj = jnp.asarray(X)
        impls["JAX eager jnp.trace(jax.hessian)"] = lambda: eager(Xj).block_until_ready()
        impls["JAX jit jnp.trace(jax.hessian)"] = lambda: jitted(Xj).block_until_ready()
    except ImportError:
        print("   (JAX not installed: its rows are left out)")
    for name, fn in impls.items():
        _check(name, fn(), reference)
    return _interleaved(impls, rounds, target)


def _interleaved(
    impls: dict[str, Callable[[], Any]], rounds: int, target: float
) -> dict[str, float]:
    """The median over ``rounds`` of each implementation's best batch time, every round
    timing each once, the order rotating: a load that drifts on a shared machine weighs on
    all of them alike."""
    names = list(impls)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            samples[name].append(measure(impls[name], target, 3))
        print(f"   round {r + 1}/{rounds}", file=sys.stderr)
    return {name: statistics.median(samples[name]) for name in names}


def _w8(np_like: Any) -> Callable[[Any], Any]:
    """W8's scalar function (``benchmarks/workloads.py``)."""
    return lambda x: np_like.sin(x) * np_like.exp(-(x**2) / 4)


def order_table(
    d: int, h: int, batch: int, orders: int, rounds: int, target: float
) -> dict[str, list[float]]:
    """Seconds per call of ``T.derivative(., order=k)``, k = 1 .. orders: of W8's scalar
    function at 0.7, and of the MLP along a direction at ``batch`` points."""
    mlp = _mlp(tnp, _mlp_params(d, h))
    rng = np.random.default_rng(2)
    X, V = rng.normal(size=(batch, d)), rng.normal(size=(batch, d))
    scalar = _w8(tnp)
    out: dict[str, list[float]] = {"scalar": [], "mlp": []}
    for k in range(1, orders + 1):
        kth_scalar = T.derivative(scalar, order=k)
        kth_mlp = T.vmap(T.derivative(mlp, order=k))
        nested: Callable[[Any], Any] = scalar
        for _ in range(k):
            nested = T.grad(nested)
        _check(f"scalar order {k}", kth_scalar(0.7), nested(0.7))
        if k <= 2:  # the MLP against the Hessian along v (order 2) and the gradient (1)
            want = [
                T.grad(mlp)(x) @ v if k == 1 else v @ T.hessian(mlp)(x) @ v
                for x, v in zip(X, V, strict=True)
            ]
            _check(f"MLP order {k}", kth_mlp(X, V), want)
        out["scalar"].append(_median_time(lambda f=kth_scalar: f(0.7), rounds, target))
        out["mlp"].append(_median_time(lambda f=kth_mlp: f(X, V), rounds, target))
        print(
            f"   order {k}: {out['scalar'][-1] * 1e6:.0f} us, {out['mlp'][-1] * 1e3:.1f} ms",
            file=sys.stderr,
        )
    return out


def _dense(x: Any) -> Any:
    return tnp.tanh(tnp.cumsum(tnp.sin(x)) * x)


def budget_table(n: int, budget: int) -> list[tuple[str, float, float]]:
    x = np.random.default_rng(3).normal(size=n)
    reference = T.jacfwd(_dense)(x)
    rows = []
    for label, kwargs in (
        ("whole basis at once", {}),
        (f"memory_budget={budget / 1e6:.0f} MB", {"memory_budget": budget}),
    ):
        tracemalloc.start()
        try:
            jac = T.jacrev(_dense, **kwargs)(x)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        _check(label, jac, reference)
        del jac
        t = _median_time(lambda kwargs=kwargs: T.jacrev(_dense, **kwargs)(x), 1, 0.0)
        rows.append((label, peak / 1e6, t))
    return rows


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.laplacian", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--target", type=float, default=0.5, help="seconds per timed batch")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, 1 round")
    args = parser.parse_args(list(argv))
    rounds, target = (1, 0.05) if args.quick else (args.rounds, args.target)
    d, h, batch, n = (20, 32, 16, 300) if args.quick else (100, 128, 256, 2000)
    budget = 50_000_000 if not args.quick else 1_500_000
    print(
        f"transforms Laplacian benchmark (numpy {np.__version__}, Python {sys.version.split()[0]})"
    )

    print(f"\n1. Laplacian of a tanh MLP R^{d} -> {h} -> {h} -> R at {batch} points")
    times = laplacian_table(d, h, batch, rounds, target)
    base = times["T.laplacian (collapsed Taylor)"]
    print(f"   {'implementation':<40}{'time':>10}{'laplacian / it':>18}")
    for name, t in times.items():
        print(f"   {name:<40}{t * 1e3:>7.1f} ms{base / t:>17.2f}x")

    print("\n2. Order-k derivatives (T.derivative): W8's sin(x) exp(-x^2/4) at 0.7, and the MLP")
    print(f"   along a direction at {batch} points (vmap)")
    orders = order_table(d, h, batch, 8, rounds, target)
    sc, ml = orders["scalar"], orders["mlp"]
    print(f"   {'k':>3}{'scalar':>11}{'t(k)/t(k-1)':>14}{'MLP':>11}{'t(k)/t(k-1)':>14}")
    for k in range(1, len(sc) + 1):
        g1 = "" if k == 1 else f"{sc[k - 1] / sc[k - 2]:.2f}x"
        g2 = "" if k == 1 else f"{ml[k - 1] / ml[k - 2]:.2f}x"
        print(f"   {k:>3}{sc[k - 1] * 1e6:>8.0f} us{g1:>14}{ml[k - 1] * 1e3:>8.1f} ms{g2:>14}")

    print(
        f"\n3. jacrev of a {n} -> {n} map (dense Jacobian, {n * n * 8 / 1e6:.0f} MB), tracemalloc"
    )
    for label, peak, t in budget_table(n, budget):
        print(f"   {label:<28}peak {peak:>7.1f} MB   {t * 1e3:>8.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
