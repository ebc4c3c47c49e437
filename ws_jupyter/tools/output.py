"""Deprecated import path: output shaping moved to :mod:`ws_jupyter.text.shaping` and
``strip_ansi`` to :mod:`ws_jupyter.text.ansi` (kept for one release)."""

import warnings

from .._moved import importer_stacklevel
from ..text.ansi import strip_ansi
from ..text.shaping import *  # noqa: F403
from ..text.shaping import __all__ as _shaping

warnings.warn(
    "ws_jupyter.tools.output moved to ws_jupyter.text.shaping (strip_ansi: ws_jupyter.text.ansi); "
    "the old import path will be removed in the next release",
    DeprecationWarning,
    stacklevel=importer_stacklevel(),
)

__all__ = [*_shaping, "strip_ansi"]
