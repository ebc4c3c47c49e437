"""Jupyter kernels as a workspace resource: stateful, isolated code execution.

A sandbox owns its kernels (``sandbox.kernels``, a :class:`SandboxKernelManager`) the way it owns
its processes: they run in its isolation (working directory, curated environment, bubblewrap when
enabled), and they die with it. ``execute()`` returns an :class:`ExecutionResult` — stdout,
stderr, rich outputs as :class:`MimeBundle` objects, the error — that serves the agent tools,
the notebook and tests alike. Built on jupyter_client (manager/client split), no IPython import.

>>> from ws_jupyter import LocalSandbox
>>> sb = LocalSandbox("./work")                              # doctest: +SKIP
>>> sb.kernels.execute("import math; math.pi").text          # doctest: +SKIP
'3.141592653589793'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

_EXPORTS = {
    "DEFAULT_KERNEL": ".manager",
    "ExecutionError": ".result",
    "ExecutionEvent": ".activity",
    "ExecutionFeed": ".activity",
    "ExecutionRecord": ".activity",
    "ExecutionResult": ".result",
    "GatewayKernelManager": ".gateway",
    "Kernel": ".kernel",
    "KernelInfo": ".kernel",
    "KernelsConfig": ".config",
    "MimeBundle": ".result",
    "OutputEvent": ".result",
    "OutputLimits": ".result",
    "SandboxKernelManager": ".manager",
    "clip_text": ".result",
    "sandboxed_html": ".result",
}

__all__ = [
    "DEFAULT_KERNEL",
    "ExecutionError",
    "ExecutionEvent",
    "ExecutionFeed",
    "ExecutionRecord",
    "ExecutionResult",
    "GatewayKernelManager",
    "Kernel",
    "KernelInfo",
    "KernelsConfig",
    "MimeBundle",
    "OutputEvent",
    "OutputLimits",
    "SandboxKernelManager",
    "clip_text",
    "sandboxed_html",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


if TYPE_CHECKING:  # pragma: no cover
    from .activity import ExecutionEvent, ExecutionFeed, ExecutionRecord
    from .config import KernelsConfig
    from .gateway import GatewayKernelManager
    from .kernel import Kernel, KernelInfo
    from .manager import DEFAULT_KERNEL, SandboxKernelManager
    from .result import (
        ExecutionError,
        ExecutionResult,
        MimeBundle,
        OutputEvent,
        OutputLimits,
        clip_text,
        sandboxed_html,
    )
