"""Lazy public names for a package (PEP 562), so importing it stays fast.

A package lists ``name -> module`` and gets a module ``__getattr__`` that imports the module on
first access (then caches the value in the package) and a ``__dir__`` that shows the public names.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__, __dir__ = lazy_exports(__name__, {"Name": "pkg.module" or ".module"}, __all__)``."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return list(public)

    return __getattr__, __dir__
