"""The "Python 3 (ws-jupyter)" kernelspec: an ipykernel that starts with ``%load_ext ws_jupyter`` done.

``install_kernel()`` writes the spec the way ``ipykernel install`` does — with the absolute path of
*this* Python, so the kernel runs in the environment where ws-jupyter is installed whatever
Jupyter server launches it — and hands the directory to jupyter_client's ``KernelSpecManager``,
which knows the user / sys-prefix / prefix locations of every platform.

>>> install_kernel(prefix=sys.prefix)  # doctest: +SKIP
'/path/to/venv/share/jupyter/kernels/ws-jupyter'
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import WorkspaceConfigError

__all__ = [
    "DISPLAY_NAME",
    "KERNEL_NAME",
    "LOGO_FILES",
    "install_kernel",
    "kernel_spec_dict",
    "uninstall_kernel",
    "write_kernel_spec",
]

KERNEL_NAME = "ws-jupyter"
DISPLAY_NAME = "Python 3 (ws-jupyter)"
LOGO_FILES = ("logo-32x32.png", "logo-64x64.png", "logo-svg.svg")
_NAME_RE = re.compile(r"^[a-z0-9._-]+$")


def kernel_spec_dict(python: str | None = None, display_name: str = DISPLAY_NAME) -> dict[str, Any]:
    """The ``kernel.json`` content: ipykernel with the extension preloaded (``--ext=ws_jupyter``)."""
    return {
        "argv": [
            python or sys.executable,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            "--ext=ws_jupyter",
        ],
        "display_name": display_name,
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {"debugger": True},
    }


def write_kernel_spec(
    directory: str | Path, python: str | None = None, display_name: str = DISPLAY_NAME
) -> Path:
    """Writes ``kernel.json`` and the logos into ``directory`` (created if needed); returns it."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    spec = kernel_spec_dict(python, display_name)
    (target / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    logos = resources.files("ws_jupyter.install").joinpath("kernelspec")
    for name in LOGO_FILES:
        (target / name).write_bytes(logos.joinpath(name).read_bytes())
    return target


def install_kernel(
    *,
    user: bool = False,
    sys_prefix: bool = False,
    prefix: str | None = None,
    name: str = KERNEL_NAME,
    display_name: str = DISPLAY_NAME,
    python: str | None = None,
) -> str:
    """Installs the kernelspec and returns the directory it was written to.

    Exactly one of ``user``, ``sys_prefix`` and ``prefix`` may be given. With none, the spec goes to
    ``sys.prefix`` when this Python runs in a virtual environment (so it stays with the environment)
    and to the user's Jupyter data directory otherwise — never to a system directory that would need
    root.
    """
    chosen = sum(bool(x) for x in (user, sys_prefix, prefix))
    if chosen > 1:
        raise WorkspaceConfigError("Choose only one of --user, --sys-prefix and --prefix")
    if not _NAME_RE.match(name):
        raise WorkspaceConfigError(
            f"Invalid kernel name {name!r}: use lowercase letters, digits, '.', '_' and '-' only"
        )
    if chosen == 0:
        if sys.prefix != sys.base_prefix:
            sys_prefix = True
        else:
            user = True
    if sys_prefix:
        prefix = sys.prefix

    from jupyter_client.kernelspec import KernelSpecManager

    with tempfile.TemporaryDirectory(prefix="ws-jupyter-kernel-") as tmp:
        staged = write_kernel_spec(Path(tmp) / name, python=python, display_name=display_name)
        return str(KernelSpecManager().install_kernel_spec(str(staged), name, user=user, prefix=prefix))


def uninstall_kernel(name: str = KERNEL_NAME) -> str | None:
    """Removes an installed ws-jupyter kernelspec; returns its directory, or None if none was found."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    manager = KernelSpecManager()
    try:
        spec = manager.get_kernel_spec(name)
    except NoSuchKernel:
        return None
    if "--ext=ws_jupyter" not in spec.argv:
        raise WorkspaceConfigError(f"Kernel {name!r} is not a ws-jupyter kernel; not removing it")
    return str(manager.remove_kernel_spec(name))
