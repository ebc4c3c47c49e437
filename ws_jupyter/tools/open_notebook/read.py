"""``open_notebook_read``: the notebook the user has open, as the user sees it now.

Unsaved edits included. The cells are rendered as ``workspace_read_file`` renders a notebook
(index, type, id, execution count, sources with cell-relative line numbers, compact outputs,
images as media) and each header adds the cell's ``v=`` version — what an edit must quote — and
its state (unsaved, active, the user typing in it, running, queued). Above the cells: the
notebook's path and state (kernel, running and queued cells, unsaved changes, the review mode).
"""

from __future__ import annotations

from typing import Any

from ...notebooks.render import render_cells
from ..base import ToolCall, ToolSpec
from ..facts import DEFAULT_MAX_MEDIA_BYTES, DEFAULT_MEDIA_TYPES, LOOKS, WORKSPACE_TOOLS
from ..schema import Param
from ..types import MediaPart, ToolOutput, ToolResult
from .common import cell_note, link_of, notebook_head

__all__ = ["SPEC"]

DESCRIPTION = (
    "Read the notebook the user has open right now, unsaved edits included: cells as "
    "[index] type id In[n] v=VERSION with sources (cell-relative line numbers) and compact outputs, "
    "plus which cell is active (and whether the user is typing in it), which cells are unsaved, "
    "running or queued, and the kernel's state. Give cells (ids) to read only those, or offset/limit "
    "to page. To change a cell, pass its v= version to open_notebook_edit."
)

PARAMS = (
    Param("cells", "string_list", "Ids of the cells to read (in notebook order). Default: all, paged.",
          accept_single=True, max_items=500),
    Param("offset", "integer", "Index of the first cell to read (0-based).", default=0, minimum=0),
    Param("limit", "integer", "Most cells to read.", minimum=1, maximum=500),
)


def read(call: ToolCall) -> ToolOutput:
    link = link_of(call)
    ids = call.args["cells"]
    view = link.read(cell_ids=ids, offset=call.args["offset"], limit=call.args["limit"])
    by_id = {c.id: c for c in view.cells}
    head = notebook_head(view)
    if view.missing:
        head.append(f"[no cell with id {', '.join(view.missing)} in the open notebook]")
    paged = ids is None and bool(view.cells) and view.cells[-1].index < view.total - 1
    if ids is None and call.args["offset"] >= view.total and view.total:
        head.append(f"[offset {call.args['offset']} is past the last cell: the notebook has {view.total} cells]")

    def notes(_index: int, cell: Any) -> str:
        return cell_note(view, by_id[cell["id"]])

    rendering = render_cells(
        [(c.index, c.cell) for c in view.cells],
        head=head,
        total=view.total,
        paged=paged,
        budget=call.max_tokens,
        attach=tuple(call.option("media_types", DEFAULT_MEDIA_TYPES)),
        max_media_bytes=call.option("max_media_bytes", DEFAULT_MAX_MEDIA_BYTES),
        notes=notes,
    )
    if rendering.images:
        media = tuple(MediaPart.from_bytes(img.mime_type, img.data) for img in rendering.images)
        return ToolResult(text=rendering.text, media=media)
    return rendering.text


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.OPEN_NOTEBOOK.READ,
    description=DESCRIPTION,
    params=PARAMS,
    run=read,
    title="Read the open notebook",
    hints=LOOKS,
    needs={"open_notebook"},
    writes=False,
    options=("media_types", "max_media_bytes"),
)
