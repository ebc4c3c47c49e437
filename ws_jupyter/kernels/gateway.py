"""Deprecated import path of :mod:`ws_jupyter.sandbox.kernels.gateway` (the same module object)."""

import sys

from ..sandbox.kernels import gateway as _module

sys.modules[__name__] = _module
