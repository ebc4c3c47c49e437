"""Deprecated import path: the kernels live in :mod:`ws_jupyter.sandbox.kernels` now.

A sandbox owns its kernels, so the package moved inside the sandbox package. This package and
its submodules (``ws_jupyter.kernels.result``, ``.activity``, ``.gateway``, ...) are the *same*
module objects as the new ones, kept for one release; importing them warns once
(``DeprecationWarning``, which Python shows for code run in ``__main__`` and in notebooks).
The top-level names (``from ws_jupyter import ExecutionResult``) never moved.

The submodules have no files here: an import finder hands out the new modules under their old
names, so the old path cannot drift from the new one.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

from ..sandbox import kernels as _kernels

warnings.warn(
    "ws_jupyter.kernels moved to ws_jupyter.sandbox.kernels; the old import path goes away in the next "
    "release",
    DeprecationWarning,
    stacklevel=2,
)

_NEW = _kernels.__name__
__all__ = list(_kernels.__all__)
__path__.clear()  # no submodule is looked for in this folder: _OldSubmodules hands them out


class _OldSubmodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``ws_jupyter.kernels.X`` is ``ws_jupyter.sandbox.kernels.X`` (the module object itself)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith(__name__ + "."):
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        # the import system returns what sys.modules holds once this ran: the new module
        sys.modules[module.__name__] = importlib.import_module(_NEW + module.__name__[len(__name__) :])


sys.meta_path.insert(0, _OldSubmodules())


def __getattr__(name: str) -> object:
    return getattr(_kernels, name)


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(globals()))
