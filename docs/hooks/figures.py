"""mkdocs hook: the examples draw the docs' figures at build time (none of theirs is committed;
a benchmark's figure, the measurement of one machine on one day, is: ``docs/figures/``).

Before each build, every example listed in ``FIGURES`` runs in full with ``--figures``
into ``build/docs-generated/figures`` (ignored by git), and the figures are added to the
site as ``figures/NAME.png``, where the pages embed them. An example that fails (its
assertions are part of it) fails the build. ``mkdocs serve`` reuses figures already drawn,
so that editing a page does not rerun the examples.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "build" / "docs-generated"
FIGURES = {
    "tanh_derivatives.py": "tanh_derivatives.png",
    "taylor_ode.py": "taylor_ode.png",
    "gaussian_process.py": "gp_posterior.png",
    "mlp_digits.py": "mlp_digits_training.png",
    "pinn_laplacian.py": "pinn_poisson.png",
}
_command = "build"


def on_startup(command: str, dirty: bool, **_: Any) -> None:
    global _command
    _command = command


def on_pre_build(config: Any, **_: Any) -> None:
    folder = GENERATED / "figures"
    for script, figure in FIGURES.items():
        if _command == "serve" and (folder / figure).exists():
            continue
        subprocess.run(
            [sys.executable, str(ROOT / "examples" / script), "--figures", str(folder)],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )


def on_files(files: Files, config: Any, **_: Any) -> Files:
    for figure in FIGURES.values():
        files.append(
            File(
                f"figures/{figure}",
                src_dir=str(GENERATED),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
        )
    return files
