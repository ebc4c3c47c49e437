"""Code in a sandbox kernel writing straight to its ZeroMQ sockets.

The kernel's code holds its own IOPub socket (``get_ipython().kernel.iopub_socket``) and can send
anything on it, faster than the host parses it. Before the fix the host's subscriber queued up to
ZeroMQ's default 1,000 messages (each up to ``max_message_bytes``, 128 MiB): sixteen 64 MiB frames
grew the notebook process by a gigabyte that stayed there — a thousand would exhaust the
machine (the receive queue is now sized so that it holds at most 512 MiB) — and the first frame that was not a Jupyter message ended the execution with
``Error: ValueError: b'<IDS|MSG>' is not in list``. Replayed in a child process.
"""

from __future__ import annotations

from .conftest import replay

FLOOD = """
import os, threading, time, psutil
from ws_jupyter import LocalSandbox, LocalFilesystem, Workspace
wd = os.path.join({base!r}, "wd"); os.makedirs(wd, exist_ok=True)
ws = Workspace(filesystem=LocalFilesystem(wd), sandbox=LocalSandbox(working_directory=wd))
tools = {{t.name: t for t in ws.tools()}}
run = lambda code: str(tools["workspace_execute_code"].run({{"code": code, "timeout": 120}}, approved=True))
me = psutil.Process()
try:
    emit(run("print('warm')"))
    base = me.memory_info().rss
    peak = [base]
    done = threading.Event()
    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], me.memory_info().rss)
            time.sleep(0.02)
    threading.Thread(target=watch, daemon=True).start()
    emit(run(
        "sock = get_ipython().kernel.iopub_socket\\n"
        "big = b'x' * (64 << 20)\\n"
        "for _ in range(16):\\n"
        "    sock.send_multipart([b'', big], copy=False)\\n"
        "print('sent')"
    ))
    time.sleep(3)
    done.set()
    emit((peak[0] - base) >> 20)
    emit(run("6 * 7"))
    import zmq
    kc = ws.sandbox.kernels["default"]._kc
    limit = ws.sandbox.kernels.config.max_message_bytes
    emit([ch.socket.getsockopt(zmq.RCVHWM) * limit for ch in (kc.iopub_channel, kc.shell_channel)])
finally:
    ws.destroy()
"""


def test_raw_frames_from_the_kernel_neither_fill_memory_nor_break_the_execution(tmp_path):
    r = replay(FLOOD.format(base=str(tmp_path)), timeout=240, memory_bytes=6 << 30)
    assert r.finished and r.returncode == 0, r.stderr
    warm, flooded, grown_mb, after, queued = r.results
    assert warm == "warm"
    assert not flooded.startswith("Error"), flooded
    assert "sent" in flooded or "lost on the way" in flooded, flooded
    assert grown_mb < 600, f"the host queued {grown_mb} MB of the kernel's frames"
    assert after.endswith("42")
    # what a kernel that sends faster than its messages are parsed can make the host hold
    assert max(queued) <= 512 << 20, queued


RUN_NOTEBOOK = """
import os
from ws_jupyter import LocalSandbox, LocalFilesystem, Workspace
from ws_jupyter.notebooks import Notebook
wd = os.path.join({base!r}, "wd"); os.makedirs(wd, exist_ok=True)
ws = Workspace(filesystem=LocalFilesystem(wd), sandbox=LocalSandbox(working_directory=wd))
tools = {{t.name: t for t in ws.tools()}}
code = ("sock = get_ipython().kernel.iopub_socket\\n"
        "for _ in range(4):\\n"
        "    sock.send_multipart([b'', b'x' * (8 << 20)], copy=False)\\n"
        "print('sent')")
Notebook.new([("code", code), ("code", "print('second')")]).save(ws.filesystem, "a.ipynb")
try:
    emit(str(tools["workspace_run_notebook"].run({{"path": "a.ipynb", "timeout": 120}}, approved=True)))
finally:
    ws.destroy()
"""


def test_raw_frames_end_a_notebook_run_with_a_clear_answer(tmp_path):
    # nbclient raised ValueError at the first such frame: the tool answered "Error: ValueError:
    # b'<IDS|MSG>' is not in list" (a traceback in the log) instead of the run's summary.
    r = replay(RUN_NOTEBOOK.format(base=str(tmp_path)), timeout=240)
    assert r.finished and r.returncode == 0, r.stderr
    (summary,) = r.results
    assert summary.startswith("Ran a.ipynb in a fresh kernel"), summary
    assert "not a Jupyter message" in summary and "ValueError" not in summary
