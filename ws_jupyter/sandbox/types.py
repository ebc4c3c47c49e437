"""The sandbox vocabulary: the ``WorkspaceSandbox`` protocol and command/process values.

``LocalSandbox`` is one implementation; anything with the members of ``WorkspaceSandbox`` can
back a Workspace and its tools. What a sandbox may offer besides — processes, kernels,
isolation, mounts, a lifecycle — and what is assumed when it does not is written down in
``sandbox.capabilities``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from ..request_context import RequestContext

__all__ = [
    "CommandResult",
    "IsolationBackend",
    "IsolationDetection",
    "IsolationMode",
    "OutputCallback",
    "ProcessEventCallback",
    "ProcessInfo",
    "SandboxInfo",
    "WorkspaceSandbox",
]

#: Receives decoded text chunks as they arrive (on a reader thread; must not block).
OutputCallback = Callable[[str], None]

#: ``subscribe()`` callbacks: ``fn(kind, text)`` with kind ``"stdout"``, ``"stderr"`` or ``"exit"``
#: (for ``"exit"`` the text is empty; read ``handle.exit_code``). Runs on the I/O thread.
ProcessEventCallback = Callable[[str, str], None]

#: A concrete isolation backend, and what ``LocalSandbox(isolation=...)`` accepts.
IsolationBackend = Literal["none", "bwrap", "seatbelt"]
IsolationMode = Literal["none", "bwrap", "seatbelt", "auto"]


@dataclass(frozen=True)
class CommandResult:
    """Outcome of a foreground command (or of waiting on a background process).

    A non-zero exit is a result, not an exception. ``exit_code`` is 124 after a timeout,
    128+n after death by signal n, 127 for an unknown command.
    """

    success: bool
    exit_code: int
    stdout: str
    stderr: str
    execution_time_ms: float
    timed_out: bool = False
    killed: bool = False
    command: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    #: the process id it ran as (the outer one, on the host), when known
    pid: int | None = None
    #: in network ``allow`` mode, a line about its denied connection attempts ("" when none)
    network_note: str = ""


@dataclass(frozen=True)
class ProcessInfo:
    """A tracked process as listed by ``processes.list()`` (running or exited, not yet released)."""

    pid: int
    command: str
    running: bool
    exit_code: int | None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    timed_out: bool = False
    killed: bool = False

    @property
    def runtime_seconds(self) -> float | None:
        """Wall-clock run time so far (or in total once exited)."""
        if self.started_at is None:
            return None
        end = self.ended_at or datetime.now(self.started_at.tzinfo)
        return max(0.0, (end - self.started_at).total_seconds())


@dataclass(frozen=True)
class IsolationDetection:
    """Result of probing an isolation backend: ``available`` only if a tiny sandbox really ran."""

    backend: IsolationBackend
    available: bool
    message: str


@dataclass(frozen=True)
class SandboxInfo:
    id: str
    name: str
    provider: str
    status: str
    created_at: datetime | None = None
    working_directory: str | None = None
    isolation: str = "none"
    metadata: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class WorkspaceSandbox(Protocol):
    """What a Workspace needs from every sandbox provider.

    ``status`` is ``"running"`` once commands run (a provider that needs no start may always say
    so); ``execute_command()`` runs a shell command line to completion and returns a
    ``CommandResult`` — a non-zero exit, a timeout (exit code 124) or a missing command (127) is a
    result, not an exception; ``get_instructions()`` is what a model is told about the sandbox.
    Optional members (processes, kernels, isolation, mounts, lifecycle, ...) and their defaults:
    ``ws_jupyter.sandbox.capabilities``. ``tests/sandbox/conformance.py`` proves a provider.
    """

    id: str
    name: str
    provider: str

    @property
    def status(self) -> str: ...

    def execute_command(
        self,
        command: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
    ) -> CommandResult: ...

    def get_instructions(self, request_context: RequestContext | None = None) -> str: ...
