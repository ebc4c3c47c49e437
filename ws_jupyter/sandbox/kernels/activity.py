"""``ExecutionFeed``: every execution of a sandbox's kernels, live, for widgets, logs and tests.

Each execution is published as it happens — ``queued`` (waiting for its turn), ``started``,
one ``output`` per :class:`~ws_jupyter.sandbox.kernels.result.OutputEvent`, then ``finished`` (with the
:class:`~ws_jupyter.sandbox.kernels.result.ExecutionResult`) or ``failed`` (the call raised, e.g. the
kernel could not start). No Jupyter dependency: the notebook's ``KernelActivity`` widget is one
subscriber. Callbacks run on the executing thread; keep them short.

``recent()`` keeps the last executions (with their output, bounded) so a widget opened later
shows what the agent already ran.

The feed lives as long as the notebook and sees everything the kernels print, so what it keeps
and publishes is bounded in bytes, not in events (a thousand one-megabyte prints are a
gigabyte): each event holds at most ``MAX_EVENT_BYTES`` (longer text keeps its head and tail,
a larger rich output its text form, with a note); consecutive stream output of an execution is
kept as one text; an execution keeps ``MAX_RECORD_BYTES`` of output, after which only its
current stream text goes on (head and tail) and further outputs are counted; the whole feed
keeps ``MAX_FEED_BYTES``, the oldest executions giving up their output first. What was not kept
is counted on the record (``outputs_dropped``, ``bytes_dropped``) and said in a note at the end
of its ``outputs``. The ``finished`` event and ``record.result`` carry the result as the feed
keeps it; the caller of ``execute()`` (and its ``on_output``) gets everything.

>>> feed = sandbox.kernels.activity                       # doctest: +SKIP
>>> unsubscribe = feed.subscribe(lambda e: print(e.kind, e.kernel, e.code[:20]))   # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from .result import BoundedText, ExecutionError, ExecutionResult, MimeBundle, OutputEvent, bound_text

__all__ = ["MAX_EVENT_BYTES", "MAX_FEED_BYTES", "MAX_RECORD_BYTES", "ExecutionEvent", "ExecutionFeed", "ExecutionRecord"]

log = logging.getLogger(__name__)

EventKind = Literal["queued", "started", "output", "finished", "failed"]
_HISTORY = 50
#: Bytes one published or kept event holds at most (a stream's kept text, a rich output).
MAX_EVENT_BYTES = 256 * 1024
#: Bytes of output kept per execution.
MAX_RECORD_BYTES = 4 << 20
#: Bytes of output kept by the whole feed (its last ``_HISTORY`` executions).
MAX_FEED_BYTES = 32 << 20
#: What a record keeps of its result once the feed took its outputs back (status, error, ends).
_SHED_BYTES = 4096
#: Characters of an execution's code kept (not counted in the totals: 50 x 64 KiB at most).
_MAX_CODE = 64 * 1024
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


def _slim_error(error: ExecutionError, max_bytes: int = MAX_EVENT_BYTES) -> ExecutionError:
    size = len(error.ename) + len(error.evalue) + sum(map(len, error.traceback))
    if size <= max_bytes:
        return error
    return ExecutionError(
        bound_text(error.ename, 1000),
        bound_text(error.evalue, max_bytes // 4),
        (bound_text("\n".join(error.traceback), max_bytes // 2),),
    )


def _slim_event(event: OutputEvent) -> OutputEvent:
    """``event`` within ``MAX_EVENT_BYTES`` (itself when it fits)."""
    if event.size <= MAX_EVENT_BYTES:
        return event
    return OutputEvent(
        event.kind,
        text=bound_text(event.text, MAX_EVENT_BYTES),
        bundle=event.bundle.slim(MAX_EVENT_BYTES) if event.bundle is not None else None,
        error=_slim_error(event.error) if event.error is not None else None,
        wait=event.wait,
    )


def _slim_result(result: ExecutionResult, each: int = MAX_EVENT_BYTES) -> tuple[ExecutionResult, int]:
    """The result as the feed keeps it (streams, each rich output and the error within ``each``
    bytes, the rich outputs within ``MAX_RECORD_BYTES``, none once shed), and its size."""
    display: list[MimeBundle] = []
    used = 0
    for bundle in result.display if each > _SHED_BYTES else ():
        slim = bundle.slim(each)
        if used + slim.size > MAX_RECORD_BYTES:
            break
        display.append(slim)
        used += slim.size
    kept = dataclasses.replace(
        result,
        code=bound_text(result.code, _MAX_CODE),
        stdout=bound_text(result.stdout, each),
        stderr=bound_text(result.stderr, each),
        display=tuple(display),
        displays_dropped=result.displays_dropped + len(result.display) - len(display),
        result=result.result.slim(each) if result.result is not None else None,
        error=_slim_error(result.error, each) if result.error is not None else None,
    )
    size = used + len(kept.code) + len(kept.stdout) + len(kept.stderr)
    size += kept.result.size if kept.result is not None else 0
    return kept, size


class _Stream:
    """Consecutive stream output of one kind, kept as one bounded text."""

    __slots__ = ("kind", "text")

    def __init__(self, kind: Literal["stdout", "stderr"]) -> None:
        self.kind = kind
        self.text = BoundedText(MAX_EVENT_BYTES)

    @property
    def size(self) -> int:
        return self.text.total - self.text.dropped

    def event(self) -> OutputEvent:
        return OutputEvent(self.kind, text=self.text.text)


@dataclass
class ExecutionRecord:
    """One execution as the feed remembers it (``result`` is None while it runs).

    ``outputs`` are its output events as kept (see the module docstring); ``outputs_dropped`` and
    ``bytes_dropped`` count what was not kept, and ``dropped_note`` says it.
    """

    execution_id: str
    kernel: str
    code: str
    origin: str
    tool_call_id: str | None
    queued_at: datetime
    started_at: datetime | None = None
    ended_at: datetime | None = None
    outputs_dropped: int = 0
    bytes_dropped: int = 0
    result: ExecutionResult | None = None
    error: str | None = None
    _items: list[OutputEvent | _Stream] = field(default_factory=list, repr=False)
    _bytes: int = field(default=0, repr=False)
    _clear_pending: bool = field(default=False, repr=False)
    _lock: Any = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def state(self) -> str:
        """queued | running | ok | error | timeout | failed"""
        if self.error is not None:
            return "failed"
        if self.result is not None:
            return self.result.status
        return "running" if self.started_at is not None else "queued"

    @property
    def outputs(self) -> list[OutputEvent]:
        """The output events kept, in order; the last one says what was not kept, if anything."""
        with self._lock:
            events = [i.event() if isinstance(i, _Stream) else i for i in self._items]
            note = self.dropped_note
        if note:
            events.append(OutputEvent("stderr", text=note + "\n"))
        return events

    @property
    def dropped_note(self) -> str | None:
        if not self.outputs_dropped:
            return None
        return (
            f"[{self.outputs_dropped:,} output(s) of {self.bytes_dropped:,} bytes not kept in the activity "
            "feed; the caller's result has them]"
        )

    def _shed(self) -> int:
        """Gives up every kept output, and its result's (the feed is over its total); returns the
        bytes freed."""
        freed = self._bytes
        if self._items:
            self.outputs_dropped += len(self._items)
            self.bytes_dropped += freed
            self._items = []
        if self.result is not None:
            self.result = _slim_result(self.result, _SHED_BYTES)[0]
        self._bytes = 0
        return freed


class _Recorder:
    """What ``Kernel.execute`` holds for one execution: it feeds the record and the subscribers."""

    def __init__(self, feed: ExecutionFeed, record: ExecutionRecord) -> None:
        self.feed = feed
        self.record = record
        self._noted_full = False

    def _event(self, kind: EventKind, **extra: Any) -> ExecutionEvent:
        r = self.record
        return ExecutionEvent(kind, r.execution_id, r.kernel, r.code, r.origin, r.tool_call_id, **extra)

    def started(self) -> None:
        self.record.started_at = _now()
        self.feed.publish(self._event("started"))

    def output(self, event: OutputEvent) -> None:
        """Keeps ``event`` as bounded (see the module docstring) and publishes what is kept."""
        published = self._keep(event)
        if published is not None:
            self.feed.publish(self._event("output", output=published))

    def _keep(self, event: OutputEvent) -> OutputEvent | None:
        r = self.record
        with r._lock:
            if event.kind == "clear":
                if event.wait:
                    r._clear_pending = True
                else:
                    self.feed._forget(r._bytes)
                    r._items, r._bytes = [], 0
                return event
            if r._clear_pending:
                r._clear_pending = False
                self.feed._forget(r._bytes)
                r._items, r._bytes = [], 0
            if event.kind in ("stdout", "stderr"):
                last = r._items[-1] if r._items else None
                if not isinstance(last, _Stream) or last.kind != event.kind:
                    if r._bytes + min(len(event.text), MAX_EVENT_BYTES) > MAX_RECORD_BYTES:
                        return self._drop(event)
                    last = _Stream(event.kind)
                    r._items.append(last)
                before = last.size
                last.text.append(event.text)
                self._grow(last.size - before)
                return event if len(event.text) <= MAX_EVENT_BYTES else _slim_event(event)
            slim = _slim_event(event)
            if r._bytes + slim.size > MAX_RECORD_BYTES:
                return self._drop(event)
            r._items.append(slim)
            self._grow(slim.size)
            return slim

    def _grow(self, delta: int) -> None:
        self.record._bytes += delta
        self.feed._remember(delta, self.record)

    def _drop(self, event: OutputEvent) -> OutputEvent | None:
        r = self.record
        r.outputs_dropped += 1
        r.bytes_dropped += event.size
        if self._noted_full:
            return None
        self._noted_full = True  # subscribers hear once that the rest is not published
        return OutputEvent(
            "stderr",
            text=f"[the activity feed keeps {MAX_RECORD_BYTES >> 20} MiB of output per execution: "
            "further outputs are counted, not shown]\n",
        )

    def finished(self, result: ExecutionResult) -> None:
        kept, size = _slim_result(result)
        r = self.record
        with r._lock:
            r.result = kept
            r._bytes += size
        self.feed._remember(size, r)
        r.ended_at = _now()
        self.feed.publish(self._event("finished", result=kept))

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
        self._records: deque[ExecutionRecord] = deque()
        self._bytes = 0  # output bytes kept by all records

    @property
    def kept_bytes(self) -> int:
        """Bytes of output the feed holds now (at most about ``MAX_FEED_BYTES``)."""
        return self._bytes

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
            code=bound_text(code, _MAX_CODE),
            origin=origin,
            tool_call_id=tool_call_id,
            queued_at=_now(),
        )
        with self._lock:
            self._records.append(record)
            while len(self._records) > _HISTORY:
                self._bytes -= self._records.popleft()._bytes
        recorder = _Recorder(self, record)
        self.publish(recorder._event("queued"))
        return recorder

    def _remember(self, delta: int, current: ExecutionRecord) -> None:
        """``delta`` more bytes kept; past ``MAX_FEED_BYTES`` the oldest records give theirs up."""
        with self._lock:
            self._bytes += delta
            if self._bytes <= MAX_FEED_BYTES:
                return
            for record in self._records:
                if record is current:
                    continue
                if record._lock.acquire(blocking=False):  # another execution may be writing it
                    try:
                        self._bytes -= record._shed()
                    finally:
                        record._lock.release()
                if self._bytes <= MAX_FEED_BYTES:
                    return

    def _forget(self, freed: int) -> None:
        with self._lock:
            self._bytes -= freed

    def publish(self, event: ExecutionEvent) -> None:
        for callback in self._subscribers:
            try:
                callback(event)
            except Exception:
                log.exception("execution feed subscriber raised; ignored")
