"""Deprecated import path of :mod:`ws_jupyter.text.tokens` (kept for one release)."""

from typing import TYPE_CHECKING

from .._moved import moved

moved(__name__, "ws_jupyter.text.tokens")

if TYPE_CHECKING:  # pragma: no cover
    from ..text.tokens import *  # noqa: F403
