"""Deprecated import path of :mod:`ws_jupyter.install.kernel` (kept for one release)."""

from typing import TYPE_CHECKING

from .._moved import moved

moved(__name__, "ws_jupyter.install.kernel")

if TYPE_CHECKING:  # pragma: no cover
    from ..install.kernel import *  # noqa: F403
