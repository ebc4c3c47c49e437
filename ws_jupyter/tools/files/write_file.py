"""``workspace_write_file``: create or replace a whole file (atomically; parent folders created)."""

from __future__ import annotations

from ...notebooks.document import is_notebook_path
from ..base import ToolCall, ToolSpec, rel_path
from ..facts import WORKSPACE_TOOLS, ToolHints
from ..schema import Param
from ..types import ToolErrorText
from .notebook_files import check_notebook_text

__all__ = ["SPEC", "write_file"]

DESCRIPTION = (
    "Create a file or replace its entire content (parent folders are created). To change part of an "
    "existing file prefer workspace_edit_file, which keeps the rest intact. Writing a file that was "
    "read and has changed since is refused: read it again first. Set overwrite=false to refuse "
    "replacing an existing file. A notebook (.ipynb) must be given as complete notebook JSON; to "
    "create a notebook or change its cells use workspace_notebook_edit. Paths are relative to the "
    "workspace root."
)

PARAMS = (
    Param("path", "string", "File path relative to the workspace root.", required=True, allow_empty=False),
    Param("content", "string", "The complete new content of the file.", required=True),
    Param("overwrite", "boolean", "Replace the file if it exists.", default=True),
)


def write_file(call: ToolCall) -> str:
    fs = call.filesystem()
    path = call.args["path"]
    content = call.args["content"]
    shown = rel_path(fs, path)
    if is_notebook_path(shown):
        problem = check_notebook_text(content, shown)
        if problem is not None:
            return ToolErrorText(problem)
    fs.write_file(
        path, content, recursive=True, overwrite=call.args["overwrite"], expected_mtime=call.expected_mtime
    )
    return f"Wrote {len(content.encode('utf-8'))} bytes to {shown}"


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.FILESYSTEM.WRITE_FILE,
    description=DESCRIPTION,
    params=PARAMS,
    run=write_file,
    title="Write file",
    hints=ToolHints(destructive=True, idempotent=True),
    needs={"filesystem", "writable"},
    writes=True,
    options=("require_read_before_write",),
    max_output_tokens=None,
    write_path=lambda args: args["path"],
    check_reads=True,
    whole_file_write=True,
)
