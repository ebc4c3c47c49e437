"""Deprecated import path of :mod:`ws_jupyter.filesystem.globs` (kept for one release)."""

from typing import TYPE_CHECKING

from .._moved import moved

moved(__name__, "ws_jupyter.filesystem.globs")

if TYPE_CHECKING:  # pragma: no cover
    from ..filesystem.globs import *  # noqa: F403
