"""How a sandbox starts a kernel: which program, in which isolation, talking over which sockets.

The kernel is an ordinary jupyter_client kernel (a kernelspec's argv, ``{connection_file}``
filled in by jupyter_client), wrapped in the sandbox's own isolation through
``wrap_argv`` (``LocalSandbox.wrap_argv``; see ``sandbox.capabilities.CommandWrapping``) — so it runs exactly where commands run: working directory = the
workspace, the sandbox's curated environment (no host secrets), its writable paths only, and
under bubblewrap no network unless the sandbox allows it.

Facts this relies on (checked on Debian 12, bubblewrap 0.8, jupyter_client 8.10, ipykernel 7.4):

* jupyter_client's ``ipc`` transport works across the bwrap boundary when the connection file
  and the sockets lie in a directory bound into the sandbox: the ZeroMQ sockets are unix sockets
  there, so ``--unshare-net`` does not cut the kernel off. Each kernel gets a private directory
  (mode 0700) bound into its own sandbox only; commands do not see it. ``ipc`` is used without
  isolation too: no TCP port is opened on the machine, and nobody else can reach the sockets.
* The kernel needs a writable ``HOME``/IPython directory (IPython creates its profile there): it
  gets the sandbox's private HOME, and an IPython directory in its private directory.
* ``JPY_PARENT_PID`` must not be set inside a pid namespace: the parent pid does not exist there
  and ipykernel's parent poller logs "Parent appears to have exited, shutting down." and exits
  before answering ``kernel_info``. Under bubblewrap the kernel is launched ``independent``
  (jupyter_client then sets no ``JPY_PARENT_PID``); ``--die-with-parent`` ties it to us instead.
* Interrupts: a signal to bwrap's process group does not reach the kernel inside the pid
  namespace, so sandboxed kernels are interrupted by message (``interrupt_mode="message"``:
  ipykernel's control thread then signals its own process group). Measured by hand: start in
  bwrap ~0.4 s, execute round trip ~4 ms.
* Output: ipykernel 7.2+ publishes IOPub on an XPUB socket, which drops what its queue to a
  subscriber (1,000 messages) cannot hold — 2,626 of 20,000 flushed prints, with no trace, even
  with a fast reader. ``ZMQ_XPUB_NODROP`` (set by ``IPYKERNEL_MAIN``) makes its sends wait
  instead; all 20,000 arrive (~3.5 s, in bwrap). A subscriber that never reads then holds the
  kernel's output back, so the notebook's own client is disconnected while another client
  drives the kernel (``Kernel.exclusive``).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import InvalidArgumentError, KernelError

if TYPE_CHECKING:
    from ..capabilities import CommandWrapping

__all__ = [
    "KernelLaunch",
    "ResolvedSpec",
    "check_kernel_name",
    "default_kernel_argv",
    "prepare_kernel_launch",
    "resolve_kernel_spec",
]

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: Kernel names jupyter_client maps to the current interpreter (as ``format_kernel_cmd`` does).
_PYTHON_NAMES = {"python", f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info[:2])}


def check_kernel_name(name: object) -> str:
    """Kernel names appear in messages and widgets: 1-64 letters, digits, ``_ . -``."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise InvalidArgumentError(
            f"invalid kernel name {name!r}: use 1-64 letters, digits, '_', '.' or '-' (e.g. 'default')"
        )
    return name


#: ``python -c`` program starting an ipykernel whose IOPub socket waits for a slow reader instead
#: of dropping what it cannot queue (``ZMQ_XPUB_NODROP``); otherwise ``ipykernel_launcher``'s own.
IPYKERNEL_MAIN = """\
import sys
if sys.path and sys.path[0] == "":
    del sys.path[0]  # as ipykernel_launcher: the working directory must not shadow imports
import zmq, ipykernel.kernelapp as kernelapp  # in the kernel's process, not the notebook's
class SandboxKernelApp(kernelapp.IPKernelApp):
    def init_iopub(self, context):
        context.setsockopt(zmq.XPUB_NODROP, 1)  # a context option applies to the sockets it makes
        try:
            super().init_iopub(context)
        finally:
            context.sockopts.pop(zmq.XPUB_NODROP, None)
SandboxKernelApp.launch_instance()
"""


def default_kernel_argv(python: str | None = None) -> list[str]:
    """An ipykernel on ``python`` (default: the notebook's own interpreter).

    Its output is never dropped on the way: ipykernel publishes on a ZeroMQ XPUB socket, which
    drops messages once its queue to a subscriber (1,000 messages) is full — ``print(i,
    flush=True)`` 20,000 times outran the notebook and lost a third of the lines. Started by
    ``IPYKERNEL_MAIN``, the socket waits for the reader instead (flow control: the kernel's
    code slows down to the notebook's pace), so the notebook can queue few messages (memory
    bound) and lose none.

    History is kept in memory: agent kernels need ``In``/``Out`` and ``%history`` but not a
    SQLite file shared by every kernel of the sandbox. Tracebacks are Python's plain ones
    (``%xmode Plain``): a third of the text of IPython's context mode — tokens an agent pays
    for — and ~30 ms instead of ~1 s for the first one (no source highlighting); ``%xmode
    Context`` in the kernel brings the long form back.
    """
    return [
        python or sys.executable,
        "-c",
        IPYKERNEL_MAIN,
        "-f",
        "{connection_file}",
        "--HistoryManager.hist_file=:memory:",
        "--InteractiveShell.xmode=Plain",
    ]


@dataclass(frozen=True)
class ResolvedSpec:
    """A kernelspec reduced to what a sandbox needs: argv template, language, display name."""

    name: str
    argv: tuple[str, ...]
    language: str
    display_name: str
    env: tuple[tuple[str, str], ...] = ()


def resolve_kernel_spec(name: str | None) -> ResolvedSpec:
    """``None``: ipykernel on this Python; otherwise an installed kernelspec by name."""
    if name is None:
        v = sys.version_info
        return ResolvedSpec("python3", tuple(default_kernel_argv()), "python", f"Python {v[0]}.{v[1]}")
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        found = sorted(KernelSpecManager().find_kernel_specs())
        raise KernelError(
            f"No kernelspec named {name!r} is installed (installed: {', '.join(found) or 'none'})",
            code="KERNEL_SPEC_NOT_FOUND",
        ) from None
    argv = list(spec.argv)
    if argv and argv[0] in _PYTHON_NAMES:
        argv[0] = sys.executable
    return ResolvedSpec(
        name,
        tuple(argv),
        spec.language or "",
        spec.display_name or name,
        tuple(sorted((spec.env or {}).items())),
    )


@dataclass(frozen=True)
class KernelLaunch:
    """One kernel's start-up: the wrapped argv (with ``{connection_file}``), cwd, environment."""

    argv: list[str]
    cwd: str
    env: dict[str, str]
    interrupt_mode: str
    independent: bool
    spec: ResolvedSpec


def kernel_environment(runtime_dir: str, spec: ResolvedSpec) -> dict[str, str]:
    """What a kernel needs on top of the sandbox's curated environment."""
    env = dict(spec.env)
    env.update(
        {
            "IPYTHONDIR": os.path.join(runtime_dir, "ipython"),
            "JUPYTER_RUNTIME_DIR": runtime_dir,
            # debugpy warns on stderr about frozen modules at every start on Python 3.11+
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
    )
    return env


def prepare_kernel_launch(
    sandbox: CommandWrapping, isolation: str, spec: ResolvedSpec, runtime_dir: str, *, cwd: str | None = None
) -> KernelLaunch:
    """The launch of one kernel of ``sandbox`` (whose isolation is ``isolation``), isolated like
    its commands (``cwd``: where it starts, default the sandbox's working directory)."""
    from ..isolation.config import Mount

    program = spec.argv[0] if spec.argv else ""
    if not program:
        raise KernelError(f"The kernelspec {spec.name!r} has an empty argv", code="KERNEL_START_FAILED")
    if os.path.isabs(program):
        resolved: str | None = program if os.access(program, os.X_OK) else None
    else:
        resolved = shutil.which(program)
    if resolved is None:
        raise KernelError(
            f"Cannot start kernel {spec.name!r}: {program!r} was not found or is not executable",
            code="KERNEL_START_FAILED",
        )
    if not sandbox.is_visible(resolved):
        raise KernelError(
            f"Cannot start kernel {spec.name!r} in this sandbox: {resolved} is not visible inside it "
            "(native_sandbox allow_system_binaries=False hides the Python installation; add it to "
            "read_only_paths)",
            code="KERNELS_UNAVAILABLE",
        )
    argv = [resolved, *spec.argv[1:]]
    launch = sandbox.wrap_argv(
        argv, cwd=cwd, env=kernel_environment(runtime_dir, spec), binds=(Mount(runtime_dir),)
    )
    return KernelLaunch(
        argv=list(launch.argv),
        cwd=launch.cwd,
        env=dict(launch.env),
        interrupt_mode="signal" if isolation == "none" else "message",
        independent=isolation == "bwrap",
        spec=spec,
    )
