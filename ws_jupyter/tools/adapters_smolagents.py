"""Deprecated import path of :mod:`ws_jupyter.adapters.smolagents` (kept for one release)."""

from typing import TYPE_CHECKING

from .._moved import moved

moved(__name__, "ws_jupyter.adapters.smolagents")

if TYPE_CHECKING:  # pragma: no cover
    from ..adapters.smolagents import *  # noqa: F403
