"""Safety wrappers: read tracking, stale writes, write locks, hooks, approval, activity events."""

from __future__ import annotations

import os
import threading
import time

import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem, RequestContext, Workspace
from ws_jupyter.tools.activity import tool_activity
from ws_jupyter.tools.tracking import path_key, write_locks
from ws_jupyter.tools.types import ToolCallContext, ToolErrorText, ToolResult

from .conftest import box

RBW = {
    T.FILESYSTEM.WRITE_FILE: {"require_read_before_write": True},
    T.FILESYSTEM.EDIT_FILE: {"require_read_before_write": True},
}


def bump_mtime(path) -> None:
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000))


# --- read tracking ------------------------------------------------------------------------------------


def test_read_before_write_required_for_existing_files_only(make_ws, workdir):
    (workdir / "a.txt").write_text("old\n")
    tools = box(make_ws(tools=RBW))
    out = tools.run("workspace_write_file", path="a.txt", content="new")
    assert out == 'File "a.txt" has not been read. You must read a file before writing to it.'
    assert isinstance(out, ToolErrorText)
    assert (workdir / "a.txt").read_text() == "old\n"
    assert tools.run("workspace_write_file", path="fresh.txt", content="x") == "Wrote 1 bytes to fresh.txt"
    tools.run("workspace_read_file", path="a.txt")
    assert tools.run("workspace_write_file", path="a.txt", content="new") == "Wrote 3 bytes to a.txt"
    # a real write clears the record: the next write needs a new read
    assert tools.run("workspace_write_file", path="a.txt", content="newer").startswith(
        'File "a.txt" has not been read'
    )


def test_read_tracking_is_keyed_by_resolved_path(make_ws, workdir):
    (workdir / "a.txt").write_text("old\n")
    os.symlink("a.txt", workdir / "alias.txt")
    tools = box(make_ws(tools=RBW))
    tools.run("workspace_read_file", path=str(workdir / "a.txt"))  # absolute spelling
    assert tools.run("workspace_edit_file", path="./alias.txt", old_string="old", new_string="new") == (
        "Replaced 1 occurrence in alias.txt (line 1):\n     1→new"
    )


def test_external_edit_between_read_and_write_is_refused(make_ws, workdir):
    """Even without require_read_before_write: a file read and then changed is not clobbered."""
    target = workdir / "a.txt"
    target.write_text("v1\n")
    tools = box(make_ws())
    tools.run("workspace_read_file", path="a.txt")
    target.write_text("v2 by a person\n")
    bump_mtime(target)
    out = tools.run("workspace_write_file", path="a.txt", content="agent version")
    assert out.startswith('File "a.txt" was modified since it was last read (read at: ')
    assert out.endswith("Read it again to get the latest contents.")
    out = tools.run("workspace_edit_file", path="a.txt", old_string="v2", new_string="v3")
    assert out.startswith('File "a.txt" was modified since it was last read')
    assert target.read_text() == "v2 by a person\n"
    tools.run("workspace_read_file", path="a.txt")
    assert tools.run("workspace_edit_file", path="a.txt", old_string="v2", new_string="v3").startswith(
        "Replaced"
    )


def test_deleted_after_read(make_ws, workdir):
    target = workdir / "a.txt"
    target.write_text("v1\n")
    tools = box(make_ws())
    tools.run("workspace_read_file", path="a.txt")
    target.unlink()
    out = tools.run("workspace_write_file", path="a.txt", content="x")
    assert out == 'File "a.txt" was deleted after it was last read. Read it again before writing.'
    assert tools.run("workspace_read_file", path="a.txt") == "Error: File not found: a.txt"
    assert tools.run("workspace_write_file", path="a.txt", content="x") == "Wrote 1 bytes to a.txt"


def test_failed_edit_keeps_the_read_record(make_ws, workdir):
    (workdir / "a.txt").write_text("hello\n")
    tools = box(make_ws(tools=RBW))
    tools.run("workspace_read_file", path="a.txt")
    assert tools.run("workspace_edit_file", path="a.txt", old_string="absent", new_string="x").startswith(
        "The specified text was not found"
    )
    assert tools.run("workspace_edit_file", path="a.txt", old_string="hello", new_string="bye").startswith(
        "Replaced"
    )


def test_partial_reads_cover_only_what_was_seen(make_ws, workdir):
    (workdir / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    tools = box(make_ws(tools=RBW))
    tools.run("workspace_read_file", path="a.txt", offset=1, limit=10)
    out = tools.run("workspace_edit_file", path="a.txt", old_string="line 50\n", new_string="L50\n")
    assert (
        out
        == 'Line 50 of "a.txt" have not been read (read so far: lines 1-10 of 100). Read them before editing.'
    )
    assert tools.run(
        "workspace_edit_file", path="a.txt", old_string="line 5\n", new_string="L5\n"
    ).startswith("Replaced")
    tools.run("workspace_read_file", path="a.txt", offset=1, limit=10)
    out = tools.run("workspace_write_file", path="a.txt", content="everything")
    assert out.startswith('File "a.txt" was only partly read (lines 1-10 of 100).')
    tools.run("workspace_read_file", path="a.txt", offset=11)
    assert tools.run("workspace_write_file", path="a.txt", content="everything") == "Wrote 10 bytes to a.txt"


def test_read_records_belong_to_the_workspace_and_the_conversation(make_ws, workdir):
    (workdir / "a.txt").write_text("x\n")
    ws = make_ws(tools=RBW)
    # tool sets made per request (%ws call, web frameworks) share what the conversation read
    box(ws).run("workspace_read_file", path="a.txt")
    assert box(ws).run("workspace_write_file", path="a.txt", content="y") == "Wrote 1 bytes to a.txt"
    # another conversation (thread id in the request context) has its own records
    t1, t2 = {"thread_id": "t1"}, {"thread_id": "t2"}
    box(ws, t1).run("workspace_read_file", path="a.txt")
    assert box(ws, t2).run("workspace_write_file", path="a.txt", content="z").startswith(
        'File "a.txt" has not been read'
    )
    assert box(ws, t1).run("workspace_write_file", path="a.txt", content="z") == "Wrote 1 bytes to a.txt"


def test_conversation_trackers_are_bounded():
    from ws_jupyter.tools.tracking import ReadTrackers

    pool = ReadTrackers(max_conversations=3, max_records=2)
    first = pool.for_context({"thread_id": "0"})
    for i in range(1, 5):
        pool.for_context({"thread_id": str(i)})
    assert len(pool) == 3 and pool.for_context({"thread_id": "0"}) is not first  # least recently used went
    t = pool.for_context(None)
    for k in "abc":
        t.record(k, 1.0, 1)
    assert len(t) == 2 and t.get("a") is None


def test_delete_clears_records_below(make_ws, workdir):
    (workdir / "d").mkdir()
    (workdir / "d" / "a.txt").write_text("x\n")
    tools = box(make_ws())
    tools.run("workspace_read_file", path="d/a.txt")
    assert tools.run("workspace_delete", path="d", recursive=True) == "Deleted d"
    assert tools.run("workspace_write_file", path="d/a.txt", content="new") == "Wrote 3 bytes to d/a.txt"


# --- write locks ----------------------------------------------------------------------------------------


def test_twenty_threads_editing_one_file_all_land(make_ws, workdir):
    target = workdir / "counter.txt"
    target.write_text("".join(f"slot{i}=0\n" for i in range(20)))
    tools = box(make_ws())
    edit = tools["workspace_edit_file"]
    barrier = threading.Barrier(20)
    results: list[str] = [""] * 20

    def worker(i: int) -> None:
        barrier.wait()
        results[i] = edit.run(
            {"path": "counter.txt", "old_string": f"slot{i}=0\n", "new_string": f"slot{i}=1\n"}
        )

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.startswith("Replaced 1 occurrence") for r in results), results
    assert target.read_text() == "".join(f"slot{i}=1\n" for i in range(20))
    assert write_locks.pending(path_key(LocalFilesystem(workdir), "counter.txt")) == 0
    assert len(write_locks) == 0


def test_different_files_are_written_in_parallel(make_ws, workdir):
    tools = box(make_ws())
    with write_locks.hold(path_key(LocalFilesystem(workdir), "a.txt"), 1, "a.txt"):
        out: list[str] = []
        t = threading.Thread(
            target=lambda: out.append(tools.run("workspace_write_file", path="b.txt", content="b"))
        )
        t.start()
        t.join(5)
        assert out == ["Wrote 1 bytes to b.txt"]  # b.txt is not blocked by a.txt's lock


def test_lock_timeout_and_nothing_is_written(make_ws, workdir):
    tools = box(make_ws(tools={"write_lock_timeout": 0.2}))
    with write_locks.hold(path_key(LocalFilesystem(workdir), "hang.txt"), 1, "hang.txt"):
        started = time.monotonic()
        out = tools.run("workspace_write_file", path="hang.txt", content="x")
        assert time.monotonic() - started >= 0.2
    assert out == 'write-lock timeout on "hang.txt" after 0.2s'
    assert isinstance(out, ToolErrorText)
    assert not (workdir / "hang.txt").exists()
    assert tools.run("workspace_write_file", path="hang.txt", content="x") == "Wrote 1 bytes to hang.txt"


def test_lock_is_held_until_the_write_finishes(make_ws, workdir):
    """A slow write holds the lock: a second writer waits its turn (FIFO), it never overlaps."""
    (workdir / "f.txt").write_text("start\n")
    order: list[str] = []
    inside = threading.Event()

    class SlowFS(LocalFilesystem):
        def write_file(self, path, content, *a, **kw):  # type: ignore[override]
            order.append(f"begin {content}")
            inside.set()
            time.sleep(0.3)
            super().write_file(path, content, *a, **kw)
            order.append(f"end {content}")

    ws = Workspace(filesystem=SlowFS(workdir), bm25=False)
    try:
        tools = box(ws)
        first = threading.Thread(
            target=lambda: tools.run("workspace_write_file", path="f.txt", content="one")
        )
        first.start()
        inside.wait(5)
        assert tools.run("workspace_write_file", path="f.txt", content="two") == "Wrote 3 bytes to f.txt"
        first.join()
        assert order == ["begin one", "end one", "begin two", "end two"]
        assert (workdir / "f.txt").read_text() == "two"
    finally:
        ws.destroy()


# --- hooks ----------------------------------------------------------------------------------------------


def test_before_hook_can_skip_the_tool(make_ws, workdir):
    calls = []

    def before(ctx):
        calls.append((ctx.tool_name, ctx.workspace_tool_name, dict(ctx.input)))
        if ctx.input.get("path") == "blocked.txt":
            return {"proceed": False, "output": "Blocked by policy."}
        return None

    tools = box(
        make_ws(tools={"hooks": {"before_tool_call": before}, T.FILESYSTEM.WRITE_FILE: {"name": "write"}})
    )
    assert tools.run("write", path="blocked.txt", content="x") == "Blocked by policy."
    assert not (workdir / "blocked.txt").exists()
    assert tools.run("write", path="ok.txt", content="x") == "Wrote 1 bytes to ok.txt"
    assert calls[0] == (
        "write",
        "workspace_write_file",
        {"path": "blocked.txt", "content": "x", "overwrite": True},
    )


def test_after_hook_sees_output_and_errors(make_ws, workdir):
    seen = []

    def after(ctx):
        seen.append((ctx.workspace_tool_name, ctx.output, type(ctx.error).__name__ if ctx.error else None))

    tools = box(make_ws(tools={"hooks": {"after_tool_call": after}}))
    tools.run("workspace_write_file", path="a.txt", content="x")
    tools.run("workspace_read_file", path="missing.txt")
    assert seen == [
        ("workspace_write_file", "Wrote 1 bytes to a.txt", None),
        ("workspace_read_file", "Error: File not found: missing.txt", "FileNotFound"),
    ]


def test_after_hook_may_replace_the_output(make_ws, workdir):
    (workdir / "a.txt").write_text("api_key=SECRET\n")
    tools = box(
        make_ws(tools={"hooks": {"after_tool_call": lambda ctx: str(ctx.output).replace("SECRET", "***")}})
    )
    assert tools.run("workspace_read_file", path="a.txt") == "a.txt (15 bytes)\n     1→api_key=***"


def test_raising_hooks_become_error_text(make_ws, workdir):
    def boom(ctx):
        raise RuntimeError("hook broke")

    tools = box(make_ws(tools={"hooks": {"before_tool_call": boom}}))
    assert tools.run("workspace_write_file", path="a.txt", content="x") == (
        "Error: before_tool_call hook failed: RuntimeError: hook broke"
    )
    assert not (workdir / "a.txt").exists()
    tools = box(make_ws(tools={"hooks": {"after_tool_call": boom}}))
    assert tools.run("workspace_write_file", path="a.txt", content="x") == (
        "Error: after_tool_call hook failed: RuntimeError: hook broke"
    )


# --- approval -------------------------------------------------------------------------------------------


def test_approver_function(make_ws, workdir):
    asked = []

    def approver(tool_name, args, ctx):
        asked.append((tool_name, args["path"], ctx.request_context["user"]))
        return args["path"] != "no.txt"

    ws = make_ws(tools={"require_approval": True, "approver": approver})
    tools = box(ws, RequestContext({"user": "ada"}))
    assert tools.run("workspace_write_file", path="yes.txt", content="x") == "Wrote 1 bytes to yes.txt"
    assert tools.run("workspace_write_file", path="no.txt", content="x") == "Tool call refused by user."
    assert not (workdir / "no.txt").exists()
    assert asked == [("workspace_write_file", "yes.txt", "ada"), ("workspace_write_file", "no.txt", "ada")]


def test_no_approver_refuses_with_a_hint(make_ws, workdir):
    tools = box(make_ws(tools={T.FILESYSTEM.DELETE: {"require_approval": True}}))
    (workdir / "a.txt").write_text("x")
    out = tools.run("workspace_delete", path="a.txt")
    assert out.startswith("Error: workspace_delete requires approval, and no approver is configured.")
    assert (workdir / "a.txt").exists()
    assert tools["workspace_delete"].run({"path": "a.txt"}, approved=True) == "Deleted a.txt"


def test_interactive_approval_through_the_activity_broker(make_ws, workdir):
    ws = make_ws(tools={T.FILESYSTEM.WRITE_FILE: {"require_approval": True}})
    activity = tool_activity(ws)
    events = []
    unsubscribe = activity.subscribe(events.append)
    detach = activity.attach_approver()

    def decide(event):
        if event.kind == "approval_requested":
            decision = activity.approve if event.input["path"] == "ok.txt" else activity.deny
            threading.Timer(0.05, decision, args=(event.call_id,)).start()

    activity.subscribe(decide)
    tools = box(ws)
    assert tools.run("workspace_write_file", path="ok.txt", content="x") == "Wrote 1 bytes to ok.txt"
    assert tools.run("workspace_write_file", path="bad.txt", content="x") == "Tool call refused by user."
    assert not (workdir / "bad.txt").exists()
    kinds = [e.kind for e in events]
    assert kinds == ["started", "approval_requested", "approval_resolved", "finished"] * 2
    assert events[2].approved is True and events[6].approved is False
    assert events[3].output == "Wrote 1 bytes to ok.txt" and not events[3].is_error
    assert events[7].is_error
    unsubscribe()
    detach()


def test_activity_says_a_hook_blocked_the_call_and_does_not_count_the_approval_wait(make_ws, workdir):
    def before(ctx):
        if ctx.input.get("path") == "blocked.txt":
            return {"proceed": False, "output": "Blocked by policy."}
        return None

    ws = make_ws(
        tools={"hooks": {"before_tool_call": before}, T.FILESYSTEM.WRITE_FILE: {"require_approval": True}}
    )
    activity = tool_activity(ws)
    finished = []
    unsubscribe = activity.subscribe(lambda e: finished.append(e) if e.kind == "finished" else None)
    detach = activity.attach_approver()
    slow = activity.subscribe(
        lambda e: (
            threading.Timer(1.5, activity.approve, args=(e.call_id,)).start()
            if e.kind == "approval_requested"
            else None
        )
    )
    tools = box(ws)
    assert tools.run("workspace_write_file", path="ok.txt", content="x") == "Wrote 1 bytes to ok.txt"
    assert tools.run("workspace_write_file", path="blocked.txt", content="x") == "Blocked by policy."
    ok, blocked = finished
    assert not ok.blocked and ok.duration_ms < 1500  # the 1.5 s wait for the approval is not run time
    assert blocked.blocked and not blocked.is_error and blocked.output == "Blocked by policy."
    for stop in (unsubscribe, detach, slow):
        stop()


def test_pending_approval_is_refused_when_the_approver_goes_away(make_ws):
    ws = make_ws(tools={"require_approval": True})
    activity = tool_activity(ws)
    detach = activity.attach_approver()
    threading.Timer(0.1, detach).start()
    assert box(ws).run("workspace_mkdir", path="x") == "Tool call refused by user."


def test_approval_timeout_and_abort(make_ws):
    ws = make_ws(tools={"require_approval": True, "approval_timeout": 0.1})
    detach = tool_activity(ws).attach_approver()
    try:
        assert box(ws).run("workspace_mkdir", path="x") == "Tool call refused by user."
        ws.set_tools_config({"require_approval": True})
        abort = threading.Event()
        threading.Timer(0.1, abort.set).start()
        assert box(ws).run("workspace_mkdir", path="y", context=ToolCallContext(abort=abort)) == (
            "Tool call refused by user."
        )
    finally:
        detach()


def test_approved_false_refuses(make_ws):
    tools = box(make_ws())
    assert tools["workspace_mkdir"].run({"path": "x"}, approved=False) == "Tool call refused by user."


def test_activity_feed_records_calls(make_ws):
    ws = make_ws()
    box(ws).run("workspace_mkdir", path="x")
    recent = tool_activity(ws).recent()
    assert [e.kind for e in recent][-2:] == ["started", "finished"]
    assert recent[-1].duration_ms is not None and recent[-1].output == "Created directory x"


def test_rejected_calls_appear_in_the_activity_feed(make_ws):
    ws = make_ws()
    box(ws).run("workspace_mkdir")
    last = tool_activity(ws).recent(2)
    assert [e.kind for e in last] == ["started", "finished"]
    assert last[1].is_error and last[1].output == 'Error: Invalid arguments: "path" is required'


def test_arun_runs_in_a_thread(make_ws, workdir):
    import asyncio

    tools = box(make_ws())
    out = asyncio.run(tools["workspace_write_file"].arun({"path": "a.txt", "content": "x"}))
    assert out == "Wrote 1 bytes to a.txt"


def test_media_results_flow_through_hooks(make_ws, workdir):
    from .test_filesystem_tools import png_bytes

    (workdir / "i.png").write_bytes(png_bytes())
    seen = []
    tools = box(make_ws(tools={"hooks": {"after_tool_call": lambda ctx: seen.append(type(ctx.output))}}))
    assert isinstance(tools.run("workspace_read_file", path="i.png"), ToolResult)
    assert seen == [ToolResult]


@pytest.mark.parametrize("timeout", [0.05])
def test_lock_timeout_message_uses_configured_seconds(make_ws, workdir, timeout):
    tools = box(make_ws(tools={T.FILESYSTEM.EDIT_FILE: {"write_lock_timeout": timeout}}))
    with write_locks.hold(path_key(LocalFilesystem(workdir), "x.txt"), 1, "x.txt"):
        out = tools.run("workspace_edit_file", path="x.txt", old_string="a", new_string="b")
    assert out == f'write-lock timeout on "x.txt" after {timeout:g}s'
