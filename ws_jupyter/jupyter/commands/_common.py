"""Argument types and small helpers shared by several subcommands."""

from __future__ import annotations

import argparse
from typing import Any

from ...sandbox.capabilities import sandbox_isolation_detection, sandbox_kernels, sandbox_processes

__all__ = [
    "isolation_available",
    "line_range",
    "load_skills",
    "non_negative_int",
    "positive_float",
    "positive_int",
    "require_filesystem",
    "require_kernels",
    "require_processes",
    "require_sandbox",
    "show_index_progress",
]


def _whole_number(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected a number >= {minimum}, got {value}")
    return value


def positive_int(text: str) -> int:
    return _whole_number(text, 1)


def non_negative_int(text: str) -> int:
    return _whole_number(text, 0)


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def line_range(text: str) -> tuple[int | None, int | None]:
    """``"10:20"``, ``"10:"``, ``":20"`` or ``"7"`` -> 1-based inclusive bounds (None = open)."""
    start_text, sep, end_text = text.partition(":")
    try:
        start = int(start_text) if start_text.strip() else None
        end = int(end_text) if end_text.strip() else None
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected A:B with line numbers (e.g. 10:40), got {text!r}"
        ) from None
    if not sep:
        end = start
    if (start is not None and start < 1) or (end is not None and end < 1):
        raise argparse.ArgumentTypeError("line numbers start at 1")
    if start is not None and end is not None and end < start:
        raise argparse.ArgumentTypeError(f"the range {text!r} ends before it starts")
    return start, end


def require_filesystem(workspace: Any, command: str) -> Any:
    """The workspace's filesystem (resolved for no particular request)."""
    from IPython.core.error import UsageError

    if not workspace.has_filesystem_config():
        raise UsageError(f"%ws {command}: this workspace has no filesystem")
    return workspace.resolve_filesystem(None)


def require_sandbox(workspace: Any, command: str) -> Any:
    """The workspace's sandbox (resolved for no particular request)."""
    from IPython.core.error import UsageError

    if not workspace.has_sandbox_config():
        raise UsageError(f"%ws {command}: this workspace has no sandbox")
    return workspace.resolve_sandbox(None)


def require_processes(workspace: Any, command: str) -> Any:
    """The sandbox's process manager (background processes)."""
    from IPython.core.error import UsageError

    sandbox = require_sandbox(workspace, command)
    manager = sandbox_processes(sandbox)
    if manager is None:
        raise UsageError(f"%ws {command}: this sandbox has no background processes")
    return manager


def isolation_available(workspace: Any) -> tuple[str, str] | None:
    """The ``%ws info`` row saying which isolation this machine offers (local sandboxes only)."""
    if not workspace.has_sandbox_config():
        return None
    found = sandbox_isolation_detection(workspace.resolve_sandbox(None))
    if found is None:
        return None
    if found.available:
        return ("isolation available", f"{found.backend} ({found.message}), none")
    return ("isolation available", f"none only: {found.message}")


def load_skills(workspace: Any) -> list[str]:
    """Discovers the skills now, so counts are known; returns the problems found for the first time
    (shown once, by the caller: see ``skill_problems``)."""
    from ..skill_problems import skill_problems

    with skill_problems() as problems:
        try:
            skills = workspace.skills
            if skills is not None:
                skills.list()
        except Exception:
            pass
    return problems


def show_index_progress(inv: Any, workspace: Any) -> bool:
    """Shows a live :class:`IndexProgressBar` when the workspace's index is still being built or
    embedded (in a kernel: terminal IPython has no widgets). True when it was shown."""
    if not inv.in_kernel or not getattr(workspace, "can_search", False):
        return False
    try:
        if workspace.index_status().ready:
            return False
    except Exception:  # no index to follow (destroyed, search failed to open)
        return False
    from IPython.display import display

    from ..widgets.index_progress import IndexProgressBar

    display(IndexProgressBar(workspace))
    return True


def require_kernels(workspace: Any, command: str) -> Any:
    """The sandbox's kernel manager, when the sandbox can run kernels."""
    from IPython.core.error import UsageError

    sandbox = require_sandbox(workspace, command)
    kernels = sandbox_kernels(sandbox)
    if kernels is None:
        raise UsageError(f"%ws {command}: this sandbox cannot run kernels")
    ok, why = kernels.availability()
    if not ok:
        raise UsageError(f"%ws {command}: this sandbox cannot run kernels: {why}")
    return kernels
