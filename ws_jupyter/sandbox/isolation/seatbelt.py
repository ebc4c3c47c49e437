"""The macOS seatbelt (``sandbox-exec``) profile and command line.

Seatbelt profiles are last-match-wins. The generated profile denies by default, allows reading
the system, then *denies reading every home directory* (``/Users``, ``/var/root`` and the
current user's home — SSH keys, cloud credentials, browser profiles), and finally re-allows the
working directory, the configured paths, the sandbox's private HOME/TMPDIR, mounts and the
Python installation. Writes are allowed only to the working directory, ``read_write_paths``,
read-write mounts, the private HOME/TMPDIR and a few devices. The network is denied unless
``allow_network`` (local Unix sockets stay allowed so tools that talk to local daemons work).

This module only builds text; running it needs macOS (it cannot run on Linux CI).
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable, Sequence

from .config import Mount, NativeSandboxConfig, working_directory_writable

__all__ = [
    "SEATBELT_MARKER",
    "build_seatbelt_profile",
    "is_generated_profile",
    "profile_file_name",
    "seatbelt_argv",
]

#: First line of generated profiles: a file without it is the user's and is used as written.
SEATBELT_MARKER = ";; ws-jupyter generated seatbelt profile (delete this line to keep your edits)"

_SANDBOX_EXEC = "/usr/bin/sandbox-exec"
_SYSTEM_READ_DENY_ROOTS = ("/Users", "/var/root", "/private/var/root", "/Volumes")


def _quote(path: str) -> str:
    """An SBPL string literal: backslashes and quotes escaped, no raw newlines."""
    if "\n" in path or "\r" in path or "\0" in path:
        raise ValueError(f"path not allowed in a seatbelt profile: {path!r}")
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _subpaths(paths: Iterable[str]) -> str:
    seen: list[str] = []
    for p in paths:
        for variant in (p, os.path.realpath(p)):
            # macOS: /tmp and /var are symlinks into /private; match both spellings.
            if variant not in seen:
                seen.append(variant)
    return " ".join(f"(subpath {_quote(p)})" for p in seen)


def build_seatbelt_profile(
    *,
    working_directory: str,
    config: NativeSandboxConfig | None = None,
    state_dir: str | None = None,
    mounts: Iterable[Mount] = (),
    home: str | None = None,
) -> str:
    """The profile text for a sandbox (see the module docstring for what it allows).

    >>> text = build_seatbelt_profile(working_directory="/Users/me/project")
    >>> "(deny default)" in text and '(deny file-read* (subpath "/Users")' in text
    True
    """
    config = config or NativeSandboxConfig()
    mounts = list(mounts)
    home = home if home is not None else os.path.expanduser("~")
    wd = working_directory

    def absolute(p: str) -> str:
        return os.path.abspath(os.path.join(wd, p))

    ro = [absolute(p) for p in config.read_only_paths] + [m.path for m in mounts if m.read_only]
    own = [wd] if working_directory_writable(wd, mounts) else []
    if not own:
        ro.append(wd)
    rw = [*own, *(absolute(p) for p in config.read_write_paths), *(m.path for m in mounts if not m.read_only)]
    if state_dir:
        rw.append(state_dir)
    python: list[str] = []
    if config.allow_system_binaries:
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix):
            if p not in python:
                python.append(p)

    lines = [
        SEATBELT_MARKER,
        "(version 1)",
        "(deny default)",
        "",
        ";; processes",
        "(allow process-exec process-fork process-info* signal)",
        "(allow sysctl-read)",
        "(allow mach-lookup)",
        "(allow ipc-posix-shm* ipc-posix-sem)",
        "(allow pseudo-tty)",
        "",
        ";; reads: the system, but no home directory...",
        "(allow file-read*)",
        f"(deny file-read* {_subpaths([*_SYSTEM_READ_DENY_ROOTS, home])})",
        ";; stat() stays allowed everywhere (getcwd and realpath walk the parents), not contents",
        "(allow file-read-metadata)",
        ";; ...except what this sandbox is given",
        f"(allow file-read* {_subpaths([*rw, *ro, *python])})",
        "",
        ";; writes",
        # (an empty filter list would allow writes everywhere: no line at all when nothing is writable)
        *([f"(allow file-write* {_subpaths(rw)})"] if rw else []),
        '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty")',
        '       (literal "/dev/dtracehelper") (regex #"^/dev/fd/"))',
        "",
        ";; network",
    ]
    if config.allow_network:
        lines.append("(allow network*)")
    else:
        lines.append("(allow network* (remote unix-socket) (local unix-socket))")
    lines.append("")
    return "\n".join(lines)


def is_generated_profile(text: str) -> bool:
    return text.startswith(SEATBELT_MARKER)


def profile_file_name(working_directory: str, config: NativeSandboxConfig) -> str:
    """Stable per (working directory, config): identical sandboxes share one profile file."""
    digest = hashlib.sha256(repr((working_directory, config.to_dict())).encode()).hexdigest()[:12]
    return f"seatbelt-{digest}.sb"


def seatbelt_argv(profile_path: str, command: str, sandbox_exec: str = _SANDBOX_EXEC) -> list[str]:
    return seatbelt_wrap(profile_path, ["/bin/sh", "-c", command], sandbox_exec)


def seatbelt_wrap(profile_path: str, argv: Sequence[str], sandbox_exec: str = _SANDBOX_EXEC) -> list[str]:
    """An exec-style argv under the profile (``seatbelt_argv`` wraps a shell command line)."""
    return [sandbox_exec, "-f", profile_path, *argv]
