"""Jobs: long runs started by an agent tool that outlive the call (``background: true``, or a run
that passes its ``timeout`` with ``keep_running: true``).

A tool call has a time limit on the client's side (MCP clients give up after a few minutes); a
build, a training loop or a crawl takes longer. Such a run becomes a job: the call returns its id at
once, ``workspace_job_status`` shows its output so far and how it ended, ``workspace_job_cancel``
stops it. Two kinds:

* a **command** job is a background process of the sandbox (so it is in ``%ws ps``, the process
  monitor and ``workspace_list_processes`` too); cancelling kills its process tree;
* a **code** job is an execution on a sandbox kernel, run on a thread of its own (it is in the
  kernel activity feed like any execution); it keeps its kernel busy — later executions on that
  kernel wait their turn behind it —, and cancelling interrupts it (the kernel's state survives).

Each job belongs to whoever started it: the *owner* named by the call's request context (an
outside MCP client is its own owner, see :mod:`ws_jupyter.adapters.mcp_http`; calls without one are
the workspace's). A caller sees only its own jobs, unless the job was started ``shared``; the
same holds for a command job's process in the background process tools
(``process_visible_to``), where the workspace's own calls see every process. The
registry is per workspace (``jobs(workspace)``), bounded (the oldest finished jobs are forgotten
first), and ``cancel_all()`` (called by ``Workspace.destroy``) stops every running one.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
import weakref
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Literal

from .._per_workspace import PerWorkspace

__all__ = ["Job", "JobRegistry", "job_owner", "jobs"]

JobKind = Literal["command", "code"]
JobStatus = Literal["running", "finished", "failed", "cancelled"]

#: Jobs kept per workspace (finished ones beyond this are forgotten, oldest first).
MAX_JOBS = 200
#: Jobs running at once per workspace: one more is refused (each holds a process or a thread).
MAX_RUNNING = 64
#: Characters of each stream a code job keeps while it runs (its start and its end).
_STREAM_KEEP = 256 * 1024
_seq = itertools.count(1)


def job_owner(request_context: Any) -> str | None:
    """Who a call's jobs belong to: the request context's user (``user_id``/``resource_id``), or
    None for the workspace's own calls."""
    from .tracking import conversation_key

    key = conversation_key(request_context)
    return key[0] or None if key is not None else None


class _Tail:
    """A stream kept within bounds: its first and its last ``keep // 2`` characters."""

    def __init__(self, keep: int = _STREAM_KEEP) -> None:
        self._half = keep // 2
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.dropped = 0

    def add(self, text: str) -> None:
        if self._head_len < self._half:
            take = text[: self._half - self._head_len]
            self._head.append(take)
            self._head_len += len(take)
            text = text[len(take) :]
        if not text:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        while self._tail_len - len(self._tail[0]) >= self._half and len(self._tail) > 1:
            self.dropped += len(self._tail[0])
            self._tail_len -= len(self._tail.popleft())

    def text(self) -> str:
        return "".join(self._head) + "".join(self._tail)


@dataclass
class Job:
    """One long run. ``status`` is ``running`` until it ends (``finished`` / ``failed`` /
    ``cancelled``); ``stdout``/``stderr`` are its output so far (bounded)."""

    id: str
    kind: JobKind
    label: str
    owner: str | None
    started_at: float
    shared: bool = False
    kernel: str | None = None
    pid: int | None = None
    client: str | None = None
    tool_call_id: str | None = None
    ended_at: float | None = None
    cancelled: bool = False
    _process: Any = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _abort: threading.Event = field(default_factory=threading.Event, repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _out: _Tail = field(default_factory=_Tail, repr=False)
    _err: _Tail = field(default_factory=_Tail, repr=False)
    _result: Any = field(default=None, repr=False)
    _error: BaseException | None = field(default=None, repr=False)

    @property
    def done(self) -> bool:
        if self._process is not None:
            return self._process.exit_code is not None
        return self._done.is_set()

    @property
    def status(self) -> JobStatus:
        if not self.done:
            return "running"
        if self.cancelled:
            return "cancelled"
        if self._error is not None or (self.exit_code not in (None, 0)):
            return "failed"
        if self._result is not None and getattr(self._result, "error", None) is not None:
            return "failed"
        return "finished"

    @property
    def exit_code(self) -> int | None:
        return self._process.exit_code if self._process is not None else None

    @property
    def stdout(self) -> str:
        return self._process.stdout if self._process is not None else self._out.text()

    @property
    def stderr(self) -> str:
        return self._process.stderr if self._process is not None else self._err.text()

    @property
    def dropped(self) -> tuple[int, int]:
        """Characters (bytes for a command) of stdout and stderr not kept."""
        if self._process is not None:
            return (
                int(getattr(self._process, "stdout_dropped_bytes", 0)),
                int(getattr(self._process, "stderr_dropped_bytes", 0)),
            )
        return self._out.dropped, self._err.dropped

    @property
    def result(self) -> Any:
        """A code job's :class:`~ws_jupyter.sandbox.kernels.ExecutionResult` once it ended."""
        return self._result

    @property
    def error(self) -> BaseException | None:
        """Why a code job could not run (the kernel failed to start...), or None."""
        return self._error

    @property
    def runtime(self) -> float:
        if self._process is not None:
            return max(0.0, float(self._process.execution_time_ms) / 1000)
        end = self.ended_at if self.ended_at is not None else time.time()
        return max(0.0, end - self.started_at)

    def wait(self, timeout: float | None, abort: threading.Event | None = None) -> bool:
        """Wait up to ``timeout`` seconds (or until ``abort``) for the end; True when it ended."""
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while not self.done:
            if abort is not None and abort.is_set():
                return False
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            step = 0.2 if left is None else min(0.2, left)
            if self._process is not None:
                try:
                    self._process.wait(timeout=step)
                except Exception:
                    pass
            else:
                self._done.wait(step)
        return True

    def cancel(self, timeout: float = 10.0) -> bool:
        """Stop the run (kill a command's process tree; interrupt a code run). False when it had
        already ended."""
        if self.done:
            return False
        self.cancelled = True
        if self._process is not None:
            self._process.kill()
        else:
            self._abort.set()
            self._done.wait(timeout)
        self.ended_at = time.time()
        return True

    def visible_to(self, owner: str | None) -> bool:
        return _visible(self.owner, self.shared, owner)


def _visible(owner: str | None, shared: bool, caller: str | None) -> bool:
    """A job (or its process) is seen by its owner, and by everyone when shared."""
    return shared or caller == owner


def _new_job(
    kind: JobKind,
    label: str,
    owner: str | None,
    shared: bool,
    client: str | None,
    tool_call_id: str | None,
    **fields: Any,
) -> Job:
    """A job with a fresh id: a sequence number (readable) and random bits (not guessable)."""
    return Job(
        id=f"job-{next(_seq)}-{secrets.token_hex(4)}",
        kind=kind,
        label=label,
        owner=owner,
        started_at=time.time(),
        shared=shared,
        client=client,
        tool_call_id=tool_call_id,
        **fields,
    )


class JobRegistry:
    """The jobs of one workspace (thread-safe, bounded)."""

    def __init__(self, limit: int = MAX_JOBS) -> None:
        self._lock = threading.Lock()
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._limit = limit
        # a command job's process handle -> (owner, shared): kept as long as the sandbox keeps the
        # process listed, even after the job was forgotten (its owner must not be lost with it); the
        # value must not refer to the handle, or the entry would never go
        self._by_process: weakref.WeakKeyDictionary[Any, tuple[str | None, bool]] = (
            weakref.WeakKeyDictionary()
        )

    def _check_room(self) -> None:
        from ..errors import SandboxError

        running = sum(1 for j in self.list(everyone=True) if not j.done)
        if running >= MAX_RUNNING:
            raise SandboxError(
                f"Too many jobs running ({running}, the most at once): wait for some to end or cancel "
                "them (workspace_job_status lists yours)",
                code="TOO_MANY_JOBS",
            )

    def _add(self, job: Job) -> Job:
        with self._lock:
            self._jobs[job.id] = job
            if len(self._jobs) > self._limit:
                for jid in [j.id for j in self._jobs.values() if j.done][: len(self._jobs) - self._limit]:
                    del self._jobs[jid]
        return job

    def start_command(
        self,
        processes: Any,
        command: str,
        *,
        cwd: str | None = None,
        timeout: float | None = None,
        owner: str | None = None,
        shared: bool = False,
        client: str | None = None,
        tool_call_id: str | None = None,
        on_stdout: Any = None,
        on_stderr: Any = None,
    ) -> Job:
        """Spawn ``command`` as a background process of ``processes`` (a process manager)."""
        self._check_room()
        handle = processes.spawn(
            command, cwd=cwd, timeout=timeout, on_stdout=on_stdout, on_stderr=on_stderr, stdin="ignore"
        )
        job = _new_job(
            "command", command, owner, shared, client, tool_call_id, pid=handle.pid, _process=handle
        )
        with self._lock:
            try:
                self._by_process[handle] = (owner, shared)
            except TypeError:  # a handle that cannot be weakly referenced: found among the jobs
                pass
        return self._add(job)

    def start_code(
        self,
        kernels: Any,
        code: str,
        *,
        kernel: str = "default",
        timeout: float | None = None,
        owner: str | None = None,
        shared: bool = False,
        client: str | None = None,
        tool_call_id: str | None = None,
    ) -> Job:
        """Run ``code`` on ``kernel`` (of the kernel manager ``kernels``) on a thread of its own."""
        self._check_room()
        job = _new_job("code", code, owner, shared, client, tool_call_id, kernel=kernel)

        def on_output(event: Any) -> None:
            if event.kind == "stdout":
                job._out.add(event.text)
            elif event.kind == "stderr":
                job._err.add(event.text)

        def run() -> None:
            try:
                job._result = kernels.execute(
                    code,
                    kernel=kernel,
                    timeout=timeout,
                    on_output=on_output,
                    origin="agent",
                    abort=job._abort,
                    tool_call_id=tool_call_id,
                )
            except BaseException as exc:  # kept for workspace_job_status
                job._error = exc
            finally:
                job.ended_at = time.time()
                job._done.set()

        job._thread = threading.Thread(target=run, name=f"ws-jupyter-{job.id}", daemon=True)
        self._add(job)
        job._thread.start()
        return job

    def get(self, job_id: str, owner: str | None = None, *, everyone: bool = False) -> Job | None:
        """The job ``job_id`` when ``owner`` may see it (``everyone``: the notebook's user)."""
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None or not (everyone or job.visible_to(owner)):
            return None
        return job

    def list(self, owner: str | None = None, *, everyone: bool = False) -> list[Job]:
        """The jobs ``owner`` may see, oldest first (``everyone``: all of them)."""
        with self._lock:
            items = list(self._jobs.values())
        return [j for j in items if everyone or j.visible_to(owner)]

    def process_visible_to(self, handle: Any, owner: str | None) -> bool:
        """Whether ``owner`` may see the background process ``handle``: the workspace's own calls
        (``owner`` None) see every process; any other caller only the processes of its own command
        jobs (and of shared ones) — never the notebook user's nor another client's."""
        if owner is None:
            return True
        if handle is None:
            return False
        with self._lock:
            try:
                record = self._by_process.get(handle)
            except TypeError:
                record = None
            if record is None:
                job = next((j for j in self._jobs.values() if j._process is handle), None)
                record = (job.owner, job.shared) if job is not None else None
        return record is not None and _visible(record[0], record[1], owner)

    def running_on_kernel(self, kernel: str) -> Job | None:
        """The running code job that holds ``kernel``, if any."""
        with self._lock:
            items = list(self._jobs.values())
        return next((j for j in items if j.kind == "code" and j.kernel == kernel and not j.done), None)

    def cancel_all(self, timeout: float = 10.0) -> int:
        """Cancel every running job; returns how many there were."""
        running = [j for j in self.list(everyone=True) if not j.done]
        for job in running:
            try:
                job.cancel(timeout)
            except Exception:
                pass
        return len(running)

    def __len__(self) -> int:
        return len(self._jobs)


_registries: PerWorkspace[JobRegistry] = PerWorkspace()


def jobs(workspace: Any) -> JobRegistry:
    """The job registry of ``workspace`` (created on first use, gone with the workspace)."""
    return _registries.get_or_make(workspace, JobRegistry)


def existing_jobs(workspace: Any) -> JobRegistry | None:
    """The registry when one was made (destroy does not create one to cancel nothing)."""
    return _registries.get(workspace)
