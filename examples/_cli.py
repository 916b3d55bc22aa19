"""What every example shares: ``--quick`` (the short run CI checks) and ``--figures DIR``.

The examples are scripts (``python examples/newton.py``); this module sits beside them, so
they import it as ``_cli``. Figures are drawn with matplotlib's Agg backend (no display)
and saved only when ``--figures`` names a folder (the docs build passes one).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def parse_args(description: str | None) -> argparse.Namespace:
    """``quick`` (bool) and ``figures`` (a folder or ``None``) from the command line."""
    parser = argparse.ArgumentParser(description=(description or "").strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (CI runs this)")
    parser.add_argument("--figures", type=Path, help="save the example's figure in this folder")
    return parser.parse_args()


def new_figure(width: float = 7.0, height: float = 4.0) -> Figure:
    """A figure drawn off-screen (matplotlib is imported only by examples that draw)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def save(figure: Figure, folder: Path | None, name: str) -> None:
    """Save ``figure`` as ``folder/name`` (PNG) when a folder was given."""
    if folder is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    figure.savefig(folder / name, dpi=110)
    print(f"saved {folder / name}")
