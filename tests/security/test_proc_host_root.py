"""Attack: a sandbox whose user maps to host root writes the host's sysctls through /proc.

bwrap's fresh /proc leaves ``/proc/sys`` writable when the notebook runs as root; a write to
``kernel/core_pattern`` followed by a crash ran a program of the sandbox's choosing as host
root. The fix binds Docker's read-only /proc paths read-only and masks its masked ones. The
write is replayed with the *current* value, so a broken fix changes nothing on the host.
"""

from __future__ import annotations

import os

import pytest

from ws_jupyter.sandbox.isolation.bwrap import PROC_MASKED, PROC_READ_ONLY

from .conftest import requires_bwrap

pytestmark = [requires_bwrap, pytest.mark.bwrap]


def test_core_pattern_cannot_be_rewritten(make_sandbox):
    sb = make_sandbox("bwrap")
    with open("/proc/sys/kernel/core_pattern") as f:
        before = f.read()
    # The same value written back: harmless if the write went through, and it must not.
    r = sb.execute_command(
        "v=$(cat /proc/sys/kernel/core_pattern) && printf '%s\\n' \"$v\" > /proc/sys/kernel/core_pattern"
    )
    assert not r.success, "the sandbox could write /proc/sys/kernel/core_pattern"
    assert "Read-only file system" in r.stderr, r.stderr
    with open("/proc/sys/kernel/core_pattern") as f:
        assert f.read() == before


@pytest.mark.parametrize("name", [n for n in PROC_READ_ONLY if os.path.exists("/proc/" + n)])
def test_docker_read_only_proc_paths_are_read_only(make_sandbox, name):
    sb = make_sandbox("bwrap")
    path = "/proc/" + name
    assert sb.execute_command(f"test -e {path}").success, f"{path} should stay readable"
    # access(W_OK) reports EROFS for a read-only mount, whatever the file's mode says.
    assert not sb.execute_command(f"test -w {path}").success, f"{path} is writable in the sandbox"
    mounts = sb.execute_command("cat /proc/self/mounts").stdout.splitlines()
    assert any(line.split()[1] == path and line.split()[3].startswith("ro") for line in mounts), mounts


def test_sysctl_tree_is_read_only_everywhere(make_sandbox):
    sb = make_sandbox("bwrap")
    # Not a single sysctl file is writable (checked with access(), nothing is written).
    r = sb.execute_command("find /proc/sys -type f -writable 2>/dev/null | head -5")
    assert r.stdout == "", r.stdout


@pytest.mark.parametrize("name", [n for n in PROC_MASKED if os.path.exists("/proc/" + n)])
def test_docker_masked_proc_paths_reveal_nothing(make_sandbox, name):
    sb = make_sandbox("bwrap")
    path = "/proc/" + name
    if os.path.isdir(path):
        assert sb.execute_command(f"ls -A {path}").stdout == ""
    else:
        r = sb.execute_command(f"cat {path} 2>/dev/null | head -c 64 | wc -c")
        assert r.stdout.strip() == "0", f"{path} leaks {r.stdout.strip()} bytes"


def test_sysfs_and_firmware_are_not_visible(make_sandbox):
    sb = make_sandbox("bwrap")
    assert not sb.execute_command("test -e /sys/firmware").success
    assert not sb.execute_command("test -e /sys/kernel").success
