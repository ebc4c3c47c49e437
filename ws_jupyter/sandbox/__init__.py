"""Commands and background processes: ``LocalSandbox``, its process manager and isolation."""

from __future__ import annotations

from .isolation.config import Mount, NativeSandboxConfig
from .local import LocalSandbox
from .processes import ProcessHandle, ProcessManager
from .types import CommandResult, IsolationDetection, ProcessInfo, SandboxInfo, WorkspaceSandbox

__all__ = [
    "CommandResult",
    "IsolationDetection",
    "LocalSandbox",
    "Mount",
    "NativeSandboxConfig",
    "ProcessHandle",
    "ProcessInfo",
    "ProcessManager",
    "SandboxInfo",
    "WorkspaceSandbox",
]
