"""Is an isolation backend usable *here*? Probe it by running a tiny sandbox, once per process.

Finding the ``bwrap`` binary is not enough: inside Docker, or where unprivileged user
namespaces are disabled (AppArmor, sysctl), it exists but cannot create namespaces. So the
probe starts a real sandbox with exactly the flags commands will use and runs ``true``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading

from ..tempdirs import process_dir
from ..types import IsolationBackend, IsolationDetection
from .bwrap import BwrapPlan
from .config import NativeSandboxConfig

__all__ = ["detect_isolation", "probe_backend"]

_lock = threading.Lock()
_cache: dict[str, IsolationDetection] = {}

_BWRAP_INSTALL_HINT = (
    "install it with `apt-get install bubblewrap` (Debian/Ubuntu) or `dnf install bubblewrap` (Fedora)"
)


def _probe_bwrap() -> IsolationDetection:
    exe = shutil.which("bwrap")
    if exe is None:
        return IsolationDetection("bwrap", False, f"bubblewrap (bwrap) not found; {_BWRAP_INSTALL_HINT}")
    with tempfile.TemporaryDirectory(prefix="ws-bwrap-probe-", dir=process_dir()) as tmp:
        # Namespaces only: whether the seccomp filter can be built is the sandbox's own check
        # (it depends on the sandbox's options).
        plan = BwrapPlan(working_directory=tmp, config=NativeSandboxConfig(seccomp=False), bwrap_path=exe)
        try:
            proc = subprocess.run(
                plan.wrap(["true"], cwd=tmp),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                env={"PATH": "/usr/bin:/bin"},
                timeout=10,
                start_new_session=True,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return IsolationDetection("bwrap", False, f"bubblewrap at {exe} could not run: {exc}")
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        return IsolationDetection(
            "bwrap",
            False,
            f"bubblewrap at {exe} cannot create a sandbox here ({reason}); user namespaces may be "
            "disabled (container without --privileged, AppArmor or kernel.unprivileged_userns_clone=0)",
        )
    return IsolationDetection("bwrap", True, f"bubblewrap available at {exe} (namespace probe succeeded)")


def _probe_seatbelt() -> IsolationDetection:
    exe = "/usr/bin/sandbox-exec"
    if not os.path.exists(exe):
        return IsolationDetection("seatbelt", False, "sandbox-exec not found (seatbelt needs macOS)")
    try:
        proc = subprocess.run(
            [exe, "-p", "(version 1)(allow default)", "/usr/bin/true"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return IsolationDetection("seatbelt", False, f"sandbox-exec could not run: {exc}")
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        return IsolationDetection("seatbelt", False, f"sandbox-exec failed: {reason}")
    return IsolationDetection("seatbelt", True, "seatbelt (sandbox-exec) available on macOS")


def probe_backend(backend: IsolationBackend, *, refresh: bool = False) -> IsolationDetection:
    """Probes one backend (cached per process; ``refresh=True`` probes again)."""
    if backend == "none":
        return IsolationDetection("none", True, "no isolation: commands run directly on the host")
    with _lock:
        if not refresh and backend in _cache:
            return _cache[backend]
        if backend == "bwrap":
            result = (
                _probe_bwrap()
                if sys.platform.startswith("linux")
                else IsolationDetection("bwrap", False, f"bubblewrap needs Linux (this is {sys.platform})")
            )
        elif backend == "seatbelt":
            result = (
                _probe_seatbelt()
                if sys.platform == "darwin"
                else IsolationDetection("seatbelt", False, f"seatbelt needs macOS (this is {sys.platform})")
            )
        else:  # pragma: no cover - guarded by callers
            raise ValueError(backend)
        _cache[backend] = result
        return result


def detect_isolation(*, refresh: bool = False) -> IsolationDetection:
    """The best backend for this platform, probed; ``backend="none"`` when nothing works."""
    if sys.platform.startswith("linux"):
        return probe_backend("bwrap", refresh=refresh)
    if sys.platform == "darwin":
        return probe_backend("seatbelt", refresh=refresh)
    return IsolationDetection(
        "none", False, f"Native sandboxing is not supported on {sys.platform}; commands run unisolated."
    )
