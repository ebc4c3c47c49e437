"""Attack: read what a killed notebook left in /tmp — the agent's files, a kernel's signing key.

After a SIGKILL of the notebook its sandbox HOME, its kernels' connection files (with the HMAC
key that authenticates kernel messages) and bubblewrap's staging folders stayed in /tmp for
good. They now live in one private folder per process (``ws_jupyter.sandbox.tempdirs``), which
the orphan guard removes after a crash and the next process removes if the guard could not; a
live notebook's folder is never touched.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from ..helpers import wait_for
from ..sandbox.conftest import BWRAP

ISOLATION = "bwrap" if BWRAP.available else "none"

#: A notebook: a sandbox with a file in its HOME and a kernel; prints its paths, then waits.
NOTEBOOK = """
import json, os, sys
from ws_jupyter import LocalSandbox
from ws_jupyter.sandbox.guard import orphan_guard
sb = LocalSandbox(working_directory=sys.argv[1], isolation=sys.argv[2])
assert sb.execute_command("echo notes > $HOME/agent-notes.txt").success
kernel = sb.kernels.start()
assert sb.kernels.execute("print(1)").stdout == "1\\n"
print(json.dumps({
    "home": sb.home_directory,
    "kernel_dir": kernel._runtime_dir,
    "connection_file": kernel._km.connection_file,
    "guard": orphan_guard.pid,
}), flush=True)
sys.stdin.readline()
"""


class Notebook:
    def __init__(self, tmp_path: Path, name: str) -> None:
        wd = tmp_path / name
        self.proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(NOTEBOOK), str(wd), ISOLATION],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read() if self.proc.stderr else ""
        self.paths = json.loads(line)

    @property
    def files(self) -> list[str]:
        return [self.paths["home"], self.paths["kernel_dir"], self.paths["connection_file"]]

    def kill(self) -> None:
        self.proc.kill()
        self.proc.communicate(timeout=30)
        assert self.proc.returncode == -signal.SIGKILL

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.communicate("\n", timeout=60)


def start_another_sandbox(tmp_path: Path) -> None:
    """The next start: another process starts a sandbox and exits normally."""
    code = (
        "import sys; from ws_jupyter import LocalSandbox; LocalSandbox(working_directory=sys.argv[1]).start()"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "next")], check=True, timeout=120)


def test_the_guard_removes_a_killed_notebooks_files(tmp_path):
    nb = Notebook(tmp_path, "killed")
    assert all(os.path.exists(p) for p in nb.files)
    nb.kill()
    assert wait_for(lambda: not any(os.path.exists(p) for p in nb.files), 20), nb.files


def test_the_next_start_removes_what_a_killed_notebook_left(tmp_path):
    live = Notebook(tmp_path, "live")
    killed = Notebook(tmp_path, "killed")
    try:
        os.kill(killed.paths["guard"], signal.SIGKILL)  # the guard died too (OOM killer, kill -9 of all)
        killed.kill()
        time.sleep(1)
        assert all(os.path.exists(p) for p in killed.files), "left behind: the test needs them"
        start_another_sandbox(tmp_path)
        assert not any(os.path.exists(p) for p in killed.files), killed.files
        assert all(os.path.exists(p) for p in live.files), "a live notebook's files were removed"
        assert (Path(live.paths["home"]) / "agent-notes.txt").read_text() == "notes\n"
    finally:
        live.close()


def test_the_key_file_is_readable_by_its_owner_only(tmp_path):
    nb = Notebook(tmp_path, "nb")
    try:
        key = os.stat(nb.paths["connection_file"])
        assert stat.S_IMODE(key.st_mode) == 0o600
        assert stat.S_IMODE(os.stat(nb.paths["kernel_dir"]).st_mode) & 0o777 == 0o700  # (+t)
        assert stat.S_IMODE(os.stat(Path(nb.paths["home"]).parent).st_mode) == 0o700
        process_folder = Path(nb.paths["kernel_dir"]).parent
        assert stat.S_IMODE(os.stat(process_folder).st_mode) == 0o711  # not listable by others
        assert "key" in json.loads(Path(nb.paths["connection_file"]).read_text())
    finally:
        nb.close()
    assert not any(os.path.exists(p) for p in nb.files)  # a normal exit removes them too


def folder(parent: Path, pid: int, start: int, namespace: int | None = None) -> Path:
    from ws_jupyter.sandbox import tempdirs

    ns = tempdirs._pid_namespace() if namespace is None else namespace
    path = parent / f"ws-jupyter-{tempdirs._base36(ns)}-{tempdirs._base36(pid)}-{tempdirs._base36(start)}-abc"
    path.mkdir()
    (path / "kernel.json").write_text("{}")
    return path


def test_only_folders_of_dead_owners_are_swept(tmp_path):
    from ws_jupyter.sandbox import tempdirs

    me = os.getpid()
    start = tempdirs.process_start(me)
    assert start is not None and tempdirs.process_start(me) == start
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = folder(tmp_path, dead.pid, 12345)
    reused = folder(tmp_path, me, start + 1)  # this pid, an earlier process
    alive = folder(tmp_path, me, start)
    other_namespace = folder(tmp_path, dead.pid, 1, namespace=tempdirs._pid_namespace() + 1)
    (tmp_path / "ws-jupyter-not-a-match").mkdir()
    os.symlink(tempfile.gettempdir(), tmp_path / f"{reused.name}x")
    removed = tempdirs.sweep(str(tmp_path))
    assert sorted(removed) == sorted([str(gone), str(reused)])
    assert alive.exists() and other_namespace.exists() and (tmp_path / "ws-jupyter-not-a-match").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_another_users_folder_is_left_alone(tmp_path):
    from ws_jupyter.sandbox import tempdirs

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    theirs = folder(tmp_path, dead.pid, 1)
    os.chown(theirs, 65534, 65534)
    assert tempdirs.sweep(str(tmp_path)) == [] and theirs.exists()
