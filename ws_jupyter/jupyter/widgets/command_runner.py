"""``CommandRunner``: a command box with Run and Stop, live output, exit code, duration, history.

Run starts the command in the sandbox and returns at once (the notebook stays free, so Stop can be
clicked); the output streams into a ``ProcessOutput`` view (stdout and stderr, stdin box); when it
ends, the status line shows the exit code and duration and the command joins the history (click
one to put it back in the box).

State for code and tests: ``command``, ``running``, ``exit_code`` (-1 while running or before the
first run), ``duration`` (seconds), ``output`` (the last run's text), ``history`` (newest first).
"""

from __future__ import annotations

import contextlib
import html
import threading
from typing import Any

import ipywidgets as w
from traitlets import Bool, Float, Int, List, Unicode

from ...sandbox.capabilities import sandbox_processes, sandbox_timeout
from ..views.common import BAD, OK, PRE, WARN, format_duration
from .controls import button, stretch
from .live import on_enter
from .process_output import ProcessOutput
from .snapshot import Snapshotting

__all__ = ["CommandRunner"]

MAX_HISTORY = 50


class CommandRunner(Snapshotting, w.VBox):
    """Run shell commands in the workspace sandbox from a widget. See the module docstring."""

    command = Unicode("")
    running = Bool(False)
    exit_code = Int(-1)
    duration = Float(0.0)
    output = Unicode("")
    history = List(Unicode())
    snapshot_label = "command runner"

    def __init__(self, workspace: Any, *, interval: float = 0.2, timeout: float | None = None) -> None:
        self.workspace = workspace
        self.sandbox = workspace.resolve_sandbox(None)
        if sandbox_processes(self.sandbox) is None:
            raise ValueError("This sandbox has no background processes")
        self.interval = interval
        self.timeout = timeout
        self.handle: Any = None
        self.view: ProcessOutput | None = None
        self._done = threading.Event()
        self._done.set()
        self._lock = threading.Lock()
        self._finishing: Any = None
        self.command_box = w.Text(
            placeholder="Shell command, e.g. ls -la | head", layout=w.Layout(flex="1 1 auto")
        )
        self.run_button = button("Run", icon="play", button_style="success", tooltip="Run the command")
        self.stop_button = button(
            "Stop",
            icon="stop",
            button_style="danger",
            disabled=True,
            tooltip="Kill the command's process tree",
        )
        self.status_line = w.HTML()
        self.output_slot = w.Box(layout=w.Layout(width="100%"))
        self.history_list = stretch(w.Select(options=[], rows=5))
        self.history_list.add_class("ws-command-history")
        super().__init__(
            [
                w.HBox([self.command_box, self.run_button, self.stop_button]),
                self.status_line,
                self.output_slot,
                w.HTML("<span style='opacity: 0.7'>History (click to reuse)</span>"),
                self.history_list,
            ],
            layout=w.Layout(width="100%"),
        )
        self.add_class("ws-command-runner")
        self.run_button.on_click(lambda _: self.run())
        on_enter(self.command_box, self.run)
        self.stop_button.on_click(lambda _: self.stop())
        self.history_list.observe(self._on_history, names="value")
        self.observe(lambda _: self.snapshot_changed(), names=["running", "exit_code", "output", "history"])

    def run(self, command: str | None = None) -> Any:
        """Starts ``command`` (default: the box's text); returns its process handle at once."""
        if command is not None:
            self.command_box.value = command
        text = self.command_box.value.strip()
        if not text:
            self.status_line.value = f"<span style='color: {WARN}'>Type a command first.</span>"
            return None
        if self.running:
            self.status_line.value = f"<span style='color: {WARN}'>A command is running: Stop it first.</span>"
            return None
        manager = sandbox_processes(self.sandbox)
        assert manager is not None  # checked when the widget was made
        limit = self.timeout if self.timeout is not None else sandbox_timeout(self.sandbox)
        try:
            handle = manager.spawn(text, timeout=limit, stdin="pipe")
        except Exception as exc:
            self.status_line.value = f"<span style='color: {BAD}'>{html.escape(str(exc))}</span>"
            return None
        self.command = text
        self.handle = handle
        self.running = True
        self.exit_code = -1
        self.duration = 0.0
        self.output = ""
        self._done.clear()
        self.run_button.disabled = True
        self.stop_button.disabled = False
        self.status_line.value = f"<span style='opacity:0.7'>running <code>{html.escape(text)}</code>…</span>"
        if self.view is not None:
            self.view.close()
        self.view = ProcessOutput(handle, interval=self.interval)
        self.view.kill_button.layout.display = "none"  # Stop is the runner's own button
        self.output_slot.children = [self.view]
        # With replay, this subscription is attached on the I/O thread after the view's own (its
        # replayed output included), so "exit" reaches the runner only once the view holds all the
        # output — also when the command ended before either subscription was attached.
        handle.subscribe(self._on_event, replay=True)
        return handle

    def _on_event(self, kind: str, text: str) -> None:
        if kind == "exit":
            # on the I/O thread: hand the bookkeeping to another thread (it waits for the drain)
            threading.Thread(target=self._finish, name="ws-runner-finish", daemon=True).start()

    def _finish(self) -> None:
        with self._lock:
            handle = self.handle
            if handle is None or self._done.is_set() or self._finishing is handle:
                return
            self._finishing = handle
        result = handle.wait()
        if self.view is not None:
            self.view.refresh()
            self.output = self.view.output
        self.exit_code = int(result.exit_code)
        self.duration = result.execution_time_ms / 1000
        self.history = [self.command, *[c for c in self.history if c != self.command]][:MAX_HISTORY]
        self.history_list.options = list(self.history)
        self.history_list.value = None
        ok = result.exit_code == 0 and not result.killed
        colour = OK if ok else BAD
        what = "stopped" if result.killed else f"exit {result.exit_code}"
        if result.timed_out:
            what = f"timed out (exit {result.exit_code})"
        self.status_line.value = (
            f"<span style='color:{colour}'>{'✓' if ok else '✗'} {what}</span> · "
            f"{format_duration(self.duration)} · <code>{html.escape(self.command)}</code>"
        )
        self.running = False
        self.run_button.disabled = False
        self.stop_button.disabled = True
        with contextlib.suppress(Exception):
            self.sandbox.processes.release(handle.pid)
        self._done.set()

    def snapshot(self) -> tuple[str, str]:
        """The last command, its outcome and the end of its output."""
        output = self.view.output if self.view is not None else self.output
        lines = output.splitlines()[-40:]
        state = "running" if self.running else ("" if self.exit_code < 0 else f"exit {self.exit_code}")
        head = " · ".join(
            x for x in (state, format_duration(self.duration) if not self.running else "", self.command) if x
        )
        text = "\n".join([head or "No command run yet.", *lines])
        body = (
            f"<div>{self.status_line.value or html.escape(head or 'No command run yet.')}</div>"
            f'<pre style="{PRE}; max-height: 16em; overflow: auto">{html.escape(chr(10).join(lines))}</pre>'
        )
        return body, text

    def stop(self) -> None:
        """Kills the running command's process tree (on a worker thread)."""
        if self.handle is not None and self.running and self.view is not None:
            self.stop_button.disabled = True
            self.view.kill()

    def wait(self, timeout: float | None = None) -> bool:
        """Waits until the current command has finished and the widget is updated."""
        return self._done.wait(timeout)

    def _on_history(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self.command_box.value = change["new"]

    def close(self) -> None:
        self.close_snapshot()
        if self.view is not None:
            self.view.close()
        for widget in (
            self.command_box,
            self.run_button,
            self.stop_button,
            self.status_line,
            self.output_slot,
            self.history_list,
        ):
            widget.close()
        super().close()
