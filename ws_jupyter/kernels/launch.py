"""Deprecated import path of :mod:`ws_jupyter.sandbox.kernels.launch` (the same module object)."""

import sys

from ..sandbox.kernels import launch as _module

sys.modules[__name__] = _module
