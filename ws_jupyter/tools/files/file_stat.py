"""``workspace_file_stat``: type, size and modification time of one path."""

from __future__ import annotations

from ...errors import DirectoryNotFound, FileNotFound
from ..base import ToolCall, ToolSpec, iso_time, rel_path
from ..facts import LOOKS, WORKSPACE_TOOLS
from ..schema import Param

__all__ = ["SPEC", "file_stat"]

DESCRIPTION = (
    "Show whether a path exists and, if so, its type (file or directory), size in bytes and last "
    "modification time (UTC). Cheaper than reading a file when only these facts matter."
)

PARAMS = (Param("path", "string", "Path relative to the workspace root.", required=True, allow_empty=False),)


def file_stat(call: ToolCall) -> str:
    fs = call.filesystem()
    path = call.args["path"]
    try:
        st = fs.stat(path)
    except (FileNotFound, DirectoryNotFound):
        return f"{rel_path(fs, path)}: not found"
    return f"{st.path} Type: {st.type} Size: {st.size} bytes Modified: {iso_time(st.modified_at)}"


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.FILESYSTEM.FILE_STAT,
    description=DESCRIPTION,
    params=PARAMS,
    run=file_stat,
    title="File info",
    hints=LOOKS,
    needs={"filesystem"},
    writes=False,
    options=(),
    max_output_tokens=None,
)
