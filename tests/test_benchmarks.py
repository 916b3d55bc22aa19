"""The benchmark runner still runs: a --quick, peer-free run of two cheap workloads.

Not a timing test (CI's machine is shared): it checks that the runner's child processes
start, that every implementation passes its correctness check, and that the report has the
rows it should with finite, positive ratios, so a broken benchmark is caught before anyone
quotes its table.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ratio(cell: str) -> float:
    match = re.fullmatch(r"([\d,.]+)x", cell.strip().strip("*"))
    assert match, f"not a ratio: {cell!r}"
    return float(match.group(1).replace(",", ""))


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    """A benchmark script run from the repository root, its output captured."""
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def _tables(text: str) -> list[list[list[str]]]:
    """Each markdown table in ``text`` as rows of cells, the header first, no separator."""
    tables: list[list[list[str]]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("| ---"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append([cell.strip() for cell in line.strip().strip("|").split("|")])
        previous = line
    return tables


def test_quick_run_reports_every_row_with_sane_ratios() -> None:
    proc = _run([sys.executable, "-m", "benchmarks", "--quick", "--only", "W1,W5", "--no-peers"])
    assert proc.returncode == 0, proc.stderr
    main, growth = _tables(proc.stdout)
    header = main[0]
    assert header[:3] == ["workload", "case", "implementation"]
    assert not any("autograd" in h or "torch" in h for h in header)  # --no-peers
    per_primitive, vs_floor = header.index("µs / primitive"), header.index("vs NumPy floor")
    rows = {(r[0], r[1], r[2]): r for r in main[1:]}
    assert set(rows) == {
        ("W1", "", "NumPy forward chain (floor)"),
        ("W1", "", "transforms.numpy forward, untraced"),
        ("W1", "", "transforms"),
        ("W1", "", "transforms jit"),
        ("W5", "k=1", "NumPy f(x) (floor)"),
    } | {
        ("W5", f"k={k}", impl) for k in range(1, 7) for impl in ("transforms", "transforms jit")
    }, proc.stdout
    for key, row in rows.items():
        ratio = _ratio(row[vs_floor])
        assert math.isfinite(ratio) and ratio > 0, key
        if key[2].endswith("(floor)"):
            assert ratio == 1.0, key
    assert float(rows[("W1", "", "transforms")][per_primitive]) > 0

    assert growth[0] == ["W5 growth", "transforms"]
    assert [r[0] for r in growth[1:]] == [
        *(f"t(k={k}) / t(k={k - 1})" for k in range(2, 7)),
        "geometric mean per level",
    ]
    for row in growth[1:]:
        assert math.isfinite(_ratio(row[1])) and _ratio(row[1]) > 0, row
    assert "- W5: transforms growth per nesting level" in proc.stdout


def test_dask_glm_quick_run_checks_and_reports_both_models() -> None:
    """``benchmarks.dask_glm --quick``: a LocalCluster, both GLMs' gradients checked against
    dask-glm's (or its formulas) to 1e-12 before timing, a ratio per model."""
    pytest.importorskip("distributed")
    proc = _run([sys.executable, "-m", "benchmarks.dask_glm", "--quick"])
    assert proc.returncode == 0, proc.stderr
    (table,) = _tables(proc.stdout)
    assert table[0] == ["model", "implementation", "time (median)", "transforms / peer"]
    rows = {(r[0], r[1]): r for r in table[1:]}
    for model in ("logistic", "Poisson"):
        ratio = _ratio(rows[(model, "transforms `T.grad`")][3])
        assert math.isfinite(ratio) and ratio > 0, model
        assert any(key[0] == model and "dask-glm" in key[1] for key in rows), model
        assert f"- {model}: transforms / peer" in proc.stdout
    assert "Equal to 1e-12 of the largest entry: checked." in proc.stdout


def test_jit_sizes_quick_run_checks_every_curve_and_draws_the_figure(tmp_path: Path) -> None:
    """``benchmarks.jit_sizes --quick --no-peers``: every implementation's Hessian checked
    against the closed form before it is timed (a wrong one stops the run), a row per
    implementation with a finite, positive time at every size, and the figure saved."""
    pytest.importorskip("matplotlib")
    figure = tmp_path / "jit.png"
    proc = _run(
        [sys.executable, "-m", "benchmarks.jit_sizes", "--quick", "--no-peers"]
        + ["--figure", str(figure)]
    )
    assert proc.returncode == 0, proc.stderr
    (table,) = _tables(proc.stdout)
    assert table[0] == ["implementation", "n=4", "n=16"]
    rows = {r[0]: r[1:] for r in table[1:]}
    assert set(rows) == {"NumPy closed form (floor)", "transforms, eager", "transforms, T.jit"}
    for name, cells in rows.items():
        for cell in cells:
            match = re.fullmatch(r"([\d,.]+) µs \(([\d,.]+x)\)", cell)
            assert match, (name, cell)
            assert float(match.group(1).replace(",", "")) > 0, (name, cell)
            ratio = _ratio(match.group(2))
            assert math.isfinite(ratio) and ratio > 0, (name, cell)
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
