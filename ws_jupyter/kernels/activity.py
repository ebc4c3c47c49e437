"""``ExecutionFeed``: every execution of a sandbox's kernels, live, for widgets, logs and tests.

Each execution is published as it happens — ``queued`` (waiting for its turn), ``started``,
one ``output`` per :class:`~ws_jupyter.kernels.result.OutputEvent`, then ``finished`` (with the
:class:`~ws_jupyter.kernels.result.ExecutionResult`) or ``failed`` (the call raised, e.g. the
kernel could not start). No Jupyter dependency: the notebook's ``KernelActivity`` widget is one
subscriber. Callbacks run on the executing thread; keep them short.

``recent()`` keeps the last executions (with their output events, bounded) so a widget opened
later shows what the agent already ran.

>>> feed = sandbox.kernels.activity                       # doctest: +SKIP
>>> unsubscribe = feed.subscribe(lambda e: print(e.kind, e.kernel, e.code[:20]))   # doctest: +SKIP
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from .result import ExecutionResult, OutputEvent

__all__ = ["ExecutionEvent", "ExecutionFeed", "ExecutionRecord"]

log = logging.getLogger(__name__)

EventKind = Literal["queued", "started", "output", "finished", "failed"]
_HISTORY = 50
_MAX_EVENTS_PER_RECORD = 2000
_ids = itertools.count(1)


def _now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class ExecutionEvent:
    kind: EventKind
    execution_id: str
    kernel: str
    code: str
    origin: str
    tool_call_id: str | None = None
    timestamp: datetime = field(default_factory=_now)
    output: OutputEvent | None = None
    result: ExecutionResult | None = None
    error: str | None = None


@dataclass
class ExecutionRecord:
    """One execution as the feed remembers it (``result`` is None while it runs)."""

    execution_id: str
    kernel: str
    code: str
    origin: str
    tool_call_id: str | None
    queued_at: datetime
    started_at: datetime | None = None
    ended_at: datetime | None = None
    outputs: list[OutputEvent] = field(default_factory=list)
    outputs_dropped: int = 0
    result: ExecutionResult | None = None
    error: str | None = None

    @property
    def state(self) -> str:
        """queued | running | ok | error | timeout | failed"""
        if self.error is not None:
            return "failed"
        if self.result is not None:
            return self.result.status
        return "running" if self.started_at is not None else "queued"


class _Recorder:
    """What ``Kernel.execute`` holds for one execution: it feeds the record and the subscribers."""

    def __init__(self, feed: ExecutionFeed, record: ExecutionRecord) -> None:
        self.feed = feed
        self.record = record

    def _event(self, kind: EventKind, **extra: Any) -> ExecutionEvent:
        r = self.record
        return ExecutionEvent(kind, r.execution_id, r.kernel, r.code, r.origin, r.tool_call_id, **extra)

    def started(self) -> None:
        self.record.started_at = _now()
        self.feed.publish(self._event("started"))

    def output(self, event: OutputEvent) -> None:
        with self.feed._lock:
            if len(self.record.outputs) < _MAX_EVENTS_PER_RECORD:
                self.record.outputs.append(event)
            else:
                self.record.outputs_dropped += 1
        self.feed.publish(self._event("output", output=event))

    def finished(self, result: ExecutionResult) -> None:
        self.record.result = result
        self.record.ended_at = _now()
        self.feed.publish(self._event("finished", result=result))

    def failed(self, exc: BaseException) -> None:
        self.record.error = (
            f"{type(exc).__name__}: {exc}" if not isinstance(exc, KeyboardInterrupt) else ("interrupted")
        )
        self.record.ended_at = _now()
        self.feed.publish(self._event("failed", error=self.record.error))


class ExecutionFeed:
    """The executions of one sandbox's kernels (``sandbox.kernels.activity``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: tuple[Callable[[ExecutionEvent], None], ...] = ()
        self._records: deque[ExecutionRecord] = deque(maxlen=_HISTORY)

    def subscribe(self, callback: Callable[[ExecutionEvent], None]) -> Callable[[], None]:
        """``callback(event)`` for every event from now on; returns the unsubscribe function."""
        with self._lock:
            self._subscribers = (*self._subscribers, callback)

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers = tuple(s for s in self._subscribers if s is not callback)

        return unsubscribe

    def recent(self, n: int = _HISTORY) -> list[ExecutionRecord]:
        """The last ``n`` executions, oldest first (running ones included)."""
        with self._lock:
            return list(self._records)[-n:]

    def begin(self, kernel: Any, code: str, origin: str, tool_call_id: str | None) -> _Recorder:
        record = ExecutionRecord(
            execution_id=f"exec-{next(_ids)}",
            kernel=kernel.name,
            code=code,
            origin=origin,
            tool_call_id=tool_call_id,
            queued_at=_now(),
        )
        with self._lock:
            self._records.append(record)
        recorder = _Recorder(self, record)
        self.publish(recorder._event("queued"))
        return recorder

    def publish(self, event: ExecutionEvent) -> None:
        for callback in self._subscribers:
            try:
                callback(event)
            except Exception:
                log.exception("execution feed subscriber raised; ignored")
