"""Automatic checkpoints (per turn, per call, per command, off), the agent's checkpoint tool, and
the configuration's errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import WORKSPACE_TOOLS, LocalFilesystem, LocalSandbox, Workspace
from ws_jupyter.errors import ToolConfigError, WorkspaceConfigError

T = WORKSPACE_TOOLS


def _ws(root: Path, **checkpoints: Any) -> Workspace:
    (root / "a.txt").write_text("a\n")
    ws = Workspace(
        filesystem=LocalFilesystem(root),
        sandbox=LocalSandbox(working_directory=str(root)),
        bm25=False,
        checkpoints=checkpoints or None,
        tools={
            T.SANDBOX.EXECUTE_COMMAND: {"require_approval": False},
            T.CHECKPOINTS.CHECKPOINT: {"enabled": True},
        },
    )
    ws.init()
    return ws


def _run(tools: dict[str, Any], name: str, ctx: Any = None, **args: Any) -> str:
    out = str(tools[name].run(args, ctx))
    assert not out.startswith("Error"), out
    return out


def _turn(ws: Workspace, ctx: Any = None, n: int = 2) -> None:
    tools = {t.workspace_tool_name: t for t in ws.tools(ctx)}
    _run(tools, T.FILESYSTEM.READ_FILE, ctx, path="a.txt")
    for i in range(n):
        _run(tools, T.FILESYSTEM.WRITE_FILE, ctx, path=f"f{i}.txt", content=f"{i} {id(tools)}")
    _run(tools, T.SANDBOX.EXECUTE_COMMAND, ctx, command="echo x >> a.txt")


@pytest.mark.parametrize(
    ("auto", "expected"),
    [("turn", 1), ("call", 3), ("command", 2), ("off", 0)],  # 2 writes and a command in one turn
)
def test_automatic_checkpoints_per_mode(workdir: Path, auto: str, expected: int) -> None:
    ws = _ws(workdir, auto=auto)
    try:
        _turn(ws)
        reasons = [c.reason for c in ws.checkpoints.list()]
        assert len(reasons) == expected, reasons
        if expected:
            assert reasons[0].startswith("auto:") and "workspace_write_file" in reasons[0]
    finally:
        ws.destroy()


def test_a_new_turn_starts_after_a_pause_or_with_another_turn_id(workdir: Path) -> None:
    ws = _ws(workdir, turn_gap=0.3)
    try:
        _turn(ws, {"thread_id": "t1", "turn_id": "1"})
        _turn(ws, {"thread_id": "t1", "turn_id": "1"})  # same turn: nothing new
        assert len(ws.checkpoints.list()) == 1
        _turn(ws, {"thread_id": "t1", "turn_id": "2"})  # the next turn
        assert len(ws.checkpoints.list()) == 2
        import time

        time.sleep(0.5)
        _turn(ws, {"thread_id": "t1", "turn_id": "2"})  # a pause longer than turn_gap
        assert len(ws.checkpoints.list()) == 3
    finally:
        ws.destroy()


def test_the_agent_tool_marks_lists_and_compares_but_restores_only_when_allowed(workdir: Path) -> None:
    ws = _ws(workdir, auto="off")
    try:
        tools = {t.workspace_tool_name: t for t in ws.tools()}
        tool = tools[T.CHECKPOINTS.CHECKPOINT]
        assert "recorded: 1 file." in str(tool.run({"action": "create", "label": "before risky"}))
        ws.filesystem.write_file("a.txt", "changed\n")
        out = str(tool.run({"action": "changes", "label": "before risky"}))
        assert "modified a.txt — outside" in out
        assert "before risky" in str(tool.run({"action": "list"}))
        refused = str(tool.run({"action": "restore", "label": "before risky"}))
        assert refused.startswith("Error: Restoring is the user's decision")
        assert ws.filesystem.read_file("a.txt") == "changed\n"
        ws.set_tools_config({T.CHECKPOINTS.CHECKPOINT: {"enabled": True, "allow_restore": True}})
        tool = {t.workspace_tool_name: t for t in ws.tools()}[T.CHECKPOINTS.CHECKPOINT]
        assert str(tool.run({"action": "restore", "label": "before risky"})).startswith("Restored 1 file(s)")
        assert ws.filesystem.read_file("a.txt") == "a\n"
        assert "No checkpoint 'nope'" in str(tool.run({"action": "changes", "label": "nope"}))
    finally:
        ws.destroy()


def test_the_agent_tool_is_off_by_default(workdir: Path) -> None:
    ws = Workspace(filesystem=LocalFilesystem(workdir), bm25=False)
    try:
        assert T.CHECKPOINTS.CHECKPOINT not in [t.workspace_tool_name for t in ws.tools()]
    finally:
        ws.destroy()


def test_bad_configuration_is_refused_with_a_clear_message(workdir: Path) -> None:
    with pytest.raises(WorkspaceConfigError, match='Unknown checkpoints option "budget"'):
        Workspace(filesystem=LocalFilesystem(workdir), checkpoints={"budget": 1})
    with pytest.raises(WorkspaceConfigError, match="auto must be one of"):
        Workspace(filesystem=LocalFilesystem(workdir), checkpoints={"auto": "sometimes"})
    with pytest.raises(ToolConfigError, match="allow_restore must be True or False"):
        Workspace(
            filesystem=LocalFilesystem(workdir), tools={T.CHECKPOINTS.CHECKPOINT: {"allow_restore": "yes"}}
        )
    ws = Workspace(filesystem=LocalFilesystem(workdir), checkpoints={"store": str(workdir / "inside")})
    with pytest.raises(WorkspaceConfigError, match="cannot be inside the workspace"):
        ws.checkpoint()
