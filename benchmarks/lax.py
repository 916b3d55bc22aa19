"""transforms.lax against JAX and against Python loops (a script, not a test).

Run from the repository root: ``python -m benchmarks.lax`` (about a minute; ``--quick`` for
a smaller run). BLAS/OpenMP are pinned to one thread before NumPy loads, by the
``benchmarks`` package it runs in (``benchmarks/_env.py``).

1. **Per-example Newton under vmap.** ``x**3 + x = b`` for 10,000 right-hand sides, each
   example iterating until its own residual is small (1 to 17 iterations): transforms'
   ``vmap`` of ``lax.while_loop``, JAX's eager ``vmap`` of its ``lax.while_loop``, and
   ``jit`` of it (compiled once before timing; the compile time is reported apart). Also
   transforms' per-example derivative ``vmap(grad(solve))``, which JAX cannot run (no reverse
   mode of ``while_loop``).
2. **A 200-step RNN's gradient by scan.** ``h = tanh(W h + U x)`` over 200 inputs, the mean
   of ``sum(h**2)``, ``grad`` w.r.t. ``W`` and ``U``: ``lax.scan``, ``lax.scan(checkpoint=
   True)`` and the Python loop, all transforms; JAX's eager and jitted ``grad`` of its
   ``scan`` for reference.
3. **scan's memory policy.** The gradient of a 10,000-step scan of ``h = 0.9 sin(h) + x`` on
   a carry of 1,000 floats: time and peak traced memory storing every step versus
   ``checkpoint=True`` (100 segments of 100 steps: 200 carries held).

Every result is checked against its reference before it is timed; times are the best of
``--rounds`` runs (the machine may be shared).
"""

from __future__ import annotations

import argparse
import math
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import transforms as T
import transforms.numpy as tnp
from transforms import lax


def _best_time(fn: Callable[[], Any], rounds: int) -> float:
    """The fastest of ``rounds`` runs: on a shared machine, the run least disturbed."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _newton(np_: Any, lax_: Any) -> Callable[[Any], Any]:
    def solve(b: Any) -> Any:
        def step(x: Any) -> Any:
            return x - (x**3 + x - b) / (3 * x**2 + 1)

        def cond(x: Any) -> Any:
            return np_.abs(x**3 + x - b) > 1e-12 * (1 + np_.abs(b))

        return lax_.while_loop(cond, step, b / 2)

    return solve


def newton(n: int, rounds: int) -> list[str]:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    b = np.random.default_rng(0).uniform(0.1, 1e3, size=n)
    ours = T.vmap(_newton(tnp, lax))
    theirs = jax.vmap(_newton(jnp, jax.lax))
    compiled = jax.jit(theirs)
    start = time.perf_counter()
    compiled(b).block_until_ready()
    compile_time = time.perf_counter() - start
    x = ours(b)
    assert np.allclose(x**3 + x, b, rtol=1e-11)
    assert np.allclose(np.asarray(theirs(b)), x, rtol=1e-11)
    assert np.allclose(np.asarray(compiled(b)), x, rtol=1e-11)
    grad = T.vmap(T.grad(_newton(tnp, lax)))
    assert np.allclose(grad(b), 1 / (3 * x**2 + 1), rtol=1e-8)
    t_ours = _best_time(lambda: ours(b), rounds)
    t_eager = _best_time(lambda: theirs(b).block_until_ready(), rounds)
    t_jit = _best_time(lambda: compiled(b).block_until_ready(), rounds)
    t_grad = _best_time(lambda: grad(b), rounds)
    return [
        f"Newton x**3 + x = b under vmap, {n} examples (per-example trip counts): ",
        "| implementation | time | vs transforms |",
        "| --- | --- | --- |",
        f"| transforms `vmap(while_loop)` | {t_ours * 1e3:.1f} ms | 1.00x |",
        f"| JAX eager `vmap(while_loop)` | {t_eager * 1e3:.1f} ms | {t_eager / t_ours:.2f}x |",
        f"| JAX `jit(vmap(while_loop))` (compile {compile_time * 1e3:.0f} ms apart) "
        f"| {t_jit * 1e3:.2f} ms | {t_jit / t_ours:.3f}x |",
        f"| transforms `vmap(grad(while_loop))` (JAX: no reverse mode) | {t_grad * 1e3:.1f} ms "
        f"| {t_grad / t_ours:.2f}x |",
    ]


def rnn(steps: int, rounds: int) -> list[str]:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    W, U = rng.normal(size=(32, 32)) / np.sqrt(32), rng.normal(size=(32, 8))
    inputs = rng.normal(size=(steps, 8))

    def closing_over(W: Any, U: Any) -> Any:
        def step(h: Any, x: Any) -> Any:
            h = tnp.tanh(W @ h + U @ x)
            return h, tnp.sum(h**2)

        return tnp.mean(lax.scan(step, np.zeros(32), inputs)[1])

    def by_scan(np_: Any, lax_: Any, **kw: Any) -> Callable[[Any, Any], Any]:
        def loss(W: Any, U: Any) -> Any:
            def step(carry: Any, x: Any) -> Any:
                h, W, U = carry
                h = np_.tanh(W @ h + U @ x)
                return (h, W, U), np_.sum(h**2)

            return np_.mean(lax_.scan(step, (np_.zeros(32), W, U), inputs, **kw)[1])

        return loss

    def by_loop(W: Any, U: Any) -> Any:
        h, losses = np.zeros(32), []
        for x in inputs:
            h = tnp.tanh(W @ h + U @ x)
            losses.append(tnp.sum(h**2))
        return tnp.mean(tnp.stack(losses))

    both = (0, 1)
    impls = {
        "transforms `grad` of `lax.scan` (W, U closed over)": T.grad(closing_over, argnums=both),
        "transforms `grad` of `lax.scan` (W, U in the carry)": T.grad(
            by_scan(tnp, lax), argnums=both
        ),
        "transforms `grad` of `lax.scan(checkpoint=True)` (in the carry)": T.grad(
            by_scan(tnp, lax, checkpoint=True), argnums=both
        ),
        "transforms `grad` of the Python loop": T.grad(by_loop, argnums=both),
        "JAX eager `grad` of `lax.scan`": jax.grad(by_scan(jnp, jax.lax), argnums=both),
        "JAX `jit(grad)` of `lax.scan`": jax.jit(jax.grad(by_scan(jnp, jax.lax), argnums=both)),
    }
    ref = impls["transforms `grad` of the Python loop"](W, U)
    lines = [
        f"{steps}-step RNN (hidden 32, input 8), grad w.r.t. W and U:",
        "| implementation | time | vs the Python loop |",
        "| --- | --- | --- |",
    ]
    times = {}
    for name, g in impls.items():
        out = g(W, U)
        for a, r in zip(out, ref, strict=True):
            assert np.allclose(np.asarray(a), r, rtol=1e-10, atol=1e-12), name
        times[name] = _best_time(lambda g=g: [np.asarray(o) for o in g(W, U)], rounds)
    base = times["transforms `grad` of the Python loop"]
    for name, t in times.items():
        lines.append(f"| {name} | {t * 1e3:.1f} ms | {t / base:.2f}x |")
    return lines


def memory_policy(steps: int, size: int, rounds: int) -> list[str]:
    xs = np.random.default_rng(0).normal(size=steps) * 0.01
    h0 = np.random.default_rng(1).normal(size=size)

    def grad(checkpoint: bool) -> Callable[[Any], Any]:
        def loss(h: Any) -> Any:
            return tnp.sum(
                lax.scan(lambda h, x: (0.9 * tnp.sin(h) + x, None), h, xs, checkpoint=checkpoint)[0]
            )

        return T.grad(loss)

    stored, checkpointed = grad(False), grad(True)
    assert np.allclose(stored(h0), checkpointed(h0), rtol=1e-13, atol=1e-300)
    lines = [
        f"scan's memory policy: grad of a {steps}-step scan, carry of {size} floats:",
        "| policy | time | peak traced memory | in carries |",
        "| --- | --- | --- | --- |",
    ]
    carry = size * 8
    base = 0.0
    segment = math.ceil(math.sqrt(steps))
    for name, g in (("store every step", stored), ("`checkpoint=True`", checkpointed)):
        t = _best_time(lambda g=g: g(h0), rounds)
        tracemalloc.start()
        g(h0)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        base = base or t
        lines.append(
            f"| {name} | {t:.2f} s ({t / base:.2f}x) | {peak / 2**20:.1f} MiB | "
            f"{peak / carry:.0f} |"
        )
    lines.append(
        f"(checkpointed: {math.ceil(steps / segment)} segment carries + one segment of "
        f"{segment} steps recomputed at a time = {math.ceil(steps / segment) + segment} "
        "carries held, plus each recomputed step's residuals)"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, one round")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    sections = [
        newton(1000 if args.quick else 10_000, rounds),
        rnn(50 if args.quick else 200, rounds),
        memory_policy(900 if args.quick else 10_000, 100 if args.quick else 1000, rounds),
    ]
    print("\n\n".join("\n".join(s) for s in sections))


if __name__ == "__main__":
    main()
