"""Deprecated import path of :mod:`ws_jupyter.sandbox.kernels.manager` (the same module object)."""

import sys

from ..sandbox.kernels import manager as _module

sys.modules[__name__] = _module
