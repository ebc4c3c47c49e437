"""A scripted agent turn through the real tools — file tools, shell commands in a bubblewrap
sandbox, pandas in a sandbox kernel — then what changed, who did it, and taking it all back."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import WORKSPACE_TOOLS, LocalFilesystem, LocalSandbox, Workspace

from ..sandbox.conftest import requires_bwrap

T = WORKSPACE_TOOLS
pytestmark = [requires_bwrap, pytest.mark.bwrap]

SEED: dict[str, tuple[bytes, int]] = {
    "a.txt": (b"hello world\nsecond line\n", 0o644),
    "config.ini": (b"[main]\nmode = alpha\n", 0o600),
    "old.txt": (b"to be deleted\n", 0o644),
    "run.sh": (b"#!/bin/sh\necho hi\n", 0o755),
    "sub/x.txt": (b"x in sub\n", 0o640),
    "sub/deeper/y.bin": (bytes(range(256)), 0o644),
}


def _state(root: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".ws", ".git")]
        for n in names:
            p = Path(dirpath) / n
            out[str(p.relative_to(root))] = (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
    return out


@pytest.fixture
def agent_ws(workdir: Path) -> Any:
    pytest.importorskip("pandas")
    for rel, (data, mode) in SEED.items():
        p = workdir / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        p.chmod(mode)
    ws = Workspace(
        filesystem=LocalFilesystem(workdir),
        sandbox=LocalSandbox(working_directory=str(workdir), isolation="bwrap"),
        tools={T.SANDBOX.EXECUTE_CODE: {"require_approval": False}},
        bm25=False,
    )  # checkpoints: the default, one before each agent turn's first change
    ws.init()
    yield ws
    ws.destroy()


def test_an_agent_turn_is_seen_attributed_and_taken_back(agent_ws: Workspace, workdir: Path) -> None:
    ws = agent_ws
    before = _state(workdir)
    tools = {t.workspace_tool_name: t for t in ws.tools()}

    def call(name: str, **args: Any) -> str:
        out = str(tools[name].run(args))
        assert not out.startswith("Error"), out
        return out

    call(T.FILESYSTEM.READ_FILE, path="a.txt")  # reading changes nothing: no checkpoint yet
    assert ws.checkpoints.list() == []
    call(T.FILESYSTEM.WRITE_FILE, path="new.txt", content="written by the agent\n")
    call(T.FILESYSTEM.EDIT_FILE, path="a.txt", old_string="second line", new_string="2nd line")
    call(T.FILESYSTEM.DELETE, path="old.txt")
    call(T.SANDBOX.EXECUTE_COMMAND, command="sed -i 's/alpha/beta/' config.ini")
    call(T.SANDBOX.EXECUTE_COMMAND, command="rm -rf sub/")
    call(
        T.SANDBOX.EXECUTE_CODE,
        code="import pandas as pd\npd.DataFrame({'x': [1, 2], 'y': ['a', 'b']}).to_csv('out.csv', index=False)",
    )
    after = _state(workdir)

    [turn] = ws.checkpoints.list()  # one automatic checkpoint, before the turn's first write
    assert turn.reason.startswith("auto: agent turn (workspace_write_file")
    changes = ws.changes(turn)
    files = {c.path: c for c in changes if c.kind == "file"}
    assert {p: c.change for p, c in files.items()} == {
        "new.txt": "added",
        "a.txt": "modified",
        "old.txt": "deleted",
        "config.ini": "modified",
        "sub/x.txt": "deleted",
        "sub/deeper/y.bin": "deleted",
        "out.csv": "added",
    }
    by = {p: (c.by.kind, c.by.tool, c.by.certain) for p, c in files.items()}
    assert by["new.txt"] == ("tool", T.FILESYSTEM.WRITE_FILE, True)
    assert by["a.txt"] == ("tool", T.FILESYSTEM.EDIT_FILE, True)
    assert by["old.txt"] == ("tool", T.FILESYSTEM.DELETE, True)
    assert by["config.ini"] == ("command", T.SANDBOX.EXECUTE_COMMAND, True)
    assert "sed -i" in files["config.ini"].by.summary
    assert by["sub/x.txt"][:2] == ("command", T.SANDBOX.EXECUTE_COMMAND)
    assert "rm -rf sub/" in files["sub/x.txt"].by.summary  # named by the command's text
    assert by["out.csv"] == ("kernel", T.SANDBOX.EXECUTE_CODE, True)
    assert "-mode = alpha\n+mode = beta" in ws.diff(turn, "config.ini")

    report = ws.restore(turn, remove_new=True)
    assert _state(workdir) == before  # exact bytes and permission bits
    assert set(report.removed) >= {"new.txt", "out.csv"}

    ws.restore(report.undo, remove_new=True)  # the restore of the restore
    assert _state(workdir) == after


def test_sandboxed_commands_cannot_reach_the_checkpoint_store(agent_ws: Workspace) -> None:
    ws = agent_ws
    cp = ws.checkpoint("kept")
    store = ws.checkpoints.store.location
    tools = {t.workspace_tool_name: t for t in ws.tools()}
    out = str(
        tools[T.SANDBOX.EXECUTE_COMMAND].run(
            {"command": f"ls {store}/manifests; rm -rf {store} ~/.local/share/ws-jupyter; git clean -fdx"}
        )
    )
    assert "No such file or directory" in out  # the store is not visible in the sandbox at all
    assert cp.id in [c.id for c in ws.checkpoints.list()] and ws.checkpoints.get("kept").id == cp.id
    assert os.path.isdir(os.path.join(store, "manifests"))
    assert not store.startswith(str(getattr(ws.filesystem, "base_path", "")))
