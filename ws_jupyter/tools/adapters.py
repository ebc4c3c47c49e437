"""Deprecated import path of :mod:`ws_jupyter.adapters.chat` (kept for one release)."""

from typing import TYPE_CHECKING

from .._moved import moved

moved(__name__, "ws_jupyter.adapters.chat")

if TYPE_CHECKING:  # pragma: no cover
    from ..adapters.chat import *  # noqa: F403
