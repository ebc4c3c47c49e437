"""``SandboxKernelManager``: the named kernels of one sandbox (``sandbox.kernels``).

The sandbox owns its kernels the way it owns its processes: they run in its isolation, they are
shut down by ``sandbox.stop()``/``destroy()`` (and so by ``Workspace.destroy()``), at interpreter
exit, and — through the orphan guard — even when the notebook's process is killed. Kernels idle
for ``KernelsConfig.idle_timeout`` seconds are shut down by a small background thread; the next
execution under that name starts a fresh kernel and says that the old state is gone.

>>> sandbox.kernels.execute("x = 21")                     # doctest: +SKIP
>>> sandbox.kernels.execute("x * 2").text                 # the "default" kernel, started on demand
'42'
>>> sandbox.kernels.start("scratch")                      # several named kernels, independent
>>> [k.name for k in sandbox.kernels.list()]              # doctest: +SKIP
['default', 'scratch']
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import importlib.util
import logging
import os
import threading
import weakref
from collections.abc import Mapping
from typing import Any

from ...errors import KernelError, KernelNotFoundError
from ..capabilities import sandbox_wrapping
from .activity import ExecutionFeed
from .config import KernelsConfig
from .execution import OutputCallback
from .host import RECEIVE_QUEUE_BYTES, KernelHost, bound_receiving, receive_queue_length
from .kernel import Kernel
from .launch import check_kernel_name, resolve_kernel_spec
from .provider import KernelInfo
from .result import ExecutionResult

# the receive bounds live with the host; importable from here as before
__all__ = ["DEFAULT_KERNEL", "RECEIVE_QUEUE_BYTES", "SandboxKernelManager", "bound_receiving", "receive_queue_length"]

log = logging.getLogger(__name__)

DEFAULT_KERNEL = "default"


class SandboxKernelManager:
    """Starts, finds, runs code in and retires the kernels of one sandbox. See the module docstring.

    What a kernel needs from the sandbox — launching in its isolation, the config, the activity
    feed, the ZeroMQ context — is its :class:`KernelHost`, made here and shared by every kernel.
    """

    remote = False  # the kernels run in this sandbox (``GatewayKernelManager``: elsewhere)

    def __init__(self, sandbox: Any, config: KernelsConfig | Mapping[str, Any] | None = None) -> None:
        self.host = KernelHost(sandbox, KernelsConfig.coerce(config))
        self._lock = threading.Lock()
        self._kernels: dict[str, Kernel] = {}
        self._availability: tuple[bool, str] | None = None
        self._culler: threading.Thread | None = None
        self._wake_culler = threading.Event()
        _live_managers.add(self)

    # --- configuration ---------------------------------------------------------------------------

    @property
    def sandbox(self) -> Any:
        """The sandbox these kernels belong to (None for a gateway's manager not yet given to one)."""
        return self.host.sandbox

    @property
    def config(self) -> KernelsConfig:
        return self.host.config

    @property
    def activity(self) -> ExecutionFeed:
        """Every execution of these kernels, live (see ``activity.ExecutionFeed``)."""
        return self.host.activity

    def configure(
        self, config: KernelsConfig | Mapping[str, Any] | None = None, **changes: Any
    ) -> KernelsConfig:
        """Replaces the config (or changes some fields); applies to kernels started from now on,
        and at once to idle culling."""
        base = KernelsConfig.coerce(config) if config is not None else self.host.config
        self.host.config = base.with_changes(**changes) if changes else base
        self._availability = None
        self._wake_culler.set()
        return self.host.config

    @property
    def closed(self) -> bool:
        return self.host.closed

    @property
    def zmq_context(self) -> Any:
        """One ZeroMQ context for this sandbox's kernels, refusing oversized messages."""
        return self.host.zmq_context

    def runtime_parent(self) -> str | None:
        """Where kernels' private directories are made (see ``KernelHost.runtime_parent``)."""
        return self.host.runtime_parent()

    # --- availability ----------------------------------------------------------------------------

    def availability(self) -> tuple[bool, str]:
        """``(True, "")`` when this sandbox can run kernels, else ``(False, why)``.

        Checked without starting anything: jupyter_client (and ipykernel for the default spec)
        importable, the kernelspec known, and — once the sandbox runs — its program visible
        inside the sandbox. Cached once the answer is final.
        """
        cached = self._availability
        if cached is not None:
            return cached
        result, final = self._check_availability()
        if final:
            self._availability = result
        return result

    @property
    def available(self) -> bool:
        return self.availability()[0]

    def _check_availability(self) -> tuple[tuple[bool, str], bool]:
        if self.closed:
            return (False, "the sandbox was destroyed"), True
        wrapping = sandbox_wrapping(self.sandbox)
        if wrapping is None:
            return (False, "this sandbox cannot start programs in its isolation"), True
        if importlib.util.find_spec("jupyter_client") is None:
            return (False, "jupyter_client is not installed"), True
        try:
            spec = resolve_kernel_spec(self.config.kernel_spec)
        except KernelError as exc:
            return (False, str(exc)), True
        if self.config.kernel_spec is None and importlib.util.find_spec("ipykernel") is None:
            return (False, "ipykernel is not installed in this Python"), True
        program = spec.argv[0] if spec.argv else ""
        if self.sandbox.status != "running":
            return (True, ""), False  # visibility is known once the sandbox has started
        if os.path.isabs(program) and not wrapping.is_visible(program):
            return (False, f"{program} is not visible inside the sandbox"), True
        return (True, ""), True

    def attach(self, sandbox: Any) -> SandboxKernelManager:
        """Only a manager made without a sandbox (a gateway's) can be handed to one."""
        raise KernelError("These kernels belong to another sandbox", code="INVALID_ARGUMENT")

    def check_usable(self) -> None:
        self.host.check_usable()

    # --- kernels ---------------------------------------------------------------------------------

    def start(self, name: str = DEFAULT_KERNEL, spec: str | None = None, *, cwd: str | None = None) -> Kernel:
        """Starts the kernel ``name`` (a running one is returned as it is).

        ``spec`` names an installed kernelspec (default: the config's, else an ipykernel on the
        notebook's Python); ``cwd`` is where a new kernel starts (default: the sandbox's working
        directory; relative paths resolve against it). Raises ``KernelError`` when it cannot
        start (the message includes the kernel's last output).
        """
        kernel = self._get_or_create(name, spec, cwd)
        try:
            return kernel.start()
        except BaseException:
            if kernel.status == "stopped" and kernel.executions == 0:
                with self._lock:
                    if self._kernels.get(kernel.name) is kernel:
                        del self._kernels[kernel.name]
            raise

    def _get_or_create(self, name: str, spec: str | None, cwd: str | None = None) -> Kernel:
        check_kernel_name(name)
        self.check_usable()
        with self._lock:
            kernel = self._kernels.get(name)
            if kernel is not None:
                if spec is not None and spec != kernel.spec.name:
                    raise KernelError(
                        f"Kernel {name!r} already runs {kernel.spec.name!r}; shut it down to use {spec!r}",
                        kernel=name,
                    )
                return kernel
            running = sum(1 for k in self._kernels.values() if k.status != "stopped")
            if running >= self.config.max_kernels:
                raise KernelError(
                    f"Too many kernels ({running}, limit {self.config.max_kernels}); shut one down first",
                    code="TOO_MANY_KERNELS",
                )
            kernel = self._new_kernel(name, spec, cwd)
            self._kernels[name] = kernel
        self._ensure_culler()
        return kernel

    def _new_kernel(self, name: str, spec: str | None, cwd: str | None) -> Kernel:
        """A kernel object, not started yet (a gateway manager makes remote ones)."""
        return Kernel(self.host, name, resolve_kernel_spec(spec if spec is not None else self.config.kernel_spec), cwd=cwd)

    def get(self, name: str = DEFAULT_KERNEL) -> Kernel | None:
        """The kernel called ``name`` (running, or culled and ready to restart), or None."""
        with self._lock:
            return self._kernels.get(name)

    def __getitem__(self, name: str) -> Kernel:
        kernel = self.get(name)
        if kernel is None:
            raise KernelNotFoundError(self._unknown(name), kernel=name)
        return kernel

    def _unknown(self, name: str) -> str:
        names = self.names()
        return f"No kernel named {name!r}" + (f" (kernels: {', '.join(names)})" if names else " (no kernels)")

    def names(self) -> list[str]:
        with self._lock:
            return list(self._kernels)

    def list(self) -> list[KernelInfo]:
        """Every kernel of this sandbox, in start order."""
        with self._lock:
            kernels = list(self._kernels.values())
        return [k.info() for k in kernels]

    def __len__(self) -> int:
        return len(self._kernels)

    def execute(
        self,
        code: str,
        kernel: str = DEFAULT_KERNEL,
        timeout: float | None = None,
        on_output: OutputCallback | None = None,
        **kwargs: Any,
    ) -> ExecutionResult:
        """Runs ``code`` in the kernel ``kernel`` (started on first use); see ``Kernel.execute``."""
        return self._get_or_create(kernel, None).execute(code, timeout, on_output, **kwargs)

    def interrupt(self, name: str = DEFAULT_KERNEL) -> bool:
        """Interrupts the code running in ``name``; False when it was idle."""
        return self[name].interrupt()

    def restart(self, name: str = DEFAULT_KERNEL) -> Kernel:
        """Restarts ``name`` (its state is lost); an unknown name raises ``KernelNotFoundError``."""
        return self[name].restart()

    def shutdown(self, name: str = DEFAULT_KERNEL, now: bool = False) -> bool:
        """Shuts ``name`` down and forgets it; False when there is no such kernel."""
        with self._lock:
            kernel = self._kernels.pop(name, None)
        if kernel is None:
            return False
        kernel.shutdown(now=now)
        return True

    def shutdown_all(self, now: bool = False) -> int:
        """Shuts every kernel down (in parallel); returns how many there were."""
        with self._lock:
            kernels = list(self._kernels.values())
            self._kernels.clear()
        if not kernels:
            return 0
        threads = [
            threading.Thread(target=_quietly, args=(k.shutdown, now), name=f"ws-kernel-stop-{k.name}")
            for k in kernels
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return len(kernels)

    def close(self) -> None:
        """Shuts everything down and refuses new kernels (the sandbox is being destroyed)."""
        if not self.host.close():
            return
        self._availability = None
        self._wake_culler.set()
        self.shutdown_all()
        self.host.release()
        _live_managers.discard(self)

    # --- idle culling ----------------------------------------------------------------------------

    def _ensure_culler(self) -> None:
        with self._lock:
            if self._culler is not None and self._culler.is_alive():
                return
            ref = weakref.ref(self)
            self._culler = threading.Thread(
                target=_cull_loop, args=(ref, self._wake_culler), daemon=True, name="ws-kernel-culler"
            )
            self._culler.start()

    def cull_idle(self) -> builtins.list[str]:
        """Shuts down the kernels idle longer than ``idle_timeout`` now; returns their names."""
        timeout = self.config.idle_timeout
        if timeout is None:
            return []
        with self._lock:
            kernels = list(self._kernels.values())
        return [k.name for k in kernels if k.cull(timeout)]

    def __repr__(self) -> str:
        owner = self.sandbox.id if self.sandbox is not None else "?"
        return f"<SandboxKernelManager {len(self._kernels)} kernel(s) of {owner}>"


def _quietly(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:
        log.warning("kernel shutdown failed", exc_info=True)


def _cull_loop(ref: weakref.ref[SandboxKernelManager], wake: threading.Event) -> None:
    """Checks for idle kernels a few times per idle period; ends with its manager."""
    while True:
        manager = ref()
        if manager is None or manager.closed:
            return
        timeout = manager.config.idle_timeout
        period = 60.0 if timeout is None else min(60.0, max(0.05, timeout / 4))
        try:
            manager.cull_idle()
        except Exception:
            log.warning("idle kernel culling failed", exc_info=True)
        del manager
        wake.wait(period)
        wake.clear()


# --- interpreter exit ------------------------------------------------------------------------

_live_managers: weakref.WeakSet[SandboxKernelManager] = weakref.WeakSet()


def _shutdown_everything_at_exit() -> None:
    for manager in list(_live_managers):
        with contextlib.suppress(Exception):
            manager.shutdown_all(now=True)


atexit.register(_shutdown_everything_at_exit)
