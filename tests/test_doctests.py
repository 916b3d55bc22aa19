"""Every docstring example in ``transforms`` runs as written and prints what it shows.

The examples are self-contained (each imports what it uses), so they run in an empty
namespace; ``...`` in an expected output matches anything (for long error messages).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

import transforms

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(transforms.__path__, prefix="transforms.")
)
FINDER = doctest.DocTestFinder(exclude_empty=True)


def _examples(module: ModuleType) -> list[doctest.DocTest]:
    # Only docstrings defined in this module (re-exports are tested where they live).
    return [t for t in FINDER.find(module, globs={}) if t.examples]


def test_the_api_has_examples() -> None:
    count = sum(
        len(t.examples) for name in MODULES for t in _examples(importlib.import_module(name))
    )
    assert count >= 100, f"only {count} docstring examples in transforms"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    failures = []
    for test in _examples(module):
        test.globs = {"__name__": name}
        result = runner.run(test, out=failures.append, clear_globs=True)
        assert result.failed == 0, "".join(failures)
