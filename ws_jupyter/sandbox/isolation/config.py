"""``NativeSandboxConfig``: what an OS-level sandbox (bubblewrap, seatbelt) lets commands do."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ...errors import WorkspaceConfigError

__all__ = [
    "DEFAULT_SANDBOX_UID",
    "Mount",
    "NativeSandboxConfig",
    "default_memory_mb",
    "working_directory_writable",
]

#: The uid (and gid) commands have inside a bubblewrap sandbox by default.
DEFAULT_SANDBOX_UID = 1000


def default_memory_mb() -> int:
    """Half of this machine's memory: a runaway command cannot take the notebook down with it."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 4096
    return max(256, total // 2 // (1 << 20))


#: The resource limits and their defaults (None: no limit), in the order docs/sandbox.md lists them.
_LIMITS = (
    "max_processes",
    "max_memory_mb",
    "max_cpu_seconds",
    "max_file_size_mb",
    "max_open_files",
    "tmp_size_mb",
)


def _paths(value: object, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, os.PathLike)):
        value = (value,)
    if not isinstance(value, Iterable):
        raise WorkspaceConfigError(f"NativeSandboxConfig.{name} must be a list of paths")
    out = []
    for item in value:
        if not isinstance(item, (str, os.PathLike)) or not os.fspath(item):
            raise WorkspaceConfigError(f"NativeSandboxConfig.{name}: invalid path {item!r}")
        out.append(os.path.expanduser(os.fspath(item)))
    return tuple(out)


@dataclass(frozen=True)
class NativeSandboxConfig:
    """Options for ``isolation="bwrap"`` / ``"seatbelt"``; without isolation only the resource
    limits apply (see ``max_processes`` below).

    * ``allow_network``: share the host network (default: a private network namespace with
      only loopback, so nothing outside is reachable).
    * ``read_only_paths`` / ``read_write_paths``: extra host paths made visible (relative ones
      resolve against the working directory; missing ones are skipped).
    * ``bwrap_args``: extra bubblewrap arguments, appended after the defaults (a later bind on
      the same path wins), e.g. ``("--ro-bind", "/data", "/data")``.
    * ``allow_system_binaries``: also expose the Python installation, ``/opt``, ``/snap`` and
      ``/nix`` read-only (``/usr`` and the libraries are always visible: nothing runs without them).
    * ``seatbelt_profile_path``: macOS only; an existing file without our marker comment is used
      exactly as written, otherwise a profile is generated there.

    Hardening of bubblewrap sandboxes (see "Isolation" in docs/sandbox.md for the why):

    * ``seccomp``: load a seccomp filter that refuses the syscalls a workspace never needs
      (keyring, ptrace, mounts, namespaces, kexec, modules, bpf, perf, setuid/setgid modes).
    * ``uid`` / ``gid``: the ids commands have inside (default 1000, a user namespace maps them
      to the notebook's own user: files they create belong to the notebook user on the host);
      ``None`` keeps the notebook's ids.
    * ``max_processes``, ``max_memory_mb``, ``max_cpu_seconds``, ``max_file_size_mb``,
      ``max_open_files``: limits per command (rlimits, set by ``prlimit`` inside the sandbox)
      and, where a cgroup can be created, processes and memory for the whole sandbox. With
      ``isolation="none"`` the rlimits hold too (``isolation/rlimits.py``); the process limit
      then counts all of the notebook user's processes, so it is set to what the user runs
      plus ``max_processes``, and root is exempt from it;
      ``tmp_size_mb`` bounds the RAM-backed ``/tmp`` and ``/dev/shm``. ``None`` lifts a limit.
    * ``cgroup``: put each sandbox in its own cgroup when this machine allows it (root, or a
      delegated cgroup v2 tree): limits then hold for the sandbox as a whole, and every process
      it started is found and killed on destroy or crash, daemons included.

    >>> cfg = NativeSandboxConfig(allow_network=True, read_write_paths=["/tmp/cache"])
    >>> cfg.read_write_paths, cfg.seccomp, cfg.uid, cfg.max_processes, cfg.max_cpu_seconds
    (('/tmp/cache',), True, 1000, 4096, None)
    """

    allow_network: bool = False
    read_only_paths: tuple[str, ...] = ()
    read_write_paths: tuple[str, ...] = ()
    bwrap_args: tuple[str, ...] | None = None
    allow_system_binaries: bool = True
    seatbelt_profile_path: str | None = None
    seccomp: bool = True
    uid: int | None = DEFAULT_SANDBOX_UID
    gid: int | None = DEFAULT_SANDBOX_UID
    max_processes: int | None = 4096
    max_memory_mb: int | None = field(default_factory=default_memory_mb)
    max_cpu_seconds: int | None = None
    max_file_size_mb: int | None = 16384
    max_open_files: int | None = 16384
    tmp_size_mb: int | None = 512
    cgroup: bool = True

    def __post_init__(self) -> None:
        for name in ("allow_network", "allow_system_binaries", "seccomp", "cgroup"):
            if not isinstance(getattr(self, name), bool):
                raise WorkspaceConfigError(f"NativeSandboxConfig.{name} must be True or False")
        for name in ("uid", "gid"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32 - 1
            ):
                raise WorkspaceConfigError(
                    f"NativeSandboxConfig.{name} must be a user/group id or None, got {value!r}"
                )
        for name in _LIMITS:
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                raise WorkspaceConfigError(
                    f"NativeSandboxConfig.{name} must be a positive integer or None (no limit), got {value!r}"
                )
        object.__setattr__(self, "read_only_paths", _paths(self.read_only_paths, "read_only_paths"))
        object.__setattr__(self, "read_write_paths", _paths(self.read_write_paths, "read_write_paths"))
        if self.bwrap_args is not None:
            args = self.bwrap_args
            if isinstance(args, str) or not isinstance(args, Iterable):
                raise WorkspaceConfigError("NativeSandboxConfig.bwrap_args must be a list of strings")
            args = tuple(args)
            if not all(isinstance(a, str) for a in args):
                raise WorkspaceConfigError("NativeSandboxConfig.bwrap_args must be a list of strings")
            if "--" in args:
                raise WorkspaceConfigError("NativeSandboxConfig.bwrap_args must not contain '--'")
            object.__setattr__(self, "bwrap_args", args)
        if self.seatbelt_profile_path is not None:
            if not isinstance(self.seatbelt_profile_path, (str, os.PathLike)):
                raise WorkspaceConfigError("NativeSandboxConfig.seatbelt_profile_path must be a path")
            object.__setattr__(
                self, "seatbelt_profile_path", os.path.expanduser(os.fspath(self.seatbelt_profile_path))
            )

    @classmethod
    def coerce(cls, value: NativeSandboxConfig | Mapping[str, Any] | None) -> NativeSandboxConfig:
        """Accepts a config, a dict of its fields (unknown keys are an error) or None."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            WorkspaceConfigError.check_option_names("native_sandbox", value, (f.name for f in fields(cls)))
            return cls(**value)
        raise WorkspaceConfigError(
            f"native_sandbox must be a NativeSandboxConfig or a dict, got {type(value).__name__}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Mount:
    """A host path made visible inside the sandbox at the same path (``sandbox.mount()``)."""

    path: str
    read_only: bool = False


def working_directory_writable(working_directory: str, mounts: Iterable[Mount]) -> bool:
    """Whether commands may write the working directory, given the sandbox's mounts.

    A mount of the working directory itself decides; otherwise a read-only mount of a directory
    holding it (what a read-only filesystem over a parent asks for) makes it read-only.
    """
    mounts = list(mounts)
    exact = [m for m in mounts if m.path == working_directory]
    if exact:
        return not exact[-1].read_only
    root = working_directory.rstrip("/") + "/"
    return not any(m.read_only and root.startswith(m.path.rstrip("/") + "/") for m in mounts)
