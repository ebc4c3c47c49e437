"""Run the cell in the workspace sandbox's Python kernel — not in this notebook's kernel.

The code runs where the agent's `workspace_execute_code` runs: in the sandbox (working directory =
the workspace, its environment and isolation), in a kernel that keeps its state between cells
(`%ws kernel` manages them). Output appears as it comes, rendered natively: text, tables, plots,
the value of the last line; an error shows its traceback. The kernel's stop button interrupts
the workspace kernel (its state is kept); pressed before the code was sent, it is not run.

The output comes from the sandbox, so the cell shows it as `%ws run` shows a command's: the first
lines (`%config WsMagics.stream_head_lines`, `max_stream_chars`), then "… N lines not shown …"
and the newest lines, updated live (`stream_tail_lines`). Rich outputs are drawn inert: HTML in a
sandboxed frame that may load nothing, images only when they are the image they claim to be, no
JavaScript, Markdown or widgets, output metadata by whitelist; display ids belong to this cell (the
sandbox's code can update only the displays it made in this cell).

The full outcome stays available: `ws.sandbox.kernels["default"].last_result` (stdout, displays,
error...). With `--check` an error stops "Run All" like an error in the notebook itself.

Examples:
  %%ws py
  import pandas as pd
  df = pd.read_csv("data.csv")
  df.describe()

  %%ws py scratch --timeout 60
  heavy_computation()
"""

from __future__ import annotations

import queue
import secrets
import sys
from typing import Any

from ..parsing import WsArgumentParser
from ._common import positive_float, require_kernels
from ._foreground import StopButton, drain, events_queue, run_in_foreground
from ._stream import CellStream
from .base import Invocation, Subcommand

__all__ = ["COMMAND", "NativeOutput"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("name", nargs="?", default=None, help="kernel name (default: default)")
    parser.add_argument("--timeout", type=positive_float, help="time limit in seconds (default: none)")
    parser.add_argument("--check", action="store_true", help="raise an error when the code fails")


class NativeOutput:
    """Draws a workspace kernel's output events in the current cell, as that kernel meant them.

    Runs in the notebook's main thread (events are queued by the executing thread): writing to
    ``sys.stdout`` and calling ``display`` from the main thread is what puts them in *this* cell.

    Streams (and an error's traceback) go through ``stream``, a ``CellStream``: the head, the live
    tail and the counts of ``%ws run``, so megabytes of output never reach the notebook. Rich
    outputs display through ``MimeBundle._repr_mimebundle_`` (inert types, checked metadata).
    Display ids belong to one execution: each id the sandbox names gets a new random one here,
    so an update reaches only a display this same execution made — never an earlier cell's
    output (a front-end treats a repeated display id as an update of every output that has it)
    nor another display of the notebook. At most ``MAX_DISPLAY_IDS`` ids are followed.
    """

    MAX_DISPLAY_IDS = 1000

    def __init__(self, stream: CellStream | None = None) -> None:
        self.queue: queue.Queue[Any] = events_queue()
        self.stream = stream if stream is not None else CellStream()
        self._handles: dict[str, str] = {}
        self._prefix = f"ws-py-{secrets.token_hex(8)}-"

    def pump(self, timeout: float) -> None:
        """Draws what arrived (waiting up to ``timeout`` for something)."""
        drain(self.queue, self.draw, timeout)
        self.stream.refresh()

    def _local_id(self, sandbox_id: str) -> str | None:
        local = self._handles.get(sandbox_id)
        if local is None and len(self._handles) < self.MAX_DISPLAY_IDS:
            local = self._handles[sandbox_id] = f"{self._prefix}{len(self._handles)}"
        return local

    def draw(self, event: Any) -> None:
        from IPython.display import clear_output, display, update_display

        if event.kind in ("stdout", "stderr"):
            self.stream.write(event.kind, event.text)
        elif event.kind == "display":
            bundle = event.bundle
            data, metadata = bundle._repr_mimebundle_()
            local = self._local_id(bundle.display_id) if bundle.display_id else None
            sys.stdout.flush()
            sys.stderr.flush()
            if local is not None:
                display(data, raw=True, metadata=metadata, display_id=local)
            else:
                display(data, raw=True, metadata=metadata)
        elif event.kind == "update" and event.bundle.display_id in self._handles:
            data, metadata = event.bundle._repr_mimebundle_()
            update_display(
                data, raw=True, metadata=metadata, display_id=self._handles[event.bundle.display_id]
            )
        elif event.kind == "clear":
            sys.stdout.flush()
            sys.stderr.flush()
            clear_output(wait=event.wait)
            self.stream.reset()
        elif event.kind == "error":
            # The kernel's own traceback, colours included (notebooks render them), bounded.
            self.stream.write("stderr", "\n".join(event.error.traceback) + "\n")

    def finish(self, truncated: bool = False) -> None:
        """The execution ended: the last queued events, then the stream's final tail and notice."""
        self.pump(0)
        self.stream.finish(truncated=truncated)


def run(inv: Invocation) -> Any:
    # The stop button interrupts the workspace kernel, whenever it is pressed (see StopButton).
    with StopButton() as stop:
        return _run_cell(inv, stop)


def _run_cell(inv: Invocation, stop: StopButton) -> Any:
    from ...sandbox.kernels import DEFAULT_KERNEL

    kernels = require_kernels(inv.workspace, "py")
    name = inv.args.name or DEFAULT_KERNEL
    code = inv.cell or ""
    if not code.strip():
        raise inv.usage_error("the cell is empty: put the Python code below `%%ws py`")
    workspace_name = inv.magics.variable_name or "ws"
    out = NativeOutput(
        CellStream(
            max_chars=inv.magics.max_stream_chars,
            head_lines=inv.magics.stream_head_lines,
            tail_lines=inv.magics.stream_tail_lines,
            live=inv.in_kernel,
            kept=f"the kernel's result keeps the output: {workspace_name}.sandbox.kernels[{name!r}].last_result.stdout",
        )
    )
    # The stop button interrupts the workspace kernel (through the abort event); its report of
    # the interrupted code still comes through and is drawn.
    done = run_in_foreground(
        lambda abort: kernels.execute(
            code,
            kernel=name,
            timeout=inv.args.timeout,
            on_output=out.queue.put,
            origin="notebook",
            abort=abort,
        ),
        out.pump,
        name="ws-py",
        stop=stop,
    )
    if not done.started:
        sys.stderr.write("[interrupted before it started: the code was not run]\n")
        return None
    result = done.value
    out.finish(truncated=bool(result and (result.stdout_dropped or result.stderr_dropped)))
    if done.error is not None:
        raise done.error
    assert result is not None
    notes = list(result.notes)
    if result.displays_dropped:
        notes.append(
            f"{result.displays_dropped} more rich outputs not shown: over the kernel's output limits"
        )
    for note in notes:
        sys.stderr.write(f"[{note}]\n")
    if inv.args.check and not result.ok:
        raise inv.usage_error(f"the code failed in kernel {name!r}: {result.error or result.status}")
    return result.result


COMMAND = Subcommand(
    name="py",
    summary="run the cell in the workspace sandbox's Python kernel, outputs shown natively",
    doc=__doc__ or "",
    configure=configure,
    run=run,
    cell="required",
    expand=False,
)
