"""Looking up a background process by the PID a user typed."""

from __future__ import annotations

from typing import Any

from .base import Invocation

__all__ = ["find_handle"]


def find_handle(inv: Invocation, manager: Any, pid: int) -> Any:
    handle = manager.get(pid)
    if handle is None:
        known = ", ".join(str(p.pid) for p in manager.list()) or "none"
        raise inv.usage_error(f"No background process with PID {pid} (known: {known}; see `%ws ps`)")
    return handle
