"""Workload W1 (a long chain of small primitives) and a Hessian workload, against baselines.

W1: ``x = sin(x) * 1.01 + 0.1`` applied 300 times to ``x`` of shape (10,) float64, i.e. 900
primitives (sin, multiply, add), differentiated by ``T.grad(lambda x: tnp.sum(chain(x)))``.
With arrays this small every primitive costs mostly Python overhead, so the time per
primitive measures the interpreter itself. Baselines: plain NumPy running the same chain
forward (the floor: no derivative at all) and HIPS/autograd's ``grad`` when it is installed.

Hessian: ``f(x) = sum(tanh(A @ x) ** 2) + 0.5 * sum(x ** 2)`` with ``A`` n x n standard
normal / sqrt(n), for n = 10 and 100; ``T.hessian`` against the closed form
``A.T @ diag(2 (1 - t^2)(1 - 3 t^2)) @ A + I`` (``t = tanh(A @ x)``, the floor) and
``autograd.hessian``. Every implementation's result is checked before it is timed.

Timing is timeit-style: each workload is calibrated to a batch of ``number`` calls lasting
at least ``--target`` seconds; then, in one process, rounds run every workload of a group
once each (interleaved, the order rotating from round to round, GC disabled inside a batch)
and the reported time is the median over rounds. Run through ``python -m benchmarks``, which
pins BLAS/OpenMP to one thread before NumPy is imported.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib.metadata
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

import transforms as T
import transforms.numpy as tnp

F64 = npt.NDArray[np.float64]

CHAIN_STEPS = 300
CHAIN_PRIMITIVES = 3 * CHAIN_STEPS  # sin, multiply, add per step
CHAIN_SIZE = 10
HESSIAN_SIZES = (10, 100, 300)
JACOBIAN_SIZE = 200
HVP_SIZE = 1000
MEMORY_SIZE = 2000
MEMORY_CHUNK = 100
AGREE_TOL = 1e-10
DESCRIPTION = "Time transforms' grad and hessian against plain NumPy and HIPS/autograd."


def _load_autograd() -> tuple[ModuleType, ModuleType] | None:
    """``(autograd, autograd.numpy)`` if autograd is installed: it is an optional baseline."""
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return None
    return autograd, anp


@dataclass
class Workload:
    """One timed callable; ``primitives`` is how many primitives one call runs (if known)."""

    group: str
    name: str
    fn: Callable[[], object]
    primitives: int | None = None
    role: str = ""  # "floor", "transforms" or "autograd"
    number: int = 1
    times: list[float] = field(default_factory=list)  # seconds per call, one per round

    @property
    def median(self) -> float:
        return statistics.median(self.times)


# ---- W1: the chain -----------------------------------------------------------------------
def chain_np(x: F64) -> F64:
    for _ in range(CHAIN_STEPS):
        x = np.sin(x) * 1.01 + 0.1
    return x


def chain_tnp(x: T.Array) -> T.Array:
    for _ in range(CHAIN_STEPS):
        x = tnp.sin(x) * 1.01 + 0.1
    return x


def chain_grad_exact(x: F64) -> F64:
    """d sum(chain(x)) / dx = prod_k 1.01 cos(x_k) along the chain (elementwise)."""
    g = np.ones_like(x)
    for _ in range(CHAIN_STEPS):
        g = g * 1.01 * np.cos(x)
        x = np.sin(x) * 1.01 + 0.1
    return g


def chain_workloads(ag: tuple[ModuleType, ModuleType] | None) -> list[Workload]:
    group = "W1 chain"
    x = np.linspace(-1.0, 1.0, CHAIN_SIZE)
    exact = chain_grad_exact(x)
    grad = T.grad(lambda x: tnp.sum(chain_tnp(x)))
    _check(group, "transforms grad", np.asarray(grad(x)), exact)
    _check(group, "transforms.numpy forward", np.asarray(chain_tnp(x)), chain_np(x))
    loads = [
        Workload(group, "numpy forward", lambda: chain_np(x), CHAIN_PRIMITIVES, "floor"),
        Workload(group, "transforms.numpy forward, untraced", lambda: chain_tnp(x),
                 CHAIN_PRIMITIVES),
        Workload(group, "transforms grad", lambda: grad(x), CHAIN_PRIMITIVES, "transforms"),
    ]  # fmt: skip
    if ag is not None:
        autograd, anp = ag

        def chain_anp(x: Any) -> Any:
            for _ in range(CHAIN_STEPS):
                x = anp.sin(x) * 1.01 + 0.1
            return x

        ag_grad = autograd.grad(lambda x: anp.sum(chain_anp(x)))
        _check(group, "autograd grad", np.asarray(ag_grad(x)), exact)
        loads.append(Workload(group, "autograd grad", lambda: ag_grad(x), CHAIN_PRIMITIVES,
                              "autograd"))  # fmt: skip
    return loads


# ---- Hessian -----------------------------------------------------------------------------
def hessian_workloads(n: int, ag: tuple[ModuleType, ModuleType] | None) -> list[Workload]:
    group = f"Hessian, n = {n}"
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    x = rng.standard_normal(n)
    eye = np.eye(n)

    def exact() -> F64:
        t = np.tanh(A @ x)
        H: F64 = A.T @ np.diag(2 * (1 - t**2) * (1 - 3 * t**2)) @ A + eye
        return H

    def f(x: T.Array) -> T.Array:
        return tnp.sum(tnp.tanh(tnp.matmul(A, x)) ** 2) + 0.5 * tnp.sum(x**2)

    hess = T.hessian(f)
    reference = exact()
    _check(group, "transforms hessian", np.asarray(hess(x)), reference)
    loads = [
        Workload(group, "numpy closed form", exact, role="floor"),
        Workload(group, "transforms hessian", lambda: hess(x), role="transforms"),
    ]
    if ag is not None:
        autograd, anp = ag
        ag_hess = autograd.hessian(
            lambda x: anp.sum(anp.tanh(anp.dot(A, x)) ** 2) + 0.5 * anp.sum(x**2)
        )
        _check(group, "autograd hessian", np.asarray(ag_hess(x)), reference)
        loads.append(Workload(group, "autograd hessian", lambda: ag_hess(x), role="autograd"))
    return loads


# ---- Jacobian of tanh(B @ x), 200 x 200 ----------------------------------------------------
def jacobian_workloads(ag: tuple[ModuleType, ModuleType] | None) -> list[Workload]:
    n = JACOBIAN_SIZE
    group = f"Jacobian, {n} x {n}"
    rng = np.random.default_rng(7)
    B = rng.standard_normal((n, n)) / np.sqrt(n)
    x = rng.standard_normal(n)

    def exact() -> F64:
        t = np.tanh(B @ x)
        J: F64 = (1 - t**2)[:, None] * B
        return J

    def f(x: T.Array) -> T.Array:
        return tnp.tanh(tnp.matmul(B, x))

    fwd, rev = T.jacfwd(f), T.jacrev(f)
    reference = exact()
    _check(group, "jacfwd", np.asarray(fwd(x)), reference)
    _check(group, "jacrev", np.asarray(rev(x)), reference)
    loads = [
        Workload(group, "numpy closed form", exact, role="floor"),
        Workload(group, "transforms jacfwd", lambda: fwd(x), role="transforms"),
        Workload(group, "transforms jacrev", lambda: rev(x), role="transforms"),
    ]
    if ag is not None:
        autograd, anp = ag
        ag_jac = autograd.jacobian(lambda x: anp.tanh(anp.dot(B, x)))
        _check(group, "autograd jacobian", np.asarray(ag_jac(x)), reference)
        loads.append(Workload(group, "autograd jacobian", lambda: ag_jac(x), role="autograd"))
    return loads


# ---- Hessian-vector product, n = 1000 ------------------------------------------------------
def hvp_workloads(ag: tuple[ModuleType, ModuleType] | None) -> list[Workload]:
    n = HVP_SIZE
    group = f"HVP, n = {n}"
    rng = np.random.default_rng(11)
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    x, v = rng.standard_normal(n), rng.standard_normal(n)

    def exact() -> F64:
        t = np.tanh(A @ x)
        Hv: F64 = A.T @ (2 * (1 - t**2) * (1 - 3 * t**2) * (A @ v)) + v
        return Hv

    def f(x: T.Array) -> T.Array:
        return tnp.sum(tnp.tanh(tnp.matmul(A, x)) ** 2) + 0.5 * tnp.sum(x**2)

    def ours() -> object:
        return T.hvp(f, (x,), (v,))[1][0]

    reference = exact()
    _check(group, "transforms hvp", np.asarray(ours()), reference)
    loads = [
        Workload(group, "numpy closed form", exact, role="floor"),
        Workload(group, "transforms hvp (fwd-over-rev)", ours, role="transforms"),
    ]
    if ag is not None:
        autograd, anp = ag
        ag_hvp = autograd.hessian_vector_product(
            lambda x: anp.sum(anp.tanh(anp.dot(A, x)) ** 2) + 0.5 * anp.sum(x**2)
        )
        _check(group, "autograd hvp", np.asarray(ag_hvp(x, v)), reference)
        loads.append(Workload(group, "autograd hvp (rev-over-rev)", lambda: ag_hvp(x, v),
                              role="autograd"))  # fmt: skip
    return loads


# ---- peak memory of jacrev, with and without chunking --------------------------------------
def jacrev_peak_memory() -> str:
    """Peak traced memory of ``jacrev(tanh(B @ x))``, B 2000 x 2000, whole basis vs chunks."""
    import tracemalloc

    n = MEMORY_SIZE
    rng = np.random.default_rng(3)
    B = rng.standard_normal((n, n)) / np.sqrt(n)
    x = rng.standard_normal(n)

    def f(x: T.Array) -> T.Array:
        return tnp.tanh(tnp.matmul(B, x))

    peaks = {}
    for label, chunk in (("whole basis", None), (f"chunk_size={MEMORY_CHUNK}", MEMORY_CHUNK)):
        jac = T.jacrev(f, chunk_size=chunk)
        gc.collect()
        tracemalloc.start()
        J = jac(x)
        peaks[label] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del J
    jac_mb = n * n * 8 / 2**20
    parts = ", ".join(f"{k}: {v / 2**20:.0f} MiB" for k, v in peaks.items())
    return (
        f"jacrev peak memory, tanh(B @ x), B {n} x {n} (the Jacobian is {jac_mb:.0f} MiB): {parts}"
    )


# ---- timing ------------------------------------------------------------------------------
def _check(group: str, name: str, actual: F64, expected: F64) -> None:
    err = float(np.max(np.abs(actual - expected))) if actual.shape == expected.shape else np.inf
    if not err <= AGREE_TOL * max(1.0, float(np.max(np.abs(expected)))):
        raise SystemExit(f"{group}: {name} disagrees with the reference (max abs error {err:.3g})")


def _batch(fn: Callable[[], object], number: int) -> float:
    """Seconds for ``number`` calls of ``fn``, with the garbage collector off (as timeit)."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


def calibrate(load: Workload, target: float) -> None:
    """Set ``load.number`` so that one batch lasts at least ``target`` seconds (autorange)."""
    load.fn()  # warm up
    number = 1
    while True:
        elapsed = _batch(load.fn, number)
        if elapsed >= target:
            break
        number = max(number * 2, int(number * 1.2 * target / max(elapsed, 1e-9)))
    load.number = number


def run_interleaved(loads: Sequence[Workload], rounds: int) -> None:
    """``rounds`` rounds, each timing every workload once, the order rotating per round."""
    for r in range(rounds):
        for k in range(len(loads)):
            load = loads[(r + k) % len(loads)]
            load.times.append(_batch(load.fn, load.number) / load.number)


# ---- report ------------------------------------------------------------------------------
def _fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def table(groups: Sequence[Sequence[Workload]]) -> str:
    """The markdown table: medians, and ratios to the group's floor and to autograd."""
    lines = [
        "| workload | implementation | time / call | µs / primitive | vs NumPy floor "
        "| vs autograd |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for loads in groups:
        floor = next(w for w in loads if w.role == "floor").median
        ag = next((w.median for w in loads if w.role == "autograd"), None)
        for w in loads:
            per_prim = f"{w.median / w.primitives * 1e6:.3g}" if w.primitives else "—"
            vs_ag = f"{w.median / ag:.2f}x" if ag is not None and w.role == "transforms" else "—"
            lines.append(
                f"| {w.group} | {w.name} | {_fmt_time(w.median)} | {per_prim} | "
                f"{w.median / floor:.3g}x | {vs_ag} |"
            )
    return "\n".join(lines)


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment(ag: tuple[ModuleType, ModuleType] | None, rounds: int) -> str:
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    ag_version = "not installed"
    if ag is not None:
        try:
            ag_version = importlib.metadata.version("autograd")
        except importlib.metadata.PackageNotFoundError:
            ag_version = "installed"
    return (
        f"{datetime.date.today().isoformat()}, {_cpu()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}, "
        f"autograd {ag_version}; BLAS threads {threads}; median of {rounds} interleaved rounds"
    )


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=DESCRIPTION)
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    parser.add_argument(
        "--target", type=float, default=0.2, help="seconds per timed batch (default 0.2)"
    )
    parser.add_argument("--no-autograd", action="store_true", help="skip the autograd baseline")
    args = parser.parse_args(argv)

    ag = None if args.no_autograd else _load_autograd()
    start = time.perf_counter()
    groups = [chain_workloads(ag)] + [hessian_workloads(n, ag) for n in HESSIAN_SIZES]
    groups += [jacobian_workloads(ag), hvp_workloads(ag)]
    for loads in groups:
        for load in loads:
            calibrate(load, args.target)
        run_interleaved(loads, args.rounds)

    print(environment(ag, args.rounds))
    print(
        f"W1: T.grad of sum(chain(x)), chain = {CHAIN_STEPS} x (x = sin(x)*1.01 + 0.1), "
        f"{CHAIN_PRIMITIVES} primitives, x: ({CHAIN_SIZE},) float64; floor: NumPy forward only"
    )
    print(
        "Hessian: f(x) = sum(tanh(A@x)**2) + 0.5*sum(x**2); floor: NumPy closed form "
        "A.T @ diag(2(1-t^2)(1-3t^2)) @ A + I"
    )
    print(
        f"Jacobian: tanh(B@x), B {JACOBIAN_SIZE}x{JACOBIAN_SIZE}; floor diag(1-t^2) @ B. HVP: the "
        f"Hessian function at n = {HVP_SIZE}; floor A.T @ (2(1-t^2)(1-3t^2) * (A@v)) + v"
    )
    print("every result was checked against its reference before timing\n")
    print(table(groups))
    print()
    print(jacrev_peak_memory())
    print(f"\ntotal {time.perf_counter() - start:.0f} s")
    return 0
