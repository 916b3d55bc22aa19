"""First-call time of a jitted derivative: transforms' recording and code generation against
JAX's tracing and compilation (issue 32), each in a fresh process.

``python -m benchmarks.first_call`` prints a Markdown table: per row, the first call of
``T.jit`` and of ``jax.jit`` (the warm-up the steady-state table leaves out), the eager
first call for scale, and the steady state of each (best of 5 batches, as the main table).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence

from benchmarks.run import child_env

ROWS = (("W1", ""), ("W2", ""), ("W3", "n=10"), ("W3", "n=100"), ("W5", "k=6"))
IMPLS = ("transforms", "jit", "jax-jit")


def measure(workload: str, case: str, impl: str) -> tuple[float, float]:
    """In this process: seconds of the first call, then of a steady call."""
    from benchmarks._worker import _as_numpy, check, measure
    from benchmarks.workloads import WORKLOADS

    built = WORKLOADS[workload].build(impl, case)
    assert built is not None
    start = time.perf_counter()
    result = built.fn()
    _as_numpy(result)  # (JAX: waits for the result)
    first = time.perf_counter() - start
    if built.expected is not None:
        check(f"{workload} {case} {impl}", _as_numpy(result), built.expected)
    return first, measure(built.fn, 0.03, 5)


def main(argv: Sequence[str]) -> int:
    if argv and argv[0] == "--child":
        print(json.dumps(measure(argv[1], argv[2], argv[3])))
        return 0
    lines = [
        "| workload | case | eager first / steady | T.jit first / steady "
        "| jax.jit first / steady |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for workload, case in ROWS:
        cells = []
        for impl in IMPLS:
            proc = subprocess.run(
                [sys.executable, "-m", "benchmarks.first_call", "--child", workload, case, impl],
                capture_output=True, text=True, env=child_env(), check=True,
            )  # fmt: skip
            first, steady = json.loads(proc.stdout.splitlines()[-1])
            cells.append(f"{_fmt(first)} / {_fmt(steady)}")
        lines.append(f"| {workload} | {case} | {' | '.join(cells)} |")
    print("\n".join(lines))
    return 0


def _fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
