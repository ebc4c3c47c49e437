"""The JSON of kernel messages, decoded within the notebooks' nesting bound.

Code in a kernel holds the key that signs its messages, so it can send any JSON. Nested a few
thousand levels deep, Python's decoder raises ``RecursionError``; a few hundred levels are enough
for what walks the value afterwards (nbformat's validation, copies, ``repr``) to fail the same
way. The rule is the notebooks' (``MAX_JSON_DEPTH``, 100 levels), counted as the value will sit
in a notebook: a message's content becomes a cell output four levels down (notebook, cells, cell,
outputs), so content may nest ``MAX_DEPTH`` levels. Deeper parts are replaced by
``TOO_DEEP_NOTE``; a part too deep to decode at all becomes ``{TOO_DEEP_KEY: TOO_DEEP_NOTE}``,
which consumers report in place of the output ("an output ... was dropped").

``bounded_unpacker`` wraps a jupyter_client ``Session``'s decoder (local kernels and the clients
``workspace_run_notebook`` drives); ``decode`` is the same for a gateway's websocket frames.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ...notebooks.document import MAX_JSON_DEPTH

__all__ = [
    "MALFORMED",
    "MAX_DEPTH",
    "TOO_DEEP_KEY",
    "TOO_DEEP_NOTE",
    "bound_depth",
    "bounded_unpacker",
    "decode",
    "too_deep",
]

#: What decoding a message that is not a Jupyter message raises (code in the kernel can write
#: anything to its sockets).
MALFORMED = (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError, RecursionError)

#: Levels from a notebook's root down to a cell output (what a message's content becomes).
_OUTPUT_LEVEL = 4
#: How deep a message's content may nest: a notebook holding it stays within MAX_JSON_DEPTH.
MAX_DEPTH = MAX_JSON_DEPTH - _OUTPUT_LEVEL
TOO_DEEP_NOTE = f"[JSON nested deeper than {MAX_DEPTH} levels: not kept]"
TOO_DEEP_KEY = "ws_jupyter_too_deep"


def _within(value: Any, limit: int) -> bool:
    """True when no list or dict in ``value`` lies deeper than ``limit`` (the root is level 1)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return True


def _cut(value: Any, depth: int, limit: int) -> Any:
    if isinstance(value, dict):
        return TOO_DEEP_NOTE if depth > limit else {k: _cut(v, depth + 1, limit) for k, v in value.items()}
    if isinstance(value, list):
        return TOO_DEEP_NOTE if depth > limit else [_cut(v, depth + 1, limit) for v in value]
    return value


def bound_depth(value: Any, limit: int = MAX_DEPTH) -> Any:
    """``value`` with every list or dict deeper than ``limit`` levels replaced by ``TOO_DEEP_NOTE``
    (``value`` itself when nothing is that deep; the copy recurses at most ``limit`` levels).

    >>> bound_depth([[["x"]]], 2)
    [['[JSON nested deeper than 96 levels: not kept]']]
    """
    if not isinstance(value, (dict, list)) or _within(value, limit):
        return value
    return _cut(value, 1, limit)


def _shallow(raw: Any, limit: int) -> bool:
    """Fewer opening brackets than the limit: the decoded value cannot be too deep (a C scan)."""
    if isinstance(raw, memoryview):
        raw = raw.tobytes()
    if isinstance(raw, (bytes, bytearray)):
        return raw.count(b"[") + raw.count(b"{") <= limit
    if isinstance(raw, str):
        return raw.count("[") + raw.count("{") <= limit
    return False


def bounded_unpacker(unpack: Callable[[Any], Any], limit: int = MAX_DEPTH) -> Callable[[Any], Any]:
    """``unpack`` (a ``Session.unpack``) made safe for any nesting: see the module docstring."""

    def decode_bounded(raw: Any) -> Any:
        try:
            value = unpack(raw)
        except RecursionError:
            return {TOO_DEEP_KEY: TOO_DEEP_NOTE}
        return value if _shallow(raw, limit) else bound_depth(value, limit)

    decode_bounded.__wrapped__ = unpack  # type: ignore[attr-defined]
    return decode_bounded


#: ``json.loads`` within the bound, for a gateway's websocket frames: a whole message, whose
#: content lies one level down.
decode = bounded_unpacker(json.loads, MAX_DEPTH + 1)


def too_deep(content: Any) -> bool:
    """True for the content of a message too deep to decode (its output was dropped)."""
    return isinstance(content, Mapping) and TOO_DEEP_KEY in content
