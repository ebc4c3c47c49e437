"""%ws / %%ws in IPython's testing shell, against a real workspace (files, sandbox, processes)."""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path
from typing import Any

import psutil
import pytest
from IPython.core.error import UsageError

from ws_jupyter.jupyter.commands import all_commands
from ws_jupyter.jupyter.magics import WsCommandError, WsMagics
from ws_jupyter.jupyter.views import (
    FileView,
    GrepView,
    IndexView,
    InfoView,
    LogView,
    MessageView,
    ProcessTableView,
    RunSummary,
    SearchResultsView,
    SkillTableView,
    SkillView,
    TreeView,
)

from ..helpers import wait_for


def ws(shell: Any, line: str, cell: str | None = None) -> Any:
    if cell is None:
        return shell.run_line_magic("ws", line)
    return shell.run_cell_magic("ws", line, cell)


def html_of(shell: Any, obj: Any) -> str:
    data, _ = shell.display_formatter.format(obj)
    return str(data.get("text/html", ""))


# --- framework --------------------------------------------------------------------------------


def test_help_lists_every_subcommand(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert ws(ip, "--help") is None
    out = capsys.readouterr().out
    for name in all_commands():
        assert f"  {name} " in out
    assert "$$" in out  # the expansion rules are part of the help


def test_magic_docstring_is_the_overview(ip: Any) -> None:
    magic = ip.find_line_magic("ws")
    assert "Subcommands" in magic.__doc__ and "init" in magic.__doc__


@pytest.mark.parametrize("name", sorted(all_commands()))
def test_every_subcommand_has_help(ip: Any, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert ws(ip, f"{name} --help") is None
    out = capsys.readouterr().out
    assert out.startswith(f"usage: %ws {name}")
    assert "Example" in out  # each help ends with examples


def test_help_subcommand_form(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ws(ip, "help grep")
    assert capsys.readouterr().out.startswith("usage: %ws grep")


def test_unknown_subcommand_suggests(ip: Any) -> None:
    with pytest.raises(UsageError, match=r"Did you mean `%ws grep`"):
        ws(ip, "grepp x")


def test_workspace_required(ip: Any) -> None:
    with pytest.raises(UsageError, match="No workspace yet"):
        ws(ip, "ls")


def test_cell_rules(ws_ip: Any) -> None:
    with pytest.raises(UsageError, match="needs a cell body"):
        ws(ws_ip, "write a.txt")
    with pytest.raises(UsageError, match="takes no cell body"):
        ws(ws_ip, "ls", "body")


def test_usage_errors_are_single_lines_through_run_cell(
    ws_ip: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    result = ws_ip.run_cell("%ws ls --depth zero")
    assert isinstance(result.error_in_exec, UsageError)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "UsageError" in text and "Traceback" not in text


def test_workspace_errors_become_one_line(ws_ip: Any) -> None:
    with pytest.raises(WsCommandError) as info:
        ws(ws_ip, "cat missing.txt")
    assert isinstance(info.value.error, FileNotFoundError)
    assert "missing.txt" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(WsCommandError) as escape:
        ws(ws_ip, "cat ../../etc/passwd")
    assert isinstance(escape.value.error, PermissionError)


def test_config_traitlets(ip: Any, tmp_path: Path) -> None:
    ip.run_line_magic("config", "WsMagics.default_dir = 'data'")
    ip.run_line_magic("config", "WsMagics.variable_name = 'space'")
    info = ws(ip, "init")
    assert isinstance(info, InfoView)
    assert (Path.cwd() / "data").is_dir()
    assert ip.user_ns["space"].filesystem.base_path == os.path.realpath(Path.cwd() / "data")
    magics = next(c for c in ip.configurables if isinstance(c, WsMagics))
    magics.update_interval = 0.01
    assert magics.update_interval == 0.1  # never more than 10 updates a second


def test_variable_expansion_in_lines(ws_ip: Any) -> None:
    ws_ip.user_ns["fname"] = "notes.txt"
    ws_ip.user_ns["n"] = 2
    view = ws(ws_ip, "cat $fname --lines {n}:{n + 1}")
    assert view.lines == ["beta", "gamma"]
    summary = ws(ws_ip, "run --quiet echo $fname {n * 21} $HOME_IS_SHELL '{print $1}'")
    assert summary.stdout.split() == ["notes.txt", "42", "{print", "$1}"]


def test_expansion_can_be_turned_off(ws_ip: Any) -> None:
    ws_ip.user_ns["x"] = 5
    ws_ip.run_line_magic("config", "WsMagics.expand_variables = False")
    summary = ws(ws_ip, "run --quiet echo {x}")
    assert summary.stdout.strip() == "{x}"


# --- workspace ----------------------------------------------------------------------------------


def test_init_binds_ws_and_reinit_destroys_the_old_one(ip: Any, ws_dir: Path) -> None:
    info = ws(ip, f"init {ws_dir} --name demo")
    first = ip.user_ns["ws"]
    assert first.name == "demo" and first.status == "ready"
    assert info.as_dict()["status"] == "ready"
    assert "bm25" in info.as_dict()["search"]
    handle = first.sandbox.processes.spawn("sleep 30")
    done = first.sandbox.processes.spawn("true")
    done.wait(timeout=30)
    again = ws(ip, f"init {ws_dir} --no-bm25")
    assert first.status == "destroyed"
    # it says so, naming what it killed (only what was still running)
    assert again.notes == [
        f"replacing the previous workspace killed 1 running background process: PID {handle.pid} sleep 30"
    ]
    assert "! replacing the previous workspace killed" in repr(again) and "sleep 30" in html_of(ip, again)
    assert not psutil.pid_exists(handle.pid) or psutil.Process(handle.pid).status() == psutil.STATUS_ZOMBIE
    assert ip.user_ns["ws"] is not first and not ip.user_ns["ws"].can_bm25
    assert (ws_dir / "notes.txt").exists()  # files are never deleted


def test_init_defaults_to_a_folder_named_after_the_notebook(ip: Any, tmp_path: Path) -> None:
    ip.user_ns["__session__"] = str(tmp_path / "project" / "analysis.ipynb")  # what Jupyter Server sets
    (tmp_path / "project").mkdir()
    try:
        info = ws(ip, "init")
    finally:
        del ip.user_ns["__session__"]
    workspace = ip.user_ns["ws"]
    assert workspace.name == "analysis" and info.heading == "Workspace analysis → ws"
    assert workspace.filesystem.base_path == str(tmp_path / "project" / "analysis-workspace")
    assert info.notes == []  # not the kernel's working directory: nothing it writes is importable here
    ws(ip, "init")  # the kernel does not know its notebook (nbclient, terminal IPython)
    assert ip.user_ns["ws"].filesystem.base_path == os.path.join(os.getcwd(), "workspace")


def test_init_warns_when_the_workspace_holds_the_kernels_cwd(ip: Any) -> None:
    info = ws(ip, "init .")
    assert len(info.notes) == 1 and "working directory, first on sys.path" in info.notes[0]


def test_init_isolation_defaults_to_auto_and_info_says_what_is_available(ip: Any, ws_dir: Path) -> None:
    from ws_jupyter import LocalSandbox

    magics = ip.magics_manager.registry["WsMagics"]
    assert WsMagics.class_traits()["isolation"].default_value == "auto"
    magics.isolation = "auto"  # the conftest turns it off for speed
    found = LocalSandbox.detect_isolation()
    rows = ws(ip, f"init {ws_dir}").as_dict()
    assert rows["isolation"] == (found.backend if found.available else "none")
    info = ws(ip, "info").as_dict()
    if found.available:  # bubblewrap works on this machine (it does in CI)
        assert info["isolation available"].startswith("bwrap (bubblewrap available")
    else:
        assert info["isolation available"].startswith("none only:")


def test_init_picks_up_skills(ip: Any, ws_dir: Path) -> None:
    _write_skill(ws_dir / "skills" / "hello-world", "hello-world", "Says hello.")
    info = ws(ip, f"init {ws_dir}")
    assert info.as_dict()["skills"] == "1"


def test_init_rejects_a_file(ip: Any, ws_dir: Path) -> None:
    with pytest.raises(UsageError, match="not a directory"):
        ws(ip, f"init {ws_dir / 'notes.txt'}")


def test_use_adopts_without_owning(ip: Any, workspace: Any) -> None:
    ip.user_ns["mine"] = workspace
    info = ws(ip, "use mine")
    assert "mine" in info.heading
    assert ws(ip, "cat notes.txt").lines == ["alpha", "beta", "gamma"]
    ip.run_line_magic("unload_ext", "ws_jupyter")
    assert workspace.status == "ready"  # adopted: the session does not destroy it
    ip.run_line_magic("load_ext", "ws_jupyter")
    ip.user_ns["other"] = 42
    with pytest.raises(UsageError, match="not a Workspace"):
        ws(ip, "use other")
    with pytest.raises(UsageError, match="cannot evaluate"):
        ws(ip, "use no_such_name")


def test_info(ws_ip: Any) -> None:
    info = ws(ws_ip, "info --files")
    rows = info.as_dict()
    assert rows["status"] == "ready" and rows["isolation"] == "none"
    assert rows["files"] == "6"  # gitignored and hidden files are not counted
    html = html_of(ws_ip, info)
    assert "<table" in html and "isolation" in html
    assert "isolation" in repr(info)


# --- files --------------------------------------------------------------------------------------


def test_ls_tree(ws_ip: Any) -> None:
    tree = ws(ws_ip, "ls")
    assert isinstance(tree, TreeView)
    assert tree.files == ["docs/guide.md", "src/app.py", "blob.bin", "notes.txt", "pixel.png"]
    assert "build" not in tree.directories and ".secret" not in tree.files
    assert tree.hidden_by_depth  # src/pkg has children below depth 2
    text = repr(tree)
    assert "├── docs/" in text and "│   └── guide.md" in text and "directories" in text
    html = html_of(ws_ip, tree)
    assert "<details open" in html and 'href="' in html and "guide.md" in html


def test_ls_depth_all_and_subdir(ws_ip: Any) -> None:
    deep = ws(ws_ip, "ls --depth 5")
    assert "src/pkg/util.py" in deep.files and not deep.hidden_by_depth
    everything = ws(ws_ip, "ls --all --depth 3")
    assert {"build/out.txt", "debug.log", ".secret", ".gitignore"} <= set(everything.files)
    sub = ws(ws_ip, "ls src")
    assert sub.root == "src" and sub.files == ["src/pkg/util.py", "src/app.py"]
    with pytest.raises(UsageError, match="depth"):
        ws(ws_ip, "ls --depth 0")


def test_ls_limit(ws_ip: Any) -> None:
    tree = ws(ws_ip, "ls --limit 2")
    assert len(tree.entries) == 2 and tree.truncated


def test_cat_text_lines_and_long_files(ws_ip: Any, ws_dir: Path) -> None:
    view = ws(ws_ip, "cat src/app.py")
    assert isinstance(view, FileView) and view.total_lines == 5
    assert "     " not in repr(view).splitlines()[1]  # compact numbering
    assert repr(view).splitlines()[1] == "1  import os"
    html = html_of(ws_ip, view)
    assert "TODO: parse args" in html and "<table" in html
    part = ws(ws_ip, "cat src/app.py --lines 3:4")
    assert part.first_line == 3 and part.lines == ["def main():", "    # TODO: parse args"]
    assert ws(ws_ip, "cat src/app.py --lines 4").lines == ["    # TODO: parse args"]
    (ws_dir / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 5001)))
    ws_ip.run_line_magic("config", "WsMagics.max_lines = 100")
    long = ws(ws_ip, "cat long.txt")
    assert long.omitted == (51, 4950) and long.lines[0] == "line 1" and long.lines[-1] == "line 5000"
    assert "4900 lines not shown" in repr(long)
    with pytest.raises(UsageError, match="ends before it starts"):
        ws(ws_ip, "cat long.txt --lines 9:3")
    with pytest.raises(WsCommandError, match="has 5000 lines"):
        ws(ws_ip, "cat long.txt --lines 6000:")
    with pytest.raises(UsageError, match="is a directory"):
        ws(ws_ip, "cat src")


def test_cat_image_and_binary(ws_ip: Any) -> None:
    image = ws(ws_ip, "cat pixel.png")
    data, _ = ws_ip.display_formatter.format(image)
    assert "image/png" in data and image.is_image
    binary = ws(ws_ip, "cat blob.bin")
    assert binary.text_content is None and "binary" in repr(binary)


def test_cat_looks_the_file_up_once(ws_ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fs = ws_ip.user_ns["ws"].filesystem
    calls: list[str] = []
    stat = fs.stat
    monkeypatch.setattr(fs, "stat", lambda path, *a, **k: calls.append(path) or stat(path, *a, **k))
    assert ws(ws_ip, "cat src/app.py").total_lines == 5
    assert calls == ["src/app.py"]


def test_write_append_and_no_overwrite(ws_ip: Any, ws_dir: Path) -> None:
    msg = ws(ws_ip, "write out/new.py", "x = '$not_expanded {nor_this}'")
    assert isinstance(msg, MessageView) and "Wrote" in msg.message
    assert (ws_dir / "out" / "new.py").read_text() == "x = '$not_expanded {nor_this}'\n"
    ws(ws_ip, "write out/new.py --append", "y = 2\n")
    assert (ws_dir / "out" / "new.py").read_text().endswith("y = 2\n")
    with pytest.raises(WsCommandError, match="exists"):
        ws(ws_ip, "write out/new.py --no-overwrite", "z")
    with pytest.raises(WsCommandError):
        ws(ws_ip, "write ../escape.txt", "nope")
    assert not (ws_dir.parent / "escape.txt").exists()


def test_grep(ws_ip: Any) -> None:
    view = ws(ws_ip, "grep TODO")
    assert isinstance(view, GrepView)
    assert view.match_count == 2 and view.files == ["src/pkg/util.py", "src/app.py"]
    first = next(m for m in view.matches if m.path == "src/app.py")
    assert first.line == 4 and first.column == 7 and first.spans == ((6, 10),)
    text = repr(view)
    assert text.startswith("2 matches across 2 files") and "src/app.py:4:7:     # TODO: parse args" in text
    html = html_of(ws_ip, view)
    assert "<mark" in html and 'href="' in html


def test_grep_options(ws_ip: Any) -> None:
    ctx = ws(ws_ip, "grep 'def main' src -C 1")
    assert [(m.line, m.context) for m in ctx.matches] == [(2, True), (3, False), (4, True)]
    assert ws(ws_ip, "grep todo -i").match_count == 2
    assert ws(ws_ip, "grep todo").match_count == 0
    assert ws(ws_ip, "grep -F 'x * 2'").match_count == 1
    assert ws(ws_ip, "grep ignored").match_count == 0  # gitignored files are not searched
    assert ws(ws_ip, "grep hidden --hidden").match_count == 1
    with pytest.raises(UsageError, match="Invalid regex pattern"):
        ws(ws_ip, "grep '(unclosed'")


# --- commands and processes ----------------------------------------------------------------------


def test_run_streams_and_summarises(ws_ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    summary = ws(ws_ip, "run echo out; echo err >&2; exit 3")
    captured = capsys.readouterr()
    assert "out" in captured.out and "err" in captured.err  # streamed while running
    assert isinstance(summary, RunSummary)
    assert summary.exit_code == 3 and not summary.success and summary.stdout == "out\n"
    assert repr(summary).startswith("✗ exit 3")
    assert "exit 3" in html_of(ws_ip, summary)
    assert ws_ip.user_ns["ws"].sandbox.processes.list() == []  # foreground runs leave no entry


def test_run_cwd_env_timeout_check(ws_ip: Any) -> None:
    assert ws(ws_ip, "run -q --cwd src pwd").stdout.strip().endswith("/src")
    assert ws(ws_ip, "run -q --env GREETING='hi there' echo $GREETING").stdout == "hi there\n"
    slow = ws(ws_ip, "run -q --timeout 0.5 sleep 5")
    assert slow.timed_out and slow.exit_code == 124 and slow.duration < 4
    with pytest.raises(UsageError, match="command failed"):
        ws(ws_ip, "run -q --check false")
    with pytest.raises(UsageError, match="nothing to run"):
        ws(ws_ip, "run")


def test_run_cell_script_and_interpreter(ws_ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    script = ws(ws_ip, "run", "x=1\necho step $x\necho done")
    assert script.stdout == "step 1\ndone\n"
    python = ws(ws_ip, "run -q python3", "import sys\nprint(sum(range(10)), file=sys.stdout)")
    assert python.stdout == "45\n" and python.exit_code == 0


def test_run_quiet_shows_output_in_result(ws_ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    summary = ws(ws_ip, "run --quiet echo hidden")
    assert "hidden" not in capsys.readouterr().out
    assert "hidden" in repr(summary)


def test_run_streams_on_a_sandbox_without_processes(
    workspace: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from ws_jupyter.jupyter.commands.run import run_streaming

    class Plain:  # execute_command only: no background processes
        def execute_command(self, *args: Any, **kwargs: Any) -> Any:
            return workspace.sandbox.execute_command(*args, **kwargs)

    summary = run_streaming(Plain(), "echo out; echo err >&2; exit 3")
    assert (summary.command, summary.exit_code, summary.stdout, summary.stderr) == (
        "echo out; echo err >&2; exit 3",
        3,
        "out\n",
        "err\n",
    )
    assert summary.streamed and not summary.success and capsys.readouterr().out == "out\n"


def test_bg_ps_logs_send_kill(ws_ip: Any) -> None:
    handle = ws(
        ws_ip,
        "bg --no-widget python3 -u -c \"import sys\nfor line in sys.stdin: print('got', line.strip(), flush=True)\"",
    )
    assert handle.exit_code is None
    table = ws(ws_ip, "ps")
    assert isinstance(table, ProcessTableView) and [r.pid for r in table.rows] == [handle.pid]
    assert table.rows[0].state == "running"
    msg = ws(ws_ip, f"send {handle.pid} hello world")
    assert msg.message == f"Sent 12 bytes to PID {handle.pid}"
    ws(ws_ip, f"send {handle.pid}", "a\nb")
    assert wait_for(lambda: handle.stdout.count("got") == 3)
    logs = ws(ws_ip, f"logs {handle.pid}")
    assert isinstance(logs, LogView) and logs.stdout == "got hello world\ngot a\ngot b\n" and logs.running
    assert ws(ws_ip, f"logs {handle.pid} --tail 1").stdout == "got b\n"
    killed = ws(ws_ip, f"kill {handle.pid}")
    assert "Killed PID" in killed.message and handle.exit_code is not None
    assert "had already exited" in ws(ws_ip, f"kill {handle.pid}").message
    assert ws(ws_ip, "ps --running").rows == []
    with pytest.raises(UsageError, match="No background process with PID 1"):
        ws(ws_ip, "logs 1")
    with pytest.raises(WsCommandError, match=r"closed|exited"):
        ws(ws_ip, f"send {handle.pid} too late")


def test_logs_tail_is_capped_by_max_lines_and_says_so(ws_ip: Any) -> None:
    handle = ws(ws_ip, "bg --no-widget seq 1 10")
    assert wait_for(lambda: handle.exit_code == 0)
    ws_ip.run_line_magic("config", "WsMagics.max_lines = 3")
    logs = ws(ws_ip, f"logs {handle.pid} --tail 5")
    assert logs.stdout == "8\n9\n10\n" and logs.shown == "last 3 lines"
    assert ws(ws_ip, f"logs {handle.pid} --tail 2").shown == "last 2 lines"


def test_send_eof_and_kill_all(ws_ip: Any) -> None:
    cat = ws(ws_ip, "bg --no-widget cat")
    sleeper = ws(ws_ip, "bg --no-widget sleep 60")
    assert "closed its stdin" in ws(ws_ip, f"send --eof {cat.pid} last line").message
    assert wait_for(lambda: cat.exit_code == 0)
    assert cat.stdout == "last line\n"
    assert "Killed PID" in ws(ws_ip, "kill --all").message
    assert sleeper.exit_code is not None
    with pytest.raises(UsageError, match="PIDs or --all"):
        ws(ws_ip, "kill")


def test_ps_states_agree_with_the_live_widget(ws_ip: Any) -> None:
    from ws_jupyter.jupyter.widgets.process_output import ProcessOutput

    timed = ws(ws_ip, "bg --no-widget --timeout 0.3 sleep 30")
    code = ws(ws_ip, "bg --no-widget exit 130")  # a failure, though the code is above 128
    killed = ws(ws_ip, "bg --no-widget sleep 30")
    killed.kill()
    assert wait_for(lambda: timed.exit_code is not None and code.exit_code is not None)
    states = {r.pid: r.state for r in ws(ws_ip, "ps").rows}
    assert states == {timed.pid: "timed out", code.pid: "failed", killed.pid: "killed"}
    for handle in (timed, code, killed):
        view = ProcessOutput(handle)
        assert view.state == states[handle.pid]
        view.close()


def test_bg_shows_a_live_widget(ws_ip: Any) -> None:
    from ws_jupyter.jupyter.widgets.process_output import ProcessOutput

    handle = ws(ws_ip, "bg echo from-bg")
    assert wait_for(lambda: handle.exit_code == 0)
    magics = next(c for c in ws_ip.configurables if isinstance(c, WsMagics))
    closers = magics.session._closers
    assert closers and isinstance(closers[-1].__self__, ProcessOutput)
    view = closers[-1].__self__
    assert wait_for(lambda: (view.refresh(), view.output)[1] == "from-bg\n")
    assert view.state == "exited" and view.exit_code == 0


def test_unload_kills_processes(ip: Any, ws_dir: Path) -> None:
    ws(ip, f"init {ws_dir}")
    handle = ws(ip, "bg --no-widget sleep 60")
    ip.run_line_magic("unload_ext", "ws_jupyter")
    assert handle.exit_code is not None
    assert ip.find_line_magic("ws") is None
    ip.run_line_magic("load_ext", "ws_jupyter")


# --- search and skills ---------------------------------------------------------------------------


def test_index_and_search(ip: Any, ws_dir: Path) -> None:
    ws(ip, f"init {ws_dir} --no-vector --no-index")
    ws_ip = ip
    report = ws(ws_ip, "index")
    assert isinstance(report, IndexView) and report.indexed == 4 and report.documents
    again = ws(ws_ip, "index")
    assert again.indexed == 0 and again.unchanged == 4  # incremental
    results = ws(ws_ip, "search learning rate schedule -k 3")
    assert isinstance(results, SearchResultsView)
    assert results.mode == "bm25" and results.results[0].id == "docs/guide.md"
    html = html_of(ws_ip, results)
    assert "<mark" in html and "docs/guide.md" in html
    assert repr(results).splitlines()[0].startswith(" 1. docs/guide.md:") and "(bm25)" in repr(results)
    with pytest.raises(WsCommandError, match=r"[Vv]ector search requires an embedder"):
        ws(ws_ip, "search anything --mode vector")


def test_search_shows_the_best_few_says_how_to_see_more_and_marks_no_stopwords(ws_ip: Any, ws_dir: Path) -> None:
    for i in range(8):
        (ws_dir / "docs" / f"city{i}.md").write_text(f"Which city is the largest? City number {i} is.\n")
    ws(ws_ip, "index")
    results = ws(ws_ip, "search which city is the largest")
    assert len(results.results) == 5  # not 10 hits down to the noise
    assert results.more_hint == "More results: `%ws search which city is the largest -k 10`"
    assert repr(results).endswith(results.more_hint) and "-k 10" in html_of(ws_ip, results)
    marked = re.findall(r"<mark[^>]*>([^<]*)</mark>", html_of(ws_ip, results))
    assert marked and {m.lower() for m in marked} <= {"city", "largest"}  # not which / is / the
    everything = ws(ws_ip, "search which city is the largest -k 50 --mode bm25")  # hybrid ranks every file
    assert len(everything.results) == 8 and everything.more_hint == ""


def test_search_empty_index_hint(ip: Any, ws_dir: Path) -> None:
    ws(ip, f"init {ws_dir} --no-index")
    results = ws(ip, "search nothing indexed")
    assert results.results == [] and "%ws index" in repr(results)


def test_init_indexes_the_workspace_by_default(ws_ip: Any) -> None:
    from ws_jupyter.search.embedder import default_embedder_available

    workspace = ws_ip.user_ns["ws"]
    assert workspace.auto_index_paths == (".",) and workspace.can_hybrid == default_embedder_available()
    results = ws(ws_ip, "search learning rate schedule -k 3 --mode bm25")  # no %ws index needed
    assert results.results[0].id == "docs/guide.md"
    assert workspace.wait_for_index(300)
    assert ws(ws_ip, "info").as_dict()["index"].startswith("ready: ")  # %ws info says how far the index is


def test_search_view_shows_the_reported_lines(ws_ip: Any, ws_dir: Path) -> None:
    body = [f"value_{i} = {i}" for i in range(1, 31)]
    body[1] = "price = 0  # a lone mention far from the hit"
    body[17] = "def apply_discount(price):"
    body[18] = "    return round_half_even(price * DISCOUNT_RATE)  # rounding of the discounted price"
    (ws_dir / "pricing.py").write_text("\n".join(body) + "\n")
    ws(ws_ip, "index")
    results = ws(ws_ip, "search discount rounding --mode bm25 -k 1")
    hit = results.results[0]
    assert hit.id == "pricing.py"
    start, end = hit.line_range
    assert start <= 19 <= end and start > 2
    text = repr(results).splitlines()
    assert text[0].startswith(f" 1. pricing.py:{start}-{end}")
    shown = [line[6:] for line in text[1:] if line.startswith("      ")]
    n = min(2, end - start + 1)  # the text view shows the first two lines of the range
    assert shown[:n] == body[start - 1 : start - 1 + n]  # those lines, indentation kept
    html = html_of(ws_ip, results)
    assert "lone mention" not in html and "    return " in html and ">discount</mark>" in html.lower()


def test_skills_list_and_skill(ip: Any, ws_dir: Path) -> None:
    _write_skill(
        ws_dir / "skills" / "csv-tools",
        "csv-tools",
        "Work with CSV files.",
        refs={"tips.md": "# Tips\nUse pandas.\n"},
    )
    _write_skill(ws_dir / "skills" / "bad-skill", "Bad_Name", "Invalid name.")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning escapes: the output itself reports the problem
        info = ws(ip, f"init {ws_dir}")
    assert len(info.notes) == 1 and info.notes[0].startswith("skill problem: Invalid skill")
    table = ws(ip, "skills")  # terminal shell: the static table
    assert isinstance(table, SkillTableView) and table.names == ["csv-tools"]
    assert any(i.kind == "invalid" for i in table.issues) and "invalid" in repr(table)
    assert ws(ip, "skills --list csv").names == ["csv-tools"]
    assert ws(ip, "skills --list nomatch").names == []
    view = ws(ip, "skill csv-tools")
    assert isinstance(view, SkillView)
    data, _ = ip.display_formatter.format(view)
    assert "<h2>References</h2>" in data["text/html"] and "references/tips.md" in data["text/html"]
    ref = ws(ip, "skill csv-tools --file tips.md")
    assert ref.lines == ["# Tips", "Use pandas."]
    with pytest.raises(UsageError, match=r'Skill "nope" not found\. Available skills: csv-tools'):
        ws(ip, "skill nope")


def test_skill_images_show_as_images(ip: Any, ws_dir: Path) -> None:
    from ws_jupyter.jupyter.widgets.skills_browser import SkillsBrowser

    _write_skill(ws_dir / "skills" / "plots", "plots", "Plot things.")
    (ws_dir / "skills" / "plots" / "assets").mkdir()
    jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(256))
    (ws_dir / "skills" / "plots" / "assets" / "example.jpg").write_bytes(jpeg)
    ws(ip, f"init {ws_dir}")
    view = ws(ip, "skill plots --file assets/example.jpg")
    assert view.is_image and view.mime_type == "image/jpeg" and view.data == jpeg
    browser = SkillsBrowser(ip.user_ns["ws"])
    browser.open_file("assets/example.jpg")
    assert '<img src="data:image/jpeg;base64,' in browser.file_view.value
    browser.close()


def test_skills_not_configured(ws_ip: Any) -> None:
    with pytest.raises(UsageError, match="no skills configured"):
        ws(ws_ip, "skills")


# --- helpers ----------------------------------------------------------------------------------------


def _write_skill(folder: Path, name: str, description: str, refs: dict[str, str] | None = None) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nDo the thing.\n"
    )
    for ref, text in (refs or {}).items():
        (folder / "references").mkdir(exist_ok=True)
        (folder / "references" / ref).write_text(text)


# --- agent tools ------------------------------------------------------------------------------------


def test_tools_table_and_formats(ws_ip: Any) -> None:
    from ws_jupyter.jupyter.views import JSONView, ToolTableView

    table = ws(ws_ip, "tools")
    assert isinstance(table, ToolTableView)
    assert {"workspace_read_file", "workspace_grep", "workspace_execute_command", "workspace_search"} <= set(
        table.names
    )
    assert "need approval" in table.meta()  # execute_command on an unisolated sandbox
    html = html_of(ws_ip, table)
    assert "<details" in html and "&quot;properties&quot;" in html
    openai = ws(ws_ip, "tools --format openai")
    assert isinstance(openai, JSONView) and openai.value[0]["type"] == "function"
    data, _ = ws_ip.display_formatter.format(openai)
    assert set(data) == {"text/html", "text/plain"}  # readable JSON text, not a collapsed JSON tree
    assert json.loads(data["text/plain"]) == openai.value
    assert '\n    &quot;type&quot;: &quot;function&quot;' in data["text/html"]  # indented, shown as text
    anthropic = ws(ws_ip, "tools -f anthropic")
    assert "input_schema" in anthropic.value[0]
    mcp = ws(ws_ip, "tools --format mcp")
    assert {"name", "description", "inputSchema"} == set(mcp.value[0])
    with pytest.raises(UsageError, match="invalid choice"):
        ws(ws_ip, "tools --format xml")


def test_call_tools_as_an_agent(ws_ip: Any, ws_dir: Path) -> None:
    from ws_jupyter.jupyter.views import ToolCallView

    read = ws(ws_ip, 'call workspace_read_file {"path": "notes.txt"}')
    assert isinstance(read, ToolCallView) and not read.is_error
    assert read.output.startswith("notes.txt (17 bytes)") and "2→beta" in read.output
    ws_ip.user_ns["pattern"] = "TODO"
    grep = ws(ws_ip, "call workspace_grep dict(pattern=pattern, context_lines=0)")
    assert grep.output.startswith("2 matches across 2 files")
    written = ws(
        ws_ip, "call workspace_write_file", '{"path": "out/a.md", "content": "# $not {expanded}\\n"}'
    )
    assert (
        written.output.startswith("Wrote") and (ws_dir / "out" / "a.md").read_text() == "# $not {expanded}\n"
    )
    bad = ws(ws_ip, 'call workspace_read_file {"pat": "x"}')
    # the tool's own message, as the model sees it
    assert bad.is_error and 'unknown argument "pat"' in bad.output
    with pytest.raises(UsageError, match=r"Unknown tool 'nope'\. Available tools: workspace_read_file"):
        ws(ws_ip, "call nope {}")
    with pytest.raises(UsageError, match="JSON object or a Python dict"):
        ws(ws_ip, "call workspace_read_file {not json")
    with pytest.raises(UsageError, match="must be an object"):
        ws(ws_ip, "call workspace_read_file [1, 2]")


def test_call_approval(ws_ip: Any) -> None:
    # a terminal shell cannot show Approve/Deny buttons: the call must be approved up front
    with pytest.raises(UsageError, match="requires approval: add --approve"):
        ws(ws_ip, 'call workspace_execute_command {"command": "echo hi"}')
    approved = ws(ws_ip, 'call --approve workspace_execute_command {"command": "echo hi"}')
    assert approved.output == "hi\n" or approved.output.strip() == "hi"


def test_call_approval_in_a_kernel_shows_a_panel(ws_ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from ws_jupyter.jupyter.widgets.tool_call import ToolCallPanel

    monkeypatch.setattr(ws_ip, "kernel", object(), raising=False)  # only its presence is checked
    assert ws(ws_ip, 'call workspace_execute_command {"command": "echo approved"}') is None
    magics = next(c for c in ws_ip.configurables if isinstance(c, WsMagics))
    panel = magics.session._closers[-1].__self__
    assert isinstance(panel, ToolCallPanel)
    assert panel.wait_until_waiting() and panel.status == "waiting"
    panel.approve_button.click()
    assert panel.wait(10)
    assert panel.status == "done" and panel.output.strip() == "approved"


def test_ui_dashboard(ws_ip: Any) -> None:
    from ws_jupyter.jupyter.widgets import Dashboard

    dashboard = ws(ws_ip, "ui --tab search")
    assert isinstance(dashboard, Dashboard)
    assert dashboard.tab_names == ["Files", "Run", "Processes", "Search", "Changes", "Agent tools", "Kernels"]
    assert dashboard.tab.selected_index == 3
    session = next(c for c in ws_ip.configurables if isinstance(c, WsMagics)).session
    tracked = list(session._closers)
    with pytest.raises(UsageError, match="no tab 'nope'"):
        ws(ws_ip, "ui --tab nope")
    assert session._closers == tracked  # the refused dashboard was closed, not kept for unload


# --- displays of the core result types --------------------------------------------------------------


def test_core_results_display_richly_after_load(ws_ip: Any, ws_dir: Path) -> None:
    _write_skill(ws_dir / "skills" / "tidy", "tidy", "Tidy data.")
    workspace = ws_ip.user_ns["ws"]
    workspace.rebuild_search_index(["."])
    hit = workspace.search("learning rate", top_k=1)[0]
    data, _ = ws_ip.display_formatter.format(hit)
    assert "docs/guide.md" in data["text/html"] and "score" in data["text/html"]
    result = workspace.sandbox.execute_command("echo out; exit 2")
    data, _ = ws_ip.display_formatter.format(result)
    assert "exit 2" in data["text/html"] and "out" in data["text/html"]
    data, _ = ws_ip.display_formatter.format(workspace.get_info())
    assert "<table" in data["text/html"] and "isolation" in data["text/html"]
    handle = workspace.sandbox.processes.spawn("sleep 5")
    data, _ = ws_ip.display_formatter.format(handle)
    assert data["text/plain"].startswith(f"<ProcessHandle pid={handle.pid} running")  # the core repr
    handle.kill()
    ws_ip.run_line_magic("ws", f"init {ws_dir}")
    skill = ws_ip.user_ns["ws"].skills.get("tidy")
    data, _ = ws_ip.display_formatter.format(skill)
    assert "<h3>tidy</h3>" in data["text/html"] and "text/markdown" not in data
    ws_ip.run_line_magic("unload_ext", "ws_jupyter")
    data, _ = ws_ip.display_formatter.format(hit)
    assert "text/html" not in data  # unloading removes the formatters
    ws_ip.run_line_magic("load_ext", "ws_jupyter")


def test_commands_use_the_kernels_python(ip: Any, ws_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # a kernel started outside the virtualenv
    ws(ip, f"init {ws_dir}")
    found = ws(ip, "run -q python3 -c 'import sys; print(sys.prefix)'")
    assert found.stdout.strip() == sys.prefix


def test_run_shows_a_head_and_the_tail_of_huge_output(ws_ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    summary = ws(ws_ip, "run seq 1 100000")
    lines = capsys.readouterr().out.splitlines()
    assert lines[:100] == [str(i) for i in range(1, 101)]  # the first lines, as they came
    assert lines[100] == "… 99,870 lines not shown (all of it is in the result: r = _; r.stdout, r.stderr) …"
    assert lines[101:] == [str(i) for i in range(99971, 100001)]  # then the newest
    assert summary.exit_code == 0 and summary.stdout == "".join(f"{i}\n" for i in range(1, 100001))
    assert "newest output" not in summary.status()  # the result is complete


def test_run_head_is_bounded_in_characters_and_streams_interleave(
    ws_ip: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ws_ip.run_line_magic("config", "WsMagics.max_stream_chars = 1000")
    ws_ip.run_line_magic("config", "WsMagics.stream_tail_lines = 3")
    script = "for i in $(seq 1 3000); do echo out$i; echo err$i >&2; done; printf 'no newline'"
    summary = ws(ws_ip, f"run {script}")
    out = capsys.readouterr()
    assert len(out.out) + len(out.err) < 1000 + 400  # a head under 1000 characters, the notice, 3 lines
    head = out.out.split("…")[0] + out.err
    shown = len(re.findall(r"(?:out|err)\d+\n", head))
    notice = re.search(r"… ([\d,]+) lines not shown", out.out)
    assert notice is not None
    tail = out.out.split("…\n", 1)[1].splitlines()
    assert tail[-1] == "no newline" and len(tail) == 3
    assert shown + int(notice.group(1).replace(",", "")) + len(tail) == 6001  # every line counted once
    assert summary.stdout.endswith("out3000\nno newline") and summary.stderr.endswith("err3000\n")


def test_run_result_says_when_it_lost_output(ws_ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ws_ip.run_line_magic("config", "WsMagics.max_output_bytes = 1000")
    summary = ws(ws_ip, "run seq 1 10000")
    assert summary.truncated and summary.stdout.endswith("10000\n") and len(summary.stdout) <= 1000
    assert "the result keeps the newest output" in capsys.readouterr().out
    assert "keeps only the newest output" in summary.status()


def test_use_on_the_own_workspace_keeps_ownership(ip: Any, ws_dir: Path) -> None:
    ws(ip, f"init {ws_dir}")
    own = ip.user_ns["ws"]
    ws(ip, "use ws")
    ip.run_line_magic("unload_ext", "ws_jupyter")
    assert own.status == "destroyed"
    ip.run_line_magic("load_ext", "ws_jupyter")


def test_outputs_store_html_and_plain_text_only(ws_ip: Any, ws_dir: Path) -> None:
    """A notebook keeps every mime type of an output: no Markdown or JSON twins of the HTML."""
    (ws_dir / "skills" / "tidy").mkdir(parents=True)
    (ws_dir / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: Tidy data.\n---\n\n# Tidy\n\n- one\n- two\n"
    )
    ws(ws_ip, f"init {ws_dir}")
    views = {
        line: ws(ws_ip, line)
        for line in (
            "info",
            "ls",
            "cat notes.txt",
            "grep TODO",
            "run -q echo hi",
            "ps",
            "index",
            "search neural",
            "skills --list",
            "tools",
            "tools --format openai",
            'call workspace_read_file {"path": "notes.txt"}',
        )
    }
    for line, view in views.items():
        data, _ = ws_ip.display_formatter.format(view)
        assert set(data) == {"text/html", "text/plain"}, line
    tools = ws_ip.display_formatter.format(views["tools"])[0]
    openai = ws_ip.display_formatter.format(views["tools --format openai"])[0]
    assert len(json.dumps(openai)) < 2.5 * len(openai["text/plain"])  # HTML + text, nothing more
    assert len(json.dumps(tools)) < 66_000  # every tool, its description and parameters (26 tools)
    data, _ = ws_ip.display_formatter.format(ws(ws_ip, "skill tidy"))
    assert set(data) == {"text/html", "text/plain"}  # rendered from its Markdown, inert
    assert "<li>one</li>\n<li>two</li>" in data["text/html"] and "<h3>tidy</h3>" in data["text/html"]
    data, _ = ws_ip.display_formatter.format(ws(ws_ip, "cat pixel.png"))
    assert set(data) == {"image/png", "text/plain"}  # the image once, not again inside HTML


def test_call_blocked_by_a_hook_says_blocked(ws_ip: Any) -> None:
    ws_ip.user_ns["ws"].set_tools_config({"hooks": {"before_tool_call": lambda ctx: False}})
    view = ws(ws_ip, 'call workspace_read_file {"path": "notes.txt"}')
    assert view.status == "blocked" and view.meta().startswith("blocked by a hook · ")
    assert "blocked by a hook" in html_of(ws_ip, view)
