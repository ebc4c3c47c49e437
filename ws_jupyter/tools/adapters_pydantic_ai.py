"""Deprecated import path of :mod:`ws_jupyter.adapters.pydantic_ai` (kept for one release)."""

from typing import TYPE_CHECKING

from .._moved import moved

moved(__name__, "ws_jupyter.adapters.pydantic_ai")

if TYPE_CHECKING:  # pragma: no cover
    from ..adapters.pydantic_ai import *  # noqa: F403
