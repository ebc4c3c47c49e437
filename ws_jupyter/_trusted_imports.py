"""The package's own dependencies never resolve to files in the current directory.

A notebook kernel has its working directory on ``sys.path`` (``""``), and that directory is
often the workspace itself. ws-jupyter imports most dependencies lazily (``pathspec`` when a
listing first reads a ``.gitignore``, ``yaml`` when a skill is parsed, …), so an agent that
writes ``pathspec.py`` into the workspace would have it imported — and run — by the kernel, on
the host, outside any sandbox. A meta-path finder placed first handles exactly the top-level
names of the dependencies below: it looks for them on ``sys.path`` without the current
directory, then in the other finders (editable installs); a copy found only in the current
directory is reported as missing (a module found nowhere is ``None``, as Python's own finders
say it, so a library's ``importlib.util.find_spec("optional")`` probe keeps working).

The same holds for *any* top-level module that the package's own code asks for, directly or
through a library it called: the standard library's lazily imported modules (``csv`` when a
file's type is guessed, ``platform`` when numpy loads, ``resource`` in the grep child's set-up)
and a library's optional dependencies (``try: import orjson``) would otherwise be found in the
working directory first. Who asked is read from the call stack: the innermost frame that is
neither the import machinery nor an installed library (standard library, site-packages) decides
— the package's own code, or the user's (a notebook cell, a module next to it), whose imports
keep Python's usual order, so ``import mymodule`` in a notebook still finds ``mymodule.py``.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import os
import sys
import sysconfig
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


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    """Where installed code lives: the standard library and every site-packages directory."""
    import site

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages()}
    roots.update(p for p in sysconfig.get_paths().values() if p)
    user_site = site.getusersitepackages()
    if isinstance(user_site, str):
        roots.add(user_site)
    out = set()
    for root in roots:
        for variant in (os.path.abspath(root), os.path.realpath(root)):
            out.add(variant.rstrip(os.sep) + os.sep)
    return tuple(sorted(out))


@functools.lru_cache(maxsize=4096)
def _kind(filename: str) -> str:
    """What wrote the code in ``filename``: the package, a library (or the import machinery), the user."""
    if filename.startswith("<frozen "):
        return "library"
    if filename.startswith(_PACKAGE_DIR):
        return "package"
    if filename.startswith(_library_roots()):
        return "library"
    return "user"


def _asked_by_package() -> bool:
    """Whether the import being resolved was asked for by the package's code (directly, or by a
    library it called), not by the user's."""
    frame = sys._getframe(2)
    while frame is not None:
        kind = _kind(frame.f_code.co_filename)
        if kind != "library":
            return kind == "package"
        frame = frame.f_back  # type: ignore[assignment]
    return False


class _DependencyFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if path is not None:
            return None  # submodules resolve inside their package, which is already trusted
        if fullname in sys.builtin_module_names:
            return None
        if fullname not in DEPENDENCIES and not _asked_by_package():
            return None
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
        here = [p for p in sys.path if isinstance(p, str) and _is_current_directory(p)]
        if here and importlib.machinery.PathFinder.find_spec(fullname, here) is not None:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)  # only the cwd has it
        return None  # missing everywhere: importlib.util.find_spec() callers expect None, not an error


_finder = _DependencyFinder()


def install() -> None:
    """Puts the finder first on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, _DependencyFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _finder)
