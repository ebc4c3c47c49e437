"""Old import paths of modules that moved, kept working for one release.

A module that moved leaves a file at its old path that calls :func:`moved`: importing the old path
warns (``DeprecationWarning``) and gives the new module itself — the same module object, so every
name in it (and anything patched on it) is shared. docs/reference/index.md lists the old paths under
"Deprecated import paths".
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import FrameType

__all__ = ["moved"]


def moved(old: str, new: str) -> None:
    """Make the module being imported as ``old`` the module ``new`` (call it from ``old``'s file)."""
    warnings.warn(
        f"{old} moved to {new}; the old import path will be removed in the next release",
        DeprecationWarning,
        stacklevel=importer_stacklevel(1),
    )
    sys.modules[old] = importlib.import_module(new)


def _import_machinery(filename: str) -> bool:
    return "importlib" in filename


def importer_stacklevel(depth: int = 0) -> int:
    """The ``stacklevel`` that attributes a warning raised while a module is imported to the code
    that imported it (``import x``, ``importlib.import_module("x")``), past the import machinery.
    ``depth``: how many calls the ``warnings.warn`` is below the module's own code (0: the module
    calls it)."""
    frame: FrameType | None = sys._getframe(depth + 2)  # past this function and the module's code
    level = depth + 2
    while frame is not None and _import_machinery(frame.f_code.co_filename):
        if "_bootstrap" not in frame.f_code.co_filename:
            level += 1  # warnings skips importlib._bootstrap frames itself, but counts the others
        frame = frame.f_back
    return level
