"""What every kernel execution shares, local or on a gateway: the time limit and ``abort``
(``Stopper``), output collection within the limits (``OutputCollector``), the end of the wait
when the kernel is restarted or shut down meanwhile, and the ``ExecutionResult`` built at the
end (``Execution``).

A kind of kernel adds only how it talks: a local kernel reads jupyter_client's ZeroMQ channels
and watches its process (``kernel.py``), a gateway kernel reads a websocket and asks the
gateway whether the kernel still exists (``gateway.py``). A fix to timeouts, interrupts or
output limits is made here, once — ``run_notebook`` uses the same ``Stopper`` for notebook runs.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, Protocol

from .messages import MAX_DEPTH, too_deep
from .result import (
    BoundedText,
    ExecutionError,
    ExecutionResult,
    ExecutionStatus,
    MimeBundle,
    OutputEvent,
    OutputLimits,
)

__all__ = [
    "Execution",
    "ExecutionTarget",
    "OutputCallback",
    "OutputCollector",
    "Stopper",
    "collector_for",
    "utc_now",
]

log = logging.getLogger(__name__)

#: ``execute(on_output=...)``: called with each :class:`OutputEvent` on the executing thread.
OutputCallback = Callable[[OutputEvent], None]


def utc_now() -> datetime:
    """The time kernels record (started, last activity): aware, in UTC."""
    return datetime.now(timezone.utc)


class OutputCollector:
    """Turns one execution's IOPub messages into the pieces of its result, within ``limits``;
    ``emit`` receives each :class:`OutputEvent` as it is applied."""

    def __init__(self, limits: OutputLimits, emit: Callable[[OutputEvent], None]) -> None:
        self.limits = limits
        self.emit = emit
        self.stdout = BoundedText(limits.max_stream_chars)
        self.stderr = BoundedText(limits.max_stream_chars)
        self.display: list[MimeBundle] = []
        self.display_bytes = 0
        self.displays_dropped = 0
        self.result: MimeBundle | None = None
        self.error: ExecutionError | None = None
        self.execution_count: int | None = None
        self.too_deep = 0  # messages dropped: nested too deeply to decode
        self._clear_pending = False

    def handle(self, msg: dict[str, Any]) -> bool:
        """Applies one message; True when the kernel went idle (the execution's output is complete)."""
        kind = msg.get("msg_type") or msg.get("header", {}).get("msg_type")
        content = msg.get("content")
        if not isinstance(content, dict):
            return False
        if too_deep(content):
            self.too_deep += 1
            return False
        if kind == "status":
            return content.get("execution_state") == "idle"
        if kind == "execute_input":
            count = content.get("execution_count")
            self.execution_count = count if isinstance(count, int) else self.execution_count
        elif kind == "stream":
            self._clear_if_pending()
            text = content.get("text")
            text = text if isinstance(text, str) else str(text)
            if content.get("name") == "stderr":
                self.stderr.append(text)
                self.emit(OutputEvent("stderr", text=text))
            else:
                self.stdout.append(text)
                self.emit(OutputEvent("stdout", text=text))
        elif kind in ("display_data", "execute_result"):
            self._clear_if_pending()
            is_result = kind == "execute_result"
            bundle = MimeBundle.from_message(content, "result" if is_result else "display")
            if is_result:
                bundle = bundle.slim(self.limits.max_display_bytes)
                self.result = bundle
                count = content.get("execution_count")
                self.execution_count = count if isinstance(count, int) else self.execution_count
            elif not self._keep(bundle):
                return False
            self.emit(OutputEvent("result" if is_result else "display", bundle=bundle))
        elif kind == "update_display_data":
            bundle = MimeBundle.from_message(content)
            if bundle.display_id is not None:
                for i, old in enumerate(self.display):
                    if old.display_id == bundle.display_id:
                        self.display_bytes += bundle.size - old.size
                        self.display[i] = bundle
                self.emit(OutputEvent("update", bundle=bundle))
        elif kind == "error":
            self.error = ExecutionError.from_message(content)
            self.emit(OutputEvent("error", error=self.error))
        elif kind == "clear_output":
            wait = bool(content.get("wait"))
            if wait:
                self._clear_pending = True
            else:
                self._clear()
            self.emit(OutputEvent("clear", wait=wait))
        return False

    def notes(self) -> list[str]:
        """What the result must say about output that was not kept."""
        if not self.too_deep:
            return []
        return [f"{self.too_deep} output message(s) nested deeper than {MAX_DEPTH} levels were dropped"]

    def _keep(self, bundle: MimeBundle) -> bool:
        size = bundle.size
        if len(self.display) >= self.limits.max_displays or (
            self.display_bytes + size > self.limits.max_display_bytes
        ):
            self.displays_dropped += 1
            return False
        self.display.append(bundle)
        self.display_bytes += size
        return True

    def _clear_if_pending(self) -> None:
        if self._clear_pending:
            self._clear_pending = False
            self._clear()

    def _clear(self) -> None:
        self.stdout.clear()
        self.stderr.clear()
        self.display.clear()
        self.display_bytes = 0


def collector_for(
    limits: OutputLimits, record: OutputCallback, on_output: OutputCallback | None
) -> OutputCollector:
    """What gathers one execution's output: ``record`` (the activity feed's) first, then the
    caller's callback (a callback that raises is logged, the execution goes on)."""

    def emit(event: OutputEvent) -> None:
        record(event)
        if on_output is not None:
            try:
                on_output(event)
            except Exception:
                log.exception("on_output callback raised; the execution goes on")

    return OutputCollector(limits, emit)


class Stopper:
    """When running code must stop, and how — one rule for executions, on local kernels and on
    a gateway's, and for notebook runs.

    The time ``limit`` (seconds from ``started``) or ``abort`` (an Event: the caller was
    cancelled, e.g. an MCP cancel) interrupts the kernel once (``interrupt()``; its state
    survives). ``check()`` turns True when the code has not stopped ``interrupt_timeout``
    seconds later: the caller then restarts or kills the kernel (its state is lost).
    """

    def __init__(
        self,
        limit: float | None,
        abort: threading.Event | None,
        interrupt_timeout: float,
        interrupt: Callable[[], Any],
        started: float | None = None,
    ) -> None:
        self.limit = limit
        self.abort = abort
        self.interrupt_timeout = interrupt_timeout
        self._interrupt = interrupt
        self.started = time.monotonic() if started is None else started
        self.reason: str | None = None  # "timeout" | "cancelled"
        self.interrupted_at: float | None = None

    def check(self, now: float) -> bool:
        """Interrupts when the limit passed or ``abort`` is set; True once the interrupt has had
        ``interrupt_timeout`` seconds (the caller must restart or kill the kernel)."""
        if self.interrupted_at is None:
            if self.limit is not None and now - self.started >= self.limit:
                self.reason = "timeout"
            elif self.abort is not None and self.abort.is_set():
                self.reason = "cancelled"
            else:
                return False
            self.interrupted_at = now
            with contextlib.suppress(Exception):
                self._interrupt()
            return False
        return now - self.interrupted_at >= self.interrupt_timeout

    def wait(self, now: float) -> float:
        """Seconds until ``check()`` may change its answer (how long a wait may block)."""
        if self.interrupted_at is not None:
            return max(0.0, self.interrupted_at + self.interrupt_timeout - now)
        waits = [3600.0]
        if self.limit is not None:
            waits.append(max(0.0, self.started + self.limit - now))
        if self.abort is not None:
            waits.append(0.05)
        return min(waits)

    def note(self, restarted: bool = False) -> str:
        """What happened, for the result: ``timed out after 3 s: the kernel was interrupted ...``."""
        why = f"timed out after {self.limit:g} s" if self.reason == "timeout" else "cancelled"
        if restarted:
            return (
                f"{why}: the kernel did not stop within {self.interrupt_timeout:g} s of an interrupt and "
                "was restarted (its state is lost)"
            )
        return f"{why}: the kernel was interrupted (its state is kept)"


class ExecutionTarget(Protocol):
    """What an execution needs of its kernel: its name, a way to interrupt it, and why a running
    execution must stop now (``"restarted"``, ``"shut down"``; None while it may go on)."""

    name: str

    @property
    def cancelled_by(self) -> str | None: ...

    def interrupt(self) -> bool: ...


class Execution:
    """The wait for one execution's reply and output, and what ends it early (the part every
    kernel shares; a subclass sends the request and reads its channels in ``wait()``).

    On each pass without the reply, ``wait()`` calls ``check(now)``, which ends the wait when:
    the kernel was restarted or shut down meanwhile; the time limit or ``abort`` interrupted the
    code and it did not stop within ``interrupt_timeout`` (``restart_kernel()``, see
    ``Stopper``); or the subclass's ``watch(now)`` found the kernel dead or gone. ``result()``
    turns the reply, the collected output and the notes into the :class:`ExecutionResult`.
    """

    def __init__(
        self,
        kernel: ExecutionTarget,
        code: str,
        limit: float | None,
        abort: threading.Event | None,
        notes: list[str],
        collector: OutputCollector,
        interrupt_timeout: float,
    ) -> None:
        self.kernel_name = kernel.name
        self.code = code
        self.limit = limit
        self.abort = abort
        self.notes = notes
        self.collector = collector
        self.interrupt_timeout = interrupt_timeout
        self.started = time.monotonic()
        self.idle = False
        self.reply: dict[str, Any] | None = None
        self.reply_at: float | None = None
        self.status: ExecutionStatus | None = None
        self.error: ExecutionError | None = None
        self.stop = Stopper(limit, abort, interrupt_timeout, kernel.interrupt, self.started)
        self.restarted = False
        self._target = kernel

    # --- what a kind of kernel supplies --------------------------------------------------------

    def wait(self) -> ExecutionResult:
        """Reads the kernel's messages until the reply and "idle" are in, or ``check()`` ends it."""
        raise NotImplementedError

    def restart_kernel(self) -> None:
        """Restarts the kernel in place (the code ignored the interrupt); the turn is held."""
        raise NotImplementedError

    def watch(self, now: float) -> bool:
        """The kernel's own health (process alive, still known to the gateway); True ends the wait."""
        return False

    # --- shared ----------------------------------------------------------------------------------

    def check(self, now: float) -> bool:
        """Everything besides messages; True when the wait must end now."""
        cancel = self._target.cancelled_by
        if cancel is not None:
            self.status = "error"
            self.error = ExecutionError(
                "KernelRestarted" if cancel == "restarted" else "KernelShutdown",
                f"the kernel was {cancel} while this code ran; its state is lost",
            )
            self.notes.append(f"the kernel was {cancel} while this code ran")
            self.restarted = True
            return True
        if self.stopping(now):
            return True
        return self.watch(now)

    def stopping(self, now: float) -> bool:
        """The time limit and ``abort`` (see ``Stopper``); True once the kernel was restarted
        because it did not stop: the wait must end."""
        was = self.stop.reason
        restart = self.stop.check(now)
        if self.stop.reason is not None and was is None:
            if self.stop.reason == "timeout":
                self.status = "timeout"
            self.notes.append(self.stop.note())
        if not restart:
            return False
        self.notes[self.notes.index(self.stop.note())] = self.stop.note(restarted=True)
        self.restart_kernel()
        self.restarted = True
        return True

    def result(self) -> ExecutionResult:
        """The outcome: the reply's status (unless the wait decided it), output, error and notes."""
        collector, status, error = self.collector, self.status, self.error
        if self.reply is not None and status is None:
            content = self.reply.get("content", {})
            status = "ok" if content.get("status") == "ok" else "error"
            if status == "error" and collector.error is None and content.get("ename"):
                collector.error = ExecutionError.from_message(content)
            count = content.get("execution_count")
            if isinstance(count, int):
                collector.execution_count = count
        if error is None:
            error = collector.error
        if status == "error" and error is None:
            error = ExecutionError("Error", "the execution failed without an error message")
        return ExecutionResult(
            status=status or "error",
            code=self.code,
            kernel=self.kernel_name,
            stdout=collector.stdout.text,
            stderr=collector.stderr.text,
            display=tuple(collector.display),
            result=collector.result,
            error=error,
            execution_count=collector.execution_count,
            duration=time.monotonic() - self.started,
            timeout=self.limit,
            restarted=self.restarted,
            notes=(*self.notes, *collector.notes()),
            stdout_dropped=collector.stdout.dropped,
            stderr_dropped=collector.stderr.dropped,
            displays_dropped=collector.displays_dropped,
            stdout_dropped_lines=collector.stdout.dropped_lines,
            stderr_dropped_lines=collector.stderr.dropped_lines,
        )
