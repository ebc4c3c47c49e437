"""Old import paths of modules that moved, kept working for one release.

The old paths have no files: an import finder (installed by the package's ``__init__``) hands out
the new modules under their old names, so an old path cannot drift from its new home. Importing
an old path warns once (``DeprecationWarning``, attributed to the importing code — which Python
shows for code run in ``__main__`` and in notebooks) and gives the new module itself: the same
module object, so every name in it (and anything patched on it) is shared. A moved package's
submodules follow it (``ws_jupyter.kernels.result`` is ``ws_jupyter.sandbox.kernels.result``).
A module whose names went to several new modules is a module of its own that forwards each name
to the first new module that has it. docs/reference/index.md lists the old paths under
"Deprecated import paths".
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import threading
import warnings
from collections.abc import Mapping, Sequence
from importlib.machinery import ModuleSpec
from types import FrameType, ModuleType

__all__ = ["MOVED", "install"]

#: old module path -> its new home (several: the old module's names were split between them).
MOVED: Mapping[str, str | tuple[str, ...]] = {
    "ws_jupyter.kernels": "ws_jupyter.sandbox.kernels",
    "ws_jupyter.tools.tokens": "ws_jupyter.text.tokens",
    "ws_jupyter.tools.output": ("ws_jupyter.text.shaping", "ws_jupyter.text.ansi"),
    "ws_jupyter.tools.globs": "ws_jupyter.filesystem.globs",
    "ws_jupyter.tools.adapters": "ws_jupyter.adapters.chat",
    "ws_jupyter.tools.adapters_langchain": "ws_jupyter.adapters.langchain",
    "ws_jupyter.tools.adapters_openai_agents": "ws_jupyter.adapters.openai_agents",
    "ws_jupyter.tools.adapters_pydantic_ai": "ws_jupyter.adapters.pydantic_ai",
    "ws_jupyter.tools.adapters_smolagents": "ws_jupyter.adapters.smolagents",
    "ws_jupyter.tools.mcp_server": "ws_jupyter.adapters.mcp_server",
    "ws_jupyter.model_install": "ws_jupyter.install.model",
    "ws_jupyter.jupyter.kernel_install": "ws_jupyter.install.kernel",
    # the tools' modules, now in the wings of ws_jupyter.tools
    **{f"ws_jupyter.tools.{name}": f"ws_jupyter.tools.files.{name}" for name in (
        "checkpoint", "delete", "edit_file", "file_stat", "list_files", "mkdir", "notebook_edit",
        "notebook_files", "read_file", "write_file",
    )},
    **{f"ws_jupyter.tools.{name}": f"ws_jupyter.tools.sandbox.{name}" for name in (
        "execute_command", "kernels", "processes", "run_notebook", "shell_tail",
    )},
    "ws_jupyter.tools.grep_confine": "ws_jupyter.tools.grep.confine",
    "ws_jupyter.tools.grep_notebooks": "ws_jupyter.tools.grep.notebooks",
    "ws_jupyter.tools.regex": "ws_jupyter.tools.grep.regex",
    "ws_jupyter.tools.rules_scan": "ws_jupyter.tools.grep.rules_scan",
}  # fmt: skip


def _new_home(fullname: str) -> tuple[str, tuple[str, ...]] | None:
    """(the old path that moved, the new module paths) for ``fullname``, or None."""
    if fullname in MOVED:
        target = MOVED[fullname]
        return fullname, (target,) if isinstance(target, str) else target
    package, _, _ = fullname.rpartition(".")
    while package:
        home = MOVED.get(package)
        if isinstance(home, str):  # a submodule of a package that moved
            return package, (home + fullname[len(package) :],)
        package, _, _ = package.rpartition(".")
    return None


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths of :data:`MOVED` (and the submodules of moved packages)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith("ws_jupyter.") or _new_home(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        found = _new_home(module.__name__)
        assert found is not None  # find_spec said so
        moved, homes = found
        if moved == module.__name__:  # a package's submodules: its own import warned already
            warnings.warn(
                f"{moved} moved to {' and '.join(homes)}; the old import path goes away in the next release",
                DeprecationWarning,
                stacklevel=_importer_stacklevel(),
            )
        if len(homes) == 1:
            # the import system returns what sys.modules holds once this ran: the new module itself
            sys.modules[module.__name__] = importlib.import_module(homes[0])
            return
        _forward(module, [importlib.import_module(home) for home in homes])


def _forward(module: ModuleType, homes: list[ModuleType]) -> None:
    """Makes ``module`` give each name of ``homes`` (the first that has it)."""
    names: dict[str, None] = {}
    for home in homes:
        names.update(dict.fromkeys(getattr(home, "__all__", ())))

    def __getattr__(name: str) -> object:
        for home in homes:
            if hasattr(home, name):
                return getattr(home, name)
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

    module.__all__ = list(names)  # type: ignore[attr-defined]
    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    module.__dir__ = lambda: sorted(names)  # type: ignore[method-assign]


def _importer_stacklevel() -> int:
    """The ``stacklevel`` that attributes a warning of :meth:`_OldPaths.exec_module` to the code
    that imported the old path (``import x``, ``from x import y``, ``importlib.import_module``),
    past the import machinery: ``warnings`` skips the frames of ``importlib._bootstrap`` itself
    but counts the others (``importlib.import_module``)."""
    frame: FrameType | None = sys._getframe(2)  # past this function and exec_module
    level = 2
    while frame is not None and "importlib" in frame.f_code.co_filename:
        if "_bootstrap" not in frame.f_code.co_filename:
            level += 1
        frame = frame.f_back
    return level


_installed = False
_lock = threading.Lock()


def install() -> None:
    """Puts the finder of the old paths first on ``sys.meta_path`` (once)."""
    global _installed
    with _lock:
        if not _installed:
            sys.meta_path.insert(0, _OldPaths())
            _installed = True
