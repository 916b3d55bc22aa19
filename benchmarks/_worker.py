"""Time one (workload, implementation) in this fresh process and print the result as JSON.

The runner starts one of these per measurement, so no implementation inherits another's
caches, allocator state or imported modules (JAX and torch change a process for good).
Usage: ``python -m benchmarks._worker W1 transforms [--target S] [--repeat N]`` prints
``{"seconds": {case: seconds per call}}``; ``--note`` prints ``{"note": text}`` instead.
Exit status 3: the implementation's library is not installed (the runner drops its rows).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchmarks.backends import PeerUnavailable
from benchmarks.workloads import WORKLOADS, Case, sparse_entries

UNAVAILABLE = 3
RTOL = 1e-9


def _as_numpy(tree: Any) -> Any:
    """The result as nested dicts of float64 ndarrays, whatever library produced it."""
    if isinstance(tree, dict):
        return {k: _as_numpy(v) for k, v in tree.items()}
    if hasattr(tree, "tocoo"):  # a scipy.sparse result: its non-zero entries
        return sparse_entries(tree)
    if hasattr(tree, "detach"):  # a torch tensor
        tree = tree.detach().numpy()
    return np.asarray(tree, dtype=np.float64)


def check(name: str, actual: Any, expected: Any) -> None:
    """Stop if ``actual`` is not ``expected`` to ``RTOL`` of its largest entry."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or actual.keys() != expected.keys():
            raise SystemExit(f"{name}: got keys {list(actual)}, expected {list(expected)}")
        for key in expected:
            check(f"{name}[{key!r}]", actual[key], expected[key])
        return
    scale = float(np.max(np.abs(expected))) or 1.0  # relative: W1's gradient is ~1e-55
    if actual.shape != expected.shape:
        raise SystemExit(f"{name}: shape {actual.shape}, expected {expected.shape}")
    err = float(np.max(np.abs(actual - expected)))
    if not err <= RTOL * scale:
        raise SystemExit(f"{name}: wrong result, max abs error {err:.3g} (scale {scale:.3g})")


def batch_seconds(fn: Callable[[], object], number: int) -> float:
    """Seconds for ``number`` calls, the garbage collector off as in timeit."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


def measure(fn: Callable[[], object], target: float, repeat: int) -> float:
    """Seconds per call: the best of up to ``repeat`` batches of about ``target`` seconds.

    The caller has made the warm-up call. The minimum is the run least disturbed by the
    other processes on the machine; the runner takes the median of these minima over fresh
    processes. A call slower than ``target`` gets fewer batches (its first timed call counts
    as one) to keep the whole run within minutes.
    """
    once = batch_seconds(fn, 1)
    number = max(1, round(target / max(once, 1e-9)))
    batches = min(repeat, int(target * repeat / max(once, 1e-9)))
    return min([once] + [batch_seconds(fn, number) / number for _ in range(batches)])


def run(workload: str, impl: str, target: float, repeat: int) -> dict[str, float]:
    """Build, check, then time every case of ``workload`` that ``impl`` can compute."""
    w = WORKLOADS[workload]
    seconds = {}
    for case in w.cases:
        built: Case | None = w.build(impl, case)
        if built is None:
            continue
        result = built.fn()  # the warm-up call
        if built.expected is not None:
            check(f"{workload} {case} {impl}", _as_numpy(result), built.expected)
        del result
        gc.collect()
        gc.freeze()  # what exists now is never garbage: each batch's collect stays cheap (torch)
        seconds[case] = measure(built.fn, target, repeat)
    return seconds


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._worker", description=__doc__)
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("impl", nargs="?", default="transforms")
    parser.add_argument("--target", type=float, default=0.05, help="seconds per timed batch")
    parser.add_argument("--repeat", type=int, default=5, help="timed batches per case")
    parser.add_argument("--note", action="store_true", help="the workload's untimed extra")
    args = parser.parse_args(argv)
    if args.note:
        note = WORKLOADS[args.workload].note
        print(json.dumps({"note": note() if note else ""}))
        return 0
    try:
        seconds = run(args.workload, args.impl, args.target, args.repeat)
    except PeerUnavailable as e:
        print(e, file=sys.stderr)
        return UNAVAILABLE
    print(json.dumps({"seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
