"""``ToolActivity``: a live log of the agent's tool calls, with Approve/Deny for those that wait.

It follows the workspace's activity feed (``ws_jupyter.tools.tool_activity``): every call an agent
makes through ``ws.tools()`` appears with its input, then its output and duration. While the widget
is open it is the workspace's interactive approver: a call that requires approval (by default,
``workspace_execute_command`` on a sandbox without isolation) waits, shown with Approve and Deny
buttons, until one is clicked — the agent then gets the tool's output, or ``Tool call refused by
user.`` Closing the widget refuses whatever still waits.

A click can only be handled while the notebook is idle (ipywidgets#1349), so run the agent loop
on a thread (``threading.Thread(target=agent.run).start()``), not in the cell that shows the
widget: while a cell runs, Approve, Deny and Clear are disabled and say so.

A waiting call shows what it would touch when its tool says (``user_variable_request``: the
variable's type and size, where the copy goes, and the agent's reason).

State for code and tests: ``calls`` (dicts: call_id, tool, input, details, status — running, waiting, done,
error, refused, blocked by a hook, cancelled (stopped while it ran: the notebook's stop button, an
MCP client's cancellation) — output, is_error, duration_ms: the call's own time, a wait for
approval not counted), ``pending`` (call ids waiting), ``notebook_busy``;
``approve(call_id=None)`` / ``deny(call_id=None)`` (None: the oldest waiting call).
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as w
from traitlets import Dict, List, Unicode

from ..notebook_busy import BUSY_HINT, busy_state
from ..views.common import BAD, BORDER, INFO, MONO, MUTED, OK, WARN, format_duration, one_line, table
from .controls import button, flexible
from .live import Throttle
from .snapshot import Snapshotting

__all__ = ["ToolActivity"]

MAX_ROWS = 200
_STATUS_COLOURS = {
    "running": INFO,
    "waiting": WARN,
    "refused": BAD,
    "error": BAD,
    "done": OK,
    "blocked": WARN,
    "cancelled": WARN,
}


_APPROVE_TIP = "Let this call run"
_DENY_TIP = "Refuse this call"
_CLEAR_TIP = "Clear the log (waiting calls stay)"
#: Long words (tool names, paths, JSON without spaces) break anywhere rather than stick out.
_WRAP = "overflow-wrap: anywhere; min-width: 0"


def _call_row(c: dict[str, Any], changed: int = 0) -> str:
    """One call of the log: time, tool, status and duration, its input, then its output below.

    A row of boxes that wrap (not a table), so a narrow notebook — a small window, a zoomed page —
    moves the input and output to the next line instead of clipping columns.
    """
    output = c["output"]
    out = ""
    if output is not None:
        out = (
            f"<details style='flex: 1 1 100%; {_WRAP}'><summary style='cursor: pointer'>"
            f"{html.escape(_short(output, 70))}</summary>"
            f"<pre style='{MONO}; white-space: pre-wrap; {_WRAP}; margin: 2px 0; max-height: 20em; "
            f"overflow: auto'>{html.escape(output)}</pre></details>"
        )
    duration = format_duration(c["duration_ms"] / 1000) if c["duration_ms"] is not None else ""
    colour = _STATUS_COLOURS.get(c["status"], "inherit")
    return (
        "<div class='ws-call-row' style='display: flex; flex-wrap: wrap; align-items: baseline; "
        f"gap: 0 10px; padding: 2px 0; border-bottom: 1px solid {BORDER}; line-height: 1.4'>"
        f"<span style='{MUTED}; flex: 0 0 auto'>{c['time']}</span>"
        f"<strong style='{MONO}; flex: 0 1 16em; {_WRAP}'>{html.escape(c['tool'])}</strong>"
        f"<span style='color: {colour}; flex: 0 0 5.5em'>{c['status']}</span>"
        f"<span style='flex: 0 0 4.5em'>{duration}</span>"
        f"<span style='{MONO}; flex: 1 1 18em; {_WRAP}'>{html.escape(_short(c['input']))}</span>"
        + (
            f"<span class='ws-call-changed' style='color: {WARN}; flex: 0 0 auto'>{changed} "
            f"file{'' if changed == 1 else 's'} changed: Show changes</span>"
            if changed
            else ""
        )
        + f"{out}</div>"
    )


def _short(value: Any, width: int = 90) -> str:
    if isinstance(value, dict):  # arguments: the defaults the schema filled in (None) are noise
        value = {k: v for k, v in value.items() if v is not None}
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    return one_line(text, width)


class ToolActivity(Snapshotting, w.VBox):
    """Live tool-call log and approval panel for a workspace. See the module docstring."""

    calls = List(Dict())
    pending = List(Unicode())
    #: call id -> files it changed since the Changes tab's checkpoint (set by the dashboard)
    changed_calls = Dict()
    snapshot_label = "tool activity log"
    SNAPSHOT_ROWS = 20

    def __init__(
        self,
        workspace: Any,
        *,
        interval: float = 0.2,
        approvals: bool = True,
        on_changes: Callable[[str], Any] | None = None,
    ) -> None:
        from ... import tool_activity

        self.workspace = workspace
        self.feed = tool_activity(workspace)
        self._lock = threading.Lock()
        self._calls: dict[str, dict[str, Any]] = {}
        self._order: list[str] = []
        self._closed = False
        self.header = w.HTML()
        self.pending_box = w.VBox()
        self.log_view = w.HTML()
        self.clear_button = button("Clear", icon="trash", tooltip=_CLEAR_TIP)
        self.busy_note = w.HTML(layout=w.Layout(display="none"))
        self.busy_note.add_class("ws-busy-note")
        self._pending_rows: dict[str, w.HBox] = {}
        # the link from a call to its changes (the dashboard's Changes tab), when there is one
        self._on_changes = on_changes
        self.changes_picker = w.Dropdown(options=[], description="Changes of", layout=w.Layout(width="auto"))
        self.changes_button = button("Show changes", icon="columns", tooltip="Show the files this call changed")
        self.changes_button.on_click(lambda _: self.show_changes(self.changes_picker.value))
        self.changes_row = w.HBox(
            [self.changes_picker, self.changes_button],
            layout=w.Layout(display="none", flex_flow="row wrap", align_items="center"),
        )
        super().__init__(
            [
                w.HBox(
                    [flexible(self.header), self.clear_button],
                    layout=w.Layout(justify_content="space-between", flex_flow="row wrap"),
                ),
                self.busy_note,
                self.pending_box,
                self.changes_row,
                self.log_view,
            ],
            layout=w.Layout(width="100%"),
        )
        self.add_class("ws-tool-activity")
        self._throttle = Throttle(self._render, interval)
        self.clear_button.on_click(lambda _: self.clear())
        self._busy = busy_state()
        self._unsubscribe_busy = self._busy.subscribe(self._throttle.request) if self._busy else None
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
                call["details"] = getattr(event, "details", None)
            elif event.kind == "approval_resolved":
                call["status"] = "running" if event.approved else "refused"
            elif event.kind == "finished":
                call["output"] = event.output
                call["is_error"] = bool(event.is_error)
                call["duration_ms"] = event.duration_ms
                if call["status"] != "refused":
                    call["status"] = (
                        "blocked"
                        if event.blocked
                        else "cancelled"
                        if getattr(event, "cancelled", False)
                        else "error"
                        if event.is_error
                        else "done"
                    )

    def _apply_pending(self, pending: Any) -> None:
        with self._lock:
            if pending.call_id not in self._calls:
                call = self._add(
                    pending.call_id, pending.tool_name, pending.input, "waiting", pending.created_at
                )
                call["details"] = getattr(pending, "details", None)

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
            "details": None,
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
            + (f", <span style='color: {WARN}'>{len(waiting)} waiting for approval</span>" if waiting else "")
            + "</span>"
        )
        self._draw_pending(waiting)
        self._follow_busy()
        self.snapshot_changed()
        if not calls:
            self.log_view.value = f"<div style='{MUTED}'>No tool calls yet. Calls made through <code>ws.tools()</code> appear here.</div>"
            return
        changed = dict(self.changed_calls)
        self.log_view.value = "".join(
            _call_row(c, int(changed.get(c["call_id"], 0))) for c in reversed(calls[-MAX_ROWS:])
        )

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
            details = c.get("details")
            shown = (
                f"<div style='white-space: pre-wrap'>{html.escape(details)}</div>"
                if details
                else f"<span style='{MONO}'>{html.escape(_short(c['input'], 120))}</span>"
            )
            label = flexible(
                w.HTML(
                    f"<div style='{_WRAP}; line-height: 1.4'><span style='color: {WARN}'>● waiting:</span> "
                    f"<code>{html.escape(c['tool'])}</code> {shown}</div>"
                )
            )
            label.layout.flex = "1 1 14em"  # narrower than that, the buttons go to the next line
            approve = button("Approve", icon="check", button_style="success", tooltip=_APPROVE_TIP)
            deny = button("Deny", icon="times", button_style="danger", tooltip=_DENY_TIP)
            approve.add_class("ws-approve")
            deny.add_class("ws-deny")
            approve.on_click(lambda _, cid=c["call_id"]: self.approve(cid))
            deny.on_click(lambda _, cid=c["call_id"]: self.deny(cid))
            self._pending_rows[c["call_id"]] = w.HBox(
                [label, approve, deny], layout=w.Layout(align_items="center", flex_flow="row wrap")
            )
        self.pending_box.children = [self._pending_rows[c] for c in wanted if c in self._pending_rows]

    @property
    def notebook_busy(self) -> bool:
        """True while the notebook runs a cell: the buttons are disabled (see the module doc)."""
        return self._busy is not None and self._busy.busy

    def _follow_busy(self) -> None:
        busy = self.notebook_busy
        for row in self._pending_rows.values():
            for b, tip in zip(row.children[1:], (_APPROVE_TIP, _DENY_TIP)):
                b.disabled = busy
                b.tooltip = BUSY_HINT if busy else tip
        self.clear_button.disabled = busy
        self.clear_button.tooltip = BUSY_HINT if busy else _CLEAR_TIP
        self.busy_note.value = f"<div style='{MUTED}; font-size: 0.92em'>{html.escape(BUSY_HINT)}</div>" if busy else ""
        self.busy_note.layout.display = "" if busy else "none"

    def refresh(self) -> None:
        """Draws the current state now (normally done by the throttle)."""
        self._throttle.flush()

    # --- links to the changes -------------------------------------------------------------------

    def link_changes(self, counts: dict[str, int]) -> None:
        """Which calls changed files (call id -> how many), as the Changes tab found them: their
        rows say so and the "Changes of" list offers them."""
        self.changed_calls = dict(counts)
        with self._lock:
            known = {c: self._calls[c] for c in self._order if c in self._calls}
        options = [
            (f"{cid} {known[cid]['tool'] if cid in known else ''} · {n} file{'' if n == 1 else 's'}".replace("  ", " "), cid)
            for cid, n in counts.items()
        ]
        current = self.changes_picker.value
        self.changes_picker.options = options
        ids = [cid for _, cid in options]
        self.changes_picker.value = current if current in ids else (ids[-1] if ids else None)
        self.changes_row.layout.display = "" if options and self._on_changes is not None else "none"
        self._throttle.request()

    def show_changes(self, call_id: str | None) -> None:
        """Opens the changes one call made (in the Changes tab)."""
        if call_id and self._on_changes is not None:
            self._on_changes(call_id)

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
        for name in ("_unsubscribe", "_unsubscribe_busy"):  # absent if __init__ failed half-way
            unsubscribe = getattr(self, name, None)
            setattr(self, name, None)
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
        for widget in (
            self.header, self.busy_note, self.pending_box, self.log_view, self.clear_button,
            self.changes_picker, self.changes_button, self.changes_row,
        ):  # fmt: skip
            widget.close()
        super().close()
