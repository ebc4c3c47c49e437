"""``workspace_delete``: remove a file, a symlink, or (with ``recursive``) a directory tree."""

from __future__ import annotations

from ...errors import DirectoryNotEmpty, NotADirectory
from ..base import ToolCall, ToolSpec, rel_path
from ..facts import WORKSPACE_TOOLS, ToolHints
from ..schema import Param

__all__ = ["SPEC", "delete"]

DESCRIPTION = (
    "Delete a file or an empty directory. Set recursive=true to delete a directory with everything in "
    "it. A symlink is removed itself, never what it points to. This cannot be undone."
)

PARAMS = (
    Param("path", "string", "Path relative to the workspace root.", required=True, allow_empty=False),
    Param("recursive", "boolean", "Delete a directory and all of its contents.", default=False),
)


def delete(call: ToolCall) -> str:
    fs = call.filesystem()
    path = call.args["path"]
    shown = rel_path(fs, path)
    st = fs.stat(path)
    if st.type == "directory":
        try:
            fs.rmdir(path, recursive=call.args["recursive"])
        except NotADirectory:  # a symlink to a directory: remove the link
            fs.delete_file(path)
        except DirectoryNotEmpty:
            raise DirectoryNotEmpty(
                shown,
                f"Directory not empty: {shown} (pass recursive=true to delete it with everything in it)",
            ) from None
    else:
        fs.delete_file(path)
    return f"Deleted {shown}"


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.FILESYSTEM.DELETE,
    description=DESCRIPTION,
    params=PARAMS,
    run=delete,
    title="Delete",
    hints=ToolHints(destructive=True, idempotent=True),
    needs={"filesystem", "writable"},
    writes=True,
    options=(),
    max_output_tokens=None,
    write_path=lambda args: args["path"],
    recursive_clear=True,
)
