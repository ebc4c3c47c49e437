"""Deprecated import path of :mod:`ws_jupyter.sandbox.kernels.config` (the same module object)."""

import sys

from ..sandbox.kernels import config as _module

sys.modules[__name__] = _module
