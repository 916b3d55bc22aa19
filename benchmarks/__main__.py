"""``python -m benchmarks``: pin BLAS/OpenMP to one thread, then run ``benchmarks.chain``."""

from __future__ import annotations

import os
import sys

# Before NumPy is imported anywhere in this process: single-threaded BLAS and OpenMP, so that
# timings do not depend on how many cores happen to be idle.
for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
):
    os.environ[_var] = "1"


def main() -> int:
    if "numpy" in sys.modules:  # pragma: no cover - only if something imported it early
        print("warning: numpy was imported before the thread limits were set", file=sys.stderr)
    from benchmarks import chain

    return chain.main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
