"""How a sandbox turns a shell command into a process: the launch spec and launcher protocol.

The process manager knows pipes, signals and bookkeeping; the sandbox knows the working
directory, the environment and the isolation wrapper. ``CommandLauncher`` is the seam between
them, so foreground commands and background processes share one code path and one wrapper.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

__all__ = ["CommandLauncher", "LaunchSpec"]


@dataclass(frozen=True)
class LaunchSpec:
    """Exactly what to exec: ``argv`` in host ``cwd`` with environment ``env`` (nothing inherited)."""

    argv: list[str]
    cwd: str
    env: dict[str, str]


class CommandLauncher(Protocol):
    def ensure_running(self) -> None:
        """Starts the sandbox if needed (auto-start); raises if it cannot run commands."""

    def prepare_launch(
        self, command: str, cwd: str | None, env: Mapping[str, str | None] | None
    ) -> LaunchSpec:
        """Resolves cwd and environment and wraps ``command`` for the isolation backend."""
