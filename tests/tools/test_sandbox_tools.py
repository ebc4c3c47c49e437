"""execute_command and the background process tools, on a real LocalSandbox."""

from __future__ import annotations

import re
import threading
import time

import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace
from ws_jupyter.sandbox.isolation.detect import probe_backend

from .conftest import ToolBox, box

BWRAP = probe_backend("bwrap")
ALLOW = {T.SANDBOX.EXECUTE_COMMAND: {"require_approval": False}}


@pytest.fixture
def sandbox_ws(workdir):
    made = []

    def make(tools=ALLOW, isolation="none", **kw):
        ws = Workspace(
            filesystem=LocalFilesystem(workdir),
            sandbox=LocalSandbox(working_directory=workdir, isolation=isolation, timeout=30),
            bm25=False,
            tools=tools,
            **kw,
        )
        made.append(ws)
        return ws

    yield make
    for ws in made:
        ws.destroy()


@pytest.fixture
def sh(sandbox_ws) -> ToolBox:
    return box(sandbox_ws())


def run(tools, command, **kw):
    return tools.run("workspace_execute_command", command=command, **kw)


def test_output_shapes(sh):
    assert run(sh, "echo hello") == "hello"
    assert run(sh, "echo oops >&2") == "stderr:\noops"
    assert run(sh, "echo out; echo err >&2") == "stdout:\nout\n\nstderr:\nerr"
    assert run(sh, "true") == "(no output)"
    assert run(sh, "echo partial; exit 3") == "partial\n\nExit code: 3"
    assert run(sh, "exit 1") == "(no output)\n\nExit code: 1"
    assert run(sh, "definitely-not-a-command-xyz").endswith("\n\nExit code: 127")


HOW = "set tail to see more (0 = all), or redirect the output to a file and read it with workspace_read_file"


def test_tail_default_and_explicit(sh):
    out = run(sh, "seq 1 300")
    assert out.startswith(f"[showing last 200 of 300 lines; {HOW}]\n101\n") and out.endswith("\n300")
    assert run(sh, "seq 1 300", tail=3) == f"[showing last 3 of 300 lines; {HOW}]\n298\n299\n300"
    assert run(sh, "seq 1 300", tail=0).count("\n") == 299


def test_trailing_tail_pipe_is_applied_by_the_tool(sh):
    out = run(sh, "(seq 1 20; exit 3) | tail -5")
    assert out == f"[showing last 5 of 20 lines; {HOW}]\n16\n17\n18\n19\n20\n\nExit code: 3"
    assert run(sh, "seq 1 10 | tail -n 2") == f"[showing last 2 of 10 lines; {HOW}]\n9\n10"
    # the tail is the shell's stdout only: stderr stays as the command wrote it
    assert run(sh, "(seq 1 3; echo e1 >&2; echo e2 >&2) | tail -1") == (
        f"stdout:\n[showing last 1 of 3 lines; {HOW}]\n3\n\nstderr:\ne1\ne2"
    )


def test_tail_pipe_that_binds_to_part_of_the_line_is_left_to_the_shell(sh):
    # sh parses "a && b | tail -1" as "a && (b | tail -1)": both lines are printed
    assert run(sh, "echo first && echo second | tail -1") == "first\nsecond"
    assert run(sh, "seq 3; seq 4 6 | tail -1") == "1\n2\n3\n6"
    assert run(sh, "seq 3 # | tail -1") == "1\n2\n3"
    assert run(sh, "echo x \\| tail -1") == "x | tail -1"
    assert run(sh, "seq 3 | tail -0") == "(no output)"


def test_or_tail_is_left_to_the_shell(sh):
    assert run(sh, "seq 1 3 || tail -1") == "1\n2\n3"
    assert run(sh, "false||tail -n 1") == "(no output)"


def test_ansi_and_progress_bars_are_cleaned(sh):
    assert run(sh, r"printf '\033[32mgreen\033[0m\n10%%\r50%%\r100%%\n'") == "green\n100%"


def test_huge_output_keeps_head_and_tail(sandbox_ws):
    tools = box(
        sandbox_ws(
            tools={**ALLOW, T.SANDBOX.EXECUTE_COMMAND: {"require_approval": False, "max_output_tokens": 300}}
        )
    )
    out = run(tools, "seq 1 100000", tail=0)
    lines = out.splitlines()
    assert lines[0] == "1" and lines[-1] == "100000"
    assert any(
        re.fullmatch(r"\[\.\.\.output truncated — showing first ~\d+ \+ last ~\d+ of ~\d+ tokens\.\.\.\]", ln)
        for ln in lines
    )


def test_timeout_in_seconds(sh):
    started = time.monotonic()
    out = run(sh, "echo before; sleep 10", timeout=0.5)
    assert time.monotonic() - started < 5
    assert out == "before\n\nExit code: 124 (timed out after 0.5s)"
    assert run(sh, "echo ok", timeout="2") == "ok"


def test_cwd_is_relative_to_the_working_directory(sh, workdir):
    (workdir / "sub").mkdir()
    assert run(sh, "pwd", cwd="sub") == str(workdir / "sub")


def test_background_process_lifecycle(sh):
    started = run(sh, "echo started; sleep 0.3; echo done; exit 4", background=True)
    m = re.match(r"Started background process \(PID: (\d+)\) as job job-", started)
    assert m
    pid = int(m[1])
    out = sh.run("workspace_get_process_output", pid=pid, wait=True)
    assert out == "started\ndone\n\nExit code: 4"
    listing = sh.run("workspace_list_processes")
    header, row = (
        listing.splitlines()[0],
        next(line for line in listing.splitlines() if line.startswith(str(pid))),
    )
    assert header.split() == ["PID", "STATE", "RUNTIME", "EXIT", "COMMAND"]
    assert (
        row.split()[1:2] == ["exited"]
        and " 4 " in f" {row} "
        and row.endswith("echo started; sleep 0.3; echo done; exit 4")
    )
    assert sh.run("workspace_kill_process", pid=pid) == f"Process {pid} was not found or had already exited."


def test_no_output_yet_and_kill_shows_last_lines(sh):
    pid = int(re.search(r"\d+", run(sh, "sleep 30", background=True))[0])
    assert sh.run("workspace_get_process_output", pid=pid) == "(no output yet)"
    pid2 = int(re.search(r"\d+", run(sh, "seq 1 60; echo warn >&2; sleep 30", background=True))[0])
    deadline = time.monotonic() + 5
    while "warn" not in sh.run("workspace_get_process_output", pid=str(pid2)) and time.monotonic() < deadline:
        time.sleep(0.05)
    out = sh.run("workspace_kill_process", pid=pid2)
    expected_tail = "\n".join(str(i) for i in range(11, 61))
    assert out == (
        f"Process {pid2} has been killed.\n\n--- stdout (last output) ---\n[showing last 50 of 60 lines]\n"
        f"{expected_tail}\n\n--- stderr (last output) ---\nwarn"
    )
    assert sh.run("workspace_kill_process", pid=pid) == f"Process {pid} has been killed."
    assert "killed" in sh.run("workspace_list_processes")


def test_unknown_pids(sh):
    assert (
        sh.run("workspace_get_process_output", pid=999999) == "No background process found with PID 999999."
    )
    assert (
        sh.run("workspace_kill_process", pid="999999")
        == "Process 999999 was not found or had already exited."
    )
    assert (
        sh.run("workspace_get_process_output", pid="abc")
        == "Error: Invalid arguments: \"pid\" must be an integer (got 'abc')"
    )


def test_list_processes_empty(sh):
    assert sh.run("workspace_list_processes") == "No background processes."


def test_a_process_stays_its_owners_after_its_job_is_forgotten(sandbox_ws):
    """Ownership outlives the job record (the registry forgets finished jobs first) and goes with
    the process when the sandbox forgets it: the record does not keep the process alive."""
    import gc

    from ws_jupyter.sandbox.capabilities import sandbox_processes
    from ws_jupyter.tools.jobs import JobRegistry

    ws = sandbox_ws()
    processes = sandbox_processes(ws.resolve_sandbox())
    registry = JobRegistry(limit=1)
    first = registry.start_command(processes, "true", owner="mcp:a")
    assert first.wait(30)
    registry.start_command(processes, "true", owner="mcp:b")
    assert registry.get(first.id, everyone=True) is None  # the job is forgotten ...
    handle = processes.get(first.pid)
    assert registry.process_visible_to(handle, "mcp:a")  # ... its process is still a's
    assert not registry.process_visible_to(handle, "mcp:b")
    assert registry.process_visible_to(handle, None)  # the workspace's own calls see all
    other = processes.spawn("true")  # started outside any job: the workspace's only
    assert not registry.process_visible_to(other, "mcp:a") and registry.process_visible_to(other, None)
    other.wait(30)
    records = len(registry._by_process)
    pid, first, handle = first.pid, None, None
    processes.release(pid)
    gc.collect()
    assert len(registry._by_process) == records - 1


def test_background_callbacks(sandbox_ws):
    seen: list[str] = []
    exited = threading.Event()
    exits = []

    def on_exit(info):
        exits.append(info)
        exited.set()

    tools = box(
        sandbox_ws(
            tools={
                T.SANDBOX.EXECUTE_COMMAND: {
                    "require_approval": False,
                    "background_processes": {"on_stdout": seen.append, "on_exit": on_exit},
                }
            }
        )
    )
    run(tools, "echo one; echo two", background=True)
    assert exited.wait(10)
    assert "".join(seen) == "one\ntwo\n"
    assert exits[0]["exit_code"] == 0 and exits[0]["stdout"] == "one\ntwo\n"


def test_unisolated_sandbox_requires_approval_by_default(sandbox_ws, workdir):
    tools = box(sandbox_ws(tools=None))
    assert tools["workspace_execute_command"].require_approval is True
    out = run(tools, "touch made.txt")
    assert out.startswith(
        "Error: workspace_execute_command requires approval because the sandbox runs commands on the host "
        "without isolation, and no approver is configured."
    )
    assert not (workdir / "made.txt").exists()
    approved = box(sandbox_ws(tools={"approver": lambda name, args, ctx: True}))
    assert run(approved, "echo yes") == "yes"
    # other sandbox tools are not affected
    assert tools["workspace_list_processes"].require_approval is False


@pytest.mark.skipif(not BWRAP.available, reason=f"bubblewrap unavailable: {BWRAP.message}")
def test_isolated_sandbox_needs_no_approval(sandbox_ws):
    tools = box(sandbox_ws(tools=None, isolation="bwrap"))
    assert tools["workspace_execute_command"].require_approval is False
    assert run(tools, "echo isolated") == "isolated"


def test_abort_kills_a_foreground_command(sh):
    from ws_jupyter.tools.types import ToolCallContext

    abort = threading.Event()
    threading.Timer(0.3, abort.set).start()
    started = time.monotonic()
    out = sh["workspace_execute_command"].run({"command": "sleep 20"}, ToolCallContext(abort=abort))
    assert time.monotonic() - started < 10
    assert "Exit code:" in out
