"""Jupyter kernels as a workspace resource: stateful, isolated code execution.

A sandbox owns its kernels (``sandbox.kernels``, a :class:`SandboxKernelManager`) the way it owns
its processes: they run in its isolation (working directory, curated environment, bubblewrap when
enabled), and they die with it. ``execute()`` returns an :class:`ExecutionResult` — stdout,
stderr, rich outputs as :class:`MimeBundle` objects, the error — that serves the agent tools,
the notebook and tests alike. Built on jupyter_client (manager/client split), no IPython import.

How it is put together: ``provider.py`` is the contract any ``sandbox.kernels`` meets
(:class:`KernelProvider`); ``manager.py`` keeps the named kernels of one sandbox and hands each
a :class:`KernelHost` (``host.py``: launching in the sandbox's isolation, config, activity feed);
``kernel.py`` is a local kernel, ``gateway.py`` a kernel on a Jupyter gateway, and both wait for
their executions through one :class:`Execution` base (``execution.py``: time limits, interrupts,
output collection).

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
    "Execution": ".execution",
    "ExecutionError": ".result",
    "ExecutionEvent": ".activity",
    "ExecutionFeed": ".activity",
    "ExecutionRecord": ".activity",
    "ExecutionResult": ".result",
    "GatewayKernelManager": ".gateway",
    "Kernel": ".kernel",
    "KernelHost": ".host",
    "KernelInfo": ".provider",
    "KernelProvider": ".provider",
    "KernelsConfig": ".config",
    "MimeBundle": ".result",
    "OutputCollector": ".execution",
    "OutputEvent": ".result",
    "OutputLimits": ".result",
    "SandboxKernel": ".provider",
    "SandboxKernelManager": ".manager",
    "Stopper": ".execution",
    "clip_text": ".result",
    "sandboxed_html": ".result",
}

__all__ = [
    "DEFAULT_KERNEL",
    "Execution",
    "ExecutionError",
    "ExecutionEvent",
    "ExecutionFeed",
    "ExecutionRecord",
    "ExecutionResult",
    "GatewayKernelManager",
    "Kernel",
    "KernelHost",
    "KernelInfo",
    "KernelProvider",
    "KernelsConfig",
    "MimeBundle",
    "OutputCollector",
    "OutputEvent",
    "OutputLimits",
    "SandboxKernel",
    "SandboxKernelManager",
    "Stopper",
    "clip_text",
    "sandboxed_html",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


if TYPE_CHECKING:  # pragma: no cover
    from .activity import ExecutionEvent, ExecutionFeed, ExecutionRecord
    from .config import KernelsConfig
    from .execution import Execution, OutputCollector, Stopper
    from .gateway import GatewayKernelManager
    from .host import KernelHost
    from .kernel import Kernel
    from .manager import DEFAULT_KERNEL, SandboxKernelManager
    from .provider import KernelInfo, KernelProvider, SandboxKernel
    from .result import (
        ExecutionError,
        ExecutionResult,
        MimeBundle,
        OutputEvent,
        OutputLimits,
        clip_text,
        sandboxed_html,
    )
