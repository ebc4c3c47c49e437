"""The skill tools: ``skill``, ``skill_search`` and ``skill_read`` (``skills``).

The package keeps the names the module it replaced had, loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

_EXPORTS = {
    "SKILL_SPEC": "ws_jupyter.tools.skills.skills",
    "SKILL_SEARCH_SPEC": "ws_jupyter.tools.skills.skills",
    "SKILL_READ_SPEC": "ws_jupyter.tools.skills.skills",
}

__all__ = ["SKILL_READ_SPEC", "SKILL_SEARCH_SPEC", "SKILL_SPEC"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

if TYPE_CHECKING:  # pragma: no cover
    from .skills import SKILL_READ_SPEC, SKILL_SEARCH_SPEC, SKILL_SPEC
