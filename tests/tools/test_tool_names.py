"""A renamed tool is called by its exposed name wherever another tool's description or message
names it (the model knows no other name)."""

from __future__ import annotations

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalSandbox
from ws_jupyter.tools.factory import rename_tools_in

from .conftest import box

RENAMES = {
    T.FILESYSTEM.READ_FILE: {"name": "read"},
    T.FILESYSTEM.LIST_FILES: {"name": "ls"},
    T.FILESYSTEM.WRITE_FILE: {"name": "write"},
    T.FILESYSTEM.EDIT_FILE: {"name": "edit"},
    T.SANDBOX.GET_PROCESS_OUTPUT: {"name": "proc_output"},
    "require_approval": False,
}


def test_descriptions_and_messages_use_exposed_names(make_ws, workdir):
    ws = make_ws(sandbox=LocalSandbox(working_directory=workdir, isolation="none"), tools=RENAMES)
    tools = box(ws)
    for tool in tools.values():
        for old in (
            "workspace_read_file",
            "workspace_list_files",
            "workspace_write_file",
            "workspace_edit_file",
            "workspace_get_process_output",
        ):
            assert old not in tool.description, (tool.name, old)
    assert "(or proc_output by PID)" in tools["workspace_execute_command"].description
    assert "replace all of it, use write." in tools["edit"].description
    (workdir / "d").mkdir()
    (workdir / "f.txt").write_text("x\n")
    assert "(use ls to see what it contains)" in tools.run("read", path="d")
    assert "(use read or workspace_file_stat for a file)" in tools.run("ls", path="f.txt")
    assert "use write to write a whole file" in tools.run("edit", path="f.txt", old_string="", new_string="y")
    out = tools.run("workspace_execute_command", command="seq 300")
    assert "read it with read]" in out


def test_rename_is_by_whole_name_only():
    names = {"workspace_read_file": "read"}
    assert rename_tools_in(
        "use workspace_read_file, not workspace_read_files or x.workspace_read_file", names
    ) == ("use read, not workspace_read_files or x.workspace_read_file")
    assert rename_tools_in("unchanged", {}) == "unchanged"
