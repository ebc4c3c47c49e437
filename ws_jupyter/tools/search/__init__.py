"""The search tools: ``workspace_search`` (``search``) and ``workspace_index`` (``index``).

The package keeps the names the module it replaced had (``SEARCH_SPEC``, ``INDEX_SPEC``,
``available_modes``), loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

_EXPORTS = {
    "INDEX_SPEC": "ws_jupyter.tools.search.index",
    "SEARCH_SPEC": "ws_jupyter.tools.search.search",
    "available_modes": "ws_jupyter.tools.search.search",
}

__all__ = ["INDEX_SPEC", "SEARCH_SPEC", "available_modes"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

if TYPE_CHECKING:  # pragma: no cover
    from .index import INDEX_SPEC
    from .search import SEARCH_SPEC, available_modes
