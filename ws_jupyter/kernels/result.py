"""Deprecated import path of :mod:`ws_jupyter.sandbox.kernels.result` (the same module object)."""

import sys

from ..sandbox.kernels import result as _module

sys.modules[__name__] = _module
