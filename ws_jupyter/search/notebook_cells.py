"""Search chunks of a Jupyter notebook: its cells' sources, outputs left out.

A notebook indexed as raw JSON would match its own JSON keys and — worse — the outputs of earlier
cells (a notebook that ran ``%ws search`` would find the HTML of its old results). Here each cell's
source becomes one chunk or more (long cells split like any text), with the cell's ``cell``
(0-based index), ``cell_id`` and ``cell_type`` in the hit's metadata, and line numbers counted
within the cell. A file that nbformat cannot read is indexed as plain text.

The indexer uses it through :func:`~ws_jupyter.search.chunking.register_chunker` (``.ipynb``).
"""

from __future__ import annotations

import logging
from typing import Any

from .chunking import DEFAULT_CHUNK_CHARS, DEFAULT_OVERLAP_LINES, Chunk, split_into_chunks

__all__ = ["notebook_chunks"]

log = logging.getLogger("ws_jupyter.search")


def notebook_chunks(path: str, text: str) -> list[Chunk] | None:
    """The chunks of the notebook ``text`` (``path`` is for messages); None if it is not one."""
    import nbformat

    try:
        nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
        cells = nb.get("cells") if isinstance(nb, dict) else None
        if not isinstance(cells, list):  # nbformat 3 keeps cells in worksheets
            cells = [c for ws in nb.get("worksheets", []) for c in ws.get("cells", [])]
    except Exception as exc:  # not a notebook after all: index the text as it is
        log.info("%s is not a readable notebook (%s): indexed as text", path, exc)
        return None
    chunks: list[Chunk] = []
    for index, cell in enumerate(cells):
        source: Any = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(source)
        if not isinstance(source, str) or not source.strip():
            continue
        meta: dict[str, Any] = {"cell": index, "cell_type": str(cell.get("cell_type", "code"))}
        if cell.get("id"):
            meta["cell_id"] = str(cell["id"])
        for piece in split_into_chunks(source, DEFAULT_CHUNK_CHARS, DEFAULT_OVERLAP_LINES):
            chunks.append(Chunk(piece.content, piece.start_line, piece.end_line, meta))
    return chunks or [Chunk("", 1, 1)]
