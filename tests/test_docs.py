"""The documentation's code runs and says what it shows (see docs/contributing/docs.md).

Each page of ``docs/`` runs top to bottom in one namespace: a ```python block is executed
and must print nothing (an output that is not shown would be unchecked), a ```pycon block is
a doctest whose outputs must be the ones produced. ```py blocks are shown, never run: they
hold other libraries' code, and only the migration guides may have them. A block that only
includes a file (``--8<--``: an example's source, which CI runs itself) is skipped. The
coverage pages list exactly what ``transforms.numpy`` and ``transforms.scipy`` export, and
the README's relative links resolve.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

import transforms.nn
import transforms.numpy as tnp
import transforms.scipy

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))

# A fenced block: its indentation, its info string's language, its body (dedented later).
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.M | re.S
)


def blocks(page: str) -> list[tuple[str, str, int]]:
    """``(language, code, line)`` of every fenced block of ``page``, in order."""
    text = (DOCS / page).read_text()
    return [
        (m["lang"], textwrap.dedent(m["body"]), text.count("\n", 0, m.start()) + 2)
        for m in FENCE.finditer(text)
    ]


def test_docs_have_pages() -> None:
    assert len(PAGES) >= 17 and "index.md" in PAGES


@pytest.mark.parametrize("page", PAGES)
def test_page_runs(page: str) -> None:
    namespace: dict[str, object] = {"__name__": f"docs.{page}"}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    parser = doctest.DocTestParser()
    for lang, code, line in blocks(page):
        where = f"docs/{page}, block at line {line}"
        if code.startswith("--8<--"):  # an included file (an example, which CI runs itself)
            continue
        if lang == "python":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, where, "exec"), namespace)
            assert not out.getvalue(), (
                f"{where} printed {out.getvalue()!r}: show outputs in a ```pycon block"
            )
        elif lang == "pycon":
            test = parser.get_doctest(code, namespace, where, page, line)
            report: list[str] = []
            result = runner.run(test, out=report.append, clear_globs=False)
            assert result.failed == 0, "".join(report)
            namespace.update(test.globs)  # (a DocTest runs in a copy of its globals)
        elif lang == "py":
            assert page.startswith("migration/"), f"{where}: a ```py block is never run"


def test_typing_page_passes_mypy_strict(tmp_path: Path) -> None:
    """The typing guide's blocks, as one module, pass ``mypy --strict``; each
    ``# type: ignore[code]`` in them must be a real error (``--warn-unused-ignores``)."""
    from mypy import api

    module = tmp_path / "typing_page.py"
    module.write_text("\n".join(code for lang, code, _ in blocks("typing.md") if lang == "python"))
    out, err, status = api.run(["--strict", "--warn-unused-ignores", str(module)])
    assert status == 0, out + err


# ---- the coverage pages ----------------------------------------------------------------------
# Each page lists its namespaces' functions: a section whose heading names a namespace (the
# longest that it names) lists that namespace's functions; other sections, the page's first.
COVERAGE: dict[str, dict[str, ModuleType]] = {
    "numpy.md": {"tnp": tnp, "tnp.linalg": tnp.linalg, "tnp.fft": tnp.fft},
    "scipy.md": {
        "transforms.scipy.special": transforms.scipy.special,
        "transforms.scipy.misc": transforms.scipy.misc,
        "transforms.scipy.linalg": transforms.scipy.linalg,
        "transforms.scipy.signal": transforms.scipy.signal,
        "transforms.scipy.integrate": transforms.scipy.integrate,
    },
    "nn.md": {"transforms.nn": transforms.nn},
}
NAMESPACES = [(page, key) for page, keys in COVERAGE.items() for key in keys]
# NumPy's own objects, re-exported as they are (no derivative to speak of): listed in prose.
NOT_FUNCTIONS = {"random"}


def listed_names(page: str) -> dict[str, set[str]]:
    """The names in backticks in a coverage page's bullet lists, by namespace. Only bullets
    list functions (a bullet's continuation lines are indented)."""
    keys = list(COVERAGE[page])
    by_length = sorted(keys, key=len, reverse=True)
    listed: dict[str, set[str]] = {key: set() for key in keys}
    section, in_bullet = keys[0], False
    for line in (DOCS / page).read_text().splitlines():
        if line.startswith("#"):
            section = next((k for k in by_length if k in line), keys[0])
        in_bullet = line.startswith("- ") or (in_bullet and line.startswith("  "))
        if in_bullet:
            listed[section] |= set(re.findall(r"`([a-z_][a-z0-9_]*)`", line))
    return listed


def exported(page: str, key: str) -> set[str]:
    module = COVERAGE[page][key]
    names = set(module.__all__) - NOT_FUNCTIONS
    return {n for n in names if callable(f := getattr(module, n)) and not isinstance(f, type)}


@pytest.mark.parametrize(("page", "key"), NAMESPACES)
def test_coverage_page_lists_only_real_functions(page: str, key: str) -> None:
    missing = sorted(listed_names(page)[key] - set(COVERAGE[page][key].__all__))
    assert not missing, f"docs/{page} lists {key} names that do not exist: {missing}"


@pytest.mark.parametrize(("page", "key"), NAMESPACES)
def test_coverage_page_lists_every_function(page: str, key: str) -> None:
    unlisted = sorted(exported(page, key) - listed_names(page)[key])
    assert not unlisted, (
        f"{key} exports {unlisted}, which docs/{page} does not list: add each to the "
        "bullet list of its family"
    )


# ---- the README's links --------------------------------------------------------------------
def test_readme_links_resolve() -> None:
    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert local, "the README links no file of the repository"
    broken = [link for link in local if not (ROOT / link).exists()]
    assert not broken, f"README.md links files that are not in the repository: {broken}"
