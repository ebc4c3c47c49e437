"""Checkpoints in the notebook: `%ws checkpoint`, `%ws changes`, `%ws restore`, the checkpoint
`%ws init` takes of a folder it finds full, and the dashboard's Changes tab driven headless (traits
set, handlers called), linked from the tool activity feed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from ws_jupyter import WORKSPACE_TOOLS as T


def test_init_on_a_folder_with_files_checkpoints_it_first(ip: Any, ws_dir: Path) -> None:
    view = ip.run_line_magic("ws", f"init {ws_dir}")
    assert any(k == "checkpoint" and "the folder as found" in v for k, v in view.rows)
    [cp] = ip.user_ns["ws"].checkpoints.list()
    assert cp.reason == "%ws init: the folder as found" and cp.files >= 5


def test_init_on_an_empty_folder_takes_none(ip: Any, tmp_path: Path) -> None:
    view = ip.run_line_magic("ws", f"init {tmp_path / 'fresh'}")
    assert not any(k == "checkpoint" for k, _ in view.rows)
    assert ip.user_ns["ws"].checkpoints.list() == []


def test_checkpoint_changes_diff_and_restore_magics(ws_ip: Any, ws_dir: Path) -> None:
    taken = ws_ip.run_line_magic("ws", "checkpoint base")
    assert taken.heading == "Checkpoint base taken"
    (ws_dir / "notes.txt").write_text("alpha\nBETA\ngamma\n<script>alert(1)</script>\n")
    (ws_dir / "docs" / "guide.md").unlink()
    view = ws_ip.run_line_magic("ws", "changes --since base --diff notes.txt")
    text = view.text()
    assert "modified  notes.txt" in text and "deleted   docs/guide.md" in text
    assert "-beta\n+BETA" in text
    html = view.html()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html  # inert
    assert "docs/guide.md" not in "".join(view.diffs)  # --diff PATH: that file only
    listed = ws_ip.run_line_magic("ws", "checkpoint --list")
    assert "base" in listed.text() and listed.usage.total > 0
    restored = ws_ip.run_line_magic("ws", "restore base notes.txt")
    assert (ws_dir / "notes.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert not (ws_dir / "docs" / "guide.md").exists()  # only the path given
    assert (
        "restored notes.txt" in restored.text() and "Undo: restore before restoring base" in restored.text()
    )
    with pytest.raises(UsageError, match="PATHs choose the files"):
        ws_ip.run_line_magic("ws", "changes notes.txt")


def test_changes_with_no_checkpoint_says_how_to_take_one(ip: Any, tmp_path: Path) -> None:
    from ws_jupyter.jupyter.magics import WsCommandError

    ip.run_line_magic("ws", f"init {tmp_path / 'empty'}")
    with pytest.raises(
        WsCommandError, match=r"No checkpoint yet: take one with ws.checkpoint\(\) \(or `%ws checkpoint`\)"
    ):
        ip.run_line_magic("ws", "changes")


def test_changes_panel_lists_diffs_restores_and_undoes(workspace: Any, ws_dir: Path) -> None:
    from ws_jupyter.jupyter.widgets.changes import ChangesPanel

    panel = ChangesPanel(workspace)
    try:
        assert panel.since == "" and "No checkpoint yet" in panel.status
        panel.take()
        assert panel.since and panel.rows == []
        (ws_dir / "notes.txt").write_text("changed <b>here</b>\n")
        (ws_dir / "src" / "new.py").write_text("x = 1\n")
        panel.refresh()
        assert [(r["path"], r["change"]) for r in panel.rows] == [
            ("notes.txt", "modified"),
            ("src/new.py", "added"),
        ]
        panel.show_diff("notes.txt")
        assert panel.diff_path == "notes.txt" and "+changed <b>here</b>" in panel.diff_text
        assert "&lt;b&gt;here&lt;/b&gt;" in panel.diff_view.value and "<b>here" not in panel.diff_view.value
        panel.restore("notes.txt")
        assert (ws_dir / "notes.txt").read_text() == "alpha\nbeta\ngamma\n"
        assert [r["path"] for r in panel.rows] == ["src/new.py"] and panel.undo_button.layout.display == ""
        panel.undo()
        assert (ws_dir / "notes.txt").read_text() == "changed <b>here</b>\n"
        panel.remove_new.value = True
        panel.restore_all_button.click()
        assert not (ws_dir / "src" / "new.py").exists() and panel.rows == []
        assert "Restored 1 file(s)" in panel.status
        snap_html, snap_text = panel.snapshot()
        assert "Changes" in snap_text and "Changes" in snap_html
    finally:
        panel.close()


def test_the_tool_feed_links_a_write_to_its_changes(workspace: Any, ws_dir: Path) -> None:
    from ws_jupyter.jupyter.widgets import Dashboard

    dash = Dashboard(workspace, interval=0.1)
    try:
        assert dash.changes is not None and dash.activity is not None
        tools = {t.workspace_tool_name: t for t in workspace.tools()}
        out = tools[T.FILESYSTEM.WRITE_FILE].run({"path": "agent.txt", "content": "from the agent\n"})
        assert "agent.txt" in str(out)
        dash.changes.refresh()  # (the tab also does so by itself after each call, throttled)
        [row] = dash.changes.rows
        call_id = row["call_id"]
        assert row["path"] == "agent.txt" and row["by"].startswith("workspace_write_file agent.txt")
        assert dict(dash.activity.changed_calls) == {call_id: 1}
        dash.activity.refresh()
        assert "1 file changed: Show changes" in dash.activity.log_view.value
        assert dash.activity.changes_picker.value == call_id
        dash.activity.changes_button.click()
        assert dash.tab_names[dash.tab.selected_index] == "Changes"
        assert dash.changes.call_filter == call_id and dash.changes.diff_path == "agent.txt"
        assert "+from the agent" in dash.changes.diff_text
    finally:
        dash.close()
