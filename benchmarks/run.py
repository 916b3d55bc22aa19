"""The benchmark runner: every (workload, implementation) timed in fresh processes, interleaved.

``python -m benchmarks`` or ``python benchmarks/run.py`` (``--help`` for the options). Each
round starts one ``benchmarks._worker`` process per (workload, implementation), in an order
that rotates from round to round, so a change in machine load hits every implementation
alike and none inherits another's warm caches or imports; the report is the median over
rounds of each process's best time. Children inherit single-threaded BLAS/OpenMP/XLA
(``_env.pin_threads``, applied when the ``benchmarks`` package is imported). The peers
(autograd, JAX eager, torch.func) are timed when installed and their columns left out when
not. The report is a markdown table of ratios, then W5's growth per nesting level and the
issue's targets.
"""

from __future__ import annotations

import sys
from pathlib import Path

if not __package__:  # run as a script: make the ``benchmarks`` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse
import datetime
import importlib.metadata
import itertools
import json
import math
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Sequence

from benchmarks._env import THREAD_VARS
from benchmarks._worker import UNAVAILABLE
from benchmarks.backends import LABELS, PEERS, installed
from benchmarks.workloads import WORKLOADS, Workload

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"W1": 1 / 3, "W2": 2.2, "W5": 2.0}
# issue 13 (W8): jet at k=6 >= 20x faster than nested grad; growth per order <= 1.3x on
# average; faster than eager JAX's jet at every k
TAYLOR_SPEEDUP, TAYLOR_GROWTH = 20.0, 1.3

Results = dict[tuple[str, str, str], list[float]]  # (workload, case, impl) -> s per round


def child_env() -> dict[str, str]:
    """This process's (pinned) environment, with the repository importable by the child."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_child(args: Sequence[str]) -> dict[str, object] | None:
    """The JSON a fresh ``benchmarks._worker`` prints; None if its peer is not importable."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks._worker", *args],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=ROOT,
        check=False,
    )
    if proc.returncode == UNAVAILABLE:
        print(f"skipped: {proc.stderr.strip()}", file=sys.stderr)
        return None
    if proc.returncode != 0:
        raise SystemExit(f"benchmarks._worker {' '.join(args)} failed:\n{proc.stderr.strip()}")
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return result


def implementations(w: Workload, peers: Sequence[str]) -> list[str]:
    """The floor first, then the NumPy references, transforms and the peers: the row order.

    A reference named after a peer (``jax-jit``) runs only when that peer does."""
    absent = tuple(f"{p}-" for p in PEERS if p not in peers)
    references = [r for r in w.references if not r.startswith(absent)]
    return ["numpy", *references, "transforms", *peers]


def measure_all(
    workloads: Sequence[Workload], peers: list[str], rounds: int, target: float, repeat: int
) -> Results:
    """``rounds`` rounds of one fresh process per (workload, implementation), rotating."""
    results: Results = {}
    for r in range(rounds):
        for w in workloads:
            impls = implementations(w, peers)
            order = impls[r % len(impls) :] + impls[: r % len(impls)]
            print(f"round {r + 1}/{rounds} {w.name}: {' '.join(order)}", file=sys.stderr)
            for impl in order:
                if impl not in implementations(w, peers):  # a peer dropped in this round
                    continue
                out = run_child([w.name, impl, "--target", str(target), "--repeat", str(repeat)])
                if out is None:
                    peers.remove(impl)
                    continue
                seconds = out["seconds"]
                assert isinstance(seconds, dict)
                for case, s in seconds.items():
                    results.setdefault((w.name, case, impl), []).append(float(s))
    return results


# ---- report ----------------------------------------------------------------------------------
def _fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= 0.9995 * scale:  # 999.7 µs prints as 1 ms, not 1e+03 µs
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _ratio(r: float) -> str:
    return f"{r:,.0f}x" if r >= 100 else f"{r:.3g}x"


def _row_label(w: Workload, impl: str) -> str:
    if impl == "numpy":
        return f"{w.floor_label} (floor)"
    if impl in w.references:
        return w.references[impl][0]
    return LABELS[impl]


def table(
    workloads: Sequence[Workload], medians: dict[tuple[str, str, str], float], peers: Sequence[str]
) -> str:
    """The main table: median time, ratio to the floor, and transforms' ratio to each peer."""
    per_prim = any(w.primitives for w in workloads)
    head = ["workload", "case", "implementation", "time / call"]
    head += ["µs / primitive"] * per_prim + ["vs NumPy floor"]
    head += [f"transforms / {LABELS[p]}" for p in peers]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * 3 + " ---: |" * (len(head) - 3)]
    for w in workloads:
        for case in w.cases:
            floor = medians.get((w.name, case, "numpy"), medians[(w.name, w.cases[0], "numpy")])
            for impl in implementations(w, peers):
                t = medians.get((w.name, case, impl))
                if t is None:  # this library cannot compute this case
                    continue
                cells = [w.name, case, _row_label(w, impl), _fmt_time(t)]
                if per_prim:
                    cells.append(f"{t / w.primitives * 1e6:.3g}" if w.primitives else "—")
                cells.append(_ratio(t / floor))
                for p in peers:
                    peer = medians.get((w.name, case, p))
                    if impl == "transforms" and peer is not None:
                        cells.append(_ratio(t / peer))
                    else:
                        cells.append("—")
                lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def growth(
    medians: dict[tuple[str, str, str], float], impls: Sequence[str]
) -> dict[str, list[float]]:
    """W5: t(k)/t(k-1) for k = 2..6, per implementation that computed every order."""
    cases = WORKLOADS["W5"].cases
    out = {}
    for impl in impls:
        if all(("W5", case, impl) in medians for case in cases):
            times = [medians[("W5", case, impl)] for case in cases]
            out[impl] = [b / a for a, b in itertools.pairwise(times)]
    return out


def geometric_mean(xs: Sequence[float]) -> float:
    """The average of ratios: (t(6)/t(1))^(1/5) for the five levels of W5."""
    return math.exp(statistics.fmean(math.log(x) for x in xs))


def growth_table(ratios: dict[str, list[float]]) -> str:
    """W5's second table: one column per implementation, one row per added nesting level."""
    impls = list(ratios)
    lines = [
        "| W5 growth | " + " | ".join(LABELS[i] for i in impls) + " |",
        "| --- |" + " ---: |" * len(impls),
    ]
    cases = WORKLOADS["W5"].cases
    for j, (prev, case) in enumerate(itertools.pairwise(cases)):
        label = f"t({case}) / t({prev})"
        lines.append(f"| {label} | " + " | ".join(_ratio(ratios[i][j]) for i in impls) + " |")
    means = " | ".join(f"**{_ratio(geometric_mean(ratios[i]))}**" for i in impls)
    lines.append(f"| geometric mean per level | {means} |")
    return "\n".join(lines)


def targets(
    medians: dict[tuple[str, str, str], float], ratios: dict[str, list[float]]
) -> list[str]:
    """The issue's three targets, each with the figure of this run and met or missed."""
    lines = []

    def verdict(name: str, value: float, what: str) -> None:
        ok = "met" if value <= TARGETS[name] else "missed"
        lines.append(f"- {name}: {what} = {value:.3g}x (target ≤ {TARGETS[name]:.3g}x): {ok}")

    w1, ag = medians.get(("W1", "", "transforms")), medians.get(("W1", "", "autograd"))
    if w1 is not None and ag is not None:
        verdict("W1", w1 / ag, "transforms grad per primitive / autograd's")
    w2, floor = medians.get(("W2", "", "transforms")), medians.get(("W2", "", "numpy"))
    if w2 is not None and floor is not None:
        verdict("W2", w2 / floor, "transforms grad / NumPy forward pass")
    if "transforms" in ratios:
        verdict("W5", geometric_mean(ratios["transforms"]), "transforms growth per nesting level")
    return lines + taylor_targets(medians)


def taylor_targets(medians: dict[tuple[str, str, str], float]) -> list[str]:
    """Issue 13's three figures for W8, each with met or missed."""
    cases = WORKLOADS["W8"].cases
    jet = [medians.get(("W8", case, "transforms")) for case in cases]
    if any(t is None for t in jet):
        return []
    times = [t for t in jet if t is not None]
    lines = []
    nested = medians.get(("W8", "k=6", "nested"))
    if nested is not None:
        speedup = nested / times[5]
        ok = "met" if speedup >= TAYLOR_SPEEDUP else "missed"
        lines.append(
            f"- W8: nested grad / jet at k=6 = {speedup:.3g}x (target ≥ {TAYLOR_SPEEDUP:g}x): {ok}"
        )
    growth = geometric_mean([b / a for a, b in itertools.pairwise(times)])
    ok = "met" if growth <= TAYLOR_GROWTH else "missed"
    lines.append(
        f"- W8: jet's growth per added order, k=1..{len(times)} = {growth:.3g}x "
        f"(target ≤ {TAYLOR_GROWTH:g}x): {ok}"
    )
    jax = [medians.get(("W8", case, "jax")) for case in cases]
    if all(t is not None for t in jax):
        worst = max(t / j for t, j in zip(times, jax, strict=True) if j is not None)
        ok = "met" if worst < 1 else "missed"
        lines.append(
            f"- W8: jet / JAX's eager jet, the worst k = {worst:.3g}x (target < 1 at every k): {ok}"
        )
    return lines


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            text=True,
            capture_output=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "transforms"],
            cwd=ROOT,
            text=True,
            capture_output=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" with uncommitted changes to transforms/" if dirty else "")


def environment(peers: Sequence[str], rounds: int, target: float, repeat: int) -> str:
    versions = ", ".join(f"{p} {_version(p)}" for p in peers) or "no peers"
    return (
        f"{datetime.date.today().isoformat()}, {_cpu()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, NumPy {_version('numpy')}, {versions}; "
        f"BLAS/OpenMP/XLA threads {os.environ.get(THREAD_VARS[1], '?')}; "
        f"transforms at {_commit()}; median over {rounds} round(s) of fresh processes, each "
        f"the best of up to {repeat} batches of ≥ {target * 1e3:g} ms"
    )


def report(
    workloads: Sequence[Workload], results: Results, peers: list[str], notes: list[str], header: str
) -> str:
    medians = {key: statistics.median(times) for key, times in results.items()}
    out = [header, ""]
    out += [f"- {w.name}: {w.title}" for w in workloads]
    out += [
        "",
        "Every result was checked against its reference before it was timed. "
        "`transforms / X` is transforms' time over X's (below 1: transforms is faster).",
        "",
        table(workloads, medians, peers),
    ]
    ratios = growth(medians, ["transforms", *peers]) if "W5" in [w.name for w in workloads] else {}
    if ratios:
        out += ["", growth_table(ratios)]
    out += [""] + notes
    goals = targets(medians, ratios)
    if goals:
        out += ["", "Targets of issues 7 and 13:", *goals]
    return "\n".join(out)


def select(only: str | None) -> list[Workload]:
    """The workloads named by ``--only`` (case-insensitive), in the order given."""
    if only is None:
        return list(WORKLOADS.values())
    names = [name.strip().upper() for name in only.split(",") if name.strip()]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        raise SystemExit(f"unknown workload(s) {unknown}; choose from {sorted(WORKLOADS)}")
    return [WORKLOADS[n] for n in names]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds of fresh processes (5)")
    parser.add_argument(
        "--target", type=float, default=0.03, help="seconds per timed batch inside a process (0.03)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed batches per process (5)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 1 round, 2 short batches (seconds, not minutes)",
    )
    parser.add_argument("--only", help="comma-separated workloads, e.g. W1,W5 (default: all)")
    parser.add_argument(
        "--peers",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="time autograd, JAX and torch.func when installed (default)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.target, args.repeat = 1, 0.005, 2

    start = time.perf_counter()
    workloads = select(args.only)
    peers = [p for p in PEERS if installed(p)] if args.peers else []
    results = measure_all(workloads, peers, args.rounds, args.target, args.repeat)
    header = environment(peers, args.rounds, args.target, args.repeat)
    notes = []
    for w in workloads:
        if w.note is not None:
            out = run_child([w.name, "--note"])
            notes.append(f"{w.name}: {out['note'] if out else ''}")
    print(report(workloads, results, peers, notes, header))
    print(f"\ntotal {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
