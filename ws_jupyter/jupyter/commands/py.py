"""Run the cell in the workspace sandbox's Python kernel — not in this notebook's kernel.

The code runs where the agent's `workspace_execute_code` runs: in the sandbox (working directory =
the workspace, its environment and isolation), in a kernel that keeps its state between cells
(`%ws kernel` manages them). Output appears as it comes, rendered natively: text, tables, plots,
the value of the last line; an error shows its traceback. The kernel's stop button interrupts
the workspace kernel (its state is kept).

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
import sys
from typing import Any

from ..parsing import WsArgumentParser
from ._common import positive_float, require_kernels
from ._foreground import drain, run_in_foreground
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
    Display ids are prefixed, so updates reach the right output and never another of the notebook.
    """

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._handles: dict[str, str] = {}

    def pump(self, timeout: float) -> None:
        """Draws what arrived (waiting up to ``timeout`` for something)."""
        if drain(self.queue, self.draw, timeout):
            sys.stdout.flush()
            sys.stderr.flush()

    def draw(self, event: Any) -> None:
        from IPython.display import clear_output, display, update_display

        if event.kind == "stdout":
            sys.stdout.write(event.text)
        elif event.kind == "stderr":
            sys.stderr.write(event.text)
        elif event.kind == "display":
            bundle = event.bundle
            data, metadata = bundle._repr_mimebundle_()
            if bundle.display_id:
                local = self._handles.setdefault(bundle.display_id, f"ws-py-{bundle.display_id}")
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
        elif event.kind == "error":
            # The kernel's own traceback, colours included (notebooks render them).
            sys.stderr.write("\n".join(event.error.traceback) + "\n")


def run(inv: Invocation) -> Any:
    from ...kernels import DEFAULT_KERNEL

    kernels = require_kernels(inv.workspace, "py")
    name = inv.args.name or DEFAULT_KERNEL
    code = inv.cell or ""
    if not code.strip():
        raise inv.usage_error("the cell is empty: put the Python code below `%%ws py`")
    out = NativeOutput()
    # The stop button interrupts the workspace kernel (through the abort event); its report of
    # the interrupted code still comes through and is drawn.
    done = run_in_foreground(
        lambda abort: kernels.execute(
            code, kernel=name, timeout=inv.args.timeout, on_output=out.queue.put, origin="notebook", abort=abort
        ),
        out.pump,
        name="ws-py",
    )
    if done.error is not None:
        raise done.error
    result = done.value
    assert result is not None
    for note in result.notes:
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
