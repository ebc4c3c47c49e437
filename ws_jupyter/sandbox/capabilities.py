"""The sandbox contract beyond its core: optional capabilities, what each means when it is
missing, and the one place that asks a sandbox for them.

Every provider has the core of ``WorkspaceSandbox`` (``sandbox.types``): ``id``,
``name``, ``provider``, ``status``, ``execute_command()`` and ``get_instructions()``. Everything
else is optional. The workspace, its tools and the notebook ask for an optional member only
through the functions of this module — never with a ``getattr`` of their own — so a provider
(a container, a remote machine) knows exactly what it may offer and what is assumed when it
does not:

| capability | members | when the sandbox does not have it |
|---|---|---|
| lifecycle | ``start()``, ``stop()``, ``destroy()``, ``ensure_running()`` | nothing to start, stop or destroy: the sandbox is taken as running |
| processes | ``processes``: a ``ProcessProvider`` | no background processes (their tools, widgets and magics are absent) |
| cancelling | ``execute_command(..., abort=Event)`` | a cancelled tool call leaves the command to its time limit |
| kernels | ``kernels``: a ``KernelProvider`` (``sandbox.kernels.provider``) | no kernels (the code tools are absent) |
| isolation | ``isolation``: ``"none"``, ``"bwrap"``, ``"seatbelt"`` or a name of its own | not declared: the provider isolates its own way (not "on the host") |
| isolation probe | ``detect_isolation()`` -> ``IsolationDetection`` | nothing to say about this machine |
| isolation config | ``native_sandbox``: ``NativeSandboxConfig`` | the network is not declared open |
| network watch | ``egress`` (the live ``EgressLog``), ``network_note()``, ``with_network_note()`` | no Network tab; results carry no line about denied connections |
| command wrapping | ``wrap_argv()``, ``is_visible()`` (``CommandWrapping``) | no local kernels (a kernel process must start in the isolation) |
| mounts | ``mount(host_path, read_only)`` (``Mounting``) | the workspace's filesystem is not made visible in the sandbox |
| home directory | ``home_directory``: ``str`` or None | None |
| default timeout | ``timeout``: seconds or None | None: no default limit (tools and magics then pass none) |
| information | ``get_info()`` -> ``SandboxInfo`` | nothing shown |

``LocalSandbox`` has all of them. ``tests/sandbox/conformance.py`` (``SandboxConformance``) and
``tests/kernels/conformance.py`` (``KernelConformance``) prove a provider against this contract.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from .types import (
    CommandResult,
    IsolationDetection,
    OutputCallback,
    ProcessEventCallback,
    ProcessInfo,
    SandboxInfo,
)

if TYPE_CHECKING:
    import threading

    from .isolation.config import Mount, NativeSandboxConfig
    from .kernels.provider import KernelProvider
    from .launch import LaunchSpec
    from .network.egress import EgressLog

__all__ = [
    "BackgroundProcess",
    "CommandWrapping",
    "LifecycleStep",
    "Mounting",
    "ProcessProvider",
    "SandboxLifecycle",
    "ensure_running",
    "sandbox_action",
    "sandbox_allows_network",
    "sandbox_cancels_commands",
    "sandbox_egress",
    "sandbox_home",
    "sandbox_info",
    "sandbox_isolation",
    "sandbox_isolation_detection",
    "sandbox_kernels",
    "sandbox_mounting",
    "sandbox_native_config",
    "sandbox_network_note",
    "sandbox_processes",
    "sandbox_runs_on_host",
    "sandbox_timeout",
    "sandbox_with_network_note",
    "sandbox_wrapping",
]

LifecycleStep = Literal["start", "stop", "destroy", "ensure_running"]


# --- the optional members, as protocols ------------------------------------------------------------


@runtime_checkable
class SandboxLifecycle(Protocol):
    """A sandbox that is started and stopped: ``start()`` makes it ready (idempotent),
    ``ensure_running()`` starts it when needed (a command's first call does), ``stop()`` ends
    every process it started (it can start again), ``destroy()`` ends it for good."""

    def start(self) -> None: ...

    def ensure_running(self) -> None: ...

    def stop(self) -> None: ...

    def destroy(self) -> None: ...


@runtime_checkable
class BackgroundProcess(Protocol):
    """A process started by ``processes.spawn()`` (``ProcessHandle`` is the local one).

    ``exit_code`` is None while it runs; ``stdout``/``stderr`` hold what was kept of its output
    (the newest part when it is bounded); ``kill()`` ends the whole process tree and returns
    False when it had already exited; ``subscribe()`` returns the function that unsubscribes.
    """

    @property
    def pid(self) -> int: ...

    @property
    def command(self) -> str: ...

    @property
    def exit_code(self) -> int | None: ...

    @property
    def running(self) -> bool: ...

    @property
    def stdout(self) -> str: ...

    @property
    def stderr(self) -> str: ...

    def wait(
        self,
        timeout: float | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
    ) -> CommandResult: ...

    def kill(self, grace: float | None = None) -> bool: ...

    def subscribe(self, callback: ProcessEventCallback, *, replay: bool = False) -> Callable[[], None]: ...

    def send_stdin(self, data: str | bytes) -> None: ...

    def close_stdin(self) -> None: ...

    def result(self) -> CommandResult: ...

    def info(self) -> ProcessInfo: ...


@runtime_checkable
class ProcessProvider(Protocol):
    """``sandbox.processes``: background processes (``ProcessManager`` is the local one).

    ``spawn()`` returns at once; ``timeout`` kills the tree when it passes (exit code 124),
    ``abort`` (an Event) when it is set; ``stdin="ignore"`` gives the process an empty stdin.
    ``list()`` shows running processes and exited ones not yet released; ``get()`` accepts the
    pid as a number or a string and returns None for an unknown one; ``kill()`` returns False
    when there was nothing to kill; ``release()`` forgets an exited process.
    """

    def spawn(
        self,
        command: str,
        cwd: str | None = None,
        env: Mapping[str, str | None] | None = None,
        timeout: float | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
        abort: threading.Event | None = None,
        stdin: Literal["pipe", "ignore"] = "pipe",
        max_retained_bytes: int | None = ...,
    ) -> BackgroundProcess: ...

    def list(self) -> list[ProcessInfo]: ...

    def get(self, pid: int | str) -> BackgroundProcess | None: ...

    def kill(self, pid: int | str, grace: float | None = None) -> bool: ...

    def release(self, pid: int | str) -> bool: ...


@runtime_checkable
class CommandWrapping(Protocol):
    """Programs of one's own, started in the sandbox's isolation (how a local kernel starts).

    ``wrap_argv()`` returns what to exec so ``argv`` runs exactly as the sandbox's commands do
    (working directory, curated environment, isolation); ``binds`` are host paths visible to
    that launch only. ``is_visible(path)`` says whether a host path exists inside the sandbox.
    """

    def wrap_argv(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        binds: Sequence[str | os.PathLike[str] | Mount] = (),
        env: Mapping[str, str | None] | None = None,
    ) -> LaunchSpec: ...

    def is_visible(self, path: str) -> bool: ...


@runtime_checkable
class Mounting(Protocol):
    """Makes a host path visible inside the sandbox (the workspace mounts its filesystem's root)."""

    def mount(self, host_path: str | os.PathLike[str], read_only: bool = False) -> object: ...


# --- the one place that asks ----------------------------------------------------------------------


def _member(sandbox: object, name: str) -> Any:
    return getattr(sandbox, name, None)


def sandbox_action(sandbox: object, step: LifecycleStep) -> Callable[[], None] | None:
    """The sandbox's ``start``/``stop``/``destroy``/``ensure_running``, or None when it has none."""
    method = _member(sandbox, step)
    return method if callable(method) else None


def ensure_running(sandbox: object) -> None:
    """Starts the sandbox if it needs starting (``ensure_running()``); nothing when it has no such step."""
    step = sandbox_action(sandbox, "ensure_running")
    if step is not None:
        step()


def sandbox_cancels_commands(sandbox: object) -> bool:
    """True when ``execute_command()`` takes ``abort`` (an Event that kills the command when set)."""
    try:
        return "abort" in inspect.signature(sandbox.execute_command).parameters  # type: ignore[attr-defined]
    except (AttributeError, TypeError, ValueError):
        return False


def sandbox_processes(sandbox: object) -> ProcessProvider | None:
    """``sandbox.processes``, or None: the sandbox runs no background processes."""
    processes: ProcessProvider | None = _member(sandbox, "processes")
    return processes


def sandbox_kernels(sandbox: object) -> KernelProvider | None:
    """``sandbox.kernels``, or None: the sandbox runs no kernels (whether a provider can run one
    now is its ``availability()``)."""
    kernels: KernelProvider | None = _member(sandbox, "kernels")
    return kernels


def sandbox_isolation(sandbox: object) -> str | None:
    """The isolation the sandbox declares (``"none"``: commands run on the host), or None when
    it declares none — a provider that isolates in its own way (a container, a remote machine)."""
    isolation = _member(sandbox, "isolation")
    return str(isolation) if isolation is not None else None


def sandbox_runs_on_host(sandbox: object) -> bool:
    """True when the sandbox says its commands run on this machine without isolation."""
    return sandbox_isolation(sandbox) == "none"


def sandbox_isolation_detection(sandbox: object) -> IsolationDetection | None:
    """What ``detect_isolation()`` finds on this machine, or None for a sandbox without that probe."""
    detect = _member(sandbox, "detect_isolation")
    if not callable(detect):
        return None
    found = detect()
    return found if isinstance(found, IsolationDetection) else None


def sandbox_native_config(sandbox: object) -> NativeSandboxConfig | None:
    """``sandbox.native_sandbox`` (what an OS-level sandbox lets commands do), or None."""
    config: NativeSandboxConfig | None = _member(sandbox, "native_sandbox")
    return config


def sandbox_allows_network(sandbox: object) -> bool:
    """True when the sandbox's configuration declares the network open to its commands."""
    return bool(getattr(sandbox_native_config(sandbox), "allow_network", False))


def sandbox_egress(sandbox: object) -> EgressLog | None:
    """The live log of the sandbox's connection attempts (``subscribe()`` for views), or None:
    its network is not watched (only ``network="allow"`` is)."""
    log: EgressLog | None = _member(sandbox, "egress")
    return log


def sandbox_network_note(sandbox: object, pid: int | None, since: datetime) -> str:
    """One line about the connections process ``pid`` (and its descendants) had denied since
    ``since``, or "" (none, or a sandbox that does not watch its network)."""
    note_for = _member(sandbox, "network_note")
    return str(note_for(pid, since) or "") if callable(note_for) else ""


def sandbox_with_network_note(sandbox: object, result: CommandResult, since: datetime) -> CommandResult:
    """``result`` with its line about denied connections (``network_note``), when the sandbox
    watches its network; ``result`` itself otherwise."""
    annotate = _member(sandbox, "with_network_note")
    return annotate(result, since) if callable(annotate) else result


def sandbox_wrapping(sandbox: object) -> CommandWrapping | None:
    """The sandbox itself when it can start programs of one's own in its isolation, else None."""
    if callable(_member(sandbox, "wrap_argv")) and callable(_member(sandbox, "is_visible")):
        wrapping: CommandWrapping = sandbox  # type: ignore[assignment]  # checked just above
        return wrapping
    return None


def sandbox_mounting(sandbox: object) -> Mounting | None:
    """The sandbox itself when it can make host paths visible inside it, else None."""
    if callable(_member(sandbox, "mount")):
        mounting: Mounting = sandbox  # type: ignore[assignment]  # checked just above
        return mounting
    return None


def sandbox_home(sandbox: object) -> str | None:
    """The private HOME its commands see, or None (not started, or not declared)."""
    home = _member(sandbox, "home_directory")
    return str(home) if home else None


def sandbox_timeout(sandbox: object) -> float | None:
    """The default time limit of its commands in seconds, or None: no default limit."""
    timeout = _member(sandbox, "timeout")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        return None
    return float(timeout)


def sandbox_info(sandbox: object) -> SandboxInfo | None:
    """``sandbox.get_info()``, or None for a sandbox that describes nothing."""
    get_info = _member(sandbox, "get_info")
    return get_info() if callable(get_info) else None
