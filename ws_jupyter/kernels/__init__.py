"""Deprecated import path: the kernels live in :mod:`ws_jupyter.sandbox.kernels` now.

A sandbox owns its kernels, so the package moved inside the sandbox package. This module and its
submodules (``ws_jupyter.kernels.result``, ``.activity``, ``.gateway``, ...) are the *same*
module objects as the new ones, kept for one release; importing them warns once
(``DeprecationWarning``, which Python shows for code run in ``__main__`` and in notebooks).
The top-level names (``from ws_jupyter import ExecutionResult``) never moved.
"""

from __future__ import annotations

import warnings

from ..sandbox import kernels as _kernels

warnings.warn(
    "ws_jupyter.kernels moved to ws_jupyter.sandbox.kernels; the old import path goes away in the next "
    "release",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = list(_kernels.__all__)


def __getattr__(name: str) -> object:
    return getattr(_kernels, name)


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(globals()))
