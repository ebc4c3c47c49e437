"""``workspace_run_notebook``: run a workspace notebook top to bottom and write its outputs back.

The notebook is executed by nbclient (the engine behind ``jupyter nbconvert --execute``) on a
kernel of the sandbox — so in the sandbox's isolation, like every command and every
``workspace_execute_code`` call. By default a fresh kernel is started in the notebook's folder
(relative paths in the notebook work as in Jupyter) and shut down afterwards; ``kernel`` runs it in
a named kernel of the sandbox instead, whose state it then shares (its working directory stays
where that kernel started).

It stops at the first error, like "Run All". The notebook is read, validated and written through
the one notebook document module (``ws_jupyter.notebooks``): outputs are written back atomically,
only if nobody changed the file meanwhile, and the tool's read tracking and write lock apply. The
model gets a per-cell summary — status, duration, the first lines of output — and the first error
with its traceback; images stay in the notebook.

Bounds: ``timeout`` is for the whole call, kernel start included: when it passes the kernel is
interrupted and no further cell starts; a cell still running ``interrupt_timeout`` seconds later
(``KernelsConfig``) is abandoned and the kernel killed — a fresh one is shut down, a named one
restarted (its state is lost) — so the call returns within about ``timeout + interrupt_timeout``
seconds however many cells there are. The caller's cancel (``call.context.abort``: an MCP
cancel, a cancelled ``arun``) stops the run the same way (``Stopper``, shared with
``workspace_execute_code``). Each cell's stream output is kept as one output per stream, of at
most ``max_stream_chars`` (``OutputLimits``): its start and end, the lines left out counted in
place; its other outputs at most 4 MB and 500 outputs (the rest counted in a note). A kernel
message over the sandbox's ``max_message_bytes`` is dropped by ZeroMQ, and parts of an output
nested deeper than the notebooks allow are replaced by a note; the outputs that arrived are
saved whatever happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import posixpath
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ...errors import KernelError, NotebookError, StaleFileError
from ...sandbox.capabilities import sandbox_timeout
from ...sandbox.kernels.execution import Stopper
from ...sandbox.kernels.messages import MALFORMED, MAX_DEPTH, too_deep
from ...sandbox.kernels.result import BoundedText
from ...text.shaping import truncate_head_tail
from ..base import ToolCall, ToolSpec
from ..facts import WORKSPACE_TOOLS, ToolHints
from ..files.notebook_files import record_written, seen_before_edit
from ..schema import Param
from .execute_command import _default_approval, _static_default_approval
from .kernels import _kernels

__all__ = ["RUN_NOTEBOOK_SPEC"]

log = logging.getLogger(__name__)

_MAX_CELL_OUTPUT_BYTES = 4 * 1024 * 1024
#: Outputs kept per cell: a notebook holds at most 10,000 cells and outputs to be read as one
#: (``ws_jupyter.notebooks.document``), and a display loop makes one output per call.
_MAX_CELL_OUTPUTS = 500
#: Seconds between looks at the time limit and the caller's cancel while a notebook runs.
_TICK = 0.1
_runs = iter(range(1, 1 << 62))
_runs_lock = threading.Lock()

DESCRIPTION = (
    "Run a Jupyter notebook (.ipynb) of the workspace top to bottom in the sandbox, like 'Run All', and "
    "save its outputs into the file. Stops at the first error. Returns one line per code cell ([cell index as "
    "workspace_read_file shows it] status, "
    "time, first output lines) and the first error with its traceback. By default a fresh kernel runs it "
    "in the notebook's folder; kernel names a kernel of workspace_execute_code to run it in instead "
    "(sharing its variables). timeout is in seconds for the whole run (default: the sandbox's command limit): "
    "when it passes the running cell is interrupted, the cells after it do not run, and the outputs so far "
    "are saved."
)

PARAMS = (
    Param("path", "string", "Notebook path relative to the workspace root, e.g. 'analysis/report.ipynb'.",
          required=True, allow_empty=False),
    Param("timeout", "number", "Time limit in seconds for the whole run. Default: the sandbox's limit.",
          minimum=0.001),
    Param("kernel", "string", "Run in this kernel of the sandbox (shares its state). Default: a fresh kernel."),
    Param("record_timing", "boolean", "Keep each cell's start and end times in its metadata "
          "(metadata.execution), as nbclient records them. Default: not written.", default=False),
)


def _duration(cell: Any) -> float | None:
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    try:
        return (datetime.fromisoformat(end.rstrip("Z")) - datetime.fromisoformat(start.rstrip("Z"))).total_seconds()
    except (AttributeError, TypeError, ValueError):
        return None


def _first_line(source: str, width: int = 60) -> str:
    line = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


class _Streams:
    """One cell's stream output as it arrives: one output per stream name, its text bounded.

    Jupyter shows consecutive stream messages as one output, and nbclient merges a cell's stream
    outputs by name once the cell ends (``coalesce_streams``). Doing it on arrival keeps one
    output per name however many messages come (a ``print`` loop sends one each), and a
    ``BoundedText`` keeps its start and end with the lines left out counted — nothing is cut
    off the end as a cap on the number of outputs would."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.open: dict[str, tuple[Any, BoundedText]] = {}  # name -> (output node, its text)

    def add(self, name: str, text: str, new_output: Callable[[], Any]) -> None:
        entry = self.open.get(name)
        if entry is None:
            node = new_output()
            if node is None:
                return
            entry = self.open[name] = (node, BoundedText(self.max_chars))
        entry[1].append(text)

    def finish(self) -> None:
        """Writes the kept text into the outputs (before nbclient's own merge and \\r handling)."""
        for node, text in self.open.values():
            node["text"] = text.text
        self.open.clear()


def _notebook_client(kernel: Any, km: Any, node: Any, context: Any, limits: Any, stop: Stopper) -> Any:
    """nbclient's ``NotebookClient`` driving one of the sandbox's kernels, with bounded outputs
    that stops starting cells once ``stop`` has a reason."""
    from nbclient import NotebookClient
    from nbclient.util import ensure_async

    class SandboxNotebookClient(NotebookClient):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.dropped: dict[int, list[int]] = {}  # cell index -> [outputs, bytes] not kept
            self.used: dict[int, int] = {}
            self.too_deep: dict[int, int] = {}
            self.streams = _Streams(limits.max_stream_chars)
            self.running: int | None = None  # the cell executing (still set if it was abandoned)
            self.executed: set[int] = set()  # the cells this run started
            self.on_cell_executed = lambda **_: self.streams.finish()  # before nbclient's merge

        async def async_start_new_kernel_client(self) -> Any:
            # The sandbox's kernel, reached with an asyncio client of our own (nbclient runs on
            # asyncio; jupyter_client's blocking client would stall its event loop).
            kc: Any = kernel.client(context=context)
            self.kc = kc
            await ensure_async(kc.start_channels(hb=False))  # the kernel's process is watched
            await ensure_async(kc.wait_for_ready(timeout=self.startup_timeout))
            kc.allow_stdin = False
            return kc

        async def async_execute_cell(self, cell: Any, cell_index: int, *args: Any, **kwargs: Any) -> Any:
            if stop.reason is not None and cell.cell_type == "code":
                raise _RunStopped()
            self.running = cell_index
            if cell.cell_type == "code":
                self.executed.add(cell_index)
            try:
                done = await super().async_execute_cell(cell, cell_index, *args, **kwargs)
            finally:
                self.streams.finish()  # a cell that raised or was cut short keeps its text too
            self.running = None
            return done

        def clear_output(self, outs: Any, msg: dict[str, Any], cell_index: int) -> None:
            if not msg.get("content", {}).get("wait"):
                self.streams.open.clear()
            super().clear_output(outs, msg, cell_index)

        def output(self, outs: Any, msg: dict[str, Any], display_id: Any, cell_index: int) -> Any:
            content = msg.get("content", {})
            if too_deep(content):
                self.too_deep[cell_index] = self.too_deep.get(cell_index, 0) + 1
                return None
            parent = msg.get("parent_header", {}).get("msg_id")
            if (
                msg.get("msg_type") == "stream"
                and isinstance(content.get("text"), str)
                and isinstance(content.get("name"), str)
                and not self.output_hook_stack[parent]
            ):
                if self.clear_before_next_output:  # a clear_output(wait=True) takes effect now
                    self.streams.open.clear()
                self.streams.add(
                    content["name"],
                    content["text"],
                    lambda: super(SandboxNotebookClient, self).output(
                        outs, {**msg, "content": {**content, "text": ""}}, display_id, cell_index
                    ),
                )
                return None
            size = sum(len(v) for v in (content.get("data") or {}).values() if isinstance(v, str))
            used = self.used.get(cell_index, 0)
            full = used + size > _MAX_CELL_OUTPUT_BYTES or len(outs) >= _MAX_CELL_OUTPUTS
            if full and msg.get("msg_type") != "error":
                dropped = self.dropped.setdefault(cell_index, [0, 0])
                dropped[0] += 1
                dropped[1] += size
                return None
            self.used[cell_index] = used + size
            return super().output(outs, msg, display_id, cell_index)

    return SandboxNotebookClient(
        node,
        km=km,
        timeout=None,  # the run's own limit applies (see _drive)
        allow_errors=False,
        interrupt_on_timeout=False,
        record_timing=True,
        coalesce_streams=True,
    )


class _RunStopped(Exception):
    """The run's time limit passed or it was cancelled: no further cell starts."""


async def _drive(client: Any, stop: Stopper) -> str | None:
    """Runs the notebook until it ends or ``stop`` gives up on it; returns how it failed (None:
    it ran to the end). The time limit and ``abort`` interrupt the kernel; a cell still running
    ``interrupt_timeout`` later is abandoned ("stuck": the caller then kills the kernel)."""
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    before = asyncio.all_tasks()
    task = asyncio.ensure_future(client.async_execute())
    while not task.done():
        await asyncio.wait({task}, timeout=min(_TICK, stop.wait(time.monotonic())) or 0.001)
        if not task.done() and stop.check(time.monotonic()):
            # nbclient's own tasks (its kernel watcher) outlive a cancelled cell: end them too
            leftovers = asyncio.all_tasks() - before - {asyncio.current_task()}
            for t in leftovers:
                t.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*leftovers, return_exceptions=True)
            return "stuck"
    try:
        task.result()
    except _RunStopped:
        return "stopped"
    except CellExecutionError:
        return "stopped" if stop.reason is not None else "error"
    except CellTimeoutError:
        return "stuck"
    except DeadKernelError:
        return "died"
    except MALFORMED:  # code in the kernel wrote a frame that is not a Jupyter message
        log.info("notebook run stopped at a malformed kernel message", exc_info=True)
        return "garbled"
    return None


def run_notebook(call: ToolCall) -> str:
    from jupyter_core.utils import run_sync

    from ...notebooks import Notebook

    started = time.monotonic()
    args = call.args
    fs = call.filesystem()
    sandbox = call.sandbox()
    kernels = _kernels(call)
    if kernels.remote:  # nbclient drives a local kernel's ZeroMQ channels
        raise KernelError(
            "This sandbox's kernels run on a Jupyter gateway; running a notebook needs a local kernel",
            code="UNSUPPORTED",
        )
    nb = Notebook.load(fs, args["path"])
    rel = nb.path or args["path"]
    language = nb.language
    if language is not None and language.lower() != "python":
        raise NotebookError(f"{rel} is a {language} notebook; the sandbox's kernels run Python", path=rel)
    mtime = nb.stat.mtime if nb.stat is not None else None
    timeout = args["timeout"] if args["timeout"] is not None else sandbox_timeout(sandbox)
    config = kernels.config

    temporary = args["kernel"] is None
    if temporary:
        with _runs_lock:
            name = f"notebook-{next(_runs)}"
        base = getattr(fs, "base_path", None)
        cwd = os.path.join(str(base), posixpath.dirname(rel)) if base else None
        kernel = kernels.start(name, cwd=cwd)
    else:
        kernel = kernels.start(args["kernel"])
    import zmq.asyncio

    from ...sandbox.kernels.host import bound_receiving

    context = bound_receiving(zmq.asyncio.Context(), config.max_message_bytes)
    failure: str | None = None
    # the whole call, kernel start included, within the limit; the caller's cancel (an MCP
    # cancel sets call.context.abort) stops it the same way
    stop = Stopper(timeout, call.context.abort, config.interrupt_timeout, kernel.interrupt, started)
    try:
        with kernel.exclusive() as km:
            client = _notebook_client(kernel, km, nb.node, context, config.limits, stop)
            try:
                failure = run_sync(_drive)(client, stop)
            finally:
                client.streams.finish()
                if client.kc is not None:  # ours: nbclient stops only the clients of kernels it started
                    client.kc.stop_channels()
    finally:
        context.destroy(linger=0)
        if temporary:
            kernels.shutdown(kernel.name, now=True)
        elif failure in ("stuck", "died", "garbled"):
            kernel.restart()
    elapsed = time.monotonic() - started
    _note_dropped(nb.node, client.dropped, client.too_deep)
    durations = {i: _duration(c) for i, c in enumerate(nb.cells)}
    _settle(nb, client.executed, keep_timing=args["record_timing"])
    try:
        nb.save(fs, expected_mtime=mtime)
        saved = "outputs saved"
        # the sources did not change: the cells read stay read, at the version written
        record_written(call, nb, rel, seen_before_edit(call, nb), [])
    except StaleFileError:
        saved = "outputs NOT saved: the file changed while it ran (read it again and rerun)"
    killed = client.running if failure == "stuck" else None
    return _summary(
        rel, nb.node, elapsed, failure, stop, killed, saved, temporary, kernel.name, call, client.executed, durations
    )


def _settle(nb: Any, executed: set[int], *, keep_timing: bool) -> None:
    """The file as this run leaves it: a code cell the run did not reach loses the outputs and
    count of an earlier run (they would read as this run's), and no cell keeps
    ``metadata.execution`` timestamps unless they were asked for (they change at every run)."""
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code":
            continue
        if index not in executed:
            nb.clear_outputs(index)
        if not keep_timing or index not in executed:
            meta = cell.get("metadata")
            if isinstance(meta, dict):
                meta.pop("execution", None)


def _note_dropped(node: Any, dropped: dict[int, list[int]], deep: dict[int, int]) -> None:
    import nbformat

    for index in sorted({*dropped, *deep}):
        notes = []
        if index in dropped:
            count, size = dropped[index]
            notes.append(
                f"[{count:,} output(s) of {size:,} bytes not kept: over 4 MB or {_MAX_CELL_OUTPUTS} outputs "
                "for this cell]"
            )
        if index in deep:
            notes.append(f"[{deep[index]:,} output(s) nested deeper than {MAX_DEPTH} levels not kept]")
        node.cells[index].outputs.append(
            nbformat.v4.new_output("stream", name="stderr", text="\n".join(notes) + "\n")
        )


def _summary(
    rel: str,
    node: Any,
    elapsed: float,
    failure: str | None,
    stop: Stopper,
    killed: int | None,
    saved: str,
    temporary: bool,
    kernel: str,
    call: ToolCall,
    executed: set[int],
    durations: dict[int, float | None],
) -> str:
    from ...notebooks.outputs import cell_outputs

    code_cells = [(i, c) for i, c in enumerate(node.cells) if c.cell_type == "code"]
    lines: list[str] = []
    first_error: tuple[int, Any] | None = None
    ran = ok = 0
    for index, cell in code_cells:
        summaries = cell_outputs(cell, max_lines=3, max_chars=160)
        error = next((s for s in summaries if s.kind == "error"), None)
        if index == killed:
            status = "killed"  # still running when the run gave up on it
        elif index not in executed:
            status = "not run"
        elif error is not None:
            status = "error"
            if first_error is None:
                first_error = (index, error)
        else:
            status = "ok"
            ok += 1
        if status != "not run":
            ran += 1
        took = durations.get(index)
        head = f"[{index}] {status:<7}" + (f" {took:5.2f}s" if took is not None else "       ")
        head += f"  {_first_line(cell.source)}"
        shown = [s for s in summaries if s.kind != "error"]
        detail = "; ".join(
            (s.text.replace("\n", " ⏎ ")[:160] if s.text else s.headline)
            + (f" [+{len(s.images)} image(s)]" if s.images else "")
            for s in shown
        )
        lines.append(head + (f"  → {detail}" if detail else ""))
    outcome = f"{ok} ok" + (f", stopped at cell {first_error[0]}" if first_error else "")
    if ran < len(code_cells):
        outcome += f", {len(code_cells) - ran} not run (their old outputs cleared)"
    if failure is None and ran == len(code_cells):
        outcome = f"all {len(code_cells)} code cells ok"
    where = "a fresh kernel" if temporary else f"kernel {kernel!r}"
    header = f"Ran {rel} in {where}: {outcome} ({elapsed:.1f}s); {saved}."
    parts = [header, "\n".join(lines) if lines else "(no code cells)"]
    if stop.reason is not None:
        why = f"timed out after {stop.limit:g} s" if stop.reason == "timeout" else "cancelled"
        if failure == "stuck":
            what = (
                f"the kernel was interrupted and, as a cell did not stop within {stop.interrupt_timeout:g} s, "
                + ("shut down" if temporary else "restarted (its state is lost)")
            )
        else:
            what = "the kernel was interrupted"
        not_run = sum(1 for i, _ in code_cells if i not in executed)
        parts.append(f"[{why}: {what}; {not_run} code cell(s) not run]")
    elif failure == "stuck":
        parts.append("[a cell did not stop after an interrupt: the kernel was shut down]")
    elif failure == "died":
        parts.append("[the kernel died while the notebook ran]")
    elif failure == "garbled":
        parts.append("[the run stopped: code in the kernel sent a message that is not a Jupyter message]")
    if first_error is not None:
        index, error = first_error
        tb = "\n".join(error.traceback)
        text = f"First error, in cell {index}: {error.headline}" + (f"\n{tb}" if tb else "")
        budget = call.max_tokens // 2 if call.max_tokens else None
        parts.append(truncate_head_tail(text, budget, head_ratio=0.3))
    return truncate_head_tail("\n\n".join(parts), call.max_tokens, head_ratio=0.5)


RUN_NOTEBOOK_SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.SANDBOX.RUN_NOTEBOOK,
    description=DESCRIPTION,
    params=PARAMS,
    run=run_notebook,
    title="Run notebook",
    hints=ToolHints(destructive=True, idempotent=False, runs_code=True),
    # writes the outputs back into the notebook; nbclient needs a kernel on this machine
    needs={"filesystem", "writable", "sandbox", "kernels", "local_kernels"},
    writes=True,
    options=(),
    write_path=lambda args: args["path"],
    check_reads=True,
    default_approval=_default_approval,
    static_default_approval=_static_default_approval,
)
