"""Deprecated import path of :mod:`ws_jupyter.adapters.openai_agents` (kept for one release)."""

from typing import TYPE_CHECKING

from .._moved import moved

moved(__name__, "ws_jupyter.adapters.openai_agents")

if TYPE_CHECKING:  # pragma: no cover
    from ..adapters.openai_agents import *  # noqa: F403
