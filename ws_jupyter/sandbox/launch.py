"""How a sandbox turns a shell command into a process: the launch spec and launcher protocol.

The process manager knows pipes, signals and bookkeeping; the sandbox knows the working
directory, the environment and the isolation wrapper. ``CommandLauncher`` is the seam between
them, so foreground commands and background processes share one code path and one wrapper.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

__all__ = ["CommandLauncher", "LaunchSpec"]


@dataclass(frozen=True)
class LaunchSpec:
    """Exactly what to exec: ``argv`` in host ``cwd`` with environment ``env``.

    ``pass_fds`` are descriptors the child must inherit (bwrap's seccomp filter); they belong to
    the spec: whoever starts the process passes them (``subprocess.Popen(pass_fds=...)``) and
    calls ``close()`` afterwards. Nothing else is inherited.
    """

    argv: list[str]
    cwd: str
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()

    def close(self) -> None:
        """Closes ``pass_fds`` in this process (after the child was started, or instead)."""
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)


class CommandLauncher(Protocol):
    def ensure_running(self) -> None:
        """Starts the sandbox if needed (auto-start); raises if it cannot run commands."""

    def prepare_launch(
        self, command: str, cwd: str | None, env: Mapping[str, str | None] | None
    ) -> LaunchSpec:
        """Resolves cwd and environment and wraps ``command`` for the isolation backend."""
