"""``KernelActivity``: every execution in the sandbox's kernels, live, drawn as notebook cells.

The headline view of an agent at work: each piece of code the agent runs through
``workspace_execute_code`` (and anything ``%%ws py`` or Python code runs in those kernels) appears
as a cell — its source, its output streaming in, plots and tables, its status and duration —
with **Interrupt** (while it runs) and **Restart kernel** buttons. It follows the sandbox's
execution feed (``sandbox.kernels.activity``), and shows what ran before it was opened. Code
stopped by an interrupt shows as "interrupted".

A click is handled only while the notebook is idle (ipywidgets#1349): while a cell runs the
buttons are disabled and say so — code run by the cell itself (``%ws call``, ``%%ws py``) stops
with the notebook's stop button, which interrupts the workspace kernel too.

Drawing happens on the shared widget thread, at most ``interval`` times a second, by changing
widget traits only (see ``live.py``); button actions run on their own thread, so a click never
blocks the notebook. Output the agent produced is shown safely: HTML in a sandboxed frame.

State for code and tests: ``cells`` (dicts: execution_id, kernel, origin, code, status, stdout,
stderr, outputs — the MIME types shown —, error, duration, notes), ``notebook_busy``,
``interrupt(execution_id=None)``, ``restart(kernel=None)``, ``refresh()``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as w
from traitlets import Dict, List

from ...sandbox.capabilities import sandbox_kernels
from ..notebook_busy import BUSY_HINT, busy_state
from ..views.common import MUTED, esc, format_duration, one_line
from ..views.kernels import execution_body_html, execution_head_html, execution_html, shown_status
from .controls import button, flexible
from .live import Throttle
from .snapshot import Snapshotting

__all__ = ["KernelActivity"]

MAX_CELLS = 50
#: Executions kept in the saved view (with their outputs, plots included).
SNAPSHOT_CELLS = 10
_MAX_EVENTS = 300
_MAX_STREAM_CHARS = 50_000


@dataclass
class _Cell:
    execution_id: str
    kernel: str
    origin: str
    code: str
    status: str = "queued"
    events: list[Any] = field(default_factory=list)
    result: Any = None
    error: str | None = None
    version: int = 0
    drawn: int = -1
    widget: Any = None

    def add(self, event: Any) -> None:
        from ws_jupyter import OutputEvent

        last = self.events[-1] if self.events else None
        if event.kind in ("stdout", "stderr") and last is not None and last.kind == event.kind:
            text = (last.text + event.text)[-_MAX_STREAM_CHARS:]
            self.events[-1] = OutputEvent(event.kind, text=text)
        elif len(self.events) < _MAX_EVENTS:
            self.events.append(event)
        self.version += 1

    def state(self) -> dict[str, Any]:
        r = self.result
        stdout = "".join(e.text for e in self.events if e.kind == "stdout")
        stderr = "".join(e.text for e in self.events if e.kind == "stderr")
        outputs = [m for e in self.events if e.bundle is not None for m in e.bundle.mime_types]
        return {
            "execution_id": self.execution_id,
            "kernel": self.kernel,
            "origin": self.origin,
            "code": self.code,
            "status": shown_status(self.status, r, self.error),
            "stdout": stdout,
            "stderr": stderr,
            "outputs": outputs,
            "error": str(r.error) if r is not None and r.error is not None else self.error,
            "duration": r.duration if r is not None else None,
            "execution_count": r.execution_count if r is not None else None,
            "notes": list(r.notes) if r is not None else [],
        }


class _CellView(w.VBox):
    """One execution: its drawing and its two buttons."""

    def __init__(self, owner: KernelActivity, cell: _Cell) -> None:
        self.cell = cell
        self.head = w.HTML(layout=w.Layout(margin="0 6px 0 0"))
        self.body = w.HTML()  # stretched by the column (a 100% width plus its margins would stick out)
        self.interrupt_button = button(
            "Interrupt", icon="stop", button_style="warning", tooltip="Interrupt this code", height="24px"
        )
        self.restart_button = button(
            "Restart", icon="refresh", tooltip=f"Restart kernel {cell.kernel!r} (its state is lost)", height="24px"
        )
        for b in (self.interrupt_button, self.restart_button):
            b.style.font_size = "11px"
        self.interrupt_button.add_class("ws-kernel-interrupt")
        self.restart_button.add_class("ws-kernel-restart")
        self.interrupt_button.on_click(lambda _: owner.interrupt(cell.execution_id))
        self.restart_button.on_click(lambda _: owner._in_background(lambda: owner.restart(cell.kernel)))
        super().__init__(
            [
                w.HBox(
                    [flexible(self.head), self.interrupt_button, self.restart_button],
                    layout=w.Layout(align_items="center", flex_flow="row wrap"),
                ),
                self.body,
            ],
            # no shrinking: in the scrolling list a cell keeps its full height
            layout=w.Layout(flex="0 0 auto", border_bottom="1px solid var(--jp-border-color2, #e0e0e0)"),
        )
        self.add_class("ws-kernel-cell")

    def draw(self, events: list[Any], status: str, result: Any, error: str | None) -> None:
        c = self.cell
        self.head.value = execution_head_html(
            kernel=c.kernel,
            status=shown_status(status, result, error),
            execution_count=result.execution_count if result is not None else None,
            duration=result.duration if result is not None else None,
            origin=c.origin,
        )
        self.body.value = execution_body_html(
            code=c.code,
            events=events,
            notes=(result.notes if result is not None else ()) + ((error,) if error else ()),
        )
        running = status in ("running", "queued")
        self.interrupt_button.layout.display = "" if running else "none"

    def follow_busy(self, busy: bool) -> None:
        """Disables the buttons while the notebook runs a cell (their clicks would wait for it)."""
        for b, tip in (
            (self.interrupt_button, "Interrupt this code"),
            (self.restart_button, f"Restart kernel {self.cell.kernel!r} (its state is lost)"),
        ):
            b.disabled = busy
            b.tooltip = BUSY_HINT if busy else tip

    def close(self) -> None:
        for widget in (self.head, self.body, self.interrupt_button, self.restart_button):
            widget.close()
        super().close()


class KernelActivity(Snapshotting, w.VBox):
    """Live executions of a workspace's kernels, as cells. See the module docstring."""

    cells = List(Dict())
    snapshot_label = "kernel activity"

    def __init__(self, workspace: Any, *, interval: float = 0.2, max_cells: int = MAX_CELLS) -> None:
        sandbox = workspace.resolve_sandbox(None)
        kernels = sandbox_kernels(sandbox)
        if kernels is None:
            raise ValueError("this workspace's sandbox cannot run kernels")
        self.workspace = workspace
        self.kernels = kernels
        self.feed = kernels.activity
        self.max_cells = max_cells
        self._lock = threading.Lock()
        self._cells: dict[str, _Cell] = {}
        self._order: list[str] = []
        self._views: dict[str, _CellView] = {}
        self._closed = False
        self.header = w.HTML()
        self.clear_button = button("Clear", icon="trash", tooltip="Forget finished executions")
        self.clear_button.on_click(lambda _: self.clear())
        self._busy = busy_state()
        self.busy_note = w.HTML(layout=w.Layout(display="none"))
        self.busy_note.add_class("ws-busy-note")
        self._unsubscribe_busy: Callable[[], None] | None = None
        self.cells_box = w.VBox(layout=w.Layout(max_height="60em", overflow="auto"))
        super().__init__(
            [
                w.HBox([self.header, self.clear_button], layout=w.Layout(justify_content="space-between")),
                self.busy_note,
                self.cells_box,
            ],
            layout=w.Layout(width="100%"),
        )
        self.add_class("ws-kernel-activity")
        self._throttle = Throttle(self._render, interval)
        with self._lock:
            for record in self.feed.recent(max_cells):
                cell = self._add(record.execution_id, record.kernel, record.origin, record.code)
                for event in list(record.outputs):
                    cell.add(event)
                cell.status = record.state
                cell.result = record.result
                cell.error = record.error
        self._unsubscribe: Callable[[], None] | None = self.feed.subscribe(self._on_event)
        if self._busy is not None:
            self._unsubscribe_busy = self._busy.subscribe(self._throttle.request)
        self._render()

    @property
    def notebook_busy(self) -> bool:
        """True while the notebook runs a cell: the buttons are disabled (see the module doc)."""
        return self._busy is not None and self._busy.busy

    # --- events (on the executing thread) ---------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        with self._lock:
            cell = self._cells.get(event.execution_id) or self._add(
                event.execution_id, event.kernel, event.origin, event.code
            )
            if event.kind == "started":
                cell.status = "running"
            elif event.kind == "output" and event.output is not None:
                cell.add(event.output)
            elif event.kind == "finished":
                cell.result = event.result
                cell.status = event.result.status
            elif event.kind == "failed":
                cell.error = event.error
                cell.status = "failed"
            cell.version += 1
        self._throttle.request()

    def _add(self, execution_id: str, kernel: str, origin: str, code: str) -> _Cell:
        cell = _Cell(execution_id, kernel, origin, code)
        self._cells[execution_id] = cell
        self._order.append(execution_id)
        while len(self._order) > self.max_cells:
            self._cells.pop(self._order.pop(0), None)
        return cell

    # --- drawing (widget thread, or the caller's for refresh()) -------------------------------------

    def _render(self) -> None:
        if self._closed:
            return
        with self._lock:
            cells = [self._cells[i] for i in self._order if i in self._cells]
            dirty = [
                (c, c.version, list(c.events), c.status, c.result, c.error)
                for c in cells
                if c.version != c.drawn
            ]
            states = [c.state() for c in cells]
        for cell, version, events, status, result, error in dirty:
            view = self._views.get(cell.execution_id)
            if view is None:
                view = self._views[cell.execution_id] = _CellView(self, cell)
            view.draw(events, status, result, error)
            cell.drawn = version
        for gone in [i for i in self._views if i not in self._cells]:
            self._views.pop(gone).close()
        busy = self.notebook_busy
        for view in self._views.values():
            view.follow_busy(busy)
        self.clear_button.disabled = busy
        self.clear_button.tooltip = BUSY_HINT if busy else "Forget finished executions"
        self.busy_note.value = f"<div style='{MUTED}; font-size: 0.92em'>{esc(BUSY_HINT)}</div>" if busy else ""
        self.busy_note.layout.display = "" if busy else "none"
        children = tuple(self._views[c.execution_id] for c in cells)
        if children != tuple(self.cells_box.children):
            self.cells_box.children = children
        running = sum(1 for s in states if s["status"] in ("running", "queued"))
        names = sorted({s["kernel"] for s in states})
        self.header.value = (
            f"<strong>Kernel activity</strong> <span style='{MUTED}'>{len(states)} execution"
            f"{'' if len(states) == 1 else 's'}"
            + (f", {running} running" if running else "")
            + (f" · kernels: {esc(', '.join(names))}" if names else "")
            + "</span>"
            + (
                ""
                if states
                else f"<div style='{MUTED}'>Nothing ran yet: code the agent runs with "
                "<code>workspace_execute_code</code> (or <code>%%ws py</code>) appears here as cells.</div>"
            )
        )
        self.cells = states
        self.snapshot_changed()

    def snapshot(self) -> tuple[str, str]:
        """The newest executions as cells (source, outputs and plots; the rest counted), and as text."""
        with self._lock:
            cells = [self._cells[i] for i in self._order if i in self._cells][-SNAPSHOT_CELLS:]
            drawn = [(c, list(c.events), c.status, c.result, c.error) for c in cells]
            total = len(self._order)
        parts = [f"<div>{self.header.value}</div>"]
        lines = [f"Kernel activity: {total} execution{'' if total == 1 else 's'}"]
        if total > len(drawn):
            parts.append(f"<div style='{MUTED}'>… {total - len(drawn)} earlier executions not shown</div>")
            lines.append(f"… {total - len(drawn)} earlier executions")
        for cell, events, status, result, error in drawn:
            count = result.execution_count if result is not None else None
            duration = result.duration if result is not None else None
            notes = (result.notes if result is not None else ()) + ((error,) if error else ())
            status = shown_status(status, result, error)
            parts.append(
                execution_html(
                    code=cell.code,
                    kernel=cell.kernel,
                    status=status,
                    events=events,
                    execution_count=count,
                    duration=duration,
                    origin=cell.origin,
                    notes=notes,
                )
            )
            head = f"[{count if count is not None else ' '}] {cell.kernel} {status}"
            head += f" {format_duration(duration)}" if duration is not None else ""
            first = next((ln for ln in cell.code.splitlines() if ln.strip()), "")
            lines.append(f"{head}: {one_line(first, 70)}")
            out = "".join(e.text for e in events if e.kind in ("stdout", "stderr")).strip()
            if out:
                lines.append("    " + one_line(out.splitlines()[-1], 100))
        return "".join(parts), "\n".join(lines)

    def refresh(self) -> None:
        """Draws the current state now (normally done by the throttle)."""
        self._throttle.flush()

    # --- actions ------------------------------------------------------------------------------------

    def _in_background(self, fn: Callable[[], Any]) -> None:
        threading.Thread(target=fn, name="ws-kernel-activity-action", daemon=True).start()

    def interrupt(self, execution_id: str | None = None) -> bool:
        """Interrupts the kernel running ``execution_id`` (default: the newest running execution)."""
        with self._lock:
            running = [c for c in (self._cells[i] for i in self._order) if c.status == "running"]
        target = next((c for c in running if c.execution_id == execution_id), None) if execution_id else None
        if target is None and execution_id is None and running:
            target = running[-1]
        if target is None:
            return False
        kernel = self.kernels.get(target.kernel)
        return bool(kernel is not None and kernel.interrupt())

    def restart(self, kernel: str | None = None) -> bool:
        """Restarts ``kernel`` (default: the kernel of the newest execution); its state is lost."""
        with self._lock:
            name = kernel or (self._cells[self._order[-1]].kernel if self._order else None)
        target = self.kernels.get(name) if name else None
        if target is None:
            return False
        target.restart()
        self._throttle.request()
        return True

    def clear(self) -> None:
        """Forgets finished executions (running and queued ones stay)."""
        with self._lock:
            keep = [i for i in self._order if self._cells[i].status in ("running", "queued")]
            self._cells = {i: self._cells[i] for i in keep}
            self._order = keep
        self.refresh()

    def close(self) -> None:
        if not getattr(self, "_closed", True):
            self.close_snapshot()
        self._closed = True
        for name in ("_unsubscribe", "_unsubscribe_busy"):
            unsubscribe = getattr(self, name, None)
            setattr(self, name, None)
            if unsubscribe is not None:
                unsubscribe()
        if hasattr(self, "_throttle"):
            self._throttle.close()
        for view in self._views.values():
            view.close()
        self._views.clear()
        for widget in (self.header, self.clear_button, self.busy_note, self.cells_box):
            widget.close()
        super().close()
