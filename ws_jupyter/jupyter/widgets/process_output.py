"""``ProcessOutput``: the live view of one background process (what ``%ws bg`` shows).

A status line (PID, state, runtime, command), the newest output (stderr in red, the view kept
scrolled to the end), a stdin box and a Kill button. Output is collected on the sandbox's I/O
thread into a bounded buffer and drawn at most ``interval`` times a second (see ``live.py``);
killing runs on its own thread, so a click never blocks the kernel.

>>> view = ProcessOutput(ws.sandbox.processes.spawn("ping -c 3 127.0.0.1"))  # doctest: +SKIP
>>> view.state, view.output                                                  # doctest: +SKIP
('running', 'PING 127.0.0.1 ...')
"""

from __future__ import annotations

import html
import threading
import time
from typing import Any

import ipywidgets as w
from traitlets import Int, Unicode

from ...text import strip_ansi
from ..views.common import BAD, PRE, format_duration
from ..views.processes import STATE_COLOURS, process_state
from .controls import button, flexible
from .live import TextTail, Throttle, _scheduler, on_enter
from .snapshot import Snapshotting

__all__ = ["ProcessOutput"]


class ProcessOutput(Snapshotting, w.VBox):
    """Live output, stdin and Kill for one ``ProcessHandle``.

    State for code and tests: ``pid``, ``command``, ``state``, ``exit_code`` (-1 while running),
    ``output`` (the newest text shown, stdout and stderr interleaved as they arrived).
    """

    pid = Int(0)
    command = Unicode("")
    state = Unicode("running")
    exit_code = Int(-1)
    output = Unicode("")
    snapshot_label = "process output widget"
    SNAPSHOT_LINES = 40

    def __init__(
        self, handle: Any, *, interval: float = 0.2, max_chars: int = 64_000, height: str = "16em"
    ) -> None:
        self.handle = handle
        self._tail = TextTail(max_chars)
        self._rendered_version = -1
        self._closed = False
        self._tick_pending = False
        self.status = w.HTML()
        self.kill_button = button("Kill", icon="stop", button_style="danger", tooltip="Kill the process tree")
        self.output_area = w.HTML(layout=w.Layout(width="100%"))
        self.stdin_box = w.Text(
            placeholder="stdin: type a line and press Enter", layout=w.Layout(flex="1 1 auto")
        )
        self.send_button = button("Send", icon="paper-plane", tooltip="Send the line to stdin")
        self._height = height
        super().__init__(
            [
                w.HBox(
                    [flexible(self.status), self.kill_button],
                    layout=w.Layout(justify_content="space-between", align_items="center"),
                ),
                self.output_area,
                w.HBox([self.stdin_box, self.send_button]),
            ],
            layout=w.Layout(border="1px solid var(--jp-border-color2, #ddd)", padding="4px", width="100%"),
        )
        self.add_class("ws-process-output")
        self.pid = int(handle.pid)
        self.command = str(handle.command)
        self._throttle = Throttle(self._render, interval)
        self.kill_button.on_click(lambda _: self.kill())
        self.send_button.on_click(lambda _: self._send_from_box())
        on_enter(self.stdin_box, self._send_from_box)
        self._unsubscribe = handle.subscribe(self._on_event, replay=True)
        self._render()

    # --- producer side (I/O thread) -------------------------------------------------------------

    def _on_event(self, kind: str, text: str) -> None:
        if kind in ("stdout", "stderr"):
            self._tail.append(kind, text)
        self._throttle.request()

    # --- rendering (scheduler thread, or the caller's for refresh()) ----------------------------

    def _render(self) -> None:
        if self._closed:
            return
        handle = self.handle
        state = process_state(handle)
        self.status.value = self._status_html()
        self.state = state
        self.exit_code = -1 if handle.exit_code is None else int(handle.exit_code)
        running = handle.exit_code is None
        self.kill_button.disabled = not running
        self.stdin_box.disabled = self.send_button.disabled = not running
        if self._tail.version != self._rendered_version:
            self._rendered_version = self._tail.version
            parts = [(kind, strip_ansi(text)) for kind, text in self._tail.parts()]
            self.output = "".join(text for _, text in parts)
            body = "".join(
                f'<span style="color: {BAD}">{html.escape(t)}</span>'
                if kind == "stderr"
                else html.escape(t)
                for kind, t in parts
            )
            if not body:
                body = '<span style="opacity: 0.6">(no output yet)</span>'
            dropped = (
                f'<div style="opacity: 0.6">… {self._tail.dropped:,} earlier characters not shown</div>'
                if self._tail.dropped
                else ""
            )
            # column-reverse keeps the view scrolled to the newest line without any JavaScript
            self.output_area.value = (
                f'<div style="display: flex; flex-direction: column-reverse; max-height: {self._height}; '
                'overflow: auto"><div>'
                f'{dropped}<pre style="margin: 0; white-space: pre-wrap; word-break: break-all; '
                f'font-family: var(--jp-code-font-family, monospace); font-size: var(--jp-code-font-size, 12.5px)">'
                f"{body}</pre></div></div>"
            )
        self.snapshot_changed()
        if not running:
            self._stop_following()
        elif not self._tick_pending:
            # keep the runtime ticking while the process is silent
            self._tick_pending = True
            _scheduler.call_at(time.monotonic() + 1.0, self._tick)

    def _status_parts(self) -> tuple[str, str, str]:
        handle = self.handle
        state = process_state(handle)
        code = "" if handle.exit_code is None else f" ({handle.exit_code})"
        return state, state + code, format_duration(handle.execution_time_ms / 1000)

    def _status_html(self) -> str:
        state, label, runtime = self._status_parts()
        colour = STATE_COLOURS.get(state, "inherit")
        return (
            f'<span style="font-family: var(--jp-code-font-family, monospace)"><b>PID {self.pid}</b> · '
            f'<span style="color: {colour}">{label}</span> · {runtime} · '
            f"<code>{html.escape(self.command)}</code></span>"
        )

    def snapshot(self) -> tuple[str, str]:
        """The status line and the last lines of output, as HTML and text."""
        _, label, runtime = self._status_parts()
        lines = self.output.splitlines()
        shown = lines[-self.SNAPSHOT_LINES :]
        more = len(lines) - len(shown)
        note = f"… {more:,} earlier lines …\n" if more else ""
        text = f"PID {self.pid} · {label} · {runtime} · {self.command}\n{note}" + "\n".join(shown)
        body = (
            f"<div>{self._status_html()}</div>"
            f'<pre style="{PRE}; max-height: 16em; overflow: auto">{html.escape(note + chr(10).join(shown))}</pre>'
        )
        return body, text

    def _tick(self) -> None:
        self._tick_pending = False
        self._throttle.request()

    def refresh(self) -> None:
        """Draws the current state now (normally done by the throttle)."""
        self._throttle.flush()

    # --- actions --------------------------------------------------------------------------------

    def kill(self, wait: bool = False) -> None:
        """Kills the process tree on a worker thread (``wait=True``: in the caller's)."""
        self.kill_button.disabled = True

        def run() -> None:
            try:
                self.handle.kill()
            finally:
                self._throttle.request()

        if wait:
            run()
            self.refresh()
        else:
            threading.Thread(target=run, name=f"ws-kill-{self.pid}", daemon=True).start()

    def send(self, text: str, newline: bool = True) -> None:
        """Writes ``text`` (plus a newline) to the process's stdin."""
        self.handle.send_stdin(text + ("\n" if newline else ""))

    def _send_from_box(self) -> None:
        text = self.stdin_box.value
        self.stdin_box.value = ""
        try:
            self.send(text)
        except Exception as exc:  # exited meanwhile, or stdin closed
            self._tail.append("stderr", f"[stdin: {exc}]\n")
            self._throttle.request()

    def _stop_following(self) -> None:
        unsubscribe, self._unsubscribe = getattr(self, "_unsubscribe", None), None
        if unsubscribe is not None:
            unsubscribe()

    def close(self) -> None:
        """Stops following the process (the process keeps running) and closes the widget."""
        if not getattr(self, "_closed", True):
            self.close_snapshot()
        self._closed = True
        self._stop_following()
        self._throttle.close()
        for child in (self.status, self.kill_button, self.output_area, self.stdin_box, self.send_button):
            child.close()
        super().close()
