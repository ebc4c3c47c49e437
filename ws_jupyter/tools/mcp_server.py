"""Deprecated import path of :mod:`ws_jupyter.adapters.mcp_server` (kept for one release)."""

from typing import TYPE_CHECKING

from .._moved import moved

moved(__name__, "ws_jupyter.adapters.mcp_server")

if TYPE_CHECKING:  # pragma: no cover
    from ..adapters.mcp_server import *  # noqa: F403
