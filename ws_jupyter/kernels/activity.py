"""Deprecated import path of :mod:`ws_jupyter.sandbox.kernels.activity` (the same module object)."""

import sys

from ..sandbox.kernels import activity as _module

sys.modules[__name__] = _module
