"""Memory per recorded node, and the cost of the mutation protection (a script, not a test).

Run from the repository root: ``python -m benchmarks.memory`` (about a minute;
``--quick`` for a smaller run). BLAS/OpenMP are pinned to one thread before NumPy loads, by
importing the ``benchmarks`` package (``benchmarks/_env.py``).

1. **Bytes per recorded node.** A chain of N primitives runs under ``T.vjp``; ``tracemalloc``
   measures the peak traced memory during the forward pass and the memory still held by the
   pullback afterwards (the recorded graph: nodes, closures, residuals), both divided by N.
   Chains: ``sin`` on a 0-d array (one operand, the residual is the input), ``x * c + b`` on
   a 0-d array (two primitives per step with Python-float operands), and ``sin`` on a (10,)
   array (residuals of 80 bytes of data each).
2. **Mutation protection.** Reverse mode protects every user-owned array a rule may read in
   the backward pass (``transforms/reverse/_protect.py``) with a read-only copy, taken once per
   array per trace. Timed: ``grad``
   of an MLP loss whose weights are (a) closed-over constants, (b) differentiated arguments
   (``argnums``), and (c) closed-over constants with the protection switched off (the
   unsafe baseline, by patching ``Guard.protect`` to the identity): (a) - (c) is the cost of
   the protection. Two sizes: small and large weights.

Timing: each workload is calibrated to batches of at least ``--target`` seconds; rounds run
every workload of a group once (interleaved, the order rotating), GC off inside a batch; the
median over rounds is reported.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

import transforms as T
import transforms.numpy as tnp
from benchmarks._worker import batch_seconds
from transforms.reverse import _protect


# ---- 1. bytes per recorded node ----------------------------------------------------------------
def _sin_chain(n: int) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        for _ in range(n):
            x = tnp.sin(x)
        return x

    return f


def _affine_chain(n: int) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        for _ in range(n // 2):
            x = x * 0.999 + 0.001
        return x

    return f


def bytes_per_node(chain: Callable[[Any], Any], x: np.ndarray, n: int) -> tuple[float, float]:
    """(peak during the forward pass, held by the pullback afterwards), bytes per primitive."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out, pullback = T.vjp(chain, x)
        current, peak = tracemalloc.get_traced_memory()
        (g,) = pullback(np.ones_like(out))
        assert np.all(np.isfinite(g))
    finally:
        tracemalloc.stop()
    del out, pullback
    gc.collect()
    return (peak - base) / n, (current - base) / n


# ---- 2. the cost of the mutation protection -------------------------------------------------
def _mlp_params(rng: np.random.Generator, width: int) -> dict[str, np.ndarray]:
    return {
        "w1": rng.standard_normal((16, width)) / 4.0,
        "b1": np.zeros(width),
        "w2": rng.standard_normal((width, width)) / np.sqrt(width),
        "w3": rng.standard_normal((width, 1)) / np.sqrt(width),
    }


def _mlp(params: dict[str, Any], x: Any) -> Any:
    h = tnp.tanh(x @ params["w1"] + params["b1"])
    h = tnp.tanh(h @ params["w2"])
    return tnp.mean((h @ params["w3"]) ** 2)


@contextmanager
def protection_off() -> Iterator[None]:
    original = _protect.Guard.protect
    _protect.Guard.protect = lambda self, array: array  # type: ignore[method-assign]
    try:
        yield
    finally:
        _protect.Guard.protect = original  # type: ignore[method-assign]


def mutation_workloads(width: int) -> dict[str, Callable[[], Any]]:
    rng = np.random.default_rng(0)
    params = _mlp_params(rng, width)
    x = rng.standard_normal((32, 16))

    def closed_over(xx: Any) -> Any:  # weights are constants: differentiate w.r.t. x
        return _mlp(params, xx)

    grad_constants = T.grad(closed_over)
    grad_arguments = T.grad(lambda p, xx: _mlp(p, xx), argnums=(0, 1))

    def unprotected() -> Any:
        with protection_off():
            return grad_constants(x)

    # the three compute the same gradient with respect to x
    reference = grad_constants(x)
    np.testing.assert_allclose(grad_arguments(params, x)[1], reference, rtol=1e-12)
    np.testing.assert_allclose(unprotected(), reference, rtol=1e-12)
    return {
        "weights as closed-over constants": lambda: grad_constants(x),
        "weights as differentiated arguments": lambda: grad_arguments(params, x),
        "constants, protection off (unsafe)": unprotected,
    }


def time_group(
    workloads: dict[str, Callable[[], Any]], rounds: int, target: float
) -> dict[str, float]:
    numbers = {}
    for name, fn in workloads.items():
        fn()  # warm up
        number = 1
        while batch_seconds(fn, number) < target:
            number *= 2
        numbers[name] = number
    samples: dict[str, list[float]] = {name: [] for name in workloads}
    names = list(workloads)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            samples[name].append(batch_seconds(workloads[name], numbers[name]) / numbers[name])
    return {name: statistics.median(s) for name, s in samples.items()}


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory", description=__doc__)
    parser.add_argument("--primitives", type=int, default=100_000, help="chain length")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--target", type=float, default=0.2, help="seconds per timed batch")
    parser.add_argument("--quick", action="store_true", help="20,000 primitives, 3 rounds")
    args = parser.parse_args(argv)
    if args.quick:
        args.primitives, args.rounds, args.target = 20_000, 3, 0.05
    n = args.primitives

    print(f"transforms memory benchmark (numpy {np.__version__}, Python {sys.version.split()[0]})")
    print(f"\n1. Bytes per recorded node, a chain of {n:,} primitives under T.vjp (tracemalloc)")
    print(f"   {'chain':<34}{'peak in forward':>18}{'held by pullback':>19}")
    chains = [
        ("sin, 0-d float64", _sin_chain(n), np.array(0.5)),
        ("x * 0.999 + 0.001, 0-d float64", _affine_chain(n), np.array(0.5)),
        ("sin, shape (10,) float64", _sin_chain(n), np.full(10, 0.5)),
    ]
    for name, chain, x in chains:
        peak, held = bytes_per_node(chain, x, n)
        print(f"   {name:<34}{peak:>13.0f} B/node{held:>14.0f} B/node")

    print("\n2. Cost of the mutation protection: grad of an MLP loss (16 -> w -> w -> 1, batch 32)")
    for width, label in (
        (32, "small weights (w = 32, w2 is 8 KB)"),
        (256, "large weights (w = 256, w2 is 512 KB)"),
    ):
        times = time_group(mutation_workloads(width), args.rounds, args.target)
        base = times["constants, protection off (unsafe)"]
        print(f"   {label}")
        for name, t in times.items():
            print(f"     {name:<40}{t * 1e3:>9.3f} ms   {t / base:>5.2f}x unprotected")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
