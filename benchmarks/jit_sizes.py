"""Time per call against array size for eager, ``T.jit`` and JAX's ``jit`` (issue 32's figure;
a script, not a test).

Run from the repository root: ``python -m benchmarks.jit_sizes --figure docs/figures/
jit_time_per_call.png`` (about five minutes; ``--quick`` for a smoke run, ``--no-peers``
without JAX). The function is W3's: the Hessian of ``sum(tanh(A@x)**2) + 0.5*sum(x**2)``
at ``n`` from 4 to 512, computed by transforms eagerly (``T.hessian``), by ``T.jit`` of it,
by JAX eagerly and under ``jax.jit`` (float64; left out when JAX is not installed), and by
the closed form ``A.T @ diag(2(1-t²)(1-3t²)) @ A + I`` in plain NumPy (the floor).

Each implementation runs in a fresh process of its own (``--worker``: JAX changes a process
for good) over every size, its result checked against the closed form (to 1e-9) before it
is timed: the best of a few batches of about ``--target`` seconds (``_worker.measure``).
Over ``--rounds`` rounds, in an order that rotates so that a load drifting on a shared
machine weighs on all alike, each point is the median of these bests. Small arrays show
what a call costs in Python (interpreter levels, rule dispatch, JAX's dispatch); large ones,
the arithmetic, which every curve shares.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._worker import UNAVAILABLE, check, measure
from benchmarks.backends import PeerUnavailable, installed, load
from benchmarks.workloads import _hessian_data, _hessian_exact, _jit_of, _quadratic_tanh

SIZES = (4, 8, 16, 32, 64, 128, 256, 512)
QUICK_SIZES = (4, 16)
# implementation -> (label, peer it needs or None)
IMPLEMENTATIONS = {
    "numpy": ("NumPy closed form (floor)", None),
    "eager": ("transforms, eager", None),
    "jit": ("transforms, T.jit", None),
    "jax": ("JAX, eager", "jax"),
    "jax-jit": ("JAX, jax.jit", "jax"),
}
STYLES = {"numpy": "k:", "eager": "C0-o", "jit": "C0-s", "jax": "C1--o", "jax-jit": "C1--s"}


def hessian_of(impl: str, A: np.ndarray) -> Callable[[Any], Any]:
    """``impl``'s Hessian of the W3 function with matrix ``A``, as a function of ``x``."""
    if impl == "numpy":
        return lambda x: _hessian_exact(A, x)
    b = load("jax" if impl.startswith("jax") else "transforms")
    h = b.hessian(_quadratic_tanh(b, b.asarray(A)))
    if impl.endswith("jit"):
        h = _jit_of("jax" if impl == "jax-jit" else "transforms")(h)
    return lambda x: h(b.asarray(x))


def time_sizes(impl: str, sizes: Sequence[int], target: float, repeat: int) -> dict[int, float]:
    """Seconds per call of ``impl`` at each size, each result checked first."""
    seconds = {}
    for n in sizes:
        A, x = _hessian_data(n)
        call = functools.partial(hessian_of(impl, A), x)
        check(f"{impl} n={n}", np.asarray(call(), dtype=np.float64), _hessian_exact(A, x))
        seconds[n] = measure(call, target, repeat)
    return seconds


def run_worker(impl: str, sizes: Sequence[int], target: float, repeat: int) -> dict[int, float]:
    """``time_sizes`` in a fresh process; empty when the implementation's peer is missing."""
    command = [sys.executable, "-m", "benchmarks.jit_sizes", "--worker", impl]
    command += ["--sizes", ",".join(map(str, sizes)), "--target", str(target)]
    command += ["--repeat", str(repeat)]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode == UNAVAILABLE:
        return {}
    if proc.returncode != 0:
        raise SystemExit(f"{impl}: the worker failed\n{proc.stderr}")
    return {int(n): s for n, s in json.loads(proc.stdout).items()}


def report(times: dict[str, dict[int, float]], sizes: Sequence[int]) -> str:
    """A markdown table: microseconds per call, and each one's ratio to the floor."""
    head = "| implementation | " + " | ".join(f"n={n}" for n in sizes) + " |"
    lines = [head, "| --- |" + " ---: |" * len(sizes)]
    floor = times["numpy"]
    for impl, row in times.items():
        cells = [f"{row[n] * 1e6:,.1f} µs ({row[n] / floor[n]:.1f}x)" for n in sizes]
        lines.append(f"| {IMPLEMENTATIONS[impl][0]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def draw(times: dict[str, dict[int, float]], path: Path) -> None:
    """The log-log figure of time per call against ``n``, one curve per implementation."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8.0, 4.2), layout="constrained")
    ax = figure.add_subplot()
    for impl, row in times.items():
        ns = sorted(row)
        ax.loglog(ns, [row[n] for n in ns], STYLES[impl], label=IMPLEMENTATIONS[impl][0])
    ax.set_xlabel("n (A is n-by-n, and so is the Hessian)")
    ax.set_ylabel("time per call (s)")
    ax.set_title("Hessian of sum(tanh(A @ x)²) + ½ sum(x²)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))  # (beside the curves)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.jit_sizes", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="two sizes, short batches")
    parser.add_argument("--no-peers", action="store_true", help="leave JAX out")
    parser.add_argument("--figure", type=Path, help="save the figure (PNG) here")
    parser.add_argument("--target", type=float, default=0.2, help="seconds per timed batch")
    parser.add_argument("--repeat", type=int, default=5, help="timed batches per size")
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per curve")
    parser.add_argument("--sizes", help=argparse.SUPPRESS)
    parser.add_argument("--worker", choices=sorted(IMPLEMENTATIONS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes: Sequence[int] = QUICK_SIZES if args.quick else SIZES
    if args.sizes:
        sizes = tuple(int(n) for n in args.sizes.split(","))
    target, repeat = (0.01, 1) if args.quick else (args.target, args.repeat)
    if args.worker:
        try:
            seconds = time_sizes(args.worker, sizes, target, repeat)
        except PeerUnavailable as e:
            print(e, file=sys.stderr)
            return UNAVAILABLE
        print(json.dumps(seconds))
        return 0
    impls = [
        impl
        for impl, (_, peer) in IMPLEMENTATIONS.items()
        if peer is None or (not args.no_peers and installed(peer))
    ]
    rounds = 1 if args.quick else args.rounds
    runs: dict[str, list[dict[int, float]]] = {impl: [] for impl in impls}
    for r in range(rounds):
        order = impls[r % len(impls) :] + impls[: r % len(impls)]
        print(f"round {r + 1}/{rounds}: {' '.join(order)}", file=sys.stderr)
        for impl in order:
            if row := run_worker(impl, sizes, target, repeat):
                runs[impl].append(row)
    times = {
        impl: {n: statistics.median(row[n] for row in rows) for n in sizes}
        for impl, rows in runs.items()
        if rows
    }
    print(report(times, sizes))
    if args.figure is not None:
        draw(times, args.figure)
        print(f"\nsaved {args.figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
