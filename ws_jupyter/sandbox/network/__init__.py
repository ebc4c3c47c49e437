"""The sandbox's network: modes, the allow-list proxy, the egress log and header secrets.

``LocalSandbox(isolation="bwrap", network=[...])`` puts a sandbox in ``allow`` mode: its commands
and kernels reach only the listed hosts, through a proxy that runs outside the sandbox
(``proxy.py``), reached from inside through a Unix socket and a small bridge (``bridge_program.py``);
``sandbox.egress_log()`` lists every attempt. ``config.py`` describes the modes and options,
``policy.py`` the rule syntax, ``tls.py`` how header secrets reach HTTPS hosts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

_EXPORTS = {
    "EgressEvent": "ws_jupyter.sandbox.network.egress",
    "EgressLog": "ws_jupyter.sandbox.network.egress",
    "HeaderSecret": "ws_jupyter.sandbox.network.config",
    "HostRule": "ws_jupyter.sandbox.network.policy",
    "NetworkConfig": "ws_jupyter.sandbox.network.config",
    "NetworkPolicy": "ws_jupyter.sandbox.network.policy",
    "SandboxNetwork": "ws_jupyter.sandbox.network.runtime",
}

__all__ = [
    "EgressEvent",
    "EgressLog",
    "HeaderSecret",
    "HostRule",
    "NetworkConfig",
    "NetworkPolicy",
    "SandboxNetwork",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

if TYPE_CHECKING:  # pragma: no cover
    from .config import HeaderSecret, NetworkConfig
    from .egress import EgressEvent, EgressLog
    from .policy import HostRule, NetworkPolicy
    from .runtime import SandboxNetwork
