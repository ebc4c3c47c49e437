"""``workspace_mkdir``: create a directory and its missing parents."""

from __future__ import annotations

from ..base import ToolCall, ToolSpec, rel_path
from ..facts import WORKSPACE_TOOLS, ToolHints
from ..schema import Param

__all__ = ["SPEC", "mkdir"]

DESCRIPTION = (
    "Create a directory, including missing parent directories. An existing directory is left as it "
    "is. (workspace_write_file creates parent folders by itself: this is only needed for empty ones.)"
)

PARAMS = (
    Param(
        "path", "string", "Directory path relative to the workspace root.", required=True, allow_empty=False
    ),
)


def mkdir(call: ToolCall) -> str:
    fs = call.filesystem()
    path = call.args["path"]
    shown = rel_path(fs, path)
    if fs.exists(path):
        st = fs.stat(path)
        if st.type == "directory":
            return f"Directory {shown} already exists"
    fs.mkdir(path, recursive=True)
    return f"Created directory {shown}"


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.FILESYSTEM.MKDIR,
    description=DESCRIPTION,
    params=PARAMS,
    run=mkdir,
    title="Create directory",
    hints=ToolHints(destructive=False, idempotent=True),
    needs={"filesystem", "writable"},
    writes=True,
    options=(),
    max_output_tokens=None,
)
