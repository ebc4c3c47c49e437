"""``LocalSandbox.wrap_argv``: any argv (a Jupyter kernel, say) under the sandbox's isolation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ws_jupyter.errors import InvalidArgumentError
from ws_jupyter.sandbox import Mount

from .conftest import requires_bwrap

PROBE = (
    "import os, sys\n"
    "open(os.path.join(sys.argv[1], 'out.txt'), 'w').write('written')\n"
    "status = open('/proc/self/status').read()\n"
    "print(os.getuid(), 'Seccomp:\\t2' in status, os.path.exists(sys.argv[2]), os.getcwd())\n"
    "print(sorted(k for k in os.environ if k.startswith('WS_')))\n"
)


@requires_bwrap
@pytest.mark.bwrap
def test_wrapped_argv_runs_isolated_and_can_be_started_again(make_sandbox, tmp_path, monkeypatch):
    monkeypatch.setenv("WS_HOST_SECRET", "x")
    sb = make_sandbox("bwrap")
    extra = Path(os.path.realpath(tmp_path)) / "kernel-dir"
    extra.mkdir()
    hidden = Path(os.path.realpath(tmp_path)) / "hidden"
    hidden.mkdir()
    spec = sb.wrap_argv(
        [sys.executable, "-c", PROBE, str(extra), str(hidden)], binds=[str(extra)], env={"WS_KERNEL": "1"}
    )
    assert spec.pass_fds == ()  # stands alone: any launcher can start it
    for _ in range(2):  # a restart runs the very same command line
        proc = subprocess.run(
            spec.argv, cwd=spec.cwd, env=spec.env, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        first, second = proc.stdout.splitlines()
        assert first.split() == ["1000", "True", "False", sb.working_directory]
        assert second == "['WS_KERNEL']"  # the curated environment, plus what was passed
    assert (extra / "out.txt").read_text() == "written"
    # The extra bind belongs to that launch only.
    assert not sb.execute_command(f"test -e {extra}").success


@requires_bwrap
@pytest.mark.bwrap
def test_read_only_binds(make_sandbox, tmp_path):
    sb = make_sandbox("bwrap")
    ro = Path(os.path.realpath(tmp_path)) / "ro"
    ro.mkdir()
    spec = sb.wrap_argv(["/bin/sh", "-c", f"touch {ro}/x"], binds=[Mount(str(ro), read_only=True)])
    proc = subprocess.run(spec.argv, cwd=spec.cwd, env=spec.env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "Read-only" in proc.stderr


def test_without_isolation_only_the_resource_limits_come_first(make_sandbox):
    sb = make_sandbox()
    spec = sb.wrap_argv(["python", "-V"], env={"A": "1"})
    assert spec.argv[-3:] == ["--", "python", "-V"] and spec.cwd == sb.working_directory
    assert all(a.startswith("--") for a in spec.argv[1:-2]) and "--core=0:0" in spec.argv
    proc = subprocess.run(spec.argv, cwd=spec.cwd, env=spec.env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("Python"), proc.stderr
    assert spec.env["A"] == "1" and spec.env["PATH"].split(os.pathsep)[0] == os.path.dirname(sys.executable)


@pytest.mark.parametrize("bad", [[], "python -V", [1, 2], ["a\0b"]])
def test_invalid_argv_is_a_clear_error(make_sandbox, bad):
    with pytest.raises(InvalidArgumentError):
        make_sandbox().wrap_argv(bad)
