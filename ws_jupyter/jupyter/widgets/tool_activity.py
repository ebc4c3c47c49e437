"""``ToolActivity``: a live log of the agent's tool calls, with Approve/Deny for those that wait.

It follows the workspace's activity feed (``ws_jupyter.tools.tool_activity``): every call an agent
makes through ``ws.tools()`` appears with its input, then its output and duration. While the widget
is open it is the workspace's interactive approver: a call that requires approval (by default,
``workspace_execute_command`` on a sandbox without isolation) waits, shown with Approve and Deny
buttons, until one is clicked — the agent then gets the tool's output, or ``Tool call refused by
user.`` Closing the widget refuses whatever still waits.

A click can only be handled while the notebook is idle, so run the agent loop on a thread
(``threading.Thread(target=agent.run).start()``), not in the cell that shows the widget.

State for code and tests: ``calls`` (dicts: call_id, tool, input, status — running, waiting, done,
error, refused, blocked by a hook — output, is_error, duration_ms: the call's own time, a wait for
approval not counted), ``pending`` (call ids waiting); ``approve(call_id=None)`` / ``deny(call_id=None)``
(None: the oldest waiting call).
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as w
from traitlets import Dict, List, Unicode

from ..views.common import BORDER, CELL, MONO, MUTED, format_duration, one_line, table
from .controls import button, flexible
from .live import Throttle
from .snapshot import Snapshotting

__all__ = ["ToolActivity"]

MAX_ROWS = 200
_STATUS_COLOURS = {
    "running": "#0969da",
    "waiting": "#9a6700",
    "refused": "#cf222e",
    "error": "#cf222e",
    "done": "#1a7f37",
    "blocked": "#9a6700",
}


def _short(value: Any, width: int = 90) -> str:
    if isinstance(value, dict):  # arguments: the defaults the schema filled in (None) are noise
        value = {k: v for k, v in value.items() if v is not None}
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    return one_line(text, width)


class ToolActivity(Snapshotting, w.VBox):
    """Live tool-call log and approval panel for a workspace. See the module docstring."""

    calls = List(Dict())
    pending = List(Unicode())
    snapshot_label = "tool activity log"
    SNAPSHOT_ROWS = 20

    def __init__(self, workspace: Any, *, interval: float = 0.2, approvals: bool = True) -> None:
        from ... import tool_activity

        self.workspace = workspace
        self.feed = tool_activity(workspace)
        self._lock = threading.Lock()
        self._calls: dict[str, dict[str, Any]] = {}
        self._order: list[str] = []
        self._closed = False
        self.header = w.HTML()
        self.pending_box = w.VBox(layout=w.Layout(width="100%"))
        self.log_view = w.HTML(layout=w.Layout(width="100%"))
        self.clear_button = button("Clear", icon="trash", tooltip="Clear the log (waiting calls stay)")
        self._pending_rows: dict[str, w.HBox] = {}
        super().__init__(
            [
                w.HBox(
                    [flexible(self.header), self.clear_button],
                    layout=w.Layout(justify_content="space-between"),
                ),
                self.pending_box,
                self.log_view,
            ],
            layout=w.Layout(width="100%"),
        )
        self.add_class("ws-tool-activity")
        self._throttle = Throttle(self._render, interval)
        self.clear_button.on_click(lambda _: self.clear())
        for event in self.feed.recent(MAX_ROWS):
            self._apply(event)
        self._unsubscribe = self.feed.subscribe(self._on_event)
        self._detach: Callable[[], None] | None = self.feed.attach_approver() if approvals else None
        for pending in self.feed.pending():
            self._apply_pending(pending)
        self._render()

    # --- events (on the tool call's thread) -----------------------------------------------------

    def _on_event(self, event: Any) -> None:
        self._apply(event)
        self._throttle.request()

    def _apply(self, event: Any) -> None:
        with self._lock:
            call = self._calls.get(event.call_id) or self._add(
                event.call_id, event.tool_name, event.input, "running", event.timestamp
            )
            if event.kind == "approval_requested":
                call["status"] = "waiting"
            elif event.kind == "approval_resolved":
                call["status"] = "running" if event.approved else "refused"
            elif event.kind == "finished":
                call["output"] = event.output
                call["is_error"] = bool(event.is_error)
                call["duration_ms"] = event.duration_ms
                if call["status"] != "refused":
                    call["status"] = "blocked" if event.blocked else "error" if event.is_error else "done"

    def _apply_pending(self, pending: Any) -> None:
        with self._lock:
            if pending.call_id not in self._calls:
                self._add(pending.call_id, pending.tool_name, pending.input, "waiting", pending.created_at)

    def _add(self, call_id: str, tool: str, arguments: Any, status: str, when: Any) -> dict[str, Any]:
        """A new row of the log (the oldest row goes beyond ``MAX_ROWS``); call with the lock held."""
        call = {
            "call_id": call_id,
            "tool": tool,
            "input": dict(arguments),
            "status": status,
            "output": None,
            "is_error": False,
            "duration_ms": None,
            "time": when.astimezone().strftime("%H:%M:%S"),
        }
        self._calls[call_id] = call
        self._order.append(call_id)
        if len(self._order) > MAX_ROWS:
            self._calls.pop(self._order.pop(0), None)
        return call

    # --- drawing (scheduler thread, or the caller's for refresh()) --------------------------------

    def _render(self) -> None:
        if self._closed:
            return
        with self._lock:
            calls = [dict(self._calls[c]) for c in self._order if c in self._calls]
        waiting = [c for c in calls if c["status"] == "waiting"]
        self.calls = calls
        self.pending = [c["call_id"] for c in waiting]
        self.header.value = (
            f"<strong>Agent tool activity</strong> <span style='{MUTED}'>{len(calls)} call"
            f"{'' if len(calls) == 1 else 's'}"
            + (f", <span style='color:#9a6700'>{len(waiting)} waiting for approval</span>" if waiting else "")
            + "</span>"
        )
        self._draw_pending(waiting)
        self.snapshot_changed()
        if not calls:
            self.log_view.value = f"<div style='{MUTED}'>No tool calls yet. Calls made through <code>ws.tools()</code> appear here.</div>"
            return
        rows = []
        for c in reversed(calls[-MAX_ROWS:]):
            colour = _STATUS_COLOURS.get(c["status"], "inherit")
            output = c["output"]
            out_cell = ""
            if output is not None:
                out_cell = (
                    f"<details><summary style='cursor: pointer'>{html.escape(_short(output, 70))}</summary>"
                    f"<pre style='{MONO}; white-space: pre-wrap; margin: 2px 0; max-height: 20em; overflow: auto'>"
                    f"{html.escape(output)}</pre></details>"
                )
            duration = format_duration(c["duration_ms"] / 1000) if c["duration_ms"] is not None else ""
            rows.append(
                f"<tr style='background: none'><td style='{MUTED}; padding-right: 8px; {CELL}'>{c['time']}</td>"
                f"<td style='{MONO}; padding-right: 8px; {CELL}'><strong>{html.escape(c['tool'])}</strong></td>"
                f"<td style='{MONO}; padding-right: 8px; {CELL}'>{html.escape(_short(c['input']))}</td>"
                f"<td style='color: {colour}; padding-right: 8px; {CELL}'>{c['status']}</td>"
                f"<td style='padding-right: 8px; {CELL}'>{duration}</td>"
                f"<td style='{CELL}'>{out_cell}</td></tr>"
            )
        head = "".join(
            f"<th style='{CELL}; border-bottom: 1px solid {BORDER}; padding-right: 8px'>{h}</th>"
            for h in ("time", "tool", "input", "status", "duration", "output")
        )
        self.log_view.value = f"<table style='border-collapse: collapse; width: 100%; line-height: 1.4'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"

    def snapshot(self) -> tuple[str, str]:
        """The newest calls, one line each (tool, input, status, duration, output)."""
        calls = list(reversed(self.calls))[: self.SNAPSHOT_ROWS]
        rows = []
        lines = [f"Agent tool activity: {len(self.calls)} calls"]
        for c in calls:
            duration = format_duration(c["duration_ms"] / 1000) if c["duration_ms"] is not None else ""
            output = _short(c["output"], 70) if c["output"] is not None else ""
            cells = [c["time"], c["tool"], _short(c["input"]), c["status"], duration, output]
            rows.append([html.escape(x) for x in cells])
            lines.append("  ".join(x for x in cells if x))
        more = len(self.calls) - len(calls)
        if more:
            lines.append(f"… {more} older calls")
        body = f"<div>{self.header.value}</div>" + (
            table(["time", "tool", "input", "status", "duration", "output"], rows) if rows else ""
        )
        return body, "\n".join(lines)

    def _draw_pending(self, waiting: list[dict[str, Any]]) -> None:
        wanted = [c["call_id"] for c in waiting]
        if wanted == list(self._pending_rows):
            return
        for call_id in [c for c in self._pending_rows if c not in wanted]:
            row = self._pending_rows.pop(call_id)
            for child in row.children:
                child.close()
            row.close()
        for c in waiting:
            if c["call_id"] in self._pending_rows:
                continue
            label = flexible(
                w.HTML(
                    f"<span style='color:#9a6700'>● waiting:</span> <code>{html.escape(c['tool'])}</code> "
                    f"<span style='{MONO}'>{html.escape(_short(c['input'], 120))}</span>"
                )
            )
            approve = button("Approve", icon="check", button_style="success", tooltip="Let this call run")
            deny = button("Deny", icon="times", button_style="danger", tooltip="Refuse this call")
            approve.add_class("ws-approve")
            deny.add_class("ws-deny")
            approve.on_click(lambda _, cid=c["call_id"]: self.approve(cid))
            deny.on_click(lambda _, cid=c["call_id"]: self.deny(cid))
            self._pending_rows[c["call_id"]] = w.HBox(
                [label, approve, deny], layout=w.Layout(align_items="center")
            )
        self.pending_box.children = [self._pending_rows[c] for c in wanted if c in self._pending_rows]

    def refresh(self) -> None:
        """Draws the current state now (normally done by the throttle)."""
        self._throttle.flush()

    # --- actions --------------------------------------------------------------------------------

    def _target(self, call_id: str | None) -> str | None:
        if call_id is not None:
            return call_id
        waiting = self.feed.pending()
        return waiting[0].call_id if waiting else None

    def approve(self, call_id: str | None = None) -> bool:
        """Lets a waiting call run (default: the oldest). False when nothing was waiting."""
        target = self._target(call_id)
        ok = target is not None and self.feed.approve(target)
        self._throttle.request()
        return ok

    def deny(self, call_id: str | None = None) -> bool:
        """Refuses a waiting call (default: the oldest); the agent sees the refusal."""
        target = self._target(call_id)
        ok = target is not None and self.feed.deny(target)
        self._throttle.request()
        return ok

    def clear(self) -> None:
        """Forgets finished calls (waiting and running ones stay)."""
        with self._lock:
            keep = [c for c in self._order if self._calls[c]["status"] in ("waiting", "running")]
            self._calls = {c: self._calls[c] for c in keep}
            self._order = keep
        self.refresh()

    def close(self) -> None:
        """Stops following the feed; calls still waiting for approval are refused."""
        if not getattr(self, "_closed", True):
            self.close_snapshot()
        self._closed = True
        unsubscribe = getattr(self, "_unsubscribe", None)  # absent if __init__ failed half-way
        if unsubscribe is not None:
            unsubscribe()
        detach, self._detach = getattr(self, "_detach", None), None
        if detach is not None:
            detach()
        if hasattr(self, "_throttle"):
            self._throttle.close()
        for row in self._pending_rows.values():
            for child in row.children:
                child.close()
            row.close()
        for widget in (self.header, self.pending_box, self.log_view, self.clear_button):
            widget.close()
        super().close()
