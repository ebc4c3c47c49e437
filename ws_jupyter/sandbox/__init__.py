"""Commands, background processes and kernels: ``LocalSandbox``, its process manager, its kernels
(``sandbox.kernels``), isolation, and the contract other providers follow (``types.WorkspaceSandbox``
and the optional members of ``capabilities``).

Names are imported lazily, as in the top-level package: modules that only need the vocabulary
(``sandbox.types``, as the workspace does) do not load the process manager, psutil or the
isolation builders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_EXPORTS = {
    "BackgroundProcess": "ws_jupyter.sandbox.capabilities",
    "CommandResult": "ws_jupyter.sandbox.types",
    "CommandWrapping": "ws_jupyter.sandbox.capabilities",
    "EgressEvent": "ws_jupyter.sandbox.network.egress",
    "IsolationDetection": "ws_jupyter.sandbox.types",
    "LocalSandbox": "ws_jupyter.sandbox.local",
    "Mount": "ws_jupyter.sandbox.isolation.config",
    "Mounting": "ws_jupyter.sandbox.capabilities",
    "NativeSandboxConfig": "ws_jupyter.sandbox.isolation.config",
    "NetworkConfig": "ws_jupyter.sandbox.network.config",
    "ProcessHandle": "ws_jupyter.sandbox.processes",
    "ProcessInfo": "ws_jupyter.sandbox.types",
    "ProcessManager": "ws_jupyter.sandbox.processes",
    "ProcessProvider": "ws_jupyter.sandbox.capabilities",
    "SandboxInfo": "ws_jupyter.sandbox.types",
    "WorkspaceSandbox": "ws_jupyter.sandbox.types",
}

__all__ = [
    "BackgroundProcess",
    "CommandResult",
    "CommandWrapping",
    "EgressEvent",
    "IsolationDetection",
    "LocalSandbox",
    "Mount",
    "Mounting",
    "NativeSandboxConfig",
    "NetworkConfig",
    "ProcessHandle",
    "ProcessInfo",
    "ProcessManager",
    "ProcessProvider",
    "SandboxInfo",
    "WorkspaceSandbox",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


if TYPE_CHECKING:  # pragma: no cover
    from .capabilities import BackgroundProcess, CommandWrapping, Mounting, ProcessProvider
    from .isolation.config import Mount, NativeSandboxConfig
    from .local import LocalSandbox
    from .network.config import NetworkConfig
    from .network.egress import EgressEvent
    from .processes import ProcessHandle, ProcessManager
    from .types import CommandResult, IsolationDetection, ProcessInfo, SandboxInfo, WorkspaceSandbox
