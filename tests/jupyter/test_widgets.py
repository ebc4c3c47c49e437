"""Each widget driven from Python (no browser): real workspace, real processes, real index.

Widgets are built without a front-end (ipywidgets then uses a comm that goes nowhere); their state
lives in traitlets, so the tests set values, click buttons and read the state back.
"""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from ws_jupyter.jupyter.widgets.command_runner import CommandRunner
from ws_jupyter.jupyter.widgets.file_browser import PAGE, FileBrowser
from ws_jupyter.jupyter.widgets.live import TextTail, Throttle
from ws_jupyter.jupyter.widgets.process_monitor import ProcessMonitor
from ws_jupyter.jupyter.widgets.process_output import ProcessOutput
from ws_jupyter.jupyter.widgets.search_panel import SearchPanel
from ws_jupyter.jupyter.widgets.skills_browser import SkillsBrowser

from ..helpers import wait_for

# --- live-update plumbing -----------------------------------------------------------------------


def test_throttle_caps_the_rate() -> None:
    calls: list[float] = []
    throttle = Throttle(lambda: calls.append(time.monotonic()), interval=0.1)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        throttle.request()  # a flood of requests
        time.sleep(0.0005)
    time.sleep(0.25)
    assert 5 <= len(calls) <= 12  # ~10 per second, never one per request
    gaps = [b - a for a, b in itertools.pairwise(calls)]
    assert min(gaps) >= 0.09
    throttle.close()
    n = len(calls)
    throttle.request()
    time.sleep(0.2)
    assert len(calls) == n


def test_a_delayed_request_waits_its_delay_and_coalesces() -> None:
    calls: list[float] = []
    throttle = Throttle(lambda: calls.append(time.monotonic()), interval=0.05)
    start = time.monotonic()
    for _ in range(50):  # a poll asked for on every render: one is pending at a time
        throttle.request_after(0.3)
    time.sleep(0.15)
    assert calls == []
    deadline = time.monotonic() + 5
    while not calls and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    assert len(calls) == 1 and calls[0] - start >= 0.29
    throttle.request_after(0.05)  # the next poll can be asked for once the last one ran
    time.sleep(0.4)
    assert len(calls) == 2
    throttle.close()
    throttle.request_after(0.01)
    time.sleep(0.2)
    assert len(calls) == 2


def test_text_tail_is_bounded_and_ordered() -> None:
    tail = TextTail(max_chars=100)
    for i in range(1000):
        tail.append("stdout" if i % 3 else "stderr", f"{i:04d}\n")
    text = tail.text()
    assert len(text) == 100 and text.endswith("0999\n")
    assert tail.dropped == 5000 - 100
    kinds = [k for k, _ in tail.parts()]
    assert all(a != b for a, b in itertools.pairwise(kinds))  # adjacent chunks of one stream merged


# --- ProcessOutput ------------------------------------------------------------------------------


def test_process_output_shows_terminal_text_clean(workspace: Any) -> None:
    # colours, a redrawn progress line, a hyperlink ended by ST (ESC \\) and an 8-bit (C1) CSI
    raw = "\x1b[31mred\x1b[0m\n10%\r50%\r100%\n\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n\x9b1mbold\x9b0m\ndone\n"
    workspace.filesystem.write_file("term.txt", raw)
    handle = workspace.sandbox.processes.spawn("cat term.txt")
    view = ProcessOutput(handle, interval=0.1)
    handle.wait(timeout=30)
    assert wait_for(lambda: (view.refresh(), view.output.endswith("done\n"))[1])
    assert view.output == "red\n100%\nlink\nbold\ndone\n"
    view.close()


def test_process_output_follows_kills_and_sends(workspace: Any) -> None:
    handle = workspace.sandbox.processes.spawn(
        "python3 -u -c \"import sys\nprint('ready', flush=True)\nfor line in sys.stdin: print('echo', line.strip(), flush=True)\""
    )
    view = ProcessOutput(handle, interval=0.1)
    assert wait_for(lambda: "ready" in view.output)
    assert view.state == "running" and view.exit_code == -1 and view.pid == handle.pid
    view.stdin_box.value = "ping"
    view._send_from_box()  # what Enter in the box does
    assert wait_for(lambda: "echo ping" in view.output)
    assert "PID" in view.status.value and "running" in view.status.value
    view.kill_button.click()  # kills on a worker thread
    assert wait_for(lambda: view.state == "killed")
    assert view.exit_code in (143, 137) and view.kill_button.disabled
    assert not psutil.pid_exists(handle.pid) or psutil.Process(handle.pid).status() == psutil.STATUS_ZOMBIE
    view.close()


def test_process_output_snapshot_is_its_last_state(workspace: Any) -> None:
    handle = workspace.sandbox.processes.spawn("seq 1 500; echo done")
    view = ProcessOutput(handle, interval=0.1)
    handle.wait(timeout=30)
    assert wait_for(lambda: (view.refresh(), (view.state, view.output.endswith("done\n")))[1] == ("exited", True))
    html, text = view.snapshot()
    lines = text.splitlines()
    assert lines[0].startswith(f"PID {handle.pid} · exited (0) · ") and lines[0].endswith("echo done")
    assert lines[1] == "… 461 earlier lines …" and lines[-1] == "done" and len(lines) == 42  # bounded
    assert "exited (0)" in html and "500" in html and "\u200b" not in html
    view.close()


def test_process_output_is_throttled_under_a_flood(workspace: Any) -> None:
    handle = workspace.sandbox.processes.spawn("seq 1 200000")
    view = ProcessOutput(handle, interval=0.1, max_chars=10_000)
    handle.wait()
    assert wait_for(lambda: view.state == "exited")
    view.refresh()
    assert view.output.endswith("200000\n") and len(view.output) <= 10_000
    assert view._throttle.calls < 60  # 1.3 MB of output, a handful of renders
    assert "earlier characters not shown" in view.output_area.value


def test_click_is_handled_while_a_process_streams_fast(workspace: Any) -> None:
    """QUALITY: a button click is handled while a background process streams 10k lines/s."""
    handle = workspace.sandbox.processes.spawn("seq 1 1000000000")  # ~9 bytes a line, as fast as it can
    view = ProcessOutput(handle, interval=0.1)
    assert wait_for(lambda: handle.stdout_bytes > 500_000)
    started = time.perf_counter()
    bytes_before = handle.stdout_bytes
    time.sleep(0.5)
    rate = (handle.stdout_bytes - bytes_before) / 9 / (time.perf_counter() - started)
    assert rate > 10_000  # lines per second, while the widget follows it
    t0 = time.perf_counter()
    view.kill_button.click()  # the handler must return at once even under the flood
    assert time.perf_counter() - t0 < 0.05
    assert wait_for(lambda: view.state == "killed")
    assert view._throttle.calls < 40  # the flood did not turn into one update per chunk


# --- CommandRunner --------------------------------------------------------------------------------


def test_command_runner_runs_stops_and_keeps_history(workspace: Any) -> None:
    runner = CommandRunner(workspace, interval=0.1)
    runner.command_box.value = "echo hello; echo oops >&2; exit 3"
    runner.run_button.click()
    assert runner.wait(10)
    assert runner.exit_code == 3 and not runner.running
    assert "hello" in runner.output and "oops" in runner.output
    assert "exit 3" in runner.status_line.value
    assert runner.history == ["echo hello; echo oops >&2; exit 3"]

    runner.run("sleep 30")
    assert runner.running and runner.stop_button.disabled is False
    assert runner.run("echo second") is None  # one at a time
    runner.stop_button.click()
    assert runner.wait(10)
    assert runner.exit_code in (143, 137) and "stopped" in runner.status_line.value
    assert runner.history[0] == "sleep 30"
    runner.history_list.value = "echo hello; echo oops >&2; exit 3"
    assert runner.command_box.value.startswith("echo hello")
    assert workspace.sandbox.processes.list() == []  # finished commands are released
    runner.close()


def test_command_runner_keeps_the_output_of_commands_that_end_at_once(workspace: Any) -> None:
    runner = CommandRunner(workspace, interval=0.1)
    for i in range(20):  # each ends before the runner's output view may have caught up
        runner.run(f"echo run-{i}")
        assert runner.wait(10)
        assert (runner.exit_code, runner.output) == (0, f"run-{i}\n")
    runner.close()


def test_dashboard_without_background_processes_has_no_run_tab() -> None:
    from ws_jupyter import Workspace
    from ws_jupyter.jupyter.widgets import Dashboard
    from ws_jupyter.sandbox.types import CommandResult

    class Plain:  # a sandbox with execute_command only
        provider = id = "plain"
        status = "running"

        def execute_command(self, command: str, **kwargs: Any) -> Any:
            return CommandResult(True, 0, "", "", 0.1, command=command)

        def get_instructions(self, request_context: Any = None) -> str:
            return ""

    workspace = Workspace(sandbox=Plain())
    workspace.init()
    dashboard = Dashboard(workspace)
    assert "Run" not in dashboard.tab_names and dashboard.runner is None
    dashboard.close()
    workspace.destroy()


# --- ProcessMonitor -------------------------------------------------------------------------------


def test_process_monitor_table_follow_and_kill(workspace: Any) -> None:
    manager = workspace.sandbox.processes
    quick = manager.spawn("echo done")
    slow = manager.spawn("for i in $(seq 1 100); do echo tick $i; sleep 0.05; done")
    quick.wait()
    monitor = ProcessMonitor(workspace, interval=0.1, poll=0.1)
    states = {row["pid"]: row["state"] for row in monitor.rows}
    assert states == {quick.pid: "exited", slow.pid: "running"}
    assert str(slow.pid) in monitor.table.value
    monitor.chooser.value = slow.pid  # what picking it in the dropdown does
    assert monitor.selected_pid == slow.pid and monitor.view is not None
    assert wait_for(lambda: "tick 3" in monitor.view.output)  # type: ignore[union-attr]
    before = len(monitor.view.output)  # type: ignore[union-attr]
    assert wait_for(lambda: len(monitor.view.output) > before)  # type: ignore[union-attr]  # grows live
    assert monitor.kill(slow.pid)
    assert wait_for(lambda: {r["pid"]: r["state"] for r in monitor.rows}[slow.pid] == "killed")
    late = manager.spawn("sleep 30")
    assert wait_for(lambda: late.pid in {r["pid"] for r in monitor.rows})  # polled without being asked
    assert monitor.kill_all() == 1 and late.exit_code is not None
    monitor.close()


# --- FileBrowser ------------------------------------------------------------------------------------


def test_file_browser_lazy_tree_and_preview(workspace: Any, ws_dir: Path) -> None:
    fb = FileBrowser(workspace)
    assert fb.rows == ["docs", "src", "blob.bin", "notes.txt", "pixel.png"]
    assert "src/app.py" not in fb._types  # folders are read only when opened
    fb.tree.value = "src"  # a click on a folder opens it
    assert fb.rows == ["docs", "src", "src/pkg", "src/app.py", "blob.bin", "notes.txt", "pixel.png"]
    assert fb.tree.value is None and "src" in fb.expanded
    assert [label for label, _ in fb.tree.options][1] == "▾ src/"
    fb.tree.value = "src"  # a second click closes it
    assert "src/app.py" not in fb.rows
    fb.tree.value = "notes.txt"
    assert fb.selected == "notes.txt" and "beta" in fb.preview.value and "17 B" in fb.preview.value
    fb.select("src/pkg/util.py", line=2)
    assert fb.selected_line == 2 and {"src", "src/pkg"} <= set(fb.expanded)
    assert "TODO later" in fb.preview.value and "rgba(255, 200, 0" in fb.preview.value  # line marked
    fb.select("pixel.png")
    assert "data:image/png;base64," in fb.preview.value
    fb.select("blob.bin")
    assert "Binary file" in fb.preview.value


def test_file_browser_hidden_refresh_and_breadcrumbs(workspace: Any, ws_dir: Path) -> None:
    fb = FileBrowser(workspace)
    assert ".secret" not in fb.rows and "build" not in fb.rows
    fb.hidden_toggle.value = True
    assert {".secret", "build", "debug.log", ".gitignore"} <= set(fb.rows)
    fb.hidden_toggle.value = False
    (ws_dir / "new.txt").write_text("new\n")
    assert "new.txt" not in fb.rows
    fb.refresh_button.click()
    assert "new.txt" in fb.rows
    fb.toggle("src")
    fb.open_button.click()  # the selected folder becomes the root
    assert fb.root == "src" and fb.rows[0] == "src/pkg"
    crumbs = [c.description for c in fb.crumbs.children if getattr(c, "description", "")]
    assert crumbs == ["workspace", "src"]
    fb.up_button.click()
    assert fb.root == "." and fb.up_button.disabled


def test_file_browser_pages_big_folders(workspace: Any, ws_dir: Path) -> None:
    big = ws_dir / "big"
    big.mkdir()
    for i in range(PAGE + 20):
        (big / f"f{i:05d}.txt").write_text("x")
    fb = FileBrowser(workspace)
    fb.toggle("big")
    shown = [r for r in fb.rows if r.startswith("big/")]
    assert len(shown) == PAGE
    more = next(v for _, v in fb.tree.options if v.endswith("more:big") or v.endswith(":big"))
    fb.tree.value = more
    assert len([r for r in fb.rows if r.startswith("big/")]) == PAGE + 20
    fb.toggle("big")
    fb.toggle("big")
    assert len([r for r in fb.rows if r.startswith("big/")]) == PAGE + 20  # paging is remembered


def test_file_browser_reveals_a_file_beyond_the_first_page(workspace: Any, ws_dir: Path) -> None:
    big = ws_dir / "big"
    big.mkdir()
    for i in range(PAGE + 20):
        (big / f"f{i:05d}.txt").write_text("x")
    fb = FileBrowser(workspace)
    fb.select(f"big/f{PAGE + 10:05d}.txt")
    assert f"big/f{PAGE + 10:05d}.txt" in fb.rows and fb.tree.value == f"big/f{PAGE + 10:05d}.txt"


def test_file_browser_is_lazy_on_big_trees(workspace: Any, ws_dir: Path) -> None:
    """Opening the browser reads only the root; a folder is read when opened (100k files measured
    by hand: 5 ms to open the browser, 8 ms to open a 1000-file folder)."""
    tree = ws_dir / "tree"
    for d in range(40):
        folder = tree / f"d{d:02d}"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"f{f:03d}.txt").touch()
    fb = FileBrowser(workspace)
    started = time.perf_counter()
    fb.toggle("tree")
    assert time.perf_counter() - started < 1.0
    assert set(fb._children) == {".", "tree"}  # the 40 subfolders were not read
    assert len([r for r in fb.rows if r.startswith("tree/")]) == 40


# --- SearchPanel ----------------------------------------------------------------------------------


def test_search_panel_index_search_and_open(workspace: Any) -> None:
    panel = SearchPanel(workspace)
    assert list(panel.mode_toggle.options) == ["bm25"]  # only the modes this workspace has
    panel.query_box.value = "learning rate"
    panel.search_button.click()
    assert panel.results == [] and "index is empty" in panel.status
    panel.index(wait=True)
    assert panel.status.startswith("Indexed 4 files")
    rows = panel.search("neural networks", top_k=3)
    assert rows[0]["path"] == "docs/guide.md" and rows[0]["lines"]
    assert panel.status.startswith("1 result") or "results" in panel.status
    hit_buttons = [c for c in panel.results_box.children if hasattr(c, "on_click")]
    assert hit_buttons[0].description.startswith("1. docs/guide.md:")
    assert "<mark" in panel.results_box.children[1].value
    hit_buttons[0].click()
    assert panel.opened == "docs/guide.md" and "neural networks" in panel.preview.value


def test_search_panel_opens_hits_in_the_file_browser(workspace: Any) -> None:
    workspace.rebuild_search_index(["."])
    fb = FileBrowser(workspace)
    panel = SearchPanel(workspace, file_browser=fb)
    panel.search("helper")
    panel.open_result(0)
    assert fb.selected == "src/pkg/util.py" and "def helper" in fb.preview.value
    assert panel.preview.value == ""


def test_search_panel_reads_the_index_size_only_for_an_empty_result(
    workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace.rebuild_search_index(["."])
    panel = SearchPanel(workspace)
    info_calls: list[int] = []
    get_info = workspace.get_info
    monkeypatch.setattr(workspace, "get_info", lambda *a, **k: info_calls.append(1) or get_info(*a, **k))
    assert panel.search("helper") and info_calls == []
    assert panel.search("zyzzyva") == [] and info_calls == [1]
    assert "index is empty" not in panel.status


def test_search_panel_reports_errors(workspace: Any) -> None:
    panel = SearchPanel(workspace)
    panel.query_box.value = "   "
    panel.search()
    assert panel.status == "Type a query."
    workspace.destroy()
    assert panel.search("anything") == []
    assert "not ready" in panel.status and "#cf222e" in panel.status_line.value


# --- SkillsBrowser ---------------------------------------------------------------------------------


def _skill(root: Path, name: str, description: str, body: str, files: dict[str, str] | None = None) -> None:
    folder = root / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n")
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)


def test_skills_browser(ws_dir: Path) -> None:
    from ws_jupyter import Workspace

    _skill(
        ws_dir,
        "csv-cleaning",
        "Clean CSV files.",
        "# Steps\n\n1. Drop empty rows.",
        {"references/pandas.md": "Use dropna().\n", "scripts/check.py": "print('ok')\n"},
    )
    _skill(
        ws_dir, "plot-style", "Consistent matplotlib plots.", "Use the house style with a colorblind palette."
    )
    ws = Workspace.from_directory(ws_dir)
    ws.init()
    try:
        browser = SkillsBrowser(ws)
        assert browser.names == ["csv-cleaning", "plot-style"] and browser.selected == "csv-cleaning"
        assert "Clean CSV files." in browser.header.value
        shown = browser.detail.outputs[0]["data"]["text/html"]
        assert "Drop empty rows" in shown and "<h2>References</h2>" in shown
        assert list(browser.files.options) == ["references/pandas.md", "scripts/check.py"]
        browser.files.value = "references/pandas.md"
        assert browser.selected_file == "references/pandas.md" and "dropna" in browser.file_view.value
        browser.search_box.value = "plot"
        assert browser.names == ["plot-style"] and browser.selected == "plot-style"
        browser.search_box.value = "colorblind"  # found through the skills' contents
        assert browser.names == ["plot-style"]
        browser.search_box.value = ""
        browser.listing.value = "csv-cleaning"
        assert browser.selected == "csv-cleaning"
    finally:
        ws.destroy()


def test_widgets_do_not_block_the_calling_thread(workspace: Any) -> None:
    """Actions that can take time (kill, index) return at once; the work happens elsewhere."""
    handle = workspace.sandbox.processes.spawn(
        "trap '' TERM; sleep 30"
    )  # ignores SIGTERM: kill needs the grace period
    view = ProcessOutput(handle)
    t0 = time.perf_counter()
    view.kill()
    assert time.perf_counter() - t0 < 0.1
    assert wait_for(lambda: view.state == "killed", timeout=15)
    panel = SearchPanel(workspace)
    done = threading.Event()
    t0 = time.perf_counter()
    panel.index()
    assert time.perf_counter() - t0 < 0.1
    assert wait_for(lambda: panel.status.startswith("Indexed"))
    done.set()


@pytest.fixture(autouse=True)
def _no_leaked_children() -> Any:
    from ws_jupyter.sandbox.guard import orphan_guard

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    yield
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        alive = [
            p
            for p in psutil.Process().children(recursive=True)
            if p.pid not in before and p.pid != orphan_guard.pid and p.status() != psutil.STATUS_ZOMBIE
        ]
        if not alive:
            return
        time.sleep(0.05)
    raise AssertionError(f"processes left behind: {alive}")


# --- ToolActivity, ToolCallPanel, Dashboard -----------------------------------------------------------


def test_tool_activity_logs_calls_and_approves(workspace: Any) -> None:
    from ws_jupyter.jupyter.widgets import ToolActivity

    tools = {t.name: t for t in workspace.tools()}
    tools["workspace_read_file"].run({"path": "notes.txt"})  # before the widget: shown from history
    activity = ToolActivity(workspace, interval=0.1)
    assert [c["tool"] for c in activity.calls] == ["workspace_read_file"]
    assert activity.calls[0]["status"] == "done" and "alpha" in activity.calls[0]["output"]
    results: dict[str, Any] = {}

    def agent(key: str, command: str) -> None:
        results[key] = tools["workspace_execute_command"].run({"command": command})

    first = threading.Thread(target=agent, args=("first", "echo first"))
    second = threading.Thread(target=agent, args=("second", "echo second"))
    first.start()
    assert wait_for(lambda: (activity.refresh(), len(activity.pending))[1] == 1)
    second.start()
    assert wait_for(lambda: (activity.refresh(), len(activity.pending))[1] == 2)
    assert len(activity.pending_box.children) == 2
    row = activity.pending_box.children[0]
    approve, deny = row.children[1], row.children[2]
    assert (approve.description, deny.description) == ("Approve", "Deny")
    approve.click()  # what the Approve button does
    first.join(10)
    assert str(results["first"]).strip() == "first"
    assert activity.deny()  # the oldest still waiting: the second call
    second.join(10)
    assert str(results["second"]) == "Tool call refused by user."
    activity.refresh()
    statuses = [c["status"] for c in activity.calls]
    assert statuses == ["done", "done", "refused"] and activity.pending == []
    assert "refused" in activity.log_view.value and "echo first" in activity.log_view.value
    activity.clear()
    assert activity.calls == []
    activity.close()


def test_closing_tool_activity_refuses_waiting_calls(workspace: Any) -> None:
    from ws_jupyter.jupyter.widgets import ToolActivity

    activity = ToolActivity(workspace, interval=0.1)
    tool = next(t for t in workspace.tools() if t.name == "workspace_execute_command")
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(tool.run({"command": "echo never"})))
    thread.start()
    assert wait_for(lambda: bool(activity.feed.pending()))
    activity.close()
    thread.join(10)
    assert str(out[0]) == "Tool call refused by user."
    # without the widget (and no approver function) the call is refused at once, with advice
    assert "no approver is configured" in str(tool.run({"command": "echo x"}))


def test_tool_call_panel(workspace: Any) -> None:
    from ws_jupyter.jupyter.widgets import ToolCallPanel

    tool = next(t for t in workspace.tools() if t.name == "workspace_execute_command")
    panel = ToolCallPanel(workspace, tool, {"command": "echo panel"}, interval=0.1)
    assert panel.wait_until_waiting()
    assert not panel.approve_button.disabled
    panel.approve_button.click()
    assert panel.wait(10) and panel.status == "done" and panel.output.strip() == "panel"
    assert "panel" in panel.result_view.value and panel.approve_button.layout.display == "none"
    refused = ToolCallPanel(workspace, tool, {"command": "echo no"}, interval=0.1)
    assert refused.wait_until_waiting()
    refused.deny_button.click()
    assert refused.wait(10) and refused.status == "refused"


def test_tool_call_panel_stop_cancels_the_running_call(workspace: Any) -> None:
    """The panel's call runs on a thread, so the notebook is free and Stop can act: the command is
    killed and the call ends as cancelled, in the panel and in the tool log."""
    from ws_jupyter.jupyter.widgets import ToolActivity, ToolCallPanel

    activity = ToolActivity(workspace, interval=0.1, approvals=False)
    tool = next(t for t in workspace.tools() if t.name == "workspace_execute_command")
    panel = ToolCallPanel(workspace, tool, {"command": "echo begun; sleep 60"}, interval=0.1)
    try:
        assert panel.wait_until_waiting()
        assert panel.stop_button.layout.display == "none" and not panel.stop()  # nothing runs yet
        panel.approve_button.click()
        assert wait_for(lambda: panel.status == "running", 10)
        panel._throttle.flush()
        assert panel.stop_button.layout.display == "" and not panel.stop_button.disabled
        started = time.monotonic()
        panel.stop_button.click()
        assert panel.wait(20) and time.monotonic() - started < 15
        assert panel.status == "cancelled" and "stopped" in panel.state_line.value
        assert panel.stop_button.layout.display == "none"
        activity.refresh()
        assert activity.calls[-1]["status"] == "cancelled"
        activity.clear()  # a cancelled call is finished: Clear removes it
        assert activity.calls == []
    finally:
        panel.close()
        activity.close()


def test_dashboard_wires_search_to_files(ws_dir: Path) -> None:
    from ws_jupyter import Workspace
    from ws_jupyter.jupyter.widgets import Dashboard

    _skill(ws_dir, "demo-skill", "A demo skill.", "Do it.")
    ws = Workspace.from_directory(ws_dir)
    ws.init()
    try:
        ws.rebuild_search_index(["."])
        dash = Dashboard(ws, interval=0.1)
        assert dash.tab_names == ["Files", "Run", "Processes", "Search", "Skills", "Changes", "Agent tools", "Kernels"]
        assert dash.search is not None and dash.files is not None
        dash.search.search("learning rate")
        dash.search.open_result(0)
        assert dash.files.selected == "docs/guide.md" and dash.tab.selected_index == 0
        dash.show("Skills")
        assert (
            dash.tab.selected_index == 4 and dash.skills is not None and dash.skills.names == ["demo-skill"]
        )
        # the static copy a saved notebook keeps: every tab's state, the selected one unfolded
        html, text = dash.snapshot()
        for words in ("selected: docs/guide.md", "learning rate", "docs/guide.md:", "▸ demo-skill", "[Agent tools]", "[Kernels]"):
            assert words in text, words
        assert html.count("<details") == 8 and html.count("<details open") == 1
        assert "<details open style='margin: 2px 0'><summary style='cursor: pointer'><strong>Skills" in html
        dash.close()
    finally:
        ws.destroy()


def test_statuses_do_not_count_the_approval_wait_and_say_blocked(workspace: Any) -> None:
    from ws_jupyter.jupyter.widgets import ToolActivity, ToolCallPanel

    def before(ctx: Any) -> Any:
        if "rm " in ctx.input.get("command", ""):
            return {"proceed": False, "output": "Deleting files is not allowed here."}
        return None

    workspace.set_tools_config({"hooks": {"before_tool_call": before}})
    activity = ToolActivity(workspace, interval=0.1, approvals=False)
    tool = next(t for t in workspace.tools() if t.name == "workspace_execute_command")
    panel = ToolCallPanel(workspace, tool, {"command": "echo quick"}, interval=0.1)
    assert panel.wait_until_waiting()
    time.sleep(1.5)  # the user takes their time to click
    panel.approve_button.click()
    assert panel.wait(10) and panel.status == "done"
    assert panel.duration < 1.5  # the call's own time, not the wait ("5.62 s" for ls)
    blocked = ToolCallPanel(workspace, tool, {"command": "rm -rf data"}, interval=0.1)
    assert blocked.wait_until_waiting()
    blocked.approve_button.click()
    assert blocked.wait(10) and blocked.status == "blocked"  # not a green "done"
    assert "blocked by a hook" in blocked.state_line.value and "not allowed" in blocked.output
    activity.refresh()
    rows = {c["input"]["command"]: c for c in activity.calls}
    assert rows["echo quick"]["status"] == "done" and rows["echo quick"]["duration_ms"] < 1500
    assert rows["rm -rf data"]["status"] == "blocked"
    assert "blocked" in activity.log_view.value
    for widget in (panel, blocked, activity):
        widget.close()
