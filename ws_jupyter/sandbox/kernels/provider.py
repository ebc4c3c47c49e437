"""``KernelProvider``: what ``sandbox.kernels`` offers, written down for other providers.

``SandboxKernelManager`` (kernels in the sandbox's own isolation) and ``GatewayKernelManager``
(kernels on a Jupyter gateway) are the two here; a container or remote sandbox can bring its
own. The workspace's code tools, ``%ws kernel``/``%%ws py`` and the KernelActivity widget use
only these members, and ``tests/kernels/conformance.py`` (``KernelConformance``) checks them.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import threading

    from .activity import ExecutionFeed
    from .config import KernelsConfig
    from .result import ExecutionResult, OutputEvent

__all__ = ["KernelInfo", "KernelProvider", "SandboxKernel"]


@dataclass(frozen=True)
class KernelInfo:
    """A kernel as ``kernels.list()`` shows it."""

    name: str
    spec: str
    language: str
    status: str  # starting | idle | busy | dead | stopped
    pid: int | None
    isolation: str
    started_at: datetime | None
    last_activity: datetime | None
    execution_count: int
    executions: int
    restarts: int

    @property
    def idle_seconds(self) -> float | None:
        if self.last_activity is None or self.status == "busy":
            return None
        return max(0.0, (datetime.now(timezone.utc) - self.last_activity).total_seconds())


@runtime_checkable
class SandboxKernel(Protocol):
    """One named kernel (``kernels.start(name)``, ``kernels.get(name)``).

    ``execute()`` waits its turn behind earlier calls and returns an ``ExecutionResult``: a time
    limit (``timeout``) or ``abort`` interrupts the code and keeps the kernel's state, a kernel
    that does not stop or that dies is restarted and the result says its state is lost.
    ``interrupt()`` is False when no code was running. ``client()``/``exclusive()`` hand out the
    jupyter_client side of a local kernel (for running a notebook); a kernel that has none
    raises ``KernelError`` with code ``UNSUPPORTED``.
    """

    name: str

    @property
    def status(self) -> str: ...

    @property
    def pid(self) -> int | None:
        """The kernel's process on this machine; None when it is not running, or runs elsewhere."""

    @property
    def connection_file(self) -> str | None:
        """The kernel's connection file on this machine, in the kernel's private folder (bound
        into its own sandbox only: copies of the user's data go through it); None when the kernel
        is not running, or runs elsewhere."""

    def info(self) -> KernelInfo: ...

    def execute(
        self,
        code: str,
        timeout: float | None = None,
        on_output: Callable[[OutputEvent], None] | None = None,
        *,
        origin: str = "user",
        abort: threading.Event | None = None,
        tool_call_id: str | None = None,
    ) -> ExecutionResult: ...

    def interrupt(self) -> bool: ...

    def restart(self) -> SandboxKernel: ...

    def shutdown(self, now: bool = False) -> None: ...

    def client(self, context: Any = None) -> Any: ...

    def exclusive(self) -> AbstractContextManager[Any]: ...


@runtime_checkable
class KernelProvider(Protocol):
    """``sandbox.kernels``: named kernels, started on demand, that die with the sandbox.

    ``availability()`` is ``(True, "")`` when kernels can run, else ``(False, why)`` — asked
    before tools are offered, so it must not start anything. ``remote`` is True when the kernels
    run elsewhere (they do not see the sandbox's files; notebooks cannot be run on them).
    ``activity`` publishes every execution; ``config`` holds the time and output limits.
    """

    remote: bool

    @property
    def config(self) -> KernelsConfig: ...

    @property
    def activity(self) -> ExecutionFeed: ...

    @property
    def available(self) -> bool: ...

    def availability(self) -> tuple[bool, str]: ...

    def execute(
        self,
        code: str,
        kernel: str = ...,
        timeout: float | None = None,
        on_output: Callable[[OutputEvent], None] | None = None,
        **kwargs: Any,
    ) -> ExecutionResult: ...

    def start(self, name: str = ..., spec: str | None = None, *, cwd: str | None = None) -> SandboxKernel: ...

    def get(self, name: str = ...) -> SandboxKernel | None: ...

    def __getitem__(self, name: str) -> SandboxKernel: ...

    def names(self) -> list[str]: ...

    def list(self) -> list[KernelInfo]: ...

    def interrupt(self, name: str = ...) -> bool: ...

    def restart(self, name: str = ...) -> SandboxKernel: ...

    def shutdown(self, name: str = ..., now: bool = False) -> bool: ...

    def shutdown_all(self, now: bool = False) -> int: ...

    def close(self) -> None: ...
