"""The package's own dependencies never resolve to files in the current directory.

A notebook kernel has its working directory on ``sys.path`` (``""``), and that directory is
often the workspace itself. ws-jupyter imports most dependencies lazily (``pathspec`` when a
listing first reads a ``.gitignore``, ``yaml`` when a skill is parsed, …), so an agent that
writes ``pathspec.py`` into the workspace would have it imported — and run — by the kernel, on
the host, outside any sandbox. A meta-path finder placed first handles exactly the top-level
names of the dependencies below: it looks for them on ``sys.path`` without the current
directory, then in the other finders (editable installs), and otherwise reports the module as
missing. Every other import is untouched.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["DEPENDENCIES", "install"]

#: Top-level import names of ws-jupyter's runtime and optional dependencies.
DEPENDENCIES = frozenset(
    {
        "anyio",
        "bpe_openai",
        "chromadb",
        "ipykernel",
        "IPython",
        "ipywidgets",
        "jupyter_client",
        "mcp",
        "nbclient",
        "nbformat",
        "numpy",
        "onnx",
        "onnxruntime",
        "pathspec",
        "psutil",
        "pyseccomp",
        "rank_bm25",
        "re2",
        "seccomp",
        "snowballstemmer",
        "Stemmer",
        "tokenizers",
        "watchfiles",
        "yaml",
    }
)


def _is_current_directory(entry: str) -> bool:
    if entry in ("", "."):
        return True
    try:
        return os.path.samefile(entry, os.curdir)
    except OSError:
        return False


class _DependencyFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if path is not None or fullname not in DEPENDENCIES:
            return None  # submodules resolve inside their package, which is already trusted
        search = [p for p in sys.path if isinstance(p, str) and not _is_current_directory(p)]
        spec = importlib.machinery.PathFinder.find_spec(fullname, search)
        if spec is not None:
            return spec
        for finder in sys.meta_path:
            if finder is self or finder is importlib.machinery.PathFinder:
                continue
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, None, target) if find is not None else None
            if spec is not None:
                return spec
        raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


_finder = _DependencyFinder()


def install() -> None:
    """Puts the finder first on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, _DependencyFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _finder)
