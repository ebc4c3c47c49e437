"""No kernel outlives its owner: sandbox destroy, workspace destroy, the notebook kernel shutting
down, and the notebook kernel killed with SIGKILL (the orphan guard). Checked with psutil.

The "notebook" here is a real ipykernel started with jupyter_client, in which ws-jupyter starts a
sandbox kernel — exactly the situation of a notebook user.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace

from ..helpers import wait_for
from .conftest import kernel_processes, marker, processes_with, requires_bwrap

pytestmark = pytest.mark.slow


def _start_with_child(sb: LocalSandbox, name: str, mark: str) -> str:
    """A kernel that started a child process of its own (which left the kernel's process group)."""
    k = sb.kernels.start(name)
    r = k.execute(
        f"import subprocess\nchild = subprocess.Popen(['sleep', '{mark}'], start_new_session=True)\nchild.pid"
    )
    assert r.ok, r
    assert k.connection_file
    return os.path.realpath(k.connection_file)


@pytest.mark.parametrize("isolation", ["none", pytest.param("bwrap", marks=requires_bwrap)])
def test_sandbox_destroy_leaves_no_kernel(make_sandbox: Any, isolation: str) -> None:
    sb = make_sandbox(isolation)
    mark = marker()
    files = [_start_with_child(sb, name, mark) for name in ("a", "b")]
    assert all(kernel_processes(f) for f in files) and len(processes_with(mark)) == 2
    sb.destroy()
    assert not any(kernel_processes(f) for f in files)
    assert wait_for(lambda: not processes_with(mark), 10), processes_with(mark)
    assert not any(os.path.exists(os.path.dirname(f)) for f in files)  # private dirs removed
    with pytest.raises(Exception, match="destroyed"):
        sb.kernels.execute("1")


def test_workspace_destroy_leaves_no_kernel(workdir: Path) -> None:
    ws = Workspace(filesystem=LocalFilesystem(workdir), sandbox=LocalSandbox(working_directory=str(workdir)))
    ws.init()
    mark = marker()
    conn = _start_with_child(ws.sandbox, "default", mark)
    ws.destroy()
    assert not kernel_processes(conn)
    assert wait_for(lambda: not processes_with(mark), 10)


def test_sandbox_stop_shuts_kernels_down(make_sandbox: Any) -> None:
    sb = make_sandbox()
    conn = os.path.realpath(sb.kernels.start().connection_file)
    sb.stop()
    assert not kernel_processes(conn)
    assert sb.kernels.list() == []
    sb.start()
    assert sb.kernels.execute("1 + 1").text == "2"


class _Notebook:
    """A real notebook kernel (ipykernel via jupyter_client) to run ws-jupyter in."""

    def __init__(self, tmp: Path) -> None:
        from jupyter_client import KernelManager

        self.km = KernelManager(kernel_name="python3")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON"))}
        env["IPYTHONDIR"] = str(tmp / "ipython")
        self.km.start_kernel(env=env, cwd=str(tmp))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str) -> str:
        out: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                out.append("ERROR " + msg["content"]["ename"] + ": " + msg["content"]["evalue"])

        self.kc.execute_interactive(code, output_hook=hook, timeout=120)
        return "".join(out)

    def close(self) -> None:
        self.kc.stop_channels()
        if self.km.has_kernel:
            self.km.shutdown_kernel(now=True)


@pytest.fixture
def notebook(tmp_path: Path) -> Any:
    nb = _Notebook(tmp_path)
    yield nb
    nb.close()


def _sandbox_kernel_in(notebook: _Notebook, workdir: Path, isolation: str, mark: str) -> str:
    out = notebook.run(
        "from ws_jupyter import LocalSandbox\n"
        f"sb = LocalSandbox(working_directory={str(workdir)!r}, isolation={isolation!r})\n"
        "k = sb.kernels.start()\n"
        f"r = k.execute(\"import subprocess; c = subprocess.Popen(['sleep', '{mark}'])\")\n"
        "assert r.ok, r\n"
        "print(k.connection_file)\n"
    )
    conn = out.strip().splitlines()[-1] if out.strip() else ""
    assert conn.endswith("kernel.json"), out
    conn = os.path.realpath(conn)
    assert kernel_processes(conn) and processes_with(mark)
    return conn


def test_notebook_kernel_shutdown_leaves_no_kernel(notebook: _Notebook, workdir: Path) -> None:
    mark = marker()
    conn = _sandbox_kernel_in(notebook, workdir, "none", mark)
    notebook.km.shutdown_kernel(now=False)  # a polite shutdown: the notebook's exit hooks run
    assert wait_for(lambda: not kernel_processes(conn) and not processes_with(mark), 30)


@pytest.mark.parametrize("isolation", ["none", pytest.param("bwrap", marks=requires_bwrap)])
def test_sigkill_of_the_notebook_kernel_leaves_no_kernel(
    notebook: _Notebook, workdir: Path, isolation: str
) -> None:
    mark = marker()
    conn = _sandbox_kernel_in(notebook, workdir, isolation, mark)
    pid = notebook.km.provisioner.process.pid
    os.kill(pid, signal.SIGKILL)  # no exit hook can run: the orphan guard must do it
    assert wait_for(lambda: not kernel_processes(conn) and not processes_with(mark), 30), kernel_processes(
        conn
    )
