"""Deprecated import path of :mod:`ws_jupyter.sandbox.kernels.kernel` (the same module object)."""

import sys

from ..sandbox.kernels import kernel as _module

sys.modules[__name__] = _module
