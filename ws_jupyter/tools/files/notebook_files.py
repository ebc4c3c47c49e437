"""How the file tools treat ``.ipynb`` files: as notebooks, through :mod:`ws_jupyter.notebooks`.

* ``workspace_read_file`` renders the cells (:func:`read_notebook`): ``offset``/``limit`` count
  cells (``offset`` is the first cell index, 0-based), output images come back as media parts like
  an image read, and ``raw=true`` (or an explicit ``encoding``) gives the JSON text instead. A
  ``.ipynb`` that is not a readable notebook is shown as text, with the reason.
* ``workspace_write_file`` accepts notebook JSON only (:func:`check_notebook_text`): the content
  must be a notebook ``nbformat.validate`` accepts. Anything else — ``print('hi')``, an empty
  string, JSON that is not a notebook — is refused with a message naming
  ``workspace_notebook_edit``, which creates a notebook from its first cell (``edit_mode='insert'``
  on a path that does not exist yet). The rule was chosen over "wrap the text in a one-cell
  notebook" because nothing in plain text says which type its cells should have.
* ``workspace_edit_file`` (:func:`edit_notebook`) looks for ``old_string`` in the cell sources —
  the text ``workspace_read_file`` shows — and replaces it there (an edited code cell's outputs and
  execution count are cleared, as with ``workspace_notebook_edit``). Text found only in the JSON
  (metadata, say, after a ``raw=true`` read) is replaced in the JSON, and the result must still be
  a valid notebook. Either way an edit that would leave the file invalid is refused, unwritten.

Read tracking counts cells for notebooks: a read of cells 2-5 records positions 3-6 (cell index +
1), so with ``require_read_before_write`` a cell must have been shown before it is changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...errors import FileReadRequiredError, FileTooLargeError, NotebookError, WorkspaceError
from ...filesystem.reading import MAX_FILE_BYTES, decode_text, read_limited
from ...notebooks.document import Notebook, cell_source
from ...notebooks.render import render_notebook
from ...notebooks.seen import carried, index_problem, seen_objects
from ...notebooks.seen import shown as shown_cells
from ..base import ToolCall
from ..facts import DEFAULT_MAX_MEDIA_BYTES, DEFAULT_MEDIA_TYPES
from ..types import MediaPart, ToolErrorText, ToolOutput, ToolResult

if TYPE_CHECKING:
    from ...filesystem.types import FileStat

__all__ = [
    "check_cell_at_index",
    "check_cells_read",
    "check_notebook_text",
    "edit_notebook",
    "read_notebook",
    "record_written",
]

NOTEBOOK_EDIT_TOOL = "workspace_notebook_edit"


def read_notebook(call: ToolCall, key: str, st: FileStat, rel: str) -> tuple[ToolOutput | None, str]:
    """``(rendered notebook, "")``, or ``(None, note)`` when the file is not a readable notebook:
    the caller then shows its text, with the note saying why."""
    fs = call.filesystem()
    try:
        nb = Notebook.load(fs, rel)
    except (NotebookError, FileTooLargeError) as exc:
        return None, f"[not readable as a notebook: {exc}; showing the file as text]"
    offset = call.args["offset"] or 0
    limit = call.args["limit"]
    attach = tuple(call.option("media_types", DEFAULT_MEDIA_TYPES))
    common: dict[str, Any] = {
        "label": rel,
        "limit": limit,
        "budget": call.max_tokens,
        "numbers": call.args["show_line_numbers"],
        "attach": attach,
        "max_media_bytes": call.option("max_media_bytes", DEFAULT_MAX_MEDIA_BYTES),
        "size": st.size,
    }
    cell = call.args.get("cell")
    rendering = render_notebook(nb, offset=offset, cell=cell, **common)  # with cell: its lines
    lines = (rendering.first + 1, rendering.last + 1) if rendering.last >= rendering.first else None
    call.tracker.record(
        key, st.mtime, st.size, lines=lines, total_lines=rendering.total, whole=cell is None and rendering.complete,
        digest=nb.digest, cells=shown_cells(nb, rendering.first, rendering.last),
    )
    if rendering.images:
        media = tuple(MediaPart.from_bytes(img.mime_type, img.data) for img in rendering.images)
        return ToolResult(text=rendering.text, media=media), ""
    return rendering.text, ""


def check_notebook_text(content: str, shown: str) -> str | None:
    """Why ``content`` may not be written to the notebook ``shown`` (None: it may)."""
    try:
        nb = Notebook.parse(content, shown)
    except NotebookError as exc:
        return (
            f"Error: {shown} is a notebook: its content must be notebook JSON that nbformat accepts "
            f"({exc}). Nothing was written. To create a notebook or change its cells, use "
            f"{NOTEBOOK_EDIT_TOOL} (edit_mode='insert' on a new path creates the notebook with that cell)."
        )
    if nb.problem or nb.ids_filled:
        why = nb.problem or "cells with missing or repeated ids"
        return (
            f"Error: {shown} would not be a valid notebook: {why}. Nothing was written. "
            f"Change cells with {NOTEBOOK_EDIT_TOOL} instead."
        )
    return None


def _cells_described(ranges: list[tuple[int, int]]) -> str:
    parts = [f"{a - 1}-{b - 1}" if a != b else str(a - 1) for a, b in ranges]
    return "cells " + ", ".join(parts) if parts else "no cells"


def check_cells_read(call: ToolCall, shown: str, indexes: list[int]) -> None:
    """Under ``require_read_before_write``: refuse to change cells the model has not been shown."""
    rec = call.read_record
    if not call.require_read or rec is None:
        return
    for index in indexes:
        if not rec.covers(index + 1, index + 1):
            raise FileReadRequiredError(
                shown,
                f'Cell {index} of "{shown}" has not been read (read so far: {_cells_described(rec.ranges)}). '
                "Read it before editing.",
            )


def check_cell_at_index(call: ToolCall, nb: Notebook, shown: str, index: int) -> None:
    """An edit naming cell ``index`` by position: refused when the cell there now is not the one
    the model was shown there (cells moved: an outside insert, or no read of that cell)."""
    rec = call.read_record
    problem = index_problem(nb, index, rec.cells if rec is not None else None)
    if problem is not None:
        raise NotebookError(
            f"{problem}: nothing was changed. Read the notebook again, or name the cell by cell_id",
            path=shown,
        )


def record_written(call: ToolCall, nb: Notebook, path: str, seen_before: set[int], written: list[Any]) -> None:
    """After the model's own write of ``nb``: what it has seen stays read — its cells where they
    are now and the cells it wrote — at the version just written (its digest), so the next edit
    needs no new read while a change by anyone else since is still refused as stale. Only when
    the notebook's cells had been read (a read of its JSON alone, or none: nothing is kept)."""
    if call.read_record is None or call.read_record.cells is None or nb.digest is None:
        return
    fs = call.filesystem()
    try:
        st = fs.stat(path)
    except WorkspaceError:
        return
    key = call.key(path)
    call.tracker.clear(key)
    call.tracker.record(key, st.mtime, st.size, total_lines=len(nb), digest=nb.digest, cells=carried(nb, seen_before, written))
    call.recorded_write = True


def seen_before_edit(call: ToolCall, nb: Notebook) -> set[int]:
    """The cells of ``nb`` (objects) that the model has seen, taken before an edit moves them."""
    rec = call.read_record
    return seen_objects(nb, rec.cells if rec is not None else None)


def cell_snippet(source: str, first: int, last: int, around: int = 2) -> str:
    """Lines ``first``-``last`` of an edited cell with ``around`` lines of context, numbered within
    the cell as ``workspace_read_file`` shows a notebook (``2 text``)."""
    lines = source.split("\n")
    top, bottom = max(1, first - around), min(len(lines), last + around)
    return "\n".join(f"{n} {lines[n - 1]}" if lines[n - 1] else str(n) for n in range(top, bottom + 1))


def _occurrences(text: str, piece: str) -> list[int]:
    out, start = [], text.find(piece)
    while start >= 0:
        out.append(start)
        start = text.find(piece, start + len(piece))
    return out


def edit_notebook(
    call: ToolCall, st: FileStat, shown: str, raw_edit: Callable[[str, str, str, bool], tuple[str | None, str]]
) -> str:
    """``workspace_edit_file`` on a notebook (see the module docstring). ``raw_edit(content, old,
    new, replace_all)`` is the text tool's own replacement, returning ``(updated, message)`` or
    ``(None, error text)``; it serves edits of the JSON."""
    fs = call.filesystem()
    args = call.args
    old, new = args["old_string"], args["new_string"]
    try:
        nb: Notebook | None = Notebook.load(fs, shown)
    except NotebookError:
        nb = None  # not a notebook (yet): its JSON may still be edited into one
    if nb is not None:
        hits = [(i, _occurrences(cell_source(c), old)) for i, c in enumerate(nb.cells)]
        hits = [(i, offs) for i, offs in hits if offs]
        count = sum(len(offs) for _, offs in hits)
        if count:
            if nb.problem:
                return ToolErrorText(
                    f"Error: {shown} is not a valid notebook ({nb.problem}); it is not edited until it is "
                    "fixed (read it with raw=true and rewrite it with workspace_write_file)."
                )
            if count > 1 and not args["replace_all"]:
                where = ", ".join(
                    f"cell {i} line {cell_source(nb.cells[i]).count(chr(10), 0, off) + 1}"
                    for i, offs in hits
                    for off in offs
                )
                return ToolErrorText(
                    f"The specified text appears {count} times ({where}). Provide more surrounding context "
                    "to make the match unique, or set replace_all=true to replace every occurrence."
                )
            check_cells_read(call, shown, [i for i, _ in hits])
            before = seen_before_edit(call, nb)
            written = []
            spans = []
            cleared = False
            snippet = ""
            for i, offs in hits:
                src = cell_source(nb.cells[i])
                first = src.count("\n", 0, offs[0]) + 1
                cleared = cleared or bool(nb.cells[i].get("outputs"))
                updated_src = src.replace(old, new)
                written.append(nb.replace_cell(i, updated_src))
                last = first + new.count("\n") if new else first
                spans.append(f"[cell {i}]:{first}" + (f"-{last}" if last != first else ""))
                if count == 1:
                    snippet = "\n" + cell_snippet(updated_src, first, last)
            nb.save(fs, shown, expected_mtime=call.expected_mtime or st.mtime)
            record_written(call, nb, shown, before, written)
            what = "1 occurrence" if count == 1 else f"{count} occurrences"
            note = "; the cell's outputs were cleared" if cleared else ""
            return f"Replaced {what} in {shown} {', '.join(spans)}{note}{':' if snippet else ''}{snippet}"
    rec = call.read_record
    if call.require_read and rec is not None and not rec.complete:
        raise FileReadRequiredError(
            shown,
            f'old_string is not in a cell of "{shown}", so it would be replaced in the notebook\'s JSON: '
            "read the whole notebook first (or match text of a cell)",
        )
    content = decode_text(read_limited(fs, shown, MAX_FILE_BYTES, size=st.size), shown)
    updated, message = raw_edit(content, old, new, args["replace_all"])
    if updated is None:
        return str(message)
    problem = check_notebook_text(updated, shown)
    if problem is not None:
        return ToolErrorText(
            problem.replace("Nothing was written.", "The edit was not applied.")
            + " (old_string was matched in the notebook's JSON text, not in a cell source.)"
        )
    fs.write_file(shown, updated, overwrite=True, expected_mtime=call.expected_mtime or st.mtime)
    return str(message)
