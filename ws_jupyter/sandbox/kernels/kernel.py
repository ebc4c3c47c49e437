"""``Kernel``: one named Jupyter kernel of a sandbox — its process, its client, its executions.

Built on jupyter_client's split: a ``KernelManager`` owns the process (start, interrupt,
shutdown) and a ``BlockingKernelClient`` speaks the protocol (``execute``, the message loop).
No ZeroMQ protocol is written here; this module adds what a sandbox needs around them:

* executions queue in arrival order (``TurnLock``) and return an :class:`ExecutionResult`;
  output is bounded and streamed to ``on_output`` as it arrives;
* a time limit interrupts the kernel (its state survives); a kernel that does not stop within
  ``interrupt_timeout`` is restarted, and the result says its state was lost;
* a kernel that died (a crash, ``os._exit``, the OOM killer) is noticed while waiting — the
  result says so — and restarted, so the next call works;
* restart and shutdown take the next turn and cut a running execution short at once (a pipe
  registered in the poller wakes the waiting loop);
* every kernel's process group is registered with the sandbox's orphan guard, so a kernel never
  outlives the notebook, even when the notebook's process is killed with SIGKILL.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from ...errors import KernelError, SandboxStateError
from .. import tree
from ..guard import orphan_guard
from ..output import RetainedOutput
from .execution import Execution, OutputCallback, OutputCollector, Stopper, collector_for, utc_now
from .host import KernelHost
from .launch import ResolvedSpec
from .locks import TurnLock
from .messages import MALFORMED, bounded_unpacker
from .provider import KernelInfo
from .result import ExecutionError, ExecutionResult

__all__ = ["MALFORMED", "Kernel", "KernelInfo", "OutputCallback", "Stopper"]

log = logging.getLogger(__name__)

_LIVENESS_EVERY = 1.0  # seconds of silence between checks that the kernel process is alive
_DEAD_GRACE = 0.3  # after the process died, how long its last messages may still trickle in
_IDLE_GRACE = 0.5  # after the reply, how long "idle" may lag before IOPub is checked with a barrier
_BARRIER_EVERY = 1.0
_RECONNECT_AFTER = 2.0  # seconds of barriers, and of IOPub silence, before the client reconnects


class _StderrTail:
    """The kernel process's own stdout/stderr (start-up failures), newest 16 KiB, read by a thread."""

    def __init__(self, pipe: Any) -> None:
        self.out = RetainedOutput(16 * 1024)
        self._thread = threading.Thread(target=self._read, args=(pipe,), name="ws-kernel-stderr", daemon=True)
        self._thread.start()

    def _read(self, pipe: Any) -> None:
        with contextlib.suppress(OSError, ValueError):
            while True:
                chunk = pipe.read1(65536) if hasattr(pipe, "read1") else pipe.read(65536)
                if not chunk:
                    break
                self.out.append(chunk)
        with contextlib.suppress(OSError):
            pipe.close()

    @property
    def text(self) -> str:
        return self.out.text


class Kernel:
    """One named kernel of a sandbox (``sandbox.kernels.start("default")``).

    >>> k = sandbox.kernels.start()                        # doctest: +SKIP
    >>> k.execute("import pandas as pd; df = pd.read_csv('data.csv')").status   # doctest: +SKIP
    'ok'
    >>> k.execute("df.shape").text                         # doctest: +SKIP
    '(120, 4)'
    >>> k.restart(); k.execute("df").ename                 # doctest: +SKIP
    'NameError'
    """

    def __init__(self, host: KernelHost, name: str, spec: ResolvedSpec, cwd: str | None = None) -> None:
        self.host = host  # the sandbox's side: config, launch, runtime directory, activity feed
        self.name = name
        self.spec = spec
        self.cwd = cwd  # None: the sandbox's working directory
        self._turn = TurnLock()
        self._life = threading.RLock()  # manager-side calls: start, interrupt, stop
        self._km: Any = None
        self._kc: Any = None
        self._runtime_dir: str | None = None
        self._pgid: int | None = None
        self._stderr: _StderrTail | None = None
        self._wake_r: int | None = None
        self._wake_w: int | None = None
        self._cancel: str | None = None  # why a running execution must stop now
        self._status = "stopped"
        self._removed = False
        self._lost: str | None = None  # why the previous state is gone (told to the next execution)
        self.started_at: datetime | None = None
        self.last_activity: datetime | None = None
        self.execution_count = 0
        self.executions = 0
        self.restarts = 0
        self.last_result: ExecutionResult | None = None

    # --- state --------------------------------------------------------------------------------

    @property
    def status(self) -> str:
        """starting | idle | busy | dead | stopped (never started, shut down or culled)."""
        if self._status in ("idle", "busy") and not self._process_alive():
            return "dead"
        return self._status

    @property
    def pid(self) -> int | None:
        process = self._process()
        return process.pid if process is not None else None

    @property
    def connection_file(self) -> str | None:
        """The kernel's connection file (host path), for clients such as ``jupyter console --existing``."""
        km = self._km
        return km.connection_file if km is not None else None

    @property
    def isolation(self) -> str:
        return self.host.isolation

    @property
    def cancelled_by(self) -> str | None:
        """Why a running execution must stop now (``"restarted"``, ``"shut down"``), else None."""
        return self._cancel

    def info(self) -> KernelInfo:
        return KernelInfo(
            name=self.name,
            spec=self.spec.name,
            language=self.spec.language,
            status=self.status,
            pid=self.pid,
            isolation=self.isolation,
            started_at=self.started_at,
            last_activity=self.last_activity,
            execution_count=self.execution_count,
            executions=self.executions,
            restarts=self.restarts,
        )

    def idle_for(self) -> float:
        """Seconds since the last execution ended (or since start); 0 while one runs."""
        if self._status == "busy":
            return 0.0
        ref = self.last_activity or self.started_at
        return (utc_now() - ref).total_seconds() if ref else 0.0

    def _process(self) -> subprocess.Popen[bytes] | None:
        km = self._km
        provisioner = getattr(km, "provisioner", None) if km is not None else None
        return getattr(provisioner, "process", None)

    def _process_alive(self) -> bool:
        process = self._process()
        return process is not None and process.poll() is None

    def _exit_code(self) -> int | None:
        process = self._process()
        return process.poll() if process is not None else None

    def _started(self) -> bool:
        """A kernel was started and not stopped since (it may have died)."""
        return self._km is not None

    def _running(self) -> bool:
        """Started, and ready for code: its process is alive."""
        return self._started() and self._status in ("idle", "busy") and self._process_alive()

    def _gone_note(self) -> str:
        """What the next execution is told when a started kernel is found not running."""
        return _died_note(self._exit_code())

    def __repr__(self) -> str:
        return f"<Kernel {self.name!r} {self.status} spec={self.spec.name!r} pid={self.pid}>"

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> Kernel:
        """Starts the kernel process if it is not running (idempotent)."""
        self._turn.acquire(urgent=True)
        try:
            with self._life:
                if self._status in ("idle", "busy") and self._process_alive():
                    return self
                if self._km is not None:
                    self._stop_locked(now=True)
                self._start_locked()
        finally:
            self._turn.release()
        return self

    def _start_locked(self) -> None:
        if self._removed:
            raise KernelError(f"Kernel {self.name!r} was shut down; start a new one", kernel=self.name)
        host = self.host
        host.check_usable()
        host.ensure_running()
        config = host.config
        self._status = "starting"
        runtime_dir = self._runtime_dir = host.runtime_dir()
        try:
            launch = host.launch(self.spec, runtime_dir, cwd=self.cwd)
            from jupyter_client import KernelManager

            km = KernelManager(
                kernel_spec_manager=_single_spec_manager(self.spec, launch.argv, launch.interrupt_mode),
                kernel_name=self.spec.name,
                transport="ipc",
                ip=os.path.join(runtime_dir, "k"),
                connection_file=os.path.join(runtime_dir, "kernel.json"),
                context=host.zmq_context,
                shutdown_wait_time=config.shutdown_timeout,
            )
            self._km = km
            # the kernel's messages are decoded within the notebooks' nesting bound, by every
            # client of this kernel (ours, and those client() makes for notebook runs)
            km.session.unpack = bounded_unpacker(km.session.unpack)
            _in_long_lived_thread(
                lambda: km.start_kernel(
                    env=launch.env,
                    cwd=launch.cwd,
                    independent=launch.independent,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                )
            )
            process = self._process()
            if process is not None:
                self._stderr = _StderrTail(process.stdout) if process.stdout is not None else None
                self._pgid = getattr(km.provisioner, "pgid", None) or process.pid
                orphan_guard.ensure_started()
                orphan_guard.register(self._pgid)
                if host.closed:  # the sandbox was destroyed while this kernel started
                    raise SandboxStateError("The sandbox was destroyed; its kernels are shut down")
            kc = self._kc = self._connect(km)
            try:
                kc.wait_for_ready(timeout=config.startup_timeout)
            except RuntimeError as exc:
                raise KernelError(
                    f"Kernel {self.name!r} did not start: {exc}{self._stderr_note()}",
                    code="KERNEL_START_FAILED",
                    kernel=self.name,
                ) from None
            _drain(kc.iopub_channel)
            _drain(kc.shell_channel)
        except BaseException:
            self._stop_locked(now=True)
            self._status = "stopped"
            raise
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._cancel = None
        self._status = "idle"
        self.started_at = self.last_activity = utc_now()
        self.execution_count = 0

    def _stderr_note(self) -> str:
        text = self._stderr.text.strip() if self._stderr is not None else ""
        process = self._process()
        code = process.poll() if process is not None else None
        parts = []
        if code is not None:
            parts.append(f" (the kernel process exited with code {code})")
        if text:
            lines = text.splitlines()[-15:]
            parts.append("; its last output:\n" + "\n".join(lines))
        return "".join(parts)

    def _stop_locked(self, *, now: bool) -> None:
        """Stops the process (politely unless ``now``), kills what it left behind, removes its files."""
        km, kc = self._km, self._kc
        self._km = self._kc = None
        if kc is not None:
            with contextlib.suppress(Exception):
                kc.stop_channels()
        leftovers: list[Any] = []
        process = getattr(getattr(km, "provisioner", None), "process", None) if km is not None else None
        if process is not None and process.poll() is None:
            leftovers = tree.snapshot_tree(process.pid)[1:]
        if km is not None:
            try:
                if km.has_kernel:
                    km.shutdown_kernel(now=now)
                else:
                    km.cleanup_resources()
            except Exception:
                log.warning("kernel %s did not shut down cleanly; killing it", self.name, exc_info=True)
                if process is not None:
                    if self._pgid:
                        tree.signal_tree(self._pgid, [], signal.SIGKILL)
                    with contextlib.suppress(Exception):
                        process.wait(5)
        if leftovers:  # children that left the process group (without bubblewrap's pid namespace)
            tree.signal_tree(None, tree.wait_gone(leftovers, 0), signal.SIGKILL)
        if self._pgid is not None:
            orphan_guard.unregister(self._pgid)
            self._pgid = None
        for fd in (self._wake_r, self._wake_w):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._wake_r = self._wake_w = None
        self._stderr = None
        if self._runtime_dir:
            shutil.rmtree(self._runtime_dir, ignore_errors=True)
            self._runtime_dir = None
        self._status = "stopped"

    def _wake(self, reason: str) -> None:
        """Makes a running execution stop waiting at once (restart, shutdown)."""
        self._cancel = reason
        fd = self._wake_w
        if fd is not None:
            with contextlib.suppress(OSError):
                os.write(fd, b"x")

    def interrupt(self) -> bool:
        """Interrupts the running code (``KeyboardInterrupt`` in the kernel); False when idle or down."""
        with self._life:
            if self._km is None or not self._process_alive():
                return False
            busy = self._status == "busy"
            self._km.interrupt_kernel()
            return busy

    def restart(self) -> Kernel:
        """A fresh kernel under the same name: its state (variables, imports) is lost.

        Running code is cut short (its result says so); queued executions run on the new kernel.
        """
        self._wake("restarted")
        self._turn.acquire(urgent=True)
        try:
            with self._life:
                self._restart_locked()
                self.restarts += 1
                self._lost = None
        finally:
            self._turn.release()
        return self

    def _restart_locked(self) -> None:
        """A fresh kernel in place of this one (a gateway restarts the remote kernel instead)."""
        self._stop_locked(now=True)
        self._start_locked()

    def shutdown(self, now: bool = False) -> None:
        """Stops the kernel for good (``sandbox.kernels.shutdown(name)`` also forgets it)."""
        self._removed = True
        self._wake("shut down")
        self._turn.acquire(urgent=True)
        try:
            with self._life:
                self._stop_locked(now=now)
        finally:
            self._turn.release()

    def cull(self, idle_timeout: float) -> bool:
        """Shuts the kernel down if it has been idle that long; its name stays (the next run restarts)."""
        if not self._turn.acquire(timeout=0):
            return False
        try:
            with self._life:
                if self._status != "idle" or self.idle_for() < idle_timeout:
                    return False
                code = self._exit_code()
                self._stop_locked(now=False)
                if code is not None:
                    self._lost = _died_note(code)
                else:
                    self._lost = (
                        f"the kernel was shut down after {idle_timeout:g} s without activity; a fresh kernel "
                        "was started, so earlier variables and imports are gone"
                    )
                return True
        finally:
            self._turn.release()

    def client(self, context: Any = None) -> Any:
        """A new asyncio jupyter_client client connected to this kernel (for nbclient and the like).

        The caller owns it (``stop_channels()`` when done) and its ``context`` (a
        ``zmq.asyncio.Context``; give one set up by ``host.bound_receiving`` to bound what it
        accepts). Use
        it inside ``exclusive()`` so no execution of this kernel interleaves with it.
        """
        from jupyter_client import AsyncKernelClient

        km = self._km
        if km is None:
            raise KernelError(f"Kernel {self.name!r} is not running", kernel=self.name)
        extra = {"context": context} if context is not None else {}
        return AsyncKernelClient(**km.get_connection_info(session=True), parent=km, **extra)

    @contextlib.contextmanager
    def exclusive(self) -> Any:
        """Holds this kernel's turn: executions queue until the block ends. Yields the jupyter_client
        ``KernelManager`` (started), for code that drives the kernel itself (``run_notebook``)."""
        self._turn.acquire()
        try:
            with self._life:
                self._ensure_running_locked()
                self._status = "busy"
                km = self._km
                # Our own client would be sent every message of the block and read none: the
                # kernel waits for a reader whose queue is full (it does not drop output), so
                # the client is disconnected meanwhile and a fresh one connects afterwards.
                if self._kc is not None:
                    with contextlib.suppress(Exception):
                        self._kc.stop_channels()
            try:
                yield km
            finally:
                self.last_activity = utc_now()
                if self._status == "busy":
                    self._status = "idle"
                with self._life:
                    if self._km is not None:
                        self._reconnect()
        finally:
            self._turn.release()

    def _ensure_running_locked(self) -> list[str]:
        """Starts (or restarts) the kernel when it is not running; returns notes on lost state."""
        notes: list[str] = []
        if self._removed:
            raise KernelError(f"Kernel {self.name!r} was shut down; start a new one", kernel=self.name)
        if self._running():
            return notes
        if self._started():  # died (or lost its connection) while idle
            lost = self._gone_note()
            self._stop_locked(now=True)
            self._lost = lost
            self.restarts += 1
        self._start_locked()
        if self._lost:
            notes.append(self._lost)
            self._lost = None
        return notes

    # --- execution ----------------------------------------------------------------------------

    def execute(
        self,
        code: str,
        timeout: float | None = None,
        on_output: OutputCallback | None = None,
        *,
        origin: str = "user",
        abort: threading.Event | None = None,
        tool_call_id: str | None = None,
    ) -> ExecutionResult:
        """Runs ``code`` and returns its :class:`ExecutionResult`; waits its turn behind earlier calls.

        ``timeout`` (seconds; None: no limit) interrupts the code when it passes — the kernel's
        state survives —, and ``abort`` (an Event) does the same when set. ``on_output`` receives
        every :class:`OutputEvent` as it arrives (on this thread; keep it quick). ``origin``
        ("agent", "user", ...) and ``tool_call_id`` label the execution in the activity feed.
        A ``KeyboardInterrupt`` in the caller interrupts the kernel too, then propagates.
        """
        if not isinstance(code, str):
            raise KernelError(f"code must be a string, got {type(code).__name__}", code="INVALID_ARGUMENT")
        from ..processes import validate_timeout

        limit = validate_timeout(timeout)
        record = self.host.activity.begin(self, code, origin, tool_call_id)
        self._turn.acquire()
        try:
            with self._life:
                notes = self._ensure_running_locked()
                self._status = "busy"
                kc = self._kc
            record.started()
            collector = collector_for(self.host.config.limits, record.output, on_output)
            try:
                result = self._run(kc, code, limit, abort, notes, collector)
            finally:
                self.last_activity = utc_now()
                if self._status == "busy":
                    self._status = "idle"
        except BaseException as exc:
            record.failed(exc)
            raise
        finally:
            self._turn.release()
        self.executions += 1
        if result.execution_count is not None:
            self.execution_count = result.execution_count
        self.last_result = result
        record.finished(result)
        return result

    def _run(
        self,
        kc: Any,
        code: str,
        limit: float | None,
        abort: threading.Event | None,
        notes: list[str],
        collector: OutputCollector,
    ) -> ExecutionResult:
        """Sends ``code`` and waits for its result (holding the turn; the kernel is running)."""
        return _LocalExecution(self, kc, code, limit, abort, notes, collector).wait()

    def _reconnect(self) -> Any:
        """A fresh client in place of one whose IOPub connection ZeroMQ dropped (holding the turn)."""
        old, km = self._kc, self._km
        if km is None:
            return old
        with contextlib.suppress(Exception):
            old.stop_channels()
        kc = self._kc = self._connect(km)
        return kc

    def _connect(self, km: Any) -> Any:
        """A blocking client on the shell and IOPub channels (no heartbeat: the process is watched)."""
        kc = km.client(context=self.host.zmq_context)
        kc.start_channels(shell=True, iopub=True, stdin=False, hb=False, control=False)
        return kc

    def _restart_inline(self) -> None:
        """Restart while holding the turn (a stuck or dead kernel during an execution)."""
        with self._life:
            try:
                self._restart_locked()
            except KernelError:
                log.warning("kernel %s could not be restarted", self.name, exc_info=True)
                self._stop_locked(now=True)
                return
            self.restarts += 1
            self._lost = None
            self._status = "busy"  # execute() sets it back to idle


class _LocalExecution(Execution):
    """The wait for one execution's reply and output on jupyter_client's channels.

    Ends when the kernel has replied *and* published "idle" for this request, or when: the time
    limit (or ``abort``) interrupted it and the kernel did not stop within ``interrupt_timeout``
    (restart); the kernel process died (restart); ``restart()``/``shutdown()`` woke it up.

    IOPub is a PUB/SUB stream and may lose messages: a message over ``max_message_bytes`` makes
    ZeroMQ drop the connection for good (the "idle" among what follows is lost), and a publisher
    whose queue to a slow reader is full drops what follows (the default kernel waits instead:
    see ``launch.default_kernel_argv``). So once the reply is in and "idle" is late, a
    ``kernel_info`` request serves as a barrier — IOPub is ordered, so the barrier's own status
    messages arriving means ours never will —, and if even those do not come while IOPub is
    silent, the client reconnects (while messages still arrive, a backlog is being read).
    """

    def __init__(
        self,
        kernel: Kernel,
        kc: Any,
        code: str,
        limit: float | None,
        abort: threading.Event | None,
        notes: list[str],
        collector: OutputCollector,
    ) -> None:
        super().__init__(kernel, code, limit, abort, notes, collector, kernel.host.config.interrupt_timeout)
        self.kernel = kernel
        self.last_check = self.started
        self.dead_since: float | None = None
        self.barriers: set[str] = set()
        self.barrier_at = 0.0
        self.first_barrier_at: float | None = None
        self.reconnected_at = 0.0
        self.heard_at = self.started  # the last IOPub message, ours or not
        self._attach(kc)
        self.msg_id = kc.execute(
            code, silent=False, store_history=True, allow_stdin=False, stop_on_error=False
        )

    def _attach(self, kc: Any) -> None:
        import zmq

        self.kc = kc
        self.iopub, self.shell = kc.iopub_channel, kc.shell_channel
        self.poller = zmq.Poller()
        self.poller.register(self.iopub.socket, zmq.POLLIN)
        self.poller.register(self.shell.socket, zmq.POLLIN)
        self.wake = self.kernel._wake_r
        if self.wake is not None:
            self.poller.register(self.wake, zmq.POLLIN)

    def _timeout_ms(self, now: float) -> int:
        waits = [_LIVENESS_EVERY, self.stop.wait(now)]
        if self.reply_at is not None:
            waits.append(max(self.reply_at + _IDLE_GRACE, self.barrier_at + _BARRIER_EVERY) - now)
        return max(0, int(min(waits) * 1000))

    def _receive(self, events: dict[Any, int]) -> None:
        if self.iopub.socket in events:
            self.heard_at = time.monotonic()
            for msg in _pending(self.iopub):
                parent = msg.get("parent_header", {}).get("msg_id")
                if parent == self.msg_id:
                    if self.collector.handle(msg):
                        self.idle = True
                elif parent in self.barriers and msg.get("msg_type") == "status" and not self.idle:
                    self.idle = True
                    self.notes.append(
                        "some output was lost on the way (a message over max_message_bytes, or a kernel "
                        "that drops output it cannot queue)"
                    )
        if self.shell.socket in events:
            for msg in _pending(self.shell):
                if msg.get("parent_header", {}).get("msg_id") == self.msg_id:
                    self.reply, self.reply_at = msg, time.monotonic()
        if self.wake is not None and self.wake in events:
            with contextlib.suppress(OSError):
                os.read(self.wake, 64)

    def restart_kernel(self) -> None:
        self.kernel._restart_inline()

    def watch(self, now: float) -> bool:
        """Checks IOPub with a barrier when "idle" is late, and that the kernel process is alive."""
        if self.reply_at is not None and not self.idle:
            self._barrier(now)
        if now - self.last_check >= _LIVENESS_EVERY or self.dead_since is not None:
            self.last_check = now
            if not self.kernel._process_alive():
                self.dead_since = self.dead_since or now
                if now - self.dead_since >= _DEAD_GRACE:
                    process = self.kernel._process()
                    code = process.poll() if process is not None else None
                    self.status = "error"
                    self.error = ExecutionError(
                        "KernelDied",
                        "the kernel died while running this code"
                        + (f" (exit code {code})" if code is not None else "")
                        + "; it was restarted, so its state is lost",
                    )
                    self.notes.append("the kernel died and was restarted (its state is lost)")
                    self.kernel._restart_inline()
                    self.restarted = True
                    return True
        return False

    def _barrier(self, now: float) -> None:
        assert self.reply_at is not None
        if now - self.reply_at < _IDLE_GRACE or now - self.barrier_at < _BARRIER_EVERY:
            return
        if self.first_barrier_at is None:
            self.first_barrier_at = now
        elif (
            now - self.first_barrier_at >= _RECONNECT_AFTER
            and now - self.reconnected_at >= _RECONNECT_AFTER
            and now - self.heard_at >= _RECONNECT_AFTER  # still reading a backlog: keep the connection
        ):
            self._attach(self.kernel._reconnect())
            self.reconnected_at = now
        self.barriers.add(self.kc.kernel_info())
        self.barrier_at = now

    def wait(self) -> ExecutionResult:
        while not (self.idle and self.reply is not None):
            try:
                events = dict(self.poller.poll(self._timeout_ms(time.monotonic())))
                self._receive(events)
            except KeyboardInterrupt:
                # The caller was interrupted (the notebook's stop button): stop the code, give the
                # kernel a moment to report it, and let the interrupt go on.
                with contextlib.suppress(Exception):
                    self.kernel.interrupt()
                _settle(self.iopub, self.shell, self.msg_id, self.collector, self.interrupt_timeout)
                raise
            if self.idle and self.reply is not None:
                break
            if self.check(time.monotonic()):
                break
        return self.result()


_launcher: Any = None
_launcher_lock = threading.Lock()


def _in_long_lived_thread(fn: Callable[[], Any]) -> Any:
    """Runs ``fn`` (which forks the kernel) in the main thread or in a launcher thread that never ends.

    bubblewrap's ``--die-with-parent`` is a parent-death signal, and those fire when the *thread*
    that forked the child exits: a kernel started from a short-lived thread (an ``arun`` worker,
    a widget callback) would be killed with it. The launcher threads live as long as the
    interpreter.
    """
    global _launcher
    if threading.current_thread() is threading.main_thread():
        return fn()
    with _launcher_lock:
        if _launcher is None:
            from concurrent.futures import ThreadPoolExecutor

            _launcher = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ws-kernel-launch")
    future = _launcher.submit(fn)
    try:
        return future.result()
    except BaseException:
        if not future.done():  # interrupted while the kernel starts: let it finish, then stop it
            with contextlib.suppress(BaseException):
                future.result()
        raise


def _died_note(code: int | None) -> str:
    return (
        f"the kernel had died{f' (exit code {code})' if code is not None else ''} since the last "
        "execution; it was restarted, so earlier variables and imports are gone"
    )


def _pending(channel: Any) -> Iterator[dict[str, Any]]:
    """The messages already waiting on a channel (one poll each, no waiting).

    A message that is not a Jupyter message (no delimiter, a bad signature, JSON that does not
    parse — code in the kernel can write anything to its sockets) is received and skipped: it is
    output lost on the way, which the barrier accounts for, not an error of the execution."""
    while True:
        try:
            yield channel.get_msg(timeout=0)
        except queue.Empty:
            return
        except MALFORMED:
            log.debug("a malformed message from a kernel was skipped", exc_info=True)


def _drain(channel: Any) -> None:
    with contextlib.suppress(Exception):
        for _ in _pending(channel):
            pass


def _settle(iopub: Any, shell: Any, msg_id: str, collector: OutputCollector, timeout: float) -> None:
    """After an interrupt from the caller: collect what the kernel still says, briefly."""
    deadline = time.monotonic() + timeout
    idle = replied = False
    while time.monotonic() < deadline and not (idle and replied):
        with contextlib.suppress(Exception):
            msg = iopub.get_msg(timeout=0.05)
            if msg.get("parent_header", {}).get("msg_id") == msg_id and collector.handle(msg):
                idle = True
        with contextlib.suppress(Exception):
            if shell.msg_ready():
                replied = shell.get_msg(timeout=0).get("parent_header", {}).get("msg_id") == msg_id


def _single_spec_manager(spec: ResolvedSpec, argv: list[str], interrupt_mode: str) -> Any:
    """A jupyter_client kernelspec manager that knows exactly one spec: the sandboxed argv."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

    kernel_spec = KernelSpec(
        argv=argv, display_name=spec.display_name, language=spec.language, interrupt_mode=interrupt_mode
    )

    class _OneSpec(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return kernel_spec

    return _OneSpec()
