"""A notebook file's own JSON layout, kept when it is written back.

Jupyter writes notebooks with a 1-space indent and sorted keys; Google Colab with a 2-space indent
and its own key order; other tools differently again. Re-serialising the whole file in one style
turns a one-line edit into a diff of every line. :func:`write_preserving` instead *splices*: every
cell that did not change keeps its exact bytes from the file as read, changed and new cells are
written in the file's style (its indent, separators, escaping, key order — sorted when the file's
keys are sorted, the cell's own order otherwise) and so are changed top-level values; nothing else
moves. The result is parsed back and compared with the notebook in memory before it is used: when
anything differs, or the layout cannot be followed (an unusual file), the whole notebook is written
in the file's style instead — never a file that says something other than the notebook.

The spans come from the standard library's JSON decoder (``raw_decode`` at each value), so
reading the layout costs one more parse of the text, paid only when a notebook is written.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Layout", "rejoined", "scan", "split_cell", "write_preserving"]

_WS = re.compile(r"[ \t\n\r]*")
_decoder = json.JSONDecoder()
_NON_ASCII_ESCAPE = re.compile(r"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})")


@dataclass
class Layout:
    """Where things are in a notebook's JSON text, and the style it is written in."""

    text: str
    top: dict[str, tuple[int, int]]  # top-level key -> span of its value
    cells: list[tuple[int, int]]  # span of each cell object
    raw_cells: list[Any]  # each cell as parsed (lists of lines as in the file)
    indent: str  # one level of indentation
    key_sep: str  # ": " or ":"
    ensure_ascii: bool
    sort_keys: bool

    def dumps(self, value: Any, level: int) -> str:
        """``value`` in this file's style, its lines indented for nesting ``level``."""
        text = json.dumps(
            value,
            indent=self.indent if self.indent else None,
            separators=(",", self.key_sep),
            sort_keys=self.sort_keys,
            ensure_ascii=self.ensure_ascii,
            allow_nan=False,
        )
        return text.replace("\n", "\n" + self.indent * level) if self.indent else text


def _skip(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return m.end() if m else pos


def _object_items(text: str, pos: int) -> tuple[list[tuple[str, int, int]], int] | None:
    """``([(key, value start, value end)...], end)`` of the JSON object at ``pos``."""
    if text[pos : pos + 1] != "{":
        return None
    items: list[tuple[str, int, int]] = []
    pos = _skip(text, pos + 1)
    if text[pos : pos + 1] == "}":
        return items, pos + 1
    while True:
        key, pos = _decoder.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos : pos + 1] != ":":
            return None
        start = _skip(text, pos + 1)
        _, end = _decoder.raw_decode(text, start)
        items.append((key, start, end))
        pos = _skip(text, end)
        if text[pos : pos + 1] == "}":
            return items, pos + 1
        if text[pos : pos + 1] != ",":
            return None
        pos = _skip(text, pos + 1)


def _sorted_everywhere(value: Any) -> bool:
    if isinstance(value, dict):
        keys = list(value)
        return keys == sorted(keys) and all(_sorted_everywhere(v) for v in value.values())
    if isinstance(value, list):
        return all(_sorted_everywhere(v) for v in value[:50])
    return True


def scan(text: str) -> Layout | None:
    """The layout of notebook JSON ``text``, or None when it cannot be followed."""
    try:
        pos = _skip(text, 0)
        parsed = _object_items(text, pos)
        if parsed is None:
            return None
        items, _ = parsed
        top = {key: (start, end) for key, start, end in items}
        if len(top) != len(items) or "cells" not in top:
            return None
        start, end = top["cells"]
        if text[start] != "[":
            return None
        cells: list[tuple[int, int]] = []
        raw_cells: list[Any] = []
        pos = _skip(text, start + 1)
        if text[pos] != "]":
            while True:
                cell, cell_end = _decoder.raw_decode(text, pos)
                cells.append((pos, cell_end))
                raw_cells.append(cell)
                pos = _skip(text, cell_end)
                if text[pos] == "]":
                    break
                if text[pos] != ",":
                    return None
                pos = _skip(text, pos + 1)
    except (ValueError, IndexError, RecursionError):
        return None
    first_key = _skip(text, _skip(text, 0) + 1)
    newline = text.rfind("\n", 0, first_key)
    indent = text[newline + 1 : first_key] if newline >= 0 else ""
    if indent.strip(" \t"):
        return None
    after_key = text[items[0][1] - 2 : items[0][1]]
    key_sep = ": " if after_key.endswith(" ") or after_key == ": " else ":"
    ensure_ascii = text.isascii() and bool(_NON_ASCII_ESCAPE.search(text))
    order_probe = {k: None for k in top}
    sort_keys = list(order_probe) == sorted(order_probe) and all(_sorted_everywhere(c) for c in raw_cells[:20])
    return Layout(text, top, cells, raw_cells, indent, key_sep, ensure_ascii, sort_keys)


def _rejoin_bundle(bundle: Any) -> Any:
    if not isinstance(bundle, dict):
        return bundle
    out = dict(bundle)
    for key, value in bundle.items():
        json_mime = key == "application/json" or (key.startswith("application/") and key.endswith("+json"))
        if not json_mime and isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[key] = "".join(value)
    return out


def rejoined(cell: Any) -> Any:
    """A raw cell as nbformat holds it in memory (lists of lines joined; the file's cell is not
    changed) — what an unchanged cell of the notebook compares equal to."""
    if not isinstance(cell, dict):
        return cell
    out = dict(cell)
    if isinstance(out.get("source"), list):
        out["source"] = "".join(s for s in out["source"] if isinstance(s, str))
    if isinstance(out.get("attachments"), dict):
        out["attachments"] = {k: _rejoin_bundle(v) for k, v in out["attachments"].items()}
    if out.get("cell_type") == "code" and isinstance(out.get("outputs"), list):
        outputs = []
        for output in out["outputs"]:
            if isinstance(output, dict):
                output = dict(output)
                kind = output.get("output_type", "")
                if kind in ("execute_result", "display_data") and isinstance(output.get("data"), dict):
                    output["data"] = _rejoin_bundle(output["data"])
                elif kind and isinstance(output.get("text"), list):
                    output["text"] = "".join(output["text"])
            outputs.append(output)
        out["outputs"] = outputs
    metadata = out.get("metadata")
    if isinstance(metadata, dict) and "trusted" in metadata:  # nbformat drops it on read
        out["metadata"] = {k: v for k, v in metadata.items() if k != "trusted"}
    return out


def _split_bundle(bundle: Any) -> None:
    if isinstance(bundle, dict):
        for key, value in list(bundle.items()):
            if isinstance(value, str) and (key.startswith("text/") or key in ("application/javascript", "image/svg+xml")):
                bundle[key] = value.splitlines(True)


def split_cell(cell: Any, *, source_as_list: bool = True) -> Any:
    """A plain-JSON copy of an in-memory cell with its text split into lines, as Jupyter writes it
    (``source_as_list=False`` keeps the source one string, for files that write it so)."""
    out = json.loads(json.dumps(cell, allow_nan=False))
    if source_as_list and isinstance(out.get("source"), str):
        out["source"] = out["source"].splitlines(True)
    for attachment in (out.get("attachments") or {}).values():
        _split_bundle(attachment)
    if out.get("cell_type") == "code":
        for output in out.get("outputs") or []:
            kind = output.get("output_type")
            if kind in ("execute_result", "display_data"):
                _split_bundle(output.get("data"))
            elif kind == "stream" and isinstance(output.get("text"), str):
                output["text"] = output["text"].splitlines(True)
    return out


def _ordered_like(value: Any, template: Any) -> Any:
    """``value`` with its keys in ``template``'s order (keys ``template`` lacks last)."""
    if not isinstance(value, dict) or not isinstance(template, dict):
        return value
    keys = [k for k in template if k in value] + [k for k in value if k not in template]
    return {k: _ordered_like(value[k], template.get(k)) for k in keys}


def _plain_cell(layout: Layout, cell: Any, template: Any) -> Any:
    source_as_list = not (isinstance(template, dict) and isinstance(template.get("source"), str))
    plain = split_cell(cell, source_as_list=source_as_list)
    return plain if layout.sort_keys else _ordered_like(plain, template)


def write_preserving(layout: Layout, node: Any, origin: dict[int, int]) -> str | None:
    """``node`` (the notebook in memory) written over ``layout``'s text: unchanged cells keep
    their bytes (``origin`` maps ``id()`` of a cell object to its index in the file as read).
    None when the layout cannot be followed; the caller then writes the whole notebook."""
    text = layout.text
    top_keys = [k for k in node if k != "cells"]
    if set(top_keys) | {"cells"} != set(layout.top):
        return None
    cells = node["cells"]
    spans = layout.cells
    if spans:
        first_start, last_end = spans[0][0], spans[-1][1]
        open_gap = text[layout.top["cells"][0] + 1 : first_start]
        close_gap = text[last_end : layout.top["cells"][1] - 1]
        sep = text[spans[0][1] : spans[1][0]] if len(spans) > 1 else "," + open_gap
    else:
        level_indent = layout.indent * 2
        open_gap, close_gap = ("\n" + level_indent, "\n" + layout.indent) if layout.indent else ("", "")
        sep = "," + open_gap
    template = layout.raw_cells[0] if layout.raw_cells else None
    parts: list[str] = []
    for cell in cells:
        k = origin.get(id(cell))
        if k is not None and k < len(spans) and rejoined(layout.raw_cells[k]) == cell:
            parts.append(text[spans[k][0] : spans[k][1]])
        else:
            shape = layout.raw_cells[k] if k is not None and k < len(spans) else template
            parts.append(layout.dumps(_plain_cell(layout, cell, shape), 2))
    cells_text = "[" + open_gap + sep.join(parts) + close_gap + "]" if parts else "[]"
    # top-level values: the file's bytes where unchanged
    pieces: list[tuple[int, int, str]] = []
    for key, (start, end) in layout.top.items():
        if key == "cells":
            pieces.append((start, end, cells_text))
            continue
        before = _decoder.raw_decode(text, start)[0]
        if before != node[key]:
            pieces.append((start, end, layout.dumps(_ordered_like(copy.deepcopy(node[key]), before), 1)))
    out, pos = [], 0
    for start, end, piece in sorted(pieces):
        out.append(text[pos:start])
        out.append(piece)
        pos = end
    out.append(text[pos:])
    return "".join(out)
