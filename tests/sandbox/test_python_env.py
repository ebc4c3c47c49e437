"""The notebook's Python inside the sandbox: `python`, `pip` and console scripts are the kernel's.

An agent's commands must see the packages the user's notebook sees: a bare `python` used to be
missing under bubblewrap (exit 127) and `python3` was the system one without them.
"""

from __future__ import annotations

import os
import sys

import pytest

from .conftest import BWRAP

ISOLATIONS = [
    "none",
    pytest.param("bwrap", marks=pytest.mark.skipif(not BWRAP.available, reason=BWRAP.message)),
]


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_python_and_pip_are_the_notebooks(make_sandbox, monkeypatch, isolation):
    # A kernel started from a virtualenv by Jupyter does not have the environment on its PATH.
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    sb = make_sandbox(isolation)
    for python in ("python", "python3"):
        r = sb.execute_command(f"{python} -c 'import sys, nbformat; print(sys.prefix)'")
        assert r.success, r.stderr
        assert r.stdout.strip() == sys.prefix
    r = sb.execute_command("pip --version")
    assert r.success and sys.prefix in r.stdout, (r.stdout, r.stderr)
    r = sb.execute_command("command -v pytest; command -v jupyter")
    assert r.stdout.split() == [
        os.path.join(os.path.dirname(sys.executable), n) for n in ("pytest", "jupyter")
    ]
    assert sb.execute_command("pytest --version").success


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_instructions_name_the_python(make_sandbox, isolation):
    sb = make_sandbox(isolation)
    sb.start()
    text = sb.get_instructions()
    assert os.path.dirname(sys.executable) in text or sys.prefix in text
    assert sys.version.split()[0] in text
    assert sb.get_info().metadata["python_executable"].startswith(sys.prefix)


@pytest.mark.skipif(not BWRAP.available, reason=BWRAP.message)
def test_the_environment_is_read_only_under_bwrap(make_sandbox):
    sb = make_sandbox("bwrap")
    r = sb.execute_command(f"touch {sys.prefix}/planted.pth")
    assert not r.success and "Read-only" in r.stderr
    assert not os.path.exists(os.path.join(sys.prefix, "planted.pth"))
