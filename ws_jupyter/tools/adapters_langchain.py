"""Deprecated import path of :mod:`ws_jupyter.adapters.langchain` (kept for one release)."""

from typing import TYPE_CHECKING

from .._moved import moved

moved(__name__, "ws_jupyter.adapters.langchain")

if TYPE_CHECKING:  # pragma: no cover
    from ..adapters.langchain import *  # noqa: F403
