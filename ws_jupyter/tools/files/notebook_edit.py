"""``workspace_notebook_edit``: replace, insert or delete one cell of a Jupyter notebook.

Modelled on Claude Code's NotebookEdit. The cell is named by ``cell_id`` (as ``workspace_read_file``
shows it) or ``cell_index`` (0-based); ``edit_mode``:

* ``replace`` (default) — the cell gets ``new_source`` (and ``cell_type`` when given); it keeps its
  id and metadata; a code cell's outputs and execution count are cleared. ``cell_index`` equal to
  the number of cells appends a new cell instead (as NotebookEdit does);
* ``insert`` — a new cell of ``cell_type`` (required) goes *after* the named cell, or first when
  no cell is named. Inserting into a path that does not exist yet creates the notebook (nbformat
  4.5, Python 3 kernelspec) with that one cell;
* ``delete`` — the cell is removed (``new_source`` is ignored).

It is a write tool like ``workspace_write_file``: read-before-write and stale-file checks, the
path's write lock, approval and ``enabled`` config, hidden on a read-only filesystem, and an atomic
write. Every other cell stays as it was. A result ``nbformat.validate`` rejects is never written:
the tool answers with the reason and the file is untouched.
"""

from __future__ import annotations

from ...errors import FileNotFound, NotebookError
from ...notebooks.document import CELL_TYPES, Notebook, is_notebook_path
from ..base import ToolCall, ToolSpec, rel_path
from ..facts import WORKSPACE_TOOLS, ToolHints
from ..schema import Param
from ..types import ToolErrorText
from .notebook_files import check_cell_at_index, check_cells_read, record_written, seen_before_edit

__all__ = ["SPEC", "notebook_edit"]

DESCRIPTION = (
    "Edit one cell of a Jupyter notebook (.ipynb) without touching its JSON. Name the cell by "
    "cell_id or cell_index (0-based), as workspace_read_file shows them. edit_mode='replace' "
    "(default) sets the cell's source (and type, if cell_type is given), keeps its id and metadata, "
    "and clears a code cell's outputs and execution count; 'insert' adds a new cell of cell_type "
    "after the named cell (or first, when none is named) — on a path that does not exist it "
    "creates the notebook; 'delete' removes the cell. Cells after an inserted or deleted cell "
    "change index. Read the notebook first: an edit of a notebook that changed since it was read "
    "is refused."
)

PARAMS = (
    Param("path", "string", "Notebook path relative to the workspace root, e.g. 'analysis.ipynb'.",
          required=True, allow_empty=False),
    Param("new_source", "string", "The new source of the cell (ignored when deleting).", required=True),
    Param("cell_id", "string", "Id of the cell to replace or delete, or to insert after."),
    Param("cell_index", "integer", "Index of the cell (0-based), instead of cell_id.", minimum=0),
    Param("cell_type", "string", "Cell type: required for insert; for replace, changes the cell's type. "
          "Default: keep the type.", enum=CELL_TYPES),
    Param("edit_mode", "string", "replace, insert or delete.", default="replace",
          enum=("replace", "insert", "delete")),
)


def _described(nb: Notebook, index: int) -> str:
    ref = nb.ref(index)
    return f"cell {index} ({ref.cell_type}" + (f", id {ref.id})" if ref.id else ")")


def notebook_edit(call: ToolCall) -> str:
    try:
        return _edit(call)
    except NotebookError as exc:  # unknown cell, bad index, a result nbformat rejects
        return ToolErrorText(f"Error: {exc}. The notebook was not changed.")


def _edit(call: ToolCall) -> str:
    fs = call.filesystem()
    args = call.args
    path = args["path"]
    mode = args["edit_mode"]
    cell_id, cell_index, cell_type = args["cell_id"], args["cell_index"], args["cell_type"]
    source = args["new_source"]
    if not is_notebook_path(path):
        return ToolErrorText(
            f"Error: {path} is not a notebook (.ipynb): use workspace_edit_file or workspace_write_file"
        )
    if mode == "insert" and cell_type is None:
        return ToolErrorText("Error: cell_type is required when edit_mode is 'insert' (code, markdown or raw)")
    try:
        nb = Notebook.load(fs, path)
    except FileNotFound:
        if mode != "insert" or cell_id is not None or cell_index is not None:
            raise
        assert cell_type is not None
        nb = Notebook.new([(cell_type, source)])
        nb.save(fs, path, overwrite=False)
        return f"Created notebook {rel_path(fs, path)} with {_described(nb, 0)}"
    shown = nb.path or path
    if nb.problem:
        return ToolErrorText(
            f"Error: {shown} is not a valid notebook ({nb.problem}); it is not edited until it is fixed "
            "(read it with raw=true and rewrite it with workspace_write_file)."
        )
    expected = call.expected_mtime if call.expected_mtime is not None else nb.stat.mtime
    if mode == "replace" and cell_id is None and cell_index == len(nb):
        mode, cell_type = "append", cell_type or "code"
    before = seen_before_edit(call, nb)
    normalised = _normalised(nb)
    if mode == "insert":
        position = 0
        if cell_id is not None or cell_index is not None:
            position = nb.locate(cell_id, cell_index) + 1
            if cell_id is None:
                check_cell_at_index(call, nb, shown, position - 1)
        assert cell_type is not None
        cell = nb.insert_cell(position, source, cell_type)
        nb.save(fs, shown, expected_mtime=expected)
        record_written(call, nb, shown, before, [cell])
        after = f"after cell {position - 1}" if position else "at the top"
        return f"Inserted {_described(nb, position)} {after} in {shown}; it now has {len(nb)} cells{normalised}"
    if mode == "append":
        rec = call.read_record
        if rec is not None and rec.cells is not None and rec.total_lines != len(nb):
            raise NotebookError(
                f"{shown} has {len(nb)} cells, not the {rec.total_lines} it had when read: nothing was "
                "changed. Read it again",
                path=shown,
            )
        cell = nb.insert_cell(len(nb), source, cell_type or "code")
        nb.save(fs, shown, expected_mtime=expected)
        record_written(call, nb, shown, before, [cell])
        return f"Inserted {_described(nb, len(nb) - 1)} at the end of {shown}; it now has {len(nb)} cells{normalised}"
    if cell_id is None and cell_index is None:
        return ToolErrorText(f"Error: give cell_id or cell_index of the cell to {mode}")
    index = nb.locate(cell_id, cell_index)
    check_cells_read(call, shown, [index])
    if cell_id is None:
        check_cell_at_index(call, nb, shown, index)
    if mode == "delete":
        what = _described(nb, index)
        nb.delete_cell(index)
        nb.save(fs, shown, expected_mtime=expected)
        record_written(call, nb, shown, before, [])
        return f"Deleted {what} from {shown}; it now has {len(nb)} cells{normalised}"
    had_outputs = bool(nb.cell(index).get("outputs"))
    old_type = nb.ref(index).cell_type
    cell = nb.replace_cell(index, source, cell_type)
    nb.save(fs, shown, expected_mtime=expected)
    record_written(call, nb, shown, before, [cell])
    notes = []
    if cell_type and cell_type != old_type:
        notes.append(f"type changed from {old_type}")
    if had_outputs:
        notes.append("outputs cleared")
    lines = source.count("\n") + 1 if source else 0
    tail = f"; {', '.join(notes)}" if notes else ""
    return f"Replaced {_described(nb, index)} in {shown}: {lines} {'line' if lines == 1 else 'lines'}{tail}{normalised}"


def _normalised(nb: Notebook) -> str:
    """The answer's note when the write also made the file valid as Jupyter does on save."""
    if not nb.normalised:
        return ""
    return "; the file was also made valid as Jupyter does when it saves: " + "; ".join(nb.normalised)


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.FILESYSTEM.NOTEBOOK_EDIT,
    description=DESCRIPTION,
    params=PARAMS,
    run=notebook_edit,
    title="Notebook edit",
    hints=ToolHints(destructive=True, idempotent=False),
    needs={"filesystem", "writable"},
    writes=True,
    options=("require_read_before_write",),
    max_output_tokens=None,
    write_path=lambda args: args["path"],
    check_reads=True,
)
