"""OS-level isolation for sandbox commands: configuration, probing, bubblewrap and seatbelt."""

from __future__ import annotations

from .bwrap import BwrapPlan, system_binds
from .config import Mount, NativeSandboxConfig
from .detect import detect_isolation, probe_backend
from .seatbelt import SEATBELT_MARKER, build_seatbelt_profile, is_generated_profile, seatbelt_argv

__all__ = [
    "SEATBELT_MARKER",
    "BwrapPlan",
    "Mount",
    "NativeSandboxConfig",
    "build_seatbelt_profile",
    "detect_isolation",
    "is_generated_profile",
    "probe_backend",
    "seatbelt_argv",
    "system_binds",
]
