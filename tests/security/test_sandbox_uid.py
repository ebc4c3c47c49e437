"""Attack surface: commands ran as uid 0 inside the sandbox, the same uid 0 as host root.

Inside, the default is now uid/gid 1000 in a user namespace that maps it to the notebook's own
user: whatever a command creates in the workspace still belongs to the notebook user on the
host, exactly as before, while tools inside no longer see themselves as root.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ws_jupyter.sandbox.isolation.config import DEFAULT_SANDBOX_UID

from .conftest import requires_bwrap

pytestmark = [requires_bwrap, pytest.mark.bwrap]


def test_commands_do_not_run_as_root_inside(make_sandbox):
    sb = make_sandbox("bwrap")
    r = sb.execute_command("id -u; id -g; id -un")
    uid, gid, name = r.stdout.split()
    assert (int(uid), int(gid)) == (DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_UID)
    assert name  # the sandbox user has a name (tools that look it up keep working)


def test_workspace_files_still_belong_to_the_notebook_user(make_sandbox):
    sb = make_sandbox("bwrap")
    Path(sb.working_directory).mkdir(parents=True, exist_ok=True)
    Path(sb.working_directory, "mine.txt").write_text("from the host\n")
    r = sb.execute_command("mkdir made && echo x > made/f && cat mine.txt && stat -c %u mine.txt")
    assert r.stdout.splitlines() == ["from the host", str(DEFAULT_SANDBOX_UID)], r.stderr
    for path in (Path(sb.working_directory, "made"), Path(sb.working_directory, "made", "f")):
        st = os.stat(path)
        assert (st.st_uid, st.st_gid) == (os.getuid(), os.getgid())


def test_uid_can_be_chosen_or_kept(make_sandbox, tmp_path):
    sb = make_sandbox("bwrap", native_sandbox={"uid": 4242, "gid": 4343})
    assert sb.execute_command("id -u; id -g").stdout.split() == ["4242", "4343"]
    keep = make_sandbox(
        "bwrap", native_sandbox={"uid": None, "gid": None}, working_directory=str(tmp_path / "k")
    )
    assert keep.execute_command("id -u").stdout.strip() == str(os.getuid())
