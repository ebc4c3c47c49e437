"""``ProcessMonitor``: the sandbox's background processes, live, with one followed in detail.

A table (PID, command, state, runtime, exit code) refreshed about once a second — and at once after
the monitor's own actions — plus a selector: the chosen process is followed in a ``ProcessOutput``
view (live output, stdin box, Kill). Refreshing runs on the shared widget thread, never in a cell,
so it keeps going while the notebook does other work, at most 10 updates a second.

State for code and tests: ``rows`` (dicts: pid, command, state, runtime, exit_code), ``selected_pid``
(0 when none).
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import ipywidgets as w
from traitlets import Dict, Int, List

from ...sandbox.capabilities import sandbox_processes
from ..views.common import MUTED, one_line
from ..views.processes import ProcessRow, ProcessTableView
from .controls import button, flexible
from .live import Throttle
from .process_output import ProcessOutput
from .snapshot import Snapshotting

__all__ = ["ProcessMonitor"]


class ProcessMonitor(Snapshotting, w.VBox):
    """Live table of background processes; select one to follow it. See the module docstring."""

    rows = List(Dict())
    selected_pid = Int(0)
    snapshot_label = "process monitor"

    def __init__(self, workspace: Any, *, interval: float = 0.2, poll: float = 1.0) -> None:
        self.workspace = workspace
        sandbox = workspace.resolve_sandbox(None)
        manager = sandbox_processes(sandbox)
        if manager is None:
            raise ValueError("This sandbox has no background processes")
        self.manager = manager
        self.interval = interval
        self.poll = max(poll, interval)
        self._closed = False
        self.table = w.HTML(layout=w.Layout(width="100%"))
        self.chooser = flexible(
            w.Dropdown(options=[("(choose a process to follow)", 0)], value=0, description="Follow")
        )
        self.kill_all_button = button(
            "Kill all", icon="stop-circle", button_style="warning", tooltip="Kill every running process"
        )
        self.detail = w.Box(layout=w.Layout(width="100%"))
        self.view: ProcessOutput | None = None
        super().__init__(
            [
                self.table,
                w.HBox([self.chooser, self.kill_all_button], layout=w.Layout(width="100%")),
                self.detail,
            ],
            layout=w.Layout(width="100%"),
        )
        self.add_class("ws-process-monitor")
        self._throttle = Throttle(self._render, interval)
        self.chooser.observe(self._on_choose, names="value")
        self.kill_all_button.on_click(lambda _: self._kill_all_in_background())
        self._render()

    # --- refreshing -------------------------------------------------------------------------------

    def _render(self) -> None:
        if self._closed:
            return
        rows = [ProcessRow.from_info(info) for info in self.manager.list()]
        self.rows = [dataclasses.asdict(r) for r in rows]
        self.table.value = ProcessTableView(rows).html_body()
        options = [("(choose a process to follow)", 0)] + [
            (f"{r.pid} · {r.state} · {one_line(r.command, 60)}", r.pid) for r in rows
        ]
        if options != list(self.chooser.options):
            current = self.chooser.value
            self.chooser.unobserve(self._on_choose, names="value")
            try:
                self.chooser.options = options
                self.chooser.value = current if current in {o[1] for o in options} else 0
            finally:
                self.chooser.observe(self._on_choose, names="value")
        self.kill_all_button.disabled = not any(r.state == "running" for r in rows)
        self.snapshot_changed()
        self._throttle.request_after(self.poll)

    def snapshot(self) -> tuple[str, str]:
        """The process table."""
        view = ProcessTableView([ProcessRow(**row) for row in self.rows])
        return view.html(), view.text()

    def refresh(self) -> None:
        """Re-reads the process list now."""
        self._throttle.flush()

    # --- following one process ------------------------------------------------------------------

    def follow(self, pid: int) -> ProcessOutput | None:
        """Follows process ``pid`` in the detail view (0 stops following)."""
        if self.view is not None:
            self.view.close()
            self.view = None
        self.selected_pid = pid
        if self.chooser.value != pid:
            self.chooser.value = pid
        if not pid:
            self.detail.children = []
            return None
        handle = self.manager.get(pid)
        if handle is None:
            self.detail.children = [w.HTML(f"<span style='{MUTED}'>Process {pid} is gone.</span>")]
            return None
        self.view = ProcessOutput(handle, interval=self.interval)
        self.detail.children = [self.view]
        return self.view

    def _on_choose(self, change: dict[str, Any]) -> None:
        if change["new"] != self.selected_pid:
            self.follow(int(change["new"] or 0))

    def kill(self, pid: int) -> bool:
        """Kills one process tree (waits for it) and refreshes."""
        result = bool(self.manager.kill(pid))
        self.refresh()
        return result

    def _kill_all_in_background(self) -> None:
        self.kill_all_button.disabled = True
        threading.Thread(target=self.kill_all, name="ws-kill-all", daemon=True).start()

    def kill_all(self) -> int:
        """Kills every running process (waits for them) and refreshes; returns how many."""
        count = 0
        for row in self.rows:
            if row["state"] == "running" and self.manager.kill(row["pid"]):
                count += 1
        self.refresh()
        return count

    def close(self) -> None:
        if not getattr(self, "_closed", True):
            self.close_snapshot()
        self._closed = True
        self._throttle.close()
        if self.view is not None:
            self.view.close()
        for widget in (self.table, self.chooser, self.kill_all_button, self.detail):
            widget.close()
        super().close()
