"""Deprecated import path of :mod:`ws_jupyter.sandbox.kernels.messages` (the same module object)."""

import sys

from ..sandbox.kernels import messages as _module

sys.modules[__name__] = _module
