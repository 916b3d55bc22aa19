"""Every ```python block of the README runs as written (and so stays true)."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), {"__name__": "readme"})


_COUNT = """
import importlib, json, pkgutil
import transforms
from transforms.core import all_primitives
for info in pkgutil.walk_packages(transforms.__path__, prefix="transforms."):
    if not info.name.endswith("__main__"):
        importlib.import_module(info.name)
counts = {}
for p in all_primitives():
    if p.module.startswith("transforms.numpy"):
        key = "numpy" if p.differentiable else "numpy, non-differentiable"
    elif p.module.startswith("transforms.scipy._"):  # scipy.special's families
        key = "scipy.special"
    elif p.module.split(".")[:3] in (
        ["transforms", "scipy", "linalg"],
        ["transforms", "scipy", "signal"],
        ["transforms", "scipy", "integrate"],
    ):
        key = "scipy linalg, signal, integrate"
    else:
        continue
    counts[key] = counts.get(key, 0) + 1
print(json.dumps(counts))
"""


@functools.cache
def _primitives_by_namespace() -> dict[str, int]:
    """How many primitives the library's modules define (every module imported), by the
    namespace the README counts: in a fresh interpreter, since primitives that tests and
    docstring examples make (``T.primitive``, the family kit's examples) live on in this one."""
    out = subprocess.run(
        [sys.executable, "-c", _COUNT], capture_output=True, text=True, check=True
    ).stdout
    counts: dict[str, int] = json.loads(out)
    return counts


@pytest.mark.parametrize(
    ("namespace", "claim"),
    [
        ("numpy", r"(\d+) differentiable primitives, each with a JVP rule"),
        ("numpy, non-differentiable", r"(\d+) non-differentiable primitives"),
        ("scipy.special", r"(\d+) primitives,\s+each SciPy's own ufunc"),
        ("scipy linalg, signal, integrate", r"(\d+) more primitives, each a row"),
    ],
)
def test_readme_counts_the_primitives_there_are(namespace: str, claim: str) -> None:
    # The README's counts, against the registry of every primitive a module defines (the
    # one tests/test_rule_coverage.py walks): a primitive added or removed updates them.
    match = re.search(claim, README.read_text())
    assert match is not None, claim
    assert int(match[1]) == _primitives_by_namespace().get(namespace, 0)
