"""Background processes: ``ProcessManager`` (spawn/list/get/kill) and ``ProcessHandle``.

Design points, each answering a way the naive approach fails in a notebook:

* Output is read continuously by the manager's I/O thread, so a chatty process never blocks on a
  full pipe; each stream keeps its newest ``max_retained_bytes`` (memory stays bounded for
  servers that run for hours) while callbacks and ``subscribe()`` see every byte, as text that is
  never split inside a UTF-8 character.
* A process is killed as a tree (its process group plus every descendant, snapshotted before
  the first signal): SIGTERM, then SIGKILL after a grace period.
* When a process exits, what is left of its process group is killed before the exit is
  reported, so a command never leaves stray children behind (``spawn`` is the way to keep
  something running).
* Exited processes stay listed, with their output, until ``release(pid)`` or until more than
  ``max_exited`` have accumulated, so an agent can read the output of a process that ended while
  it was busy.
* ``stop()``/``destroy()`` of the sandbox, interpreter exit (``atexit``) and even a kernel crash
  (the orphan guard) kill everything that was started.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import logging
import math
import os
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any, Literal

from ..errors import (
    InvalidArgumentError,
    ProcessNotFoundError,
    ProcessWaitTimeoutError,
    SandboxError,
    SandboxStateError,
    StdinClosedError,
)
from . import tree
from .guard import orphan_guard
from .launch import CommandLauncher, LaunchSpec
from .output import RetainedOutput, Utf8Splitter
from .reactor import Reactor, TimerHandle
from .types import CommandResult, OutputCallback, ProcessEventCallback, ProcessInfo

__all__ = ["DEFAULT_MAX_RETAINED_BYTES", "ProcessHandle", "ProcessManager"]

log = logging.getLogger(__name__)

DEFAULT_MAX_RETAINED_BYTES = 1 << 20
_READ_SIZE = 1 << 16
_FAST_READS = 16  # consecutive full reads before a stream counts as a fast producer
_FAST_READ_SIZE = 1 << 20
_MAX_ENLARGED_PIPES = 8
_enlarged = [0]
_enlarged_lock = threading.Lock()


def _enlarge_pipe(fd: int) -> bool:
    """Gives a fast producer's pipe 1 MiB (Linux), for a few pipes at a time only.

    Fewer, larger reads roughly halve the context switches of a process that writes flat out.
    Pipe buffers count against a per-user limit (``fs.pipe-user-pages-soft``), past which every
    new pipe of the user gets a single page: hence the cap, and the release on end of file.
    """
    with _enlarged_lock:
        if _enlarged[0] >= _MAX_ENLARGED_PIPES:
            return False
        try:
            import fcntl

            fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _FAST_READ_SIZE)
        except (OSError, ImportError):
            return False
        _enlarged[0] += 1
        return True


def _release_pipe() -> None:
    with _enlarged_lock:
        _enlarged[0] = max(0, _enlarged[0] - 1)


_DRAIN_AFTER_EXIT = 0.25  # seconds to wait for the pipes to close once the process exited
_ABORT_POLL = 0.05
_GUARD_DELAY = 0.05  # seconds before a foreground command is registered with the orphan guard
_TIMEOUT_EXIT_CODE = 124

StdinMode = Literal["pipe", "ignore"]


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _exit_code(returncode: int) -> int:
    """Shell convention: death by signal n is 128+n."""
    return 128 - returncode if returncode < 0 else returncode


def validate_timeout(value: object, what: str = "timeout") -> float | None:
    """Seconds as a positive number, or None for no limit (``math.inf`` also means none)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgumentError(f"{what} must be a number of seconds, got {value!r}")
    if math.isnan(value) or value <= 0:
        raise InvalidArgumentError(f"{what} must be a positive number of seconds, got {value!r}")
    return None if math.isinf(value) else float(value)


def validate_retained(value: object) -> int | None:
    """Bytes of output kept per stream: a non-negative integer, or None (or ``math.inf``) for all."""
    if value is None or (isinstance(value, float) and math.isinf(value) and value > 0):
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgumentError(
            f"max_retained_bytes must be a non-negative integer (or None for unlimited), got {value!r}"
        )
    return value


def _validate_callback(value: object, what: str) -> None:
    if value is not None and not callable(value):
        raise InvalidArgumentError(f"{what} must be callable, got {type(value).__name__}")


def parse_pid(pid: object) -> int:
    """Accepts ``1234`` or ``"1234"`` (agents pass strings); anything else is a clear error."""
    if isinstance(pid, bool):
        raise InvalidArgumentError(f"invalid PID {pid!r}")
    if isinstance(pid, int):
        return pid
    if isinstance(pid, str) and pid.strip().isdigit():
        return int(pid.strip())
    raise InvalidArgumentError(f"invalid PID {pid!r}: expected a process number")


class _PipeReader(io.RawIOBase):
    """Binary stream of a process's stdout for stdio protocols (LSP, JSON-RPC).

    It starts with the stdout retained so far and then gets every new byte (unbounded: read it).
    """

    def __init__(self, initial: bytes) -> None:
        super().__init__()
        self._cond = threading.Condition()
        self._chunks: list[bytes] = [initial] if initial else []
        self._eof = False

    def feed(self, data: bytes) -> None:
        with self._cond:
            if self.closed:  # nobody will read it: keeping it would grow without bound
                return
            self._chunks.append(data)
            self._cond.notify_all()

    def feed_eof(self) -> None:
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        with self._cond:
            while not self._chunks and not self._eof and not self.closed:
                self._cond.wait()
            if not self._chunks:
                return 0
            chunk = self._chunks[0]
            n = min(len(view), len(chunk))
            view[:n] = chunk[:n]
            if n == len(chunk):
                self._chunks.pop(0)
            else:
                self._chunks[0] = chunk[n:]
            return n

    def close(self) -> None:
        with self._cond:
            self._chunks.clear()
            self._cond.notify_all()
        super().close()


class _StdinWriter(io.RawIOBase):
    """Binary stream to a process's stdin; errors become ``StdinClosedError``."""

    def __init__(self, handle: ProcessHandle) -> None:
        super().__init__()
        self._handle = handle

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return self._handle._write_stdin(bytes(data))

    def close(self) -> None:
        with contextlib.suppress(StdinClosedError):
            self._handle.close_stdin()
        super().close()


class _Stream:
    """Per-stream state of one process (touched by the I/O thread under the handle's lock)."""

    __slots__ = ("callbacks", "enlarged", "eof", "name", "reader", "retained", "splitter")

    def __init__(self, name: str, max_bytes: int | None) -> None:
        self.name = name
        self.retained = RetainedOutput(max_bytes)
        self.splitter = Utf8Splitter()  # holds back an incomplete trailing UTF-8 character
        self.callbacks: tuple[OutputCallback, ...] = ()
        self.reader: _PipeReader | None = None
        self.eof = False
        self.enlarged = False  # its pipe counts against _MAX_ENLARGED_PIPES


class ProcessHandle:
    """A process started by ``ProcessManager.spawn()`` (running or exited).

    >>> h = sandbox.processes.spawn("python -m http.server 8000")   # doctest: +SKIP
    >>> h.stdout, h.exit_code                                       # doctest: +SKIP
    ('', None)
    >>> h.kill()                                                    # doctest: +SKIP
    True
    """

    def __init__(
        self,
        manager: ProcessManager,
        popen: subprocess.Popen[bytes],
        command: str,
        *,
        max_retained_bytes: int | None,
        abort: threading.Event | None,
        stdin_piped: bool,
        loop: Reactor,
    ) -> None:
        self._manager = manager
        self._loop = loop  # the reactor that reads this process's pipes
        self._popen = popen
        self.pid: int = popen.pid
        self.command = command
        self.abort = abort
        self.started_at = _now()
        self.ended_at: datetime | None = None
        self._t0 = time.perf_counter()
        self._elapsed_ms: float | None = None
        self._lock = threading.Lock()
        self._stdout = _Stream("stdout", max_retained_bytes)
        self._stderr = _Stream("stderr", max_retained_bytes)
        self._subscribers: tuple[ProcessEventCallback, ...] = ()
        self._returncode: int | None = None
        self._exit_code: int | None = None
        self._exited = threading.Event()  # the main process died (reaped)
        self._done = threading.Event()  # exited and output drained: the result is final
        self._stdin_lock = threading.Lock()
        self._stdin_piped = stdin_piped
        self._stdin_closed = not stdin_piped
        self._writer: _StdinWriter | None = None
        self._reader_buffered: io.BufferedReader | None = None
        self._abort_timer: TimerHandle | None = None
        self._pidfd: int | None = None
        self._timers: list[TimerHandle] = []
        self._kill_requested = False
        self._guarded = False  # registered with the orphan guard
        self._drain_timer: TimerHandle | None = None
        self.timed_out = False
        self.killed = False

    # --- public state ---------------------------------------------------------------------------

    @property
    def exit_code(self) -> int | None:
        """None while running; once set, the output is complete."""
        return self._exit_code

    @property
    def running(self) -> bool:
        return not self._done.is_set()

    @property
    def stdout(self) -> str:
        """Retained stdout (the newest ``max_retained_bytes``), never split inside a character."""
        return self._stdout.retained.text

    @property
    def stderr(self) -> str:
        return self._stderr.retained.text

    @property
    def stdout_truncated(self) -> bool:
        return self._stdout.retained.truncated

    @property
    def stderr_truncated(self) -> bool:
        return self._stderr.retained.truncated

    @property
    def stdout_dropped_bytes(self) -> int:
        return self._stdout.retained.dropped_bytes

    @property
    def stderr_dropped_bytes(self) -> int:
        return self._stderr.retained.dropped_bytes

    @property
    def stdout_bytes(self) -> int:
        """Bytes written to stdout so far (retained or not)."""
        return self._stdout.retained.total_bytes

    @property
    def stderr_bytes(self) -> int:
        return self._stderr.retained.total_bytes

    @property
    def execution_time_ms(self) -> float:
        if self._elapsed_ms is not None:
            return self._elapsed_ms
        return (time.perf_counter() - self._t0) * 1000.0

    def info(self) -> ProcessInfo:
        return ProcessInfo(
            pid=self.pid,
            command=self.command,
            running=self.running,
            exit_code=self._exit_code,
            started_at=self.started_at,
            ended_at=self.ended_at,
            timed_out=self.timed_out,
            killed=self.killed,
        )

    def result(self) -> CommandResult:
        """The outcome so far (final once ``exit_code`` is set)."""
        code = self._exit_code
        return CommandResult(
            success=code == 0,
            exit_code=code if code is not None else -1,
            stdout=self.stdout,
            stderr=self.stderr,
            execution_time_ms=self.execution_time_ms,
            timed_out=self.timed_out,
            killed=self.killed,
            command=self.command,
            stdout_truncated=self.stdout_truncated,
            stderr_truncated=self.stderr_truncated,
            pid=self.pid,
        )

    def __repr__(self) -> str:
        state = "running" if self.running else f"exited {self._exit_code}"
        return f"<ProcessHandle pid={self.pid} {state} command={self.command!r}>"

    # --- waiting --------------------------------------------------------------------------------

    def wait(
        self,
        timeout: float | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
    ) -> CommandResult:
        """Blocks until the process exits and its output is drained; returns the result.

        ``on_stdout``/``on_stderr`` receive new output while waiting and are removed afterwards.
        ``timeout`` (seconds) raises ``ProcessWaitTimeoutError`` and leaves the process running.
        """
        limit = validate_timeout(timeout, "wait timeout")
        if self._loop.in_loop() and not self._done.is_set():
            raise SandboxStateError(
                "wait() called from this process's own output callback would never return; "
                "use subscribe() to learn about the exit"
            )
        _validate_callback(on_stdout, "on_stdout")
        _validate_callback(on_stderr, "on_stderr")
        if on_stdout:
            self._add_callback(self._stdout, on_stdout)
        if on_stderr:
            self._add_callback(self._stderr, on_stderr)
        try:
            if not self._wait_done(limit):
                raise ProcessWaitTimeoutError(self.pid, limit or 0.0)
        finally:
            if on_stdout:
                self._remove_callback(self._stdout, on_stdout)
            if on_stderr:
                self._remove_callback(self._stderr, on_stderr)
        return self.result()

    def _wait_done(self, timeout: float | None) -> bool:
        # Short slices keep the waiting thread responsive to KeyboardInterrupt however it is
        # delivered (a real SIGINT, or _thread.interrupt_main() which wakes no blocked lock).
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
            if step <= 0:
                return self._done.is_set()
            if self._done.wait(step):
                return True

    def _in_loop(self, fn: Callable[[], None]) -> None:
        try:
            self._loop.call_soon(fn)
        except RuntimeError:  # the loop is closed: nothing else can produce events any more
            fn()

    def _add_callback(self, stream: _Stream, cb: OutputCallback) -> None:
        with self._lock:
            stream.callbacks = (*stream.callbacks, cb)

    def _remove_callback(self, stream: _Stream, cb: OutputCallback) -> None:
        with self._lock:
            cbs = list(stream.callbacks)
            with contextlib.suppress(ValueError):
                cbs.remove(cb)
            stream.callbacks = tuple(cbs)

    def subscribe(self, callback: ProcessEventCallback, *, replay: bool = False) -> Callable[[], None]:
        """Follow the process live: ``callback(kind, text)``; returns an unsubscribe function.

        ``kind`` is ``"stdout"``, ``"stderr"`` or ``"exit"`` (text empty). With ``replay=True`` the
        retained output (stdout, then stderr) is delivered first — and ``"exit"`` right after if
        the process already ended — with no gap or duplicate before live events.
        """
        _validate_callback(callback, "callback")

        def unsubscribe() -> None:
            with self._lock:
                subs = list(self._subscribers)
                with contextlib.suppress(ValueError):
                    subs.remove(callback)
                self._subscribers = tuple(subs)

        def attach() -> None:
            # Runs on the I/O thread (the only producer of events), so nothing can interleave.
            with self._lock:
                self._subscribers = (*self._subscribers, callback)
                done = self._done.is_set()
                out = self.stdout if replay else ""
                err = self.stderr if replay else ""
            if out:
                self._call(callback, "stdout", out)
            if err:
                self._call(callback, "stderr", err)
            if done:
                self._call(callback, "exit", "")

        if replay or self._done.is_set():
            self._in_loop(attach)
        else:
            with self._lock:
                self._subscribers = (*self._subscribers, callback)
        return unsubscribe

    # --- stdin / stdio streams ------------------------------------------------------------------

    @property
    def reader(self) -> io.BufferedReader:
        """Binary stdout for stdio protocols; starts with the stdout retained so far."""
        with self._lock:
            if self._reader_buffered is None:
                raw = _PipeReader(self._stdout.retained.data)
                if self._stdout.eof:
                    raw.feed_eof()
                self._stdout.reader = raw
                self._reader_buffered = io.BufferedReader(raw)
            return self._reader_buffered

    @property
    def writer(self) -> _StdinWriter:
        """Binary stdin (unbuffered: each ``write`` reaches the process)."""
        if self._writer is None:
            self._writer = _StdinWriter(self)
        return self._writer

    def send_stdin(self, data: str | bytes) -> None:
        """Writes all of ``data`` (str is UTF-8 encoded); raises ``StdinClosedError`` if it cannot."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        elif not isinstance(data, (bytes, bytearray, memoryview)):
            raise InvalidArgumentError(f"send_stdin expects str or bytes, got {type(data).__name__}")
        self._write_stdin(bytes(data))

    def _write_stdin(self, data: bytes) -> int:
        with self._stdin_lock:
            if not self._stdin_piped:
                raise StdinClosedError(
                    f"Process {self.pid} was started without a stdin pipe (stdin='ignore')"
                )
            if self._stdin_closed or self._popen.stdin is None:
                raise StdinClosedError(f"stdin of process {self.pid} is closed")
            if self._done.is_set() or self._exited.is_set():
                raise StdinClosedError(f"Process {self.pid} has exited (exit code {self._exit_code})")
            fd = self._popen.stdin.fileno()
            view = memoryview(data)
            try:
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
            except (BrokenPipeError, OSError) as exc:
                raise StdinClosedError(f"Process {self.pid} no longer reads its stdin ({exc.strerror})")
            return len(data)

    def close_stdin(self) -> None:
        """Closes stdin (the process sees end of file); closing twice is harmless."""
        with self._stdin_lock:
            if not self._stdin_piped:
                return
            self._stdin_closed = True
            if self._popen.stdin is not None:
                with contextlib.suppress(OSError):
                    self._popen.stdin.close()

    # --- killing ---------------------------------------------------------------------------------

    def kill(self, grace: float | None = None) -> bool:
        """Kills the whole tree and waits until the process is gone.

        SIGTERM first, SIGKILL after ``grace`` seconds (default: the manager's ``kill_grace``;
        ``0`` sends SIGKILL at once). Returns False if the process had already exited.
        """
        if self._done.is_set() or self._exited.is_set():
            return False
        grace = self._manager.kill_grace if grace is None else float(grace)
        if self._loop.in_loop():
            # Called from an output callback: the loop that would see the exit is this very
            # thread, so do not wait for it; start the kill and return.
            self._terminate_async("stop", grace)
            return True
        _kill_trees([self], grace)
        return True

    def _terminate_async(
        self, reason: Literal["timeout", "abort", "stop"], grace: float | None = None
    ) -> None:
        """I/O thread: start killing without blocking (SIGTERM now, SIGKILL after the grace)."""
        if self._exited.is_set() or self._kill_requested:
            return
        self._kill_requested = True
        self.killed = True
        if reason == "timeout":
            self.timed_out = True
        procs = tree.snapshot_tree(self.pid)
        grace = self._manager.kill_grace if grace is None else grace
        tree.signal_tree(self.pid, procs, signal.SIGTERM if grace > 0 else signal.SIGKILL)

        def escalate() -> None:
            if not self._exited.is_set():
                extra = [p for p in tree.snapshot_tree(self.pid) if p not in procs]
                tree.signal_tree(self.pid, procs + extra, signal.SIGKILL)

        if grace > 0:
            self._timers.append(self._loop.call_later(grace, escalate))

    # --- I/O thread -------------------------------------------------------------------------------

    @staticmethod
    def _call(cb: Callable[..., None], *args: str) -> None:
        try:
            cb(*args)
        except Exception:
            log.exception("output callback raised; output keeps flowing")

    def _on_data(self, stream: _Stream, data: bytes) -> None:
        with self._lock:
            stream.retained.append(data)
            if stream.reader is not None:
                stream.reader.feed(data)
            callbacks, subscribers = stream.callbacks, self._subscribers
            if callbacks or subscribers:
                text = stream.splitter.feed(data)
            else:
                stream.splitter.skip(data)
                text = ""
        self._emit(stream, callbacks, subscribers, text)

    def _on_eof(self, stream: _Stream) -> None:
        with self._lock:
            stream.eof = True
            stream.retained.close()
            text = stream.splitter.flush()
            callbacks, subscribers = stream.callbacks, self._subscribers
            if stream.reader is not None:
                stream.reader.feed_eof()
        self._emit(stream, callbacks, subscribers, text)

    def _emit(
        self,
        stream: _Stream,
        callbacks: tuple[OutputCallback, ...],
        subscribers: tuple[ProcessEventCallback, ...],
        text: str,
    ) -> None:
        if text:
            for cb in callbacks:
                self._call(cb, text)
            for sub in subscribers:
                self._call(sub, stream.name, text)

    def _on_exit(self, returncode: int) -> None:
        self._returncode = returncode
        self.ended_at = _now()
        self._elapsed_ms = (time.perf_counter() - self._t0) * 1000.0
        self._exited.set()

    def _finish(self) -> None:
        for t in self._timers:
            t.cancel()
        self._timers.clear()
        if self._abort_timer is not None:
            self._abort_timer.cancel()
        rc = self._returncode if self._returncode is not None else -signal.SIGKILL
        self._exit_code = _TIMEOUT_EXIT_CODE if self.timed_out else _exit_code(rc)
        if self._stdin_piped:
            with self._stdin_lock:
                self._stdin_closed = True
                if self._popen.stdin is not None:
                    with contextlib.suppress(OSError):
                        self._popen.stdin.close()
        with self._lock:
            subscribers = self._subscribers
        self._done.set()
        for sub in subscribers:
            self._call(sub, "exit", "")


def _kill_trees(handles: list[ProcessHandle], grace: float) -> None:
    """Kills running process trees at once and waits until they are gone (and drained).

    SIGTERM to every tree (SIGKILL at once when ``grace`` is 0), SIGKILL after ``grace`` to the
    trees whose main process is still alive, then SIGKILL to any descendant left behind. Each
    tree is snapshotted before the first signal (a dying parent orphans its children) and again
    before SIGKILL. Blocks, so never on the I/O thread that must see the exits
    (``_terminate_async`` is the non-blocking way).
    """
    trees: dict[ProcessHandle, list[Any]] = {}
    for h in handles:
        h.killed = h._kill_requested = True
        trees[h] = tree.snapshot_tree(h.pid)
        tree.signal_tree(h.pid, trees[h], signal.SIGTERM if grace > 0 else signal.SIGKILL)
    if grace > 0:
        deadline = time.monotonic() + grace
        for h in handles:
            h._exited.wait(max(0.0, deadline - time.monotonic()))
        for h in handles:
            if not h._exited.is_set():
                trees[h] += [p for p in tree.snapshot_tree(h.pid) if p not in trees[h]]
                tree.signal_tree(h.pid, trees[h], signal.SIGKILL)
    for h in handles:
        if not h._exited.wait(10.0):  # pragma: no cover - SIGKILL failed (uninterruptible sleep)
            log.warning("process %s did not exit after SIGKILL", h.pid)
        descendants = [p for p in trees[h] if p.pid != h.pid]
        tree.signal_tree(None, tree.wait_gone(descendants, 0), signal.SIGKILL)
    for h in handles:
        h._done.wait(_DRAIN_AFTER_EXIT + 1.0)


class ProcessManager:
    """Starts and tracks the background processes of one sandbox (``sandbox.processes``).

    >>> h = sandbox.processes.spawn("for i in 1 2 3; do echo $i; sleep 1; done",
    ...                             on_stdout=print)                          # doctest: +SKIP
    >>> [p.pid for p in sandbox.processes.list()] == [h.pid]                  # doctest: +SKIP
    True
    >>> h.wait().stdout                                                       # doctest: +SKIP
    '1\\n2\\n3\\n'
    """

    def __init__(
        self,
        launcher: CommandLauncher,
        *,
        kill_grace: float = 2.0,
        max_exited: int = 100,
        max_running: int = 256,
        name: str = "ws-sandbox",
    ) -> None:
        if isinstance(kill_grace, bool) or not isinstance(kill_grace, (int, float)) or kill_grace < 0:
            raise InvalidArgumentError(
                f"kill_grace must be a non-negative number of seconds, got {kill_grace!r}"
            )
        for what, value in (("max_exited", max_exited), ("max_running", max_running)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidArgumentError(f"{what} must be a non-negative integer, got {value!r}")
        self._launcher = launcher
        self.kill_grace = float(kill_grace)
        self.max_exited = max_exited
        self.max_running = max_running
        self._name = name
        self._lock = threading.Lock()
        self._handles: dict[int, ProcessHandle] = {}
        self._reactor = Reactor(f"{name}-io")
        self._closed = False
        self._use_pidfd = hasattr(os, "pidfd_open")
        _live_managers.add(self)
        # An idle I/O thread must not outlive a manager that was garbage collected.
        # Not at interpreter exit though: the atexit handler below still needs the I/O thread.
        weakref.finalize(self, self._reactor.close, 0.0).atexit = False

    # --- public API --------------------------------------------------------------------------

    def spawn(
        self,
        command: str,
        cwd: str | None = None,
        env: Mapping[str, str | None] | None = None,
        timeout: float | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
        abort: threading.Event | None = None,
        stdin: StdinMode = "pipe",
        max_retained_bytes: int | None = DEFAULT_MAX_RETAINED_BYTES,
    ) -> ProcessHandle:
        """Starts ``command`` (a shell command line) in the background and returns at once.

        ``timeout`` (seconds) kills the tree when exceeded (exit code 124, ``timed_out``);
        ``abort`` is a ``threading.Event`` that kills the process when set; ``stdin="ignore"``
        connects stdin to /dev/null (commands that read stdin then see end of file instead of
        hanging); ``max_retained_bytes`` bounds the output kept per stream (None: unlimited).
        """
        limit = validate_timeout(timeout)
        handle = self._start(
            command, cwd, env, on_stdout, on_stderr, abort, stdin, max_retained_bytes, self._reactor
        )
        self._reactor.call_soon(lambda: self._attach(handle, limit))
        return handle

    def run(
        self,
        command: str,
        cwd: str | None = None,
        env: Mapping[str, str | None] | None = None,
        timeout: float | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
        abort: threading.Event | None = None,
        max_retained_bytes: int | None = DEFAULT_MAX_RETAINED_BYTES,
    ) -> CommandResult:
        """Runs ``command`` in the foreground (stdin at end of file) and returns its result.

        Same process handling as ``spawn()`` + ``wait()``, but the calling thread reads the pipes
        itself instead of waiting for the I/O thread. The process is listed while it runs and
        forgotten afterwards. An exception while waiting (``KeyboardInterrupt`` from a kernel
        interrupt) kills the tree before it propagates.
        """
        limit = validate_timeout(timeout)
        loop = Reactor(f"{self._name}-fg", threaded=False)
        try:
            handle = self._start(
                command,
                cwd,
                env,
                on_stdout,
                on_stderr,
                abort,
                "ignore",
                max_retained_bytes,
                loop,
                inline=True,
            )
        except BaseException:
            loop.close()
            raise
        try:
            try:
                loop.run_until(handle._done.is_set, setup=lambda: self._attach(handle, limit))
            except BaseException:
                handle.killed = handle._kill_requested = True
                tree.signal_tree(handle.pid, tree.snapshot_tree(handle.pid), signal.SIGKILL)
                loop.run_until(handle._done.is_set, timeout=5.0)
                raise
        finally:
            loop.close()
            with self._lock:
                if self._handles.get(handle.pid) is handle:
                    del self._handles[handle.pid]
        return handle.result()

    def _start(
        self,
        command: str,
        cwd: str | None,
        env: Mapping[str, str | None] | None,
        on_stdout: OutputCallback | None,
        on_stderr: OutputCallback | None,
        abort: threading.Event | None,
        stdin: StdinMode,
        max_retained_bytes: int | None,
        loop: Reactor,
        inline: bool = False,
    ) -> ProcessHandle:
        """Validates, starts the process and tracks it; the caller wires it to ``loop``."""
        if not isinstance(command, str) or not command.strip():
            raise InvalidArgumentError("command must be a non-empty string")
        if "\0" in command:
            raise InvalidArgumentError("command contains a NUL byte")
        retained = validate_retained(max_retained_bytes)
        _validate_callback(on_stdout, "on_stdout")
        _validate_callback(on_stderr, "on_stderr")
        if abort is not None and not callable(getattr(abort, "is_set", None)):
            raise InvalidArgumentError("abort must be a threading.Event (anything with is_set())")
        if stdin not in ("pipe", "ignore"):
            raise InvalidArgumentError(f"stdin must be 'pipe' or 'ignore', got {stdin!r}")
        if self._closed:
            raise SandboxStateError("The sandbox was destroyed; its process manager is closed")
        self._launcher.ensure_running()
        with self._lock:
            running = sum(1 for h in self._handles.values() if h.running)
        if running >= self.max_running:
            raise SandboxError(
                f"Too many running processes ({running}, limit {self.max_running}); kill some first",
                code="TOO_MANY_PROCESSES",
            )
        spec = self._launcher.prepare_launch(command, cwd, env)
        try:
            popen = self._popen(spec, stdin, inline)
        finally:
            spec.close()
        handle = ProcessHandle(
            self,
            popen,
            command,
            max_retained_bytes=retained,
            abort=abort,
            stdin_piped=stdin == "pipe",
            loop=loop,
        )
        if on_stdout:
            handle._stdout.callbacks = (on_stdout,)
        if on_stderr:
            handle._stderr.callbacks = (on_stderr,)
        with self._lock:
            closed = self._closed
            if not closed:
                self._handles.pop(popen.pid, None)  # a pid reused after a retained exit
                self._handles[popen.pid] = handle
        if closed:
            # close() (sandbox destroy on another thread) ran while this process started, so
            # it never saw it: it dies here instead of outliving the sandbox.
            tree.signal_tree(popen.pid, tree.snapshot_tree(popen.pid), signal.SIGKILL)
            popen.wait()
            for pipe in (popen.stdin, popen.stdout, popen.stderr):
                if pipe is not None:
                    pipe.close()
            raise SandboxStateError("The sandbox was destroyed; its process manager is closed")
        if not inline:
            orphan_guard.register(popen.pid)
            handle._guarded = True
        return handle

    def list(self) -> list[ProcessInfo]:
        """Every tracked process, running or exited (not yet released), oldest first."""
        with self._lock:
            handles = list(self._handles.values())
        return [h.info() for h in sorted(handles, key=lambda h: h.started_at)]

    def get(self, pid: int | str) -> ProcessHandle | None:
        """The handle of a tracked process (exited ones too, until released), or None."""
        with self._lock:
            return self._handles.get(parse_pid(pid))

    def __getitem__(self, pid: int | str) -> ProcessHandle:
        handle = self.get(pid)
        if handle is None:
            raise ProcessNotFoundError(pid)
        return handle

    def __len__(self) -> int:
        return len(self._handles)

    def kill(self, pid: int | str, grace: float | None = None) -> bool:
        """Kills a tracked process tree and waits for it; False if unknown or already exited.

        The handle stays listed with its output (``release(pid)`` forgets it).
        """
        handle = self.get(pid)
        if handle is None:
            return False
        return handle.kill(grace)

    def release(self, pid: int | str) -> bool:
        """Forgets an exited process and its output; a running one must be killed first."""
        key = parse_pid(pid)
        with self._lock:
            handle = self._handles.get(key)
            if handle is None:
                return False
            if handle.running:
                raise SandboxStateError(f"Process {key} is still running; kill it before releasing it")
            del self._handles[key]
        return True

    def kill_all(self, grace: float | None = None) -> int:
        """Kills every running process tree at once (SIGTERM, SIGKILL after ``grace``).

        Returns how many were running. Used by ``stop()``/``destroy()`` and at interpreter exit.
        """
        grace = self.kill_grace if grace is None else float(grace)
        with self._lock:
            running = [h for h in self._handles.values() if h.running]
        if not running:
            return 0
        if any(h._loop.in_loop() for h in running):
            # From an output callback: the exits can only be seen after we return.
            for h in running:
                h._terminate_async("stop", grace)
            return len(running)
        # A process that already exited (its output still draining) was reaped: its pid is no
        # longer ours to signal, and it was not killed.
        _kill_trees([h for h in running if not h._exited.is_set()], grace)
        for h in running:
            h._done.wait(_DRAIN_AFTER_EXIT + 1.0)
        return len(running)

    def clear(self) -> None:
        """Forgets every exited process."""
        with self._lock:
            for pid in [pid for pid, h in self._handles.items() if not h.running]:
                del self._handles[pid]

    def close(self) -> None:
        """Kills everything, forgets everything and stops the I/O thread (sandbox destroy)."""
        with self._lock:  # from here on, _start() adds no process that kill_all() would miss
            if self._closed:
                return
            self._closed = True
        self.kill_all()
        with self._lock:
            self._handles.clear()
        self._reactor.close()
        _live_managers.discard(self)

    @property
    def closed(self) -> bool:
        return self._closed

    # --- internals -------------------------------------------------------------------------------

    def _popen(self, spec: LaunchSpec, stdin: StdinMode, inline: bool = False) -> subprocess.Popen[bytes]:
        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                spec.argv,
                cwd=spec.cwd,
                env=spec.env,
                stdin=subprocess.PIPE if stdin == "pipe" else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # own process group: the tree can be signalled as one
                close_fds=True,
                pass_fds=spec.pass_fds,
                bufsize=0,
            )

        try:
            # Parent-death signals (PR_SET_PDEATHSIG, which bubblewrap builds on) fire when the
            # *thread* that forked the child exits. Fork from the main thread or from the
            # manager's long-lived I/O thread, never from a short-lived worker thread, so no
            # wrapper that uses them can take a background process down with that thread.
            # A foreground command's caller blocks until the command ends, so it qualifies too.
            if inline or threading.current_thread() is threading.main_thread():
                return start()
            return self._reactor.run_sync(start)
        except FileNotFoundError as exc:
            raise SandboxError(f"Cannot start {spec.argv[0]!r}: {exc.strerror}", code="SPAWN_FAILED")
        except OSError as exc:
            raise SandboxError(f"Cannot start the command: {exc}", code="SPAWN_FAILED")

    def _attach(self, handle: ProcessHandle, timeout: float | None) -> None:
        """Loop thread: wire the pipes, the exit notification, the timeout and the abort poll."""
        reactor = handle._loop
        popen = handle._popen
        for stream, pipe in ((handle._stdout, popen.stdout), (handle._stderr, popen.stderr)):
            assert pipe is not None
            fd = pipe.fileno()
            os.set_blocking(fd, False)
            reactor.add_reader(fd, self._make_reader(handle, stream, pipe))
        pidfd = None
        if self._use_pidfd:
            try:
                pidfd = os.pidfd_open(handle.pid)
            except OSError:
                pidfd = None
        if pidfd is not None:
            handle._pidfd = pidfd
            reactor.add_reader(pidfd, lambda: self._on_exit(handle))
        else:
            threading.Thread(
                target=self._wait_thread, args=(handle,), name=f"{self._name}-wait-{handle.pid}", daemon=True
            ).start()
        if timeout is not None:
            handle._timers.append(reactor.call_later(timeout, lambda: handle._terminate_async("timeout")))
        if not handle._guarded:
            # Most foreground commands end within milliseconds: tell the orphan guard only about
            # those still running after a moment, sparing two pipe writes (and two wake-ups of
            # the guard) per short command.
            handle._timers.append(reactor.call_later(_GUARD_DELAY, lambda: self._guard(handle)))
        if handle.abort is not None:
            self._poll_abort(handle)

    @staticmethod
    def _guard(handle: ProcessHandle) -> None:
        if not handle._exited.is_set() and not handle._guarded:
            orphan_guard.register(handle.pid)
            handle._guarded = True

    def _poll_abort(self, handle: ProcessHandle) -> None:
        if handle._exited.is_set():
            return
        assert handle.abort is not None
        if handle.abort.is_set():
            handle._terminate_async("abort")
            return
        handle._abort_timer = handle._loop.call_later(_ABORT_POLL, lambda: self._poll_abort(handle))

    def _make_reader(self, handle: ProcessHandle, stream: _Stream, pipe: Any) -> Callable[[], None]:
        fd = pipe.fileno()
        reactor = handle._loop
        state = [_READ_SIZE, 0]  # read size, consecutive full reads (-1: decided)

        def on_readable() -> None:
            size = state[0]
            try:
                data = os.read(fd, size)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if data:
                if state[1] >= 0:
                    state[1] = state[1] + 1 if len(data) == size else 0
                    if state[1] >= _FAST_READS:
                        state[1] = -1
                        if _enlarge_pipe(fd):
                            stream.enlarged = True
                            state[0] = _FAST_READ_SIZE
                handle._on_data(stream, data)
                return
            reactor.remove_reader(fd)
            self._close_pipe(stream, pipe)
            handle._on_eof(stream)
            self._maybe_finish(handle)

        return on_readable

    @staticmethod
    def _close_pipe(stream: _Stream, pipe: Any) -> None:
        with contextlib.suppress(OSError, ValueError):
            pipe.close()
        if stream.enlarged:
            stream.enlarged = False
            _release_pipe()

    def _wait_thread(self, handle: ProcessHandle) -> None:
        """Fallback without pidfds: wait for the exit without reaping, then hand over."""
        waitid = getattr(os, "waitid", None)
        if waitid is not None:
            with contextlib.suppress(ChildProcessError, OSError):
                waitid(os.P_PID, handle.pid, os.WEXITED | os.WNOWAIT)
        else:  # pragma: no cover - platforms without waitid
            handle._popen.wait()
        with contextlib.suppress(RuntimeError):
            handle._loop.call_soon(lambda: self._on_exit(handle))

    def _on_exit(self, handle: ProcessHandle) -> None:
        """I/O thread: the main process died. Clean its group up, reap it, then finish."""
        if handle._exited.is_set():
            return
        if handle._pidfd is not None:
            handle._loop.remove_reader(handle._pidfd)
            with contextlib.suppress(OSError):
                os.close(handle._pidfd)
            handle._pidfd = None
        # The leader is a zombie, so its pid (= the group id) cannot be reused yet: killing the
        # group here only hits what the command left behind.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(handle.pid, signal.SIGKILL)
        returncode = handle._popen.wait()
        if handle._guarded:
            orphan_guard.unregister(handle.pid)
        handle._on_exit(returncode)
        if not self._maybe_finish(handle):
            handle._drain_timer = handle._loop.call_later(
                _DRAIN_AFTER_EXIT, lambda: self._force_finish(handle)
            )

    def _maybe_finish(self, handle: ProcessHandle) -> bool:
        if handle._done.is_set() or not handle._exited.is_set():
            return False
        if not (handle._stdout.eof and handle._stderr.eof):
            return False
        if handle._drain_timer is not None:
            handle._drain_timer.cancel()
        handle._finish()
        self._enforce_retention()
        return True

    def _force_finish(self, handle: ProcessHandle) -> None:
        """The pipes stayed open after the exit (an escaped daemon holds them): stop reading."""
        popen = handle._popen
        for stream, pipe in ((handle._stdout, popen.stdout), (handle._stderr, popen.stderr)):
            if not stream.eof and pipe is not None:
                with contextlib.suppress(OSError, ValueError):
                    handle._loop.remove_reader(pipe.fileno())
                self._close_pipe(stream, pipe)
                handle._on_eof(stream)
        self._maybe_finish(handle)

    def _enforce_retention(self) -> None:
        with self._lock:
            exited = [h for h in self._handles.values() if not h.running]
            excess = len(exited) - self.max_exited
            if excess > 0:
                exited.sort(key=lambda h: h.ended_at or h.started_at)
                for h in exited[:excess]:
                    if self._handles.get(h.pid) is h:
                        del self._handles[h.pid]


# --- interpreter exit --------------------------------------------------------------------------

_live_managers: weakref.WeakSet[ProcessManager] = weakref.WeakSet()


def _kill_everything_at_exit() -> None:
    for manager in list(_live_managers):
        with contextlib.suppress(Exception):
            manager.kill_all(grace=0.5)
    orphan_guard.close()


atexit.register(_kill_everything_at_exit)
