"""Notebooks as workspace documents: the one place that reads, checks and writes ``.ipynb`` files.

``document`` (:class:`Notebook`: nbformat read/validate/write, cells by id or index, edits),
``outputs`` (bounded summaries of cell outputs: text, errors, images, rich MIME types) and
``render`` (the text an agent reads for a notebook). The agent tools, the search indexer, grep and
the Jupyter views all use these; nothing else parses notebook JSON. No IPython or ipywidgets here.

>>> from ws_jupyter.notebooks import Notebook
>>> nb = Notebook.load(ws.filesystem, "analysis.ipynb")     # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_EXPORTS = {
    "CELL_TYPES": "ws_jupyter.notebooks.document",
    "MAX_NOTEBOOK_BYTES": "ws_jupyter.notebooks.document",
    "CellRef": "ws_jupyter.notebooks.document",
    "Notebook": "ws_jupyter.notebooks.document",
    "cell_source": "ws_jupyter.notebooks.document",
    "is_notebook_path": "ws_jupyter.notebooks.document",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

if TYPE_CHECKING:  # pragma: no cover
    from .document import CELL_TYPES, MAX_NOTEBOOK_BYTES, CellRef, Notebook, cell_source, is_notebook_path
