"""The example notebooks of ``notebooks/``, each executed at most once per test session.

``tests/jupyter/test_notebooks.py`` checks each run's outputs cell by cell, and ``tests/docs``
builds the documentation site from the same runs: each executed notebook is saved as
``scripts/docs.sh`` saves it (``scripts/docs_build.py``), so no notebook runs twice.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


def docs_build() -> ModuleType:
    """``scripts/docs_build.py``, the documentation's build steps (a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("docs_build", REPO_ROOT / "scripts" / "docs_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NotebookRuns:
    """Runs under ``root``: ``root/run/<name>/`` is a notebook's folder (its workspaces are made
    there), ``root/notebooks/<name>.ipynb`` the executed copy the site is built from."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.build = docs_build()
        self._runs: dict[str, tuple[Any, Path] | Exception] = {}
        self._old_path = os.environ.get("JUPYTER_PATH")
        self.build._install_kernelspec(root / "kernel")  # prepends to JUPYTER_PATH

    def names(self) -> list[str]:
        return list(self.build.notebook_names())

    def run(self, name: str) -> tuple[Any, Path]:
        """``(executed notebook, its folder)``; a run that failed fails every caller the same way."""
        if name not in self._runs:
            source = self.build.NOTEBOOKS / name
            folder = self.root / "run" / Path(name).stem
            try:
                key = self.build.source_key(source)
                nb = self.build.execute_notebook(source, folder)
                self.build.save_executed(nb, name, self.root, key)
                self._runs[name] = (nb, folder)
            except Exception as exc:  # raised below, and again for every later caller
                self._runs[name] = exc
        outcome = self._runs[name]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def close(self) -> None:
        if self._old_path is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = self._old_path
