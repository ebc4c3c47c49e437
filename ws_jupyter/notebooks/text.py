"""A notebook's text, cell by cell: what search indexes and grep searches instead of the JSON.

Each :class:`CellText` is one cell's source (``part="source"``) or, when asked for, the text of its
outputs (``part="outputs"``: streams, ``text/plain`` results, tracebacks — never HTML or images).
Line numbers of a hit in ``text`` are the cell's own (line 1 is the cell's first line), which is
how locations are written: ``analysis.ipynb [cell 4]:2``.

>>> [c.label for c in notebook_texts('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, '
...     '"cells": [{"id": "a", "cell_type": "markdown", "metadata": {}, "source": "# Hi"}]}')]
['[cell 0]']
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import NotebookError
from .document import Notebook, cell_source
from .outputs import data_uri_images, outputs_text

__all__ = ["CellText", "cell_texts", "notebook_texts"]


@dataclass(frozen=True)
class CellText:
    """The text of one cell's source or outputs, with where it is in the notebook."""

    index: int
    cell_id: str | None
    cell_type: str
    part: str  # "source" | "outputs"
    text: str

    @property
    def label(self) -> str:
        """``[cell 4]``, or ``[cell 4 output]`` for its outputs: the location prefix of a hit."""
        return f"[cell {self.index}{' output' if self.part == 'outputs' else ''}]"

    @property
    def key(self) -> str:
        """``cell-4`` / ``cell-4-outputs``: a stable suffix for search document ids."""
        return f"cell-{self.index}" + ("-outputs" if self.part == "outputs" else "")

    def metadata(self) -> dict[str, str | int]:
        """Search metadata (scalar values only, as vector stores require)."""
        meta: dict[str, str | int] = {"cell": self.index, "cell_type": self.cell_type, "part": self.part}
        if self.cell_id:
            meta["cell_id"] = self.cell_id
        return meta


def cell_texts(nb: Notebook, *, outputs: bool = False) -> list[CellText]:
    """Every non-empty cell source, in order; with ``outputs``, each code cell's output text after
    its source."""
    out: list[CellText] = []
    for i, cell in enumerate(nb.cells):
        cid = cell.get("id")
        cid = cid if isinstance(cid, str) else None
        kind = str(cell.get("cell_type", "?"))
        src = cell_source(cell)
        if kind != "code":  # an inline image is not text: its label is, on the same line
            src = data_uri_images(src)[0]
        if src.strip():
            out.append(CellText(i, cid, kind, "source", src))
        if outputs and kind == "code" and isinstance(cell.get("outputs"), list):
            text = outputs_text(cell["outputs"])
            if text.strip():
                out.append(CellText(i, cid, kind, "outputs", text[:-1] if text.endswith("\n") else text))
    return out


def notebook_texts(text: str | bytes, *, outputs: bool = False) -> list[CellText] | None:
    """:func:`cell_texts` of notebook JSON; None when it is not a notebook nbformat can read."""
    try:
        nb = Notebook.parse(text)
    except NotebookError:
        return None
    return cell_texts(nb, outputs=outputs)
