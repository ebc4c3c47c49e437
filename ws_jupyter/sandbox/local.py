"""``LocalSandbox``: shell commands and background processes on this machine.

Without isolation commands run on the host as the notebook user (with a curated environment, a
private HOME, an enforced timeout and the configured resource limits). With ``isolation="bwrap"`` each command runs in a fresh
bubblewrap sandbox: only the working directory (and configured paths) are writable, the system
is read-only, the rest of the host is invisible, the network is off unless allowed, and no process
outlives the sandbox. Foreground commands and background processes share one code path — the
process manager — and one wrapper.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import shutil
import sys
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..errors import (
    InvalidArgumentError,
    IsolationUnavailableError,
    SandboxError,
    SandboxStateError,
    WorkspaceConfigError,
)
from ..filesystem import host_trusted
from ..filesystem.containment import is_within
from ..lifecycle import Lifecycle
from ..request_context import RequestContext
from .environment import build_environment, python_bin_dir, validate_env
from .guard import orphan_guard
from .isolation.bwrap import BwrapPlan, python_prefixes
from .isolation.cgroups import SandboxCgroup
from .isolation.config import Mount, NativeSandboxConfig
from .isolation.detect import detect_isolation, probe_backend
from .isolation.rlimits import host_prefix
from .isolation.seatbelt import (
    build_seatbelt_profile,
    is_generated_profile,
    profile_file_name,
    seatbelt_argv,
    seatbelt_wrap,
)
from .isolation.seccomp import filter_path
from .launch import LaunchSpec
from .network.config import NetworkConfig, effective_network
from .processes import (
    DEFAULT_MAX_RETAINED_BYTES,
    ProcessManager,
    validate_retained,
    validate_timeout,
)
from .tempdirs import private_dir
from .types import (
    CommandResult,
    IsolationBackend,
    IsolationDetection,
    IsolationMode,
    OutputCallback,
    SandboxInfo,
)

if TYPE_CHECKING:
    from .capabilities import CommandWrapping, Mounting, ProcessProvider, SandboxLifecycle
    from .kernels.config import KernelsConfig
    from .kernels.manager import SandboxKernelManager
    from .kernels.provider import KernelProvider
    from .network.egress import EgressEvent
    from .network.runtime import SandboxNetwork
    from .types import WorkspaceSandbox

__all__ = ["LocalSandbox"]

_ISOLATION_MODES = ("none", "bwrap", "seatbelt", "auto")
_ALL_STATUSES = ("pending", "starting", "running", "stopping", "stopped", "error", "destroying")


def _now() -> datetime:
    return datetime.now(timezone.utc)


class LocalSandbox:
    """Runs shell commands and background processes locally, optionally inside bubblewrap.

    >>> sb = LocalSandbox(working_directory="./work", isolation="auto", timeout=60)
    >>> sb.execute_command("echo", args=["hello world"]).stdout              # doctest: +SKIP
    'hello world\\n'
    >>> server = sb.processes.spawn("python -m http.server 8000")             # doctest: +SKIP
    >>> sb.destroy()  # kills every process it started; never deletes files   # doctest: +SKIP

    ``network=`` says what commands and kernels may reach (``sandbox/network/``): ``"none"`` (the
    default under isolation), a list of hosts (``["pypi.org", "*.example.com:8443"]``: only those,
    through a filtering proxy outside the sandbox, every attempt in ``egress_log()``; needs
    bubblewrap) or ``"full"``. Without isolation it is ``"full"``: the others would be promises
    nobody keeps, and are refused.
    """

    name = "LocalSandbox"
    provider = "local"

    def __init__(
        self,
        working_directory: str | os.PathLike[str] | None = None,
        env: Mapping[str, str | None] | None = None,
        timeout: float | None = 30.0,
        isolation: IsolationMode | str = "none",
        native_sandbox: NativeSandboxConfig | Mapping[str, Any] | None = None,
        # A string replaces the default instructions ("" suppresses them); a function
        # fn(default_instructions, request_context) -> str adapts them per request.
        instructions: str | Callable[[str, RequestContext | None], str] | None = None,
        id: str | None = None,
        *,
        kill_grace: float = 2.0,
        max_output_bytes: int | None = DEFAULT_MAX_RETAINED_BYTES,
        max_exited_processes: int = 100,
        kernels: KernelsConfig | Mapping[str, Any] | SandboxKernelManager | None = None,
        network: NetworkConfig | str | Sequence[str] | Mapping[str, Any] | None = None,
    ) -> None:
        if id is not None and (not isinstance(id, str) or not id.strip()):
            raise WorkspaceConfigError(f"LocalSandbox id must be a non-empty string, got {id!r}")
        self.id: str = id or f"local-sandbox-{uuid.uuid4().hex[:8]}"
        if working_directory is None:
            working_directory = os.path.join(os.getcwd(), ".sandbox")
        if not isinstance(working_directory, (str, os.PathLike)) or not os.fspath(working_directory):
            raise WorkspaceConfigError(f"working_directory must be a path, got {working_directory!r}")
        self._working_directory = os.path.abspath(os.path.expanduser(os.fspath(working_directory)))
        try:
            self._env = validate_env(env)
            self._timeout = validate_timeout(timeout)
            self._max_output_bytes = validate_retained(max_output_bytes)
        except InvalidArgumentError as exc:
            raise WorkspaceConfigError(str(exc)) from None
        self._config = NativeSandboxConfig.coerce(native_sandbox)
        if instructions is not None and not isinstance(instructions, str) and not callable(instructions):
            raise WorkspaceConfigError("instructions must be a string, a function or None")
        self._instructions = instructions
        # Commands find the notebook's own Python first (python, pip, console scripts).
        self._python_bin = python_bin_dir()

        if isolation not in _ISOLATION_MODES:
            raise WorkspaceConfigError(
                f"isolation must be one of {', '.join(map(repr, _ISOLATION_MODES))}, got {isolation!r}"
            )
        self._isolation_requested = str(isolation)
        self._isolation_warning: str | None = None
        if isolation == "auto":
            detection = detect_isolation()
            backend: IsolationBackend = detection.backend if detection.available else "none"
            if not detection.available:
                self._isolation_warning = (
                    f"isolation='auto' found no working sandbox backend ({detection.message}); "
                    "commands run on the host without isolation"
                )
        else:
            backend = isolation  # type: ignore[assignment]  # checked against _ISOLATION_MODES above
            detection = probe_backend(backend)
            if not detection.available:
                raise IsolationUnavailableError(backend, detection.message)
        if backend == "bwrap" and self._config.seccomp:
            try:
                filter_path()  # compiled once per process; fails where libseccomp is missing
            except IsolationUnavailableError as exc:
                if isolation != "auto":
                    raise
                backend = "none"
                self._isolation_warning = (
                    f"isolation='auto' cannot use bubblewrap ({exc.reason}); commands run on the host "
                    "without isolation"
                )
        self._detection = detection
        self._isolation: IsolationBackend = backend
        # The network: "none", "full" (the host's) or "allow" (a filtering proxy outside the
        # sandbox, see sandbox/network/); refused where it cannot be enforced.
        self._network_config = effective_network(
            network, isolation=backend, allow_network=self._config.allow_network
        )
        if self._network_config.mode == "full" and backend != "none" and not self._config.allow_network:
            self._config = dataclasses.replace(self._config, allow_network=True)
        self._network: SandboxNetwork | None = None
        if self._network_config.mode == "allow":
            from .network.runtime import SandboxNetwork

            if self._network_config.secrets:
                from .network.tls import require_cryptography

                require_cryptography()
            self._network = SandboxNetwork(self._network_config, name=self.id)

        self._lock = threading.RLock()
        self._lifecycle = Lifecycle("pending")
        self._mounts: dict[str, Mount] = {}
        self._state_dir: str | None = None
        self._plan: BwrapPlan | None = None
        self._cgroup: SandboxCgroup | None = None
        self._seatbelt_profile: str | None = None
        self._seatbelt_generated = False
        self.created_at = _now()
        self.processes = ProcessManager(
            self, kill_grace=kill_grace, max_exited=max_exited_processes, name=f"ws-{self.id}"
        )
        from .kernels.config import KernelsConfig as _KernelsConfig
        from .kernels.manager import SandboxKernelManager

        self._kernels: SandboxKernelManager | None = None
        if isinstance(kernels, SandboxKernelManager):  # remote kernels (GatewayKernelManager)
            self._kernels = kernels.attach(self)
            kernels = kernels.config
        self._kernels_config = _KernelsConfig.coerce(kernels)

    # --- properties ---------------------------------------------------------------------------------

    @property
    def status(self) -> str:
        """pending | starting | running | stopping | stopped | error | destroying | destroyed"""
        return self._lifecycle.status

    @property
    def working_directory(self) -> str:
        return self._working_directory

    @property
    def timeout(self) -> float | None:
        """Default limit (seconds) of foreground commands; None means no limit."""
        return self._timeout

    @property
    def isolation(self) -> IsolationBackend:
        """The backend in use (``"auto"`` resolved to what the probe found)."""
        return self._isolation

    @property
    def isolation_requested(self) -> str:
        """What ``isolation=`` asked for (``"auto"`` stays ``"auto"``; ``isolation`` is what it found)."""
        return self._isolation_requested

    @property
    def native_sandbox(self) -> NativeSandboxConfig:
        return self._config

    @property
    def network(self) -> NetworkConfig:
        """What commands may reach: mode ``none``, ``allow`` (with its rules) or ``full``."""
        return self._network_config

    def egress_log(self, *, denied_only: bool = False, limit: int | None = None) -> list[EgressEvent]:
        """Every connection attempt through the sandbox's proxy (``allow`` mode), oldest first.

        Each ``EgressEvent`` has the time, host, port, the decision and its reason, and the bytes
        sent each way. Empty in the other modes: ``none`` has nowhere to go, and ``full`` is
        not watched.
        """
        network = self._network
        return [] if network is None else network.events(denied_only=denied_only, limit=limit)

    @property
    def egress(self) -> Any:
        """The live ``EgressLog`` (``subscribe()`` for views); None unless the mode is ``allow``."""
        return None if self._network is None else self._network.log

    @property
    def mounts(self) -> tuple[Mount, ...]:
        with self._lock:
            return tuple(self._mounts.values())

    @property
    def kernels(self) -> SandboxKernelManager:
        """The sandbox's Jupyter kernels (``ws_jupyter.sandbox.kernels``), run in its isolation."""
        with self._lock:
            if self._kernels is None:
                from .kernels.manager import SandboxKernelManager

                self._kernels = SandboxKernelManager(self, self._kernels_config)
            return self._kernels

    @property
    def home_directory(self) -> str | None:
        """The private HOME commands see (created on start, deleted on destroy)."""
        return os.path.join(self._state_dir, "home") if self._state_dir else None

    @staticmethod
    def detect_isolation(refresh: bool = False) -> IsolationDetection:
        """Probes the best backend of this platform (really starts a tiny sandbox; cached)."""
        return detect_isolation(refresh=refresh)

    # --- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Creates the working directory and the private HOME/TMPDIR; idempotent, coalesced."""
        self._lifecycle.transition(
            "running",
            "starting",
            self._do_start,
            allowed_from=("pending", "stopped", "error"),
            refuse=lambda s: SandboxStateError(f"Cannot start a sandbox that is {s}"),
        )

    def _do_start(self) -> None:
        try:
            os.makedirs(self._working_directory, exist_ok=True)
        except OSError as exc:
            raise SandboxError(
                f"Cannot create the working directory {self._working_directory}: {exc.strerror}",
                code="START_FAILED",
            )
        if not os.path.isdir(self._working_directory):
            raise SandboxError(f"{self._working_directory} is not a directory", code="START_FAILED")
        with self._lock:
            if self._state_dir is None or not os.path.isdir(self._state_dir):
                self._state_dir = private_dir(f"ws-sandbox-{self.id[-8:]}-")
            for sub in ("home", "tmp"):
                os.makedirs(os.path.join(self._state_dir, sub), exist_ok=True)
            if self._isolation == "bwrap" and self._config.cgroup and self._cgroup is None:
                self._cgroup = SandboxCgroup.create(
                    f"ws-sandbox-{os.getpid()}-{uuid.uuid4().hex[:8]}",
                    max_processes=self._config.max_processes,
                    max_memory_bytes=None
                    if self._config.max_memory_mb is None
                    else self._config.max_memory_mb << 20,
                )
                if self._cgroup is not None:
                    for path in self._cgroup.paths:
                        orphan_guard.register_cgroup(path)
            self._rebuild_wrapper()
            if self._network is not None:
                self._network.start(self._state_dir, self._bridge_python())
        orphan_guard.ensure_started()

    def _bridge_python(self) -> str:
        """A Python the sandbox can run for its network bridge (the notebook's, or the system's)."""
        plan = self._plan
        for candidate in (sys.executable, os.path.realpath(sys.executable), "/usr/bin/python3"):
            if os.access(candidate, os.X_OK) and (plan is None or plan.is_visible(candidate)):
                return candidate
        raise SandboxError(
            "network='allow' needs a Python 3 inside the sandbox for its network bridge: the "
            "notebook's is hidden (allow_system_binaries=False) and /usr/bin/python3 is missing",
            code="NETWORK_UNAVAILABLE",
        )

    def stop(self) -> None:
        """Kills every process started by this sandbox; it can be started again."""
        self._lifecycle.transition(
            "stopped",
            "stopping",
            self._do_stop,
            allowed_from=("running", "error"),
            refuse=lambda s: SandboxStateError(f"Cannot stop a sandbox that is {s}"),
            skip_if=("pending", "destroyed"),
        )

    def _do_stop(self) -> None:
        if self._kernels is not None:
            self._kernels.shutdown_all()
        self.processes.kill_all()
        if self._network is not None:
            self._network.stop()

    def destroy(self) -> None:
        """Kills every process, deletes the private HOME/TMPDIR; never touches the working directory."""
        self._lifecycle.transition(
            "destroyed",
            "destroying",
            self._do_destroy,
            allowed_from=_ALL_STATUSES,
            refuse=lambda s: SandboxStateError(f"Cannot destroy a sandbox that is {s}"),
        )

    def _do_destroy(self) -> None:
        if self._kernels is not None:
            self._kernels.close()
        self.processes.close()
        if self._network is not None:
            self._network.stop()
        with self._lock:
            state, self._state_dir = self._state_dir, None
            profile = self._seatbelt_profile if self._seatbelt_generated else None
            self._plan = None
            cgroup, self._cgroup = self._cgroup, None
        if cgroup is not None:
            paths = list(cgroup.paths)
            cgroup.destroy()  # whatever escaped the process manager's tree kill dies here
            for path in paths:
                orphan_guard.unregister_cgroup(path)
        if state:
            shutil.rmtree(state, ignore_errors=True)
        if profile and (not state or not profile.startswith(state)):
            with contextlib.suppress(OSError):
                os.unlink(profile)

    def ensure_running(self) -> None:
        """Auto-start: the first command starts the sandbox."""
        status = self._lifecycle.status
        if status == "running":
            return
        if status in ("destroying", "destroyed"):
            raise SandboxStateError(f"The sandbox {self.id} was destroyed; create a new one")
        self.start()

    def __enter__(self) -> LocalSandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    # --- mounts -----------------------------------------------------------------------------------------

    def mount(self, host_path: str | os.PathLike[str], read_only: bool = False) -> Mount:
        """Makes ``host_path`` visible to commands at the same path (a bind under bubblewrap).

        Without isolation every host path is visible anyway; the mount is recorded (and shown
        by ``get_info()``) so the same code works with and without isolation.
        """
        if not isinstance(host_path, (str, os.PathLike)) or not os.fspath(host_path):
            raise InvalidArgumentError(f"mount() needs a host path, got {host_path!r}")
        path = os.path.realpath(os.path.expanduser(os.fspath(host_path)))
        if not os.path.exists(path):
            raise InvalidArgumentError(f"Cannot mount {host_path}: it does not exist")
        m = Mount(path=path, read_only=bool(read_only))
        with self._lock:
            self._mounts[path] = m
            self._rebuild_wrapper()
        return m

    def unmount(self, host_path: str | os.PathLike[str]) -> bool:
        path = os.path.realpath(os.path.expanduser(os.fspath(host_path)))
        with self._lock:
            removed = self._mounts.pop(path, None) is not None
            if removed:
                self._rebuild_wrapper()
        return removed

    def _rebuild_wrapper(self) -> None:
        """(Re)computes the isolation wrapper; called under the lock after start and mount changes."""
        if self._state_dir is None:
            return  # not started yet: start() builds it
        if self._isolation == "bwrap":
            self._plan = BwrapPlan(
                working_directory=self._working_directory,
                state_dir=self._state_dir,
                config=self._config,
                mounts=self._mounts.values(),
                bwrap_path=shutil.which("bwrap") or "bwrap",
                cgroup_join_files=self._cgroup.join_files if self._cgroup is not None else (),
            )
        elif self._isolation == "seatbelt":
            self._write_seatbelt_profile()

    def _write_seatbelt_profile(self) -> None:
        assert self._state_dir is not None
        text = build_seatbelt_profile(
            working_directory=self._working_directory,
            config=self._config,
            state_dir=self._state_dir,
            mounts=self._mounts.values(),
        )
        path = self._config.seatbelt_profile_path
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                if not is_generated_profile(f.read()):
                    self._seatbelt_profile, self._seatbelt_generated = path, False
                    return  # the user's own profile: used exactly as written
        if not path:
            # Outside the working directory, and not in the writable HOME/TMPDIR subfolders, so
            # sandboxed commands can neither read nor rewrite their own policy.
            path = os.path.join(self._state_dir, profile_file_name(self._working_directory, self._config))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        self._seatbelt_profile, self._seatbelt_generated = path, True

    # --- commands ------------------------------------------------------------------------------------------

    def resolve_cwd(self, cwd: str | os.PathLike[str] | None) -> str:
        """A command's cwd: None is the working directory, a relative path resolves against it."""
        if cwd is None:
            return self._working_directory
        if not isinstance(cwd, (str, os.PathLike)):
            raise InvalidArgumentError(f"cwd must be a path, got {type(cwd).__name__}")
        raw = os.fspath(cwd)
        if "\0" in raw:
            raise InvalidArgumentError("cwd contains a NUL byte")
        return os.path.normpath(os.path.join(self._working_directory, os.path.expanduser(raw)))

    def prepare_launch(
        self, command: str, cwd: str | None, env: Mapping[str, str | None] | None
    ) -> LaunchSpec:
        """How ``command`` will be executed (used by the process manager; handy for debugging)."""
        call_env = validate_env(env, what="env")
        directory = self.resolve_cwd(cwd)
        if not os.path.isdir(directory):
            raise SandboxError(
                f"The command's working directory does not exist: {cwd if cwd is not None else directory}",
                code="INVALID_CWD",
            )
        plan, profile, environment = self._launch_context(call_env)
        if self._isolation == "bwrap":
            assert plan is not None
            self._check_visible(plan, directory)
            # The filter reaches bwrap as an inherited descriptor (no extra process); with a
            # cgroup the command line has a shell in front anyway, which opens it itself.
            fd = None
            if plan.seccomp_path is not None and not plan.cgroup_join_files:
                fd = os.open(plan.seccomp_path, os.O_RDONLY | os.O_CLOEXEC)
            if self._network is not None:  # allow mode: the bridge first, the socket bound in
                argv = plan.wrap(
                    self._network.wrap(["/bin/sh", "-c", command]),
                    directory,
                    binds=self._network.binds(),
                    seccomp_fd=fd,
                )
            else:
                argv = plan.argv(command, directory, seccomp_fd=fd)
            return LaunchSpec(argv=argv, cwd=directory, env=environment, pass_fds=() if fd is None else (fd,))
        if self._isolation == "seatbelt":
            assert profile is not None
            argv = seatbelt_argv(profile, command)
        else:
            argv = [*self._host_limits(), "/bin/sh", "-c", command]
        return LaunchSpec(argv=argv, cwd=directory, env=environment)

    def _launch_context(
        self, call_env: Mapping[str, str | None]
    ) -> tuple[BwrapPlan | None, str | None, dict[str, str]]:
        """(bwrap plan, seatbelt profile, environment) of a launch; the sandbox must be running."""
        with self._lock:
            state, plan, profile = self._state_dir, self._plan, self._seatbelt_profile
            if state is None:
                raise SandboxStateError(f"The sandbox {self.id} is not running (status: {self.status})")
        network_env = self._network.environment() if self._network is not None else {}
        environment = build_environment(
            home=os.path.join(state, "home"),
            tmpdir=os.path.join(state, "tmp"),
            python_bin=self._python_bin,
            layers=(network_env, self._env, call_env),
            path_filter=plan.on_path if plan is not None else None,
        )
        return plan, profile, environment

    @staticmethod
    def _check_visible(plan: BwrapPlan, directory: str) -> None:
        if not plan.is_visible(directory):
            raise SandboxError(
                f"The command's working directory {directory} is not visible inside the sandbox; "
                "add it to native_sandbox read_write_paths/read_only_paths or mount() it",
                code="INVALID_CWD",
            )

    def wrap_argv(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        binds: Sequence[str | os.PathLike[str] | Mount] = (),
        env: Mapping[str, str | None] | None = None,
    ) -> LaunchSpec:
        """Wraps an exec-style ``argv`` in this sandbox's isolation, for a launcher of one's own.

        The entry point for running something other than a shell command — a Jupyter kernel
        (``python -m ipykernel_launcher -f {connection_file}``) — under exactly the isolation,
        limits and curated environment of the sandbox's commands. ``binds`` are extra host paths
        visible (read-write, or as given by a ``Mount``) to this launch only, such as the
        directory of a kernel's connection file and ipc sockets. ``env`` is layered over the
        sandbox's environment like a command's (``None`` values unset).

        Without isolation the argv is run as it is, behind ``prlimit`` and the resource limits.
        The returned ``LaunchSpec`` needs no inherited descriptor (``pass_fds`` is empty), so any
        launcher can start it, and start it again: ``subprocess.Popen(spec.argv, cwd=spec.cwd,
        env=spec.env)``, or a jupyter_client kernelspec argv. The caller owns the process: start
        it in its own session and kill it; under bwrap it dies with its parent
        (``--die-with-parent``) and takes its pid namespace along.
        """
        if isinstance(argv, (str, bytes)) or not isinstance(argv, Sequence) or not argv:
            raise InvalidArgumentError("argv must be a non-empty list of strings")
        if not all(isinstance(a, str) and "\0" not in a for a in argv):
            raise InvalidArgumentError("argv must be a list of strings without NUL bytes")
        self.ensure_running()
        call_env = validate_env(env, what="env")
        directory = self.resolve_cwd(cwd)
        mounts = []
        for b in binds:
            if isinstance(b, Mount):
                mounts.append(b)
            elif isinstance(b, (str, os.PathLike)) and os.fspath(b):
                mounts.append(Mount(os.path.realpath(os.path.expanduser(os.fspath(b)))))
            else:
                raise InvalidArgumentError(f"binds must be paths or Mount objects, got {b!r}")
        plan, profile, environment = self._launch_context(call_env)
        if self._isolation == "bwrap":
            assert plan is not None
            if not (plan.is_visible(directory) or any(is_within(directory, m.path) for m in mounts)):
                self._check_visible(plan, directory)
            if self._network is not None:  # allow mode: the bridge first, the socket bound in
                wrapped = plan.wrap(
                    self._network.wrap(list(argv)), directory, binds=[*mounts, *self._network.binds()]
                )
            else:
                wrapped = plan.wrap(list(argv), directory, binds=mounts)
        elif self._isolation == "seatbelt":
            assert profile is not None
            wrapped = seatbelt_wrap(profile, argv)
        else:
            wrapped = [*self._host_limits(), *argv]
        return LaunchSpec(argv=wrapped, cwd=directory, env=environment)

    def _host_limits(self) -> list[str]:
        """The ``prlimit`` prefix of a command run without isolation (see ``isolation.rlimits``)."""
        return host_prefix(self._config) if self._isolation == "none" else []

    def is_visible(self, path: str) -> bool:
        """True when ``path`` exists inside the sandbox (everything is visible without bubblewrap)."""
        with self._lock:
            plan = self._plan
        if self._isolation == "bwrap":
            return plan is not None and plan.is_visible(path)
        return os.path.exists(path)

    def execute_command(
        self,
        command: str,
        args: Sequence[str] | None = None,
        cwd: str | None = None,
        env: Mapping[str, str | None] | None = None,
        timeout: float | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
        *,
        abort: threading.Event | None = None,
        max_output_bytes: int | None = None,
    ) -> CommandResult:
        """Runs a command to completion; a non-zero exit is a result, never an exception.

        ``args`` are shell-quoted and appended. ``timeout`` (seconds) defaults to the sandbox's
        and is enforced on the whole tree (exit code 124, ``timed_out=True``); pass
        ``math.inf`` for no limit. stdin is /dev/null. Interrupting the kernel kills the command.
        """
        if not isinstance(command, str) or not command.strip():
            raise InvalidArgumentError("command must be a non-empty string")
        if args is not None:
            if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
                raise InvalidArgumentError("args must be a list of strings")
            parts = []
            for a in args:
                if not isinstance(a, (str, os.PathLike)):
                    raise InvalidArgumentError(f"args must be strings, got {type(a).__name__}: {a!r}")
                parts.append(shlex.quote(os.fspath(a)))
            if parts:
                command = f"{command} {' '.join(parts)}"
        # One code path with background processes: the process manager starts, reads, times out
        # and kills it; interrupting the kernel (KeyboardInterrupt) kills the whole tree. It
        # validates the values; None is the sandbox's default here, and "no limit" there.
        since = _now()
        result = self.processes.run(
            command,
            cwd=cwd,
            env=env,
            timeout=self._timeout if timeout is None else timeout,
            on_stdout=on_stdout,
            on_stderr=on_stderr,
            abort=abort,
            max_retained_bytes=self._max_output_bytes if max_output_bytes is None else max_output_bytes,
        )
        return self.with_network_note(result, since)

    def network_note(self, pid: int | None, since: datetime) -> str:
        """In ``allow`` mode, one line about the connection attempts that process ``pid`` (and its
        descendants: a command, a kernel) had denied since ``since``; "" when none."""
        network = self._network
        return network.denied_note(pid, since) if network is not None else ""

    def with_network_note(self, result: CommandResult, since: datetime) -> CommandResult:
        """``result`` with the line about its denied connection attempts, when it had any."""
        note = self.network_note(result.pid, since)
        return dataclasses.replace(result, network_note=note) if note else result

    # --- info ------------------------------------------------------------------------------------------

    def get_info(self) -> SandboxInfo:
        metadata: dict[str, Any] = {
            "platform": sys.platform,
            "python": sys.version.split()[0],
            "isolation_requested": self._isolation_requested,
            "isolation_detection": self._detection.message,
            "timeout": self._timeout,
            "mounts": [{"path": m.path, "read_only": m.read_only} for m in self.mounts],
            "processes_running": sum(1 for p in self.processes.list() if p.running),
        }
        metadata["python_executable"] = os.path.join(self._python_bin, os.path.basename(sys.executable))
        if self._isolation != "none":
            metadata["native_sandbox"] = self._config.to_dict()
        else:
            limits = self._host_limits()
            metadata["hardening"] = {
                "rlimits": bool(limits),
                "process_limit": any(a.startswith("--nproc=") for a in limits),
            }
        metadata["network"] = self._network_config.to_dict()
        if self._network is not None:
            metadata["network"]["connections_logged"] = len(self._network.log)
        plan = self._plan
        if plan is not None:
            metadata["hardening"] = {
                "seccomp": plan.seccomp_path is not None,
                "uid": self._config.uid if plan.maps_ids else None,
                "rlimits": plan.rlimits_applied,
                "working_directory_writable": plan.working_directory_writable,
                "read_only_python": list(plan.protected_prefixes),
                "cgroup": dict(self._cgroup.limits) if self._cgroup is not None else None,
            }
        trusted = self.host_trusted_files()
        if trusted["read_only"] or trusted["writable"]:
            metadata["host_trusted"] = trusted
        warnings = [
            w for w in (self._isolation_warning, self.environment_warning(), trusted.get("warning")) if w
        ]
        if warnings:
            metadata["warning"] = "; ".join(warnings)
        if self._seatbelt_profile:
            metadata["seatbelt_profile"] = self._seatbelt_profile
        resources: dict[str, Any] = {"cpu_cores": os.cpu_count()}
        with contextlib.suppress(Exception):
            import psutil

            resources["memory_mb"] = psutil.virtual_memory().total // (1 << 20)
        return SandboxInfo(
            id=self.id,
            name=self.name,
            provider=self.provider,
            status=self.status,
            created_at=self.created_at,
            working_directory=self._working_directory,
            isolation=self._isolation,
            metadata=metadata,
            resources=resources,
        )

    def environment_warning(self) -> str | None:
        """A warning when the notebook's own Python environment lies inside the working directory.

        Code there runs on the host with the notebook's rights the next time Python starts (a
        planted ``.pth`` file, a replaced package). Under bubblewrap commands see it read-only,
        but the workspace's file tools, and commands without isolation, can change it.
        """
        inside = [p for p in python_prefixes() if is_within(p, self._working_directory)]
        if not inside:
            return None
        protection = (
            "sandboxed commands see it read-only, but the workspace's file tools can still change it"
            if self._isolation == "bwrap"
            else "commands and the workspace's file tools can change it"
        )
        return (
            f"the workspace contains the notebook's Python environment ({inside[0]}): {protection}, "
            "and the notebook runs what it finds there; keep the environment outside the workspace"
        )

    def host_trusted_files(self) -> dict[str, Any]:
        """The host-trusted files in what commands can write, and whether commands can change them.

        Host-trusted files (``ws_jupyter.filesystem.host_trusted``: ``.git``, ``.vscode``,
        ``.envrc``, virtual environments, ...) decide what programs on the host run — git runs
        the command in a repository's ``core.fsmonitor`` at every ``git status``. Under
        bubblewrap those present when the sandbox started are read-only to commands; those that
        appeared since (a ``git init`` in a subfolder), symbolic links and paths the
        configuration makes writable are not, and ``warning`` says so. Without isolation (and
        under seatbelt) commands can change all of them.

        Returns ``{"read_only": [...], "writable": [...], "complete": bool, "note": str}`` with
        paths relative to the working directory (host paths outside it), plus ``"warning"``
        when a sandbox that should protect them does not.
        """
        plan = self._plan if self._isolation == "bwrap" else None
        if plan is not None:
            found = host_trusted.TrustedScan.merge(host_trusted.scan(r) for r in plan.host_trusted_roots)
            protected = set(plan.protected)
        else:
            found = host_trusted.scan(self._working_directory)
            protected = set()
        placeholders = set(plan.placeholders) if plan is not None else set()
        read_only: list[str] = []
        writable: list[str] = []
        for e in found.entries:
            if e.path in placeholders or e.rel == ".":
                continue
            shown = self._shown(e.path) + ("/" if e.is_dir else "")
            (read_only if e.path in protected else writable).append(shown)
        out: dict[str, Any] = {
            "read_only": read_only,
            "writable": writable,
            "complete": found.complete,
            "note": found.note,
        }
        if plan is not None and writable:
            out["warning"] = (
                f"commands can change host-trusted files that git, editors or direnv on the host act on "
                f"({', '.join(writable)}): they appeared after the sandbox started, are symbolic links or "
                "were made writable by the configuration; check them before running git there, or "
                "restart the sandbox to make them read-only"
            )
        return out

    def _shown(self, path: str) -> str:
        if is_within(path, self._working_directory):
            return os.path.relpath(path, self._working_directory)
        return path

    def default_instructions(self) -> str:
        wd = self._working_directory
        plan = self._plan
        if self._isolation == "bwrap":
            net = (
                "Network access is allowed."
                if self._config.allow_network
                else "There is no network access (only loopback inside the sandbox)."
            )
            if self._network is not None:
                net = self._allow_sentence()
            access = "writable" if plan is None or plan.working_directory_writable else "read-only"
            user = (
                f" as uid {self._config.uid}"
                if plan is not None and plan.maps_ids and self._config.uid is not None
                else ""
            )
            text = (
                f'Commands run in a bubblewrap sandbox{user}. Working directory: "{wd}" ({access}). '
                "System directories are read-only and other host paths are not visible; "
                f"files written elsewhere (except $TMPDIR and $HOME) fail. {net}"
            )
            if plan is not None and plan.protected:
                shown = [self._shown(p) for p in plan.protected if p not in plan.placeholders]
                listed = ", ".join(shown[:8]) + (", ..." if len(shown) > 8 else "")
                git = any(os.path.basename(p) == ".git" for p in shown)
                text += (
                    f" Read-only, because programs on the host act on them: {listed}"
                    + (" (git can read the repository but not commit)." if git else ".")
                    if shown
                    else " The working directory cannot become a git repository (its .git is read-only)."
                )
        elif self._isolation == "seatbelt":
            net = (
                "Network access is allowed." if self._config.allow_network else "There is no network access."
            )
            text = (
                f'Commands run in a macOS seatbelt sandbox. Working directory: "{wd}" (writable). '
                f"Writes elsewhere are denied and home directories are unreadable. {net}"
            )
        else:
            text = (
                f'Local command execution on the host, without isolation. Working directory: "{wd}". '
                "Commands can read and change anything the notebook user can."
            )
        text += " " + self._python_sentence()
        if self._isolation_warning:
            text += f" Warning: {self._isolation_warning}."
        kernels = self._kernels
        if kernels is not None and kernels.remote:
            from .kernels.gateway import GatewayKernelManager

            url = kernels.url if isinstance(kernels, GatewayKernelManager) else ""
            text += (
                f" Python code (workspace_execute_code) runs on the Jupyter gateway {url}, not in "
                "this sandbox: it sees the gateway's files and packages, not this working directory."
            )
        timeout = f"{self._timeout:g} s" if self._timeout is not None else "none"
        return f"{text} Default command timeout: {timeout}."

    def _allow_sentence(self) -> str:
        rules = ", ".join(str(r) for r in self._network_config.allow) or "none yet"
        text = (
            f"Network access is limited to these hosts: {rules} (a rule without a port allows 80 "
            "and 443). It goes through an HTTP proxy that HTTP_PROXY/HTTPS_PROXY point to (pip, "
            "git, curl and requests use it); there is no DNS inside and no other route out."
        )
        if self._network_config.secrets:
            hosts = ", ".join(sorted({s.host for s in self._network_config.secrets}))
            text += f" Requests to {hosts} get their credentials added by the proxy: do not look for keys."
        return text

    def _python_sentence(self) -> str:
        """Which Python commands get: the notebook's own, when the sandbox can see it."""
        exe = os.path.join(self._python_bin, os.path.basename(sys.executable))
        plan = self._plan
        if plan is not None and not plan.on_path(self._python_bin):
            return (
                "The notebook's Python is not visible in the sandbox (allow_system_binaries is off); "
                "`python3` is the system's."
            )
        version = sys.version.split()[0]
        ro = (
            " (read-only: install extra packages with `pip install --target DIR`)" if plan is not None else ""
        )
        return (
            f"`python`, `python3` and `pip` are the notebook's Python {version} ({exe}) with its "
            f"installed packages and console scripts{ro}."
        )

    def get_instructions(self, request_context: RequestContext | None = None) -> str:
        """What to tell a model about this sandbox (the ``instructions=`` option overrides it)."""
        default = self.default_instructions()
        option = self._instructions
        if option is None:
            return default
        if isinstance(option, str):
            return option
        result = option(default, request_context)
        if not isinstance(result, str):
            raise WorkspaceConfigError(
                f"the instructions function must return a string, got {type(result).__name__}"
            )
        return result

    def __repr__(self) -> str:
        return (
            f"LocalSandbox(id={self.id!r}, status={self.status!r}, "
            f"working_directory={self._working_directory!r}, isolation={self._isolation!r})"
        )


if TYPE_CHECKING:  # mypy proves LocalSandbox has every optional capability, with the right types

    def _capabilities(sb: LocalSandbox) -> tuple[
        WorkspaceSandbox, ProcessProvider, KernelProvider, CommandWrapping, Mounting, SandboxLifecycle
    ]:
        return sb, sb.processes, sb.kernels, sb, sb, sb
