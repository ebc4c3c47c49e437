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

Bounds: ``timeout`` is for the whole run (the kernel is interrupted when it passes); each cell
keeps at most 4 MB of output (the rest is replaced by a note), and a kernel message over the
sandbox's ``max_message_bytes`` is dropped by ZeroMQ.
"""

from __future__ import annotations

import logging
import os
import posixpath
import threading
import time
from datetime import datetime
from typing import Any

from ..errors import KernelError, NotebookError, StaleFileError
from .base import ToolCall, ToolSpec
from .execute_command import _default_approval, _static_default_approval
from .kernels import _kernels
from .names import WORKSPACE_TOOLS
from .output import truncate_head_tail
from .schema import Param

__all__ = ["RUN_NOTEBOOK_SPEC"]

log = logging.getLogger(__name__)

_MAX_CELL_OUTPUT_BYTES = 4 * 1024 * 1024
#: Outputs kept per cell: a notebook holds at most 10,000 cells and outputs to be read as one
#: (``ws_jupyter.notebooks.document``), and a display loop makes one output per call.
_MAX_CELL_OUTPUTS = 500
_runs = iter(range(1, 1 << 62))
_runs_lock = threading.Lock()

DESCRIPTION = (
    "Run a Jupyter notebook (.ipynb) of the workspace top to bottom in the sandbox, like 'Run All', and "
    "save its outputs into the file. Stops at the first error. Returns one line per code cell ([cell index as "
    "workspace_read_file shows it] status, "
    "time, first output lines) and the first error with its traceback. By default a fresh kernel runs it "
    "in the notebook's folder; kernel names a kernel of workspace_execute_code to run it in instead "
    "(sharing its variables). timeout is in seconds for the whole run (default: the sandbox's command limit)."
)

PARAMS = (
    Param("path", "string", "Notebook path relative to the workspace root, e.g. 'analysis/report.ipynb'.",
          required=True, allow_empty=False),
    Param("timeout", "number", "Time limit in seconds for the whole run. Default: the sandbox's limit.",
          minimum=0.001),
    Param("kernel", "string", "Run in this kernel of the sandbox (shares its state). Default: a fresh kernel."),
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


def _notebook_client(kernel: Any, km: Any, node: Any, per_cell_timeout: float | None, context: Any) -> Any:
    """nbclient's ``NotebookClient`` driving one of the sandbox's kernels, with bounded outputs."""
    from nbclient import NotebookClient
    from nbclient.util import ensure_async

    class SandboxNotebookClient(NotebookClient):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.dropped: dict[int, int] = {}  # cell index -> bytes of output not kept
            self.used: dict[int, int] = {}

        async def async_start_new_kernel_client(self) -> Any:
            # The sandbox's kernel, reached with an asyncio client of our own (nbclient runs on
            # asyncio; jupyter_client's blocking client would stall its event loop).
            kc: Any = kernel.client(context=context)
            self.kc = kc
            await ensure_async(kc.start_channels(hb=False))  # the kernel's process is watched
            await ensure_async(kc.wait_for_ready(timeout=self.startup_timeout))
            kc.allow_stdin = False
            return kc

        def output(self, outs: Any, msg: dict[str, Any], display_id: Any, cell_index: int) -> Any:
            content = msg.get("content", {})
            size = sum(len(v) for v in (content.get("data") or {}).values() if isinstance(v, str))
            size += len(content.get("text") or "") if isinstance(content.get("text"), str) else 0
            used = self.used.get(cell_index, 0)
            full = used + size > _MAX_CELL_OUTPUT_BYTES or len(outs) >= _MAX_CELL_OUTPUTS
            if full and msg.get("msg_type") != "error":
                self.dropped[cell_index] = self.dropped.get(cell_index, 0) + size
                return None
            self.used[cell_index] = used + size
            return super().output(outs, msg, display_id, cell_index)

    return SandboxNotebookClient(
        node,
        km=km,
        timeout=per_cell_timeout,
        allow_errors=False,
        interrupt_on_timeout=False,
        record_timing=True,
        coalesce_streams=True,
    )


def run_notebook(call: ToolCall) -> str:
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    from ..notebooks import Notebook

    args = call.args
    fs = call.filesystem()
    sandbox = call.sandbox()
    kernels = _kernels(call)
    if getattr(kernels, "remote", False):  # nbclient drives a local kernel's ZeroMQ channels
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
    timeout = args["timeout"] if args["timeout"] is not None else getattr(sandbox, "timeout", None)
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

    from ..kernels.manager import bound_receiving

    context = bound_receiving(zmq.asyncio.Context(), config.max_message_bytes)
    started = time.monotonic()
    failure: str | None = None
    timed_out = threading.Event()
    try:
        with kernel.exclusive() as km:
            timer = None
            if timeout is not None:

                def expire() -> None:
                    timed_out.set()
                    kernel.interrupt()

                timer = threading.Timer(timeout, expire)
                timer.daemon = True
                timer.start()
            backstop = timeout + config.interrupt_timeout if timeout is not None else None
            client = _notebook_client(kernel, km, nb.node, backstop, context)
            try:
                client.execute()
            except CellExecutionError:
                failure = "error"
            except CellTimeoutError:
                failure = "stuck"
            except DeadKernelError:
                failure = "died"
            except ValueError:  # code in the kernel wrote a frame that is not a Jupyter message
                log.info("notebook run of %s stopped at a malformed kernel message", rel, exc_info=True)
                failure = "garbled"
            finally:
                if timer is not None:
                    timer.cancel()
                if client.kc is not None:  # ours: nbclient stops only the clients of kernels it started
                    client.kc.stop_channels()
    finally:
        context.destroy(linger=0)
        if temporary:
            kernels.shutdown(kernel.name, now=True)
        elif failure in ("stuck", "died", "garbled"):
            kernel.restart()
    elapsed = time.monotonic() - started
    _note_dropped(nb.node, client.dropped)
    try:
        nb.save(fs, expected_mtime=mtime)
        saved = "outputs saved"
    except StaleFileError:
        saved = "outputs NOT saved: the file changed while it ran (read it again and rerun)"
    return _summary(rel, nb.node, elapsed, failure, timed_out.is_set(), timeout, saved, temporary, kernel.name, call)


def _note_dropped(node: Any, dropped: dict[int, int]) -> None:
    import nbformat

    for index, size in dropped.items():
        cell = node.cells[index]
        cell.outputs.append(
            nbformat.v4.new_output(
                "stream", name="stderr", text=f"[{size:,} bytes of output not kept: over 4 MB or {_MAX_CELL_OUTPUTS} outputs for this cell]\n"
            )
        )


def _summary(
    rel: str,
    node: Any,
    elapsed: float,
    failure: str | None,
    timed_out: bool,
    timeout: float | None,
    saved: str,
    temporary: bool,
    kernel: str,
    call: ToolCall,
) -> str:
    from ..notebooks.outputs import cell_outputs

    code_cells = [(i, c) for i, c in enumerate(node.cells) if c.cell_type == "code"]
    lines: list[str] = []
    first_error: tuple[int, Any] | None = None
    ran = ok = 0
    for index, cell in code_cells:
        count = cell.get("execution_count")
        summaries = cell_outputs(cell, max_lines=3, max_chars=160)
        error = next((s for s in summaries if s.kind == "error"), None)
        if count is None and not summaries:
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
        took = _duration(cell)
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
    if failure is None and ran == len(code_cells):
        outcome = f"all {len(code_cells)} code cells ok"
    where = "a fresh kernel" if temporary else f"kernel {kernel!r}"
    header = f"Ran {rel} in {where}: {outcome} ({elapsed:.1f}s); {saved}."
    parts = [header, "\n".join(lines) if lines else "(no code cells)"]
    if timed_out:
        parts.append(f"[timed out after {timeout:g} s: the kernel was interrupted]")
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
    write_path=lambda args: args["path"],
    check_reads=True,
    default_approval=_default_approval,
    static_default_approval=_static_default_approval,
)
