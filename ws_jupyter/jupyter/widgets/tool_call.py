"""``ToolCallPanel``: one tool call that waits for approval, with Approve / Deny and its output.

``%ws call`` shows it when the tool requires approval: the call runs on a worker thread (so the
notebook stays free to handle the click), waits in the workspace's approval broker, and the panel
shows the output the agent would get once it ran — or the refusal. The duration shown is the
call's own (the wait for the click is not counted). While it runs, **Stop** cancels it as an
agent's client would (the command is killed, the kernel code interrupted). A click is handled only
while the notebook is idle (ipywidgets#1349): while a cell runs, the buttons are disabled and say so.

State for code and tests: ``status`` (waiting, running, done, error, refused, blocked, cancelled),
``output``, ``duration``, ``call_id``; ``approve()``, ``deny()``, ``stop()``, ``wait(timeout)``.
"""

from __future__ import annotations

import html
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as w
from traitlets import Float, Unicode

from ..calls import CallOutcome, new_call_tag, run_observed
from ..notebook_busy import BUSY_HINT, busy_state
from ..views.common import BAD, INFO, MONO, OK, WARN
from ..views.tools import ToolCallView
from .controls import button, flexible
from .live import Throttle
from .snapshot import Snapshotting

__all__ = ["ToolCallPanel"]


class ToolCallPanel(Snapshotting, w.VBox):
    """A tool call waiting for approval, run on a worker thread. See the module docstring."""

    status = Unicode("waiting")
    output = Unicode("")
    call_id = Unicode("")
    duration = Float(0.0)  # seconds the call itself took (the wait for approval not counted)
    snapshot_label = "tool call panel"

    def __init__(
        self, workspace: Any, tool: Any, arguments: dict[str, Any], *, interval: float = 0.2
    ) -> None:
        from ... import tool_activity

        self.workspace = workspace
        self.tool = tool
        self.arguments = arguments
        self.feed = tool_activity(workspace)
        self._tag = new_call_tag()
        self._done = threading.Event()
        self._abort = threading.Event()
        self._result: Any = None
        self._outcome: CallOutcome | None = None
        self.summary = w.HTML(
            f"<div style='overflow-wrap: anywhere'><code>{html.escape(tool.name)}</code> <span style='{MONO}'>"
            f"{html.escape(json.dumps(arguments, ensure_ascii=False))}</span></div>"
        )
        self.state_line = w.HTML()
        self.approve_button = button(
            "Approve", icon="check", button_style="success", tooltip="Let this call run"
        )
        self.deny_button = button("Deny", icon="times", button_style="danger", tooltip="Refuse this call")
        self.stop_button = button("Stop", icon="stop", button_style="warning", tooltip="Cancel this call")
        self.stop_button.layout.display = "none"
        self.approve_button.add_class("ws-approve")
        self.deny_button.add_class("ws-deny")
        self.stop_button.add_class("ws-stop")
        self.result_view = w.HTML()
        super().__init__(
            [
                self.summary,
                w.HBox(
                    [flexible(self.state_line), self.approve_button, self.deny_button, self.stop_button],
                    layout=w.Layout(align_items="center", flex_flow="row wrap"),
                ),
                self.result_view,
            ],
            layout=w.Layout(width="100%", border="1px solid var(--jp-border-color2, #ddd)", padding="4px"),
        )
        self.add_class("ws-tool-call")
        self.approve_button.on_click(lambda _: self.approve())
        self.deny_button.on_click(lambda _: self.deny())
        self.stop_button.on_click(lambda _: self.stop())
        self._throttle = Throttle(self._render, interval)
        self._busy = busy_state()
        self._unsubscribe_busy = self._busy.subscribe(self._throttle.request) if self._busy else None
        self._unsubscribe: Callable[[], None] | None = self.feed.subscribe(self._on_event)
        self._detach: Callable[[], None] | None = (
            self.feed.attach_approver()
        )  # before the call starts, so it waits for us
        self._thread = threading.Thread(target=self._run, name=f"ws-{self._tag}", daemon=True)
        self._thread.start()
        self._render()

    def _run(self) -> None:
        try:
            self._outcome = run_observed(
                self.workspace, self.tool, self.arguments, tag=self._tag, abort=self._abort
            )
            self._result = self._outcome.output
        finally:
            self._cleanup()
            self._done.set()
            self._throttle.request()

    def _on_event(self, event: Any) -> None:
        if event.tool_call_id != self._tag:
            return
        self.call_id = event.call_id
        if event.kind == "approval_resolved":
            self.status = "running" if event.approved else "refused"
        elif event.kind == "approval_requested":
            self.status = "waiting"
        self._throttle.request()

    def _render(self) -> None:
        if self._done.is_set() and self._outcome is not None:
            outcome = self._outcome
            view = ToolCallView.of(
                self.tool.name, self.arguments, outcome.output, outcome.seconds, outcome.blocked, outcome.cancelled
            )
            self.status = view.status
            self.output = view.output
            self.duration = outcome.seconds
            self.result_view.value = view.html()
        colours = {"waiting": WARN, "running": INFO, "done": OK, "blocked": WARN, "cancelled": WARN}
        label = {
            "waiting": "● waiting for approval",
            "running": "running…",
            "done": "✓ done",
            "refused": "✗ refused",
            "error": "✗ error",
            "blocked": "⊘ blocked by a hook",
            "cancelled": "■ stopped",
        }
        self.state_line.value = f"<span style='color: {colours.get(self.status, BAD)}'>{label.get(self.status, self.status)}</span>"
        waiting = self.status == "waiting" and not self._done.is_set()
        running = self.status == "running" and not self._done.is_set()
        busy = self._busy is not None and self._busy.busy
        for b, shown, tip in (
            (self.approve_button, waiting, "Let this call run"),
            (self.deny_button, waiting, "Refuse this call"),
            (self.stop_button, running and not self._abort.is_set(), "Cancel this call"),
        ):
            b.disabled = busy or not shown
            b.tooltip = BUSY_HINT if busy and shown else tip
            b.layout.display = "" if shown else "none"
        self.snapshot_changed()

    def snapshot(self) -> tuple[str, str]:
        """The call, its state and (once it ran) its output."""
        args = json.dumps(self.arguments, ensure_ascii=False)
        body = f"<div>{self.summary.value}</div><div>{self.state_line.value}</div>{self.result_view.value}"
        text = f"{self.tool.name} {args}\n{self.status}" + (f"\n{self.output}" if self.output else "")
        return body, text

    def approve(self) -> bool:
        ok = bool(self.call_id) and self.feed.approve(self.call_id)
        self._throttle.request()
        return ok

    def deny(self) -> bool:
        ok = bool(self.call_id) and self.feed.deny(self.call_id)
        self._throttle.request()
        return ok

    def stop(self) -> bool:
        """Cancels the running call (its command is killed, its kernel code interrupted); False
        when it is not running."""
        if self._done.is_set() or self.status != "running":
            return False
        self._abort.set()
        self._throttle.request()
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Waits for the call to end (approved and run, or refused) and redraws."""
        done = self._done.wait(timeout)
        if done:
            self._throttle.flush()
        return done

    def wait_until_waiting(self, timeout: float = 10.0) -> bool:
        """Waits until the call sits in the approval queue (tests and scripted notebooks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.call_id and any(p.call_id == self.call_id for p in self.feed.pending()):
                return True
            if self._done.is_set():
                return False
            time.sleep(0.01)
        return False

    def _cleanup(self) -> None:
        detach, self._detach = self._detach, None
        if detach is not None:
            detach()
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()
        unsubscribe_busy, self._unsubscribe_busy = self._unsubscribe_busy, None
        if unsubscribe_busy is not None:
            unsubscribe_busy()

    def close(self) -> None:
        """Refuses the call if it still waits, and closes the panel."""
        if not self._done.is_set() and self.call_id:
            self.feed.deny(self.call_id)
        self.close_snapshot()
        self._cleanup()
        self._throttle.close()
        for widget in (
            self.summary,
            self.state_line,
            self.approve_button,
            self.deny_button,
            self.stop_button,
            self.result_view,
        ):
            widget.close()
        super().close()
