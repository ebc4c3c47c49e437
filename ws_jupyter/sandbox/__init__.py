"""Commands and background processes: ``LocalSandbox``, its process manager and isolation.

Names are imported lazily, as in the top-level package: modules that only need the vocabulary
(``sandbox.types``, as the workspace does) do not load the process manager, psutil or the
isolation builders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_EXPORTS = {
    "CommandResult": "ws_jupyter.sandbox.types",
    "EgressEvent": "ws_jupyter.sandbox.network.egress",
    "IsolationDetection": "ws_jupyter.sandbox.types",
    "LocalSandbox": "ws_jupyter.sandbox.local",
    "Mount": "ws_jupyter.sandbox.isolation.config",
    "NativeSandboxConfig": "ws_jupyter.sandbox.isolation.config",
    "NetworkConfig": "ws_jupyter.sandbox.network.config",
    "ProcessHandle": "ws_jupyter.sandbox.processes",
    "ProcessInfo": "ws_jupyter.sandbox.types",
    "ProcessManager": "ws_jupyter.sandbox.processes",
    "SandboxInfo": "ws_jupyter.sandbox.types",
    "WorkspaceSandbox": "ws_jupyter.sandbox.types",
}

__all__ = [
    "CommandResult",
    "EgressEvent",
    "IsolationDetection",
    "LocalSandbox",
    "Mount",
    "NativeSandboxConfig",
    "NetworkConfig",
    "ProcessHandle",
    "ProcessInfo",
    "ProcessManager",
    "SandboxInfo",
    "WorkspaceSandbox",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


if TYPE_CHECKING:  # pragma: no cover
    from .isolation.config import Mount, NativeSandboxConfig
    from .local import LocalSandbox
    from .network.config import NetworkConfig
    from .network.egress import EgressEvent
    from .processes import ProcessHandle, ProcessManager
    from .types import CommandResult, IsolationDetection, ProcessInfo, SandboxInfo, WorkspaceSandbox
