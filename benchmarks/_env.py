"""Pin BLAS, OpenMP and XLA to one thread: the one copy of that setting for every benchmark.

Timings on a shared 2-core machine must not depend on how many cores happen to be idle, and
a multi-threaded BLAS would help the large-array floors and hurt nobody else. The variables
only take effect if they are set before NumPy (or JAX, or torch) is loaded, so
``benchmarks/__init__.py`` calls :func:`pin_threads` first thing; every benchmark module is
imported through it, and the runner's child processes inherit the pinned environment.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
XLA_SINGLE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def pin_threads(env: MutableMapping[str, str] = os.environ) -> None:
    """Set every thread-count variable in ``env`` to 1 (and XLA's flags for eager JAX)."""
    for var in THREAD_VARS:
        env[var] = "1"
    xla_flags = env.get("XLA_FLAGS", "")
    if "intra_op_parallelism_threads" not in xla_flags:
        env["XLA_FLAGS"] = f"{xla_flags} {XLA_SINGLE_THREAD}".strip()
    env.setdefault("JAX_PLATFORMS", "cpu")  # no probing for accelerators
