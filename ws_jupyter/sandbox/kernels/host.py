"""``KernelHost``: what a kernel needs from the sandbox and the manager that run it — no more.

The manager decides *which* kernels exist (names, how many, idle culling); the host says *how*
any one of them runs: the config in force (start-up, interrupt and shutdown times, output and
message limits), the execution feed, how a kernel process is launched in the sandbox's
isolation, where its private directory goes, the ZeroMQ context, and whether the sandbox can
still run kernels. The manager makes one host and hands it to every kernel it creates; a
kernel never holds its manager.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from typing import Any

from ...errors import KernelError, SandboxStateError
from ..capabilities import ensure_running, sandbox_home, sandbox_isolation, sandbox_wrapping
from .activity import ExecutionFeed
from .config import KernelsConfig
from .launch import KernelLaunch, ResolvedSpec, prepare_kernel_launch

__all__ = ["RECEIVE_QUEUE_BYTES", "KernelHost", "bound_receiving", "receive_queue_length"]

#: Bytes a kernel's sockets may queue on our side, at most (the receive queue is sized from it).
RECEIVE_QUEUE_BYTES = 512 << 20


def receive_queue_length(max_message_bytes: int) -> int:
    """ZeroMQ's ``RCVHWM`` for a kernel's sockets: at most ``RECEIVE_QUEUE_BYTES`` queued."""
    return max(2, RECEIVE_QUEUE_BYTES // max_message_bytes)


def bound_receiving(context: Any, max_message_bytes: int) -> Any:
    """Sets ``context`` (a ``zmq.Context`` or ``zmq.asyncio.Context``) to refuse messages over
    ``max_message_bytes`` and to queue at most ``RECEIVE_QUEUE_BYTES`` of them per socket, for
    every socket it makes that talks to a sandbox kernel; returns it.

    ZeroMQ queues up to RCVHWM received messages per socket (default 1,000) while the reader is
    busy: 1,000 messages of max_message_bytes, sent by code in the kernel faster than they are
    parsed, would fill the host's memory. A short queue here loses nothing: when it is full the
    kernel's side waits (the default kernel's IOPub does not drop, see
    ``launch.default_kernel_argv``), so the kernel holds what the notebook has not read yet."""
    import zmq

    context.setsockopt(zmq.MAXMSGSIZE, max_message_bytes)
    context.setsockopt(zmq.RCVHWM, receive_queue_length(max_message_bytes))
    return context


class KernelHost:
    """Where one sandbox's kernels run and what bounds them. See the module docstring.

    ``sandbox`` is None for a gateway's manager not yet given to a sandbox; ``config`` is
    replaced by ``SandboxKernelManager.configure()`` and read by kernels when they need it.
    """

    def __init__(self, sandbox: object | None, config: KernelsConfig) -> None:
        self.sandbox = sandbox
        self.config = config
        self.activity = ExecutionFeed()
        self._lock = threading.Lock()
        self._context: Any = None
        self._closed = False

    # --- the sandbox -------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the sandbox was destroyed: no kernel may start any more."""
        return self._closed

    def check_usable(self) -> None:
        if self._closed:
            raise SandboxStateError("The sandbox was destroyed; it cannot run kernels any more")

    @property
    def isolation(self) -> str:
        """The sandbox's isolation, as kernels report it (``"none"`` when it declares none)."""
        return sandbox_isolation(self.sandbox) or "none"

    def ensure_running(self) -> None:
        """Starts the sandbox if it needs starting (a kernel's first start does)."""
        ensure_running(self.sandbox)

    def runtime_parent(self) -> str | None:
        """Where kernels' private directories are made: this process's private temporary folder,
        which the orphan guard — or the next process — removes when this one is killed (the
        connection file holds the key that signs kernel messages).

        Under seatbelt only the sandbox's own directories are writable, so they go in its HOME.
        """
        if self.isolation == "seatbelt":
            return sandbox_home(self.sandbox)
        from ..tempdirs import process_dir

        return process_dir()

    def runtime_dir(self) -> str:
        """A new private directory (0700) for one kernel's connection file and sockets."""
        return tempfile.mkdtemp(prefix="ws-kernel-", dir=self.runtime_parent())

    def launch(self, spec: ResolvedSpec, runtime_dir: str, cwd: str | None = None) -> KernelLaunch:
        """How to start a kernel of ``spec`` in the sandbox's isolation (see ``launch.py``)."""
        wrapping = sandbox_wrapping(self.sandbox)
        if wrapping is None:
            raise KernelError(
                "This sandbox cannot start programs in its isolation", code="KERNELS_UNAVAILABLE"
            )
        return prepare_kernel_launch(wrapping, self.isolation, spec, runtime_dir, cwd=cwd)

    # --- messages ----------------------------------------------------------------------------------

    @property
    def zmq_context(self) -> Any:
        """One ZeroMQ context for this sandbox's kernels, refusing oversized messages."""
        with self._lock:
            if self._context is None:
                import zmq

                ctx = bound_receiving(zmq.Context(), self.config.max_message_bytes)
                ctx.setsockopt(zmq.LINGER, 0)
                self._context = ctx
            return self._context

    # --- the end -----------------------------------------------------------------------------------

    def close(self) -> bool:
        """Refuses new kernels from now on; False when it was already closed."""
        with self._lock:
            if self._closed:
                return False
            self._closed = True
            return True

    def release(self) -> None:
        """Ends the ZeroMQ context (after every kernel was shut down)."""
        with self._lock:
            ctx, self._context = self._context, None
        if ctx is not None:
            with contextlib.suppress(Exception):
                ctx.term()
