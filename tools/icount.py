"""Instructions per call of a benchmark workload, counted by valgrind's callgrind.

Wall-clock time on a shared machine moves with the load of other processes; the number of
instructions a call executes does not, so this is the A/B measure for changes to our own
Python (per-call overhead: W1, W3 at small n, W5). It does not see memory bandwidth or page
faults (W6's copy of a large matrix): time those with ``python -m benchmarks``.

Usage::

    python -m tools.icount W3 transforms n=10            # instructions per call
    python -m tools.icount W5 transforms k=3 --calls 20

Each count runs the workload in a fresh process under callgrind twice, with ``calls`` and
with ``2 * calls`` calls after one warm-up call (the same warm-up and set-up both times), and
reports the difference divided by ``calls``: start-up, imports and the warm-up cancel out.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

_CHILD = """
import gc, sys
from benchmarks.workloads import WORKLOADS
case = WORKLOADS[sys.argv[1]].build(sys.argv[2], sys.argv[3])
case.fn()
gc.collect()
gc.disable()
for _ in range(int(sys.argv[4])):
    case.fn()
"""


def instructions(workload: str, impl: str, case: str, calls: int) -> int:
    """Total instructions of one process that runs ``calls`` calls after the warm-up."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        run = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-c",
                _CHILD,
                workload,
                impl,
                case,
                str(calls),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            raise SystemExit(run.stderr[-2000:])
        found = re.search(r"Collected : (\d+)", run.stderr)
        if found is None:
            raise SystemExit("callgrind printed no total:\n" + run.stderr[-2000:])
        return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload")
    parser.add_argument("impl")
    parser.add_argument("case", nargs="?", default="")
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    one = instructions(args.workload, args.impl, args.case, args.calls)
    two = instructions(args.workload, args.impl, args.case, 2 * args.calls)
    per_call = (two - one) / args.calls
    print(f"{args.workload} {args.impl} {args.case}: {per_call:,.0f} instructions/call")


if __name__ == "__main__":
    main()
