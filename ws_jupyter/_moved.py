"""Old import paths of modules that moved, kept working for one release.

A module that moved leaves a file at its old path that calls :func:`moved`: importing the old path
warns (``DeprecationWarning``) and gives the new module itself — the same module object, so every
name in it (and anything patched on it) is shared. README.md lists the old paths under
"Deprecated import paths".
"""

from __future__ import annotations

import importlib
import sys
import warnings

__all__ = ["moved"]


def moved(old: str, new: str) -> None:
    """Make the module being imported as ``old`` the module ``new`` (call it from ``old``'s file)."""
    warnings.warn(
        f"{old} moved to {new}; the old import path will be removed in the next release",
        DeprecationWarning,
        stacklevel=3,
    )
    sys.modules[old] = importlib.import_module(new)
