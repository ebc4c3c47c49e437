"""Text helpers every floor may use: terminal output cleaned (``ansi``), token counts for
output budgets (``tokens``), and output shaped to a budget (``shaping``: tails, head/tail cuts,
numbered lines). Pure functions of strings: nothing here knows a workspace, a tool or a notebook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_EXPORTS = {
    "strip_ansi": "ws_jupyter.text.ansi",
    "count_tokens": "ws_jupyter.text.tokens",
    "tokenizer_name": "ws_jupyter.text.tokens",
    "use_tokenizer": "ws_jupyter.text.tokens",
    "apply_tail": "ws_jupyter.text.shaping",
    "truncate_head": "ws_jupyter.text.shaping",
    "truncate_head_tail": "ws_jupyter.text.shaping",
}

__all__ = [
    "apply_tail",
    "count_tokens",
    "strip_ansi",
    "tokenizer_name",
    "truncate_head",
    "truncate_head_tail",
    "use_tokenizer",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

if TYPE_CHECKING:  # pragma: no cover
    from .ansi import strip_ansi
    from .shaping import apply_tail, truncate_head, truncate_head_tail
    from .tokens import count_tokens, tokenizer_name, use_tokenizer
