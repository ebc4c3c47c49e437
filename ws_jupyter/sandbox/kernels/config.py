"""``KernelsConfig``: how a sandbox starts, bounds and retires its kernels."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ...errors import WorkspaceConfigError
from .result import OutputLimits

__all__ = ["KernelsConfig"]


def _seconds(value: Any, name: str, *, allow_none: bool) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value <= 0:
        raise WorkspaceConfigError(
            f"KernelsConfig.{name} must be a positive number of seconds, got {value!r}"
        )
    return None if math.isinf(value) and allow_none else float(value)


@dataclass(frozen=True)
class KernelsConfig:
    """Options of a sandbox's kernels (``LocalSandbox(kernels=...)``; a dict works too).

    * ``kernel_spec``: name of an installed kernelspec to start by default (``jupyter kernelspec
      list``); None starts an ipykernel on the notebook's own Python (``sys.executable``), so the
      kernel sees the notebook's packages.
    * ``idle_timeout``: seconds without an execution after which a kernel is shut down (its state
      is lost; the next execution on that name starts a fresh kernel and says so). None: never.
    * ``startup_timeout``: how long a kernel may take to answer its first request.
    * ``interrupt_timeout``: after a time limit interrupts running code, how long to wait for the
      kernel to stop before it is restarted instead.
    * ``shutdown_timeout``: how long a polite shutdown may take before the kernel is killed.
    * ``max_kernels``: running kernels per sandbox.
    * ``limits``: how much output of one execution is kept (``OutputLimits``).
    * ``max_message_bytes``: the largest message accepted from a kernel; a bigger one (a hostile
      or runaway output) is dropped by ZeroMQ instead of filling memory. It also sizes the
      receive queue (512 MiB / max_message_bytes messages, 4 at the default); output faster
      than it is read waits in the default kernel (which does not drop it) rather than here.

    >>> KernelsConfig(idle_timeout=600).idle_timeout
    600.0
    """

    kernel_spec: str | None = None
    idle_timeout: float | None = 3600.0
    startup_timeout: float = 60.0
    interrupt_timeout: float = 5.0
    shutdown_timeout: float = 5.0
    max_kernels: int = 8
    limits: OutputLimits = field(default_factory=OutputLimits)
    max_message_bytes: int = 128 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.kernel_spec is not None and (not isinstance(self.kernel_spec, str) or not self.kernel_spec):
            raise WorkspaceConfigError("KernelsConfig.kernel_spec must be a kernelspec name or None")
        object.__setattr__(self, "idle_timeout", _seconds(self.idle_timeout, "idle_timeout", allow_none=True))
        for name in ("startup_timeout", "interrupt_timeout", "shutdown_timeout"):
            object.__setattr__(self, name, _seconds(getattr(self, name), name, allow_none=False))
        for name in ("max_kernels", "max_message_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise WorkspaceConfigError(f"KernelsConfig.{name} must be a positive integer, got {value!r}")
        if isinstance(self.limits, Mapping):
            object.__setattr__(self, "limits", OutputLimits(**self.limits))
        elif not isinstance(self.limits, OutputLimits):
            raise WorkspaceConfigError("KernelsConfig.limits must be an OutputLimits or a dict")

    @classmethod
    def coerce(cls, value: KernelsConfig | Mapping[str, Any] | None) -> KernelsConfig:
        """Accepts a config, a dict of its fields (unknown keys are an error) or None."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            WorkspaceConfigError.check_option_names("kernels", value, (f.name for f in fields(cls)))
            return cls(**value)
        raise WorkspaceConfigError(f"kernels must be a KernelsConfig or a dict, got {type(value).__name__}")

    def with_changes(self, **changes: Any) -> KernelsConfig:
        return replace(self, **changes)
