"""Attack: a read-only workspace whose sandbox still writes it.

``LocalFilesystem(read_only=True)`` (and ``ws-jupyter mcp --read-only``) removed the write tools,
but the sandbox bound the working directory read-write, so ``execute_command`` changed files
anyway. A read-only filesystem is now mounted read-only inside the sandbox.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace

from .conftest import requires_bwrap

pytestmark = [requires_bwrap, pytest.mark.bwrap]

ATTACK = "echo pwned > new.txt; echo pwned >> keep.txt; rm -f keep.txt; mkdir d"


def _untouched(root: Path) -> None:
    assert (root / "keep.txt").read_text() == "original\n"
    assert not (root / "new.txt").exists() and not (root / "d").exists()


def test_read_only_filesystem_is_read_only_in_the_sandbox(workdir):
    (workdir / "keep.txt").write_text("original\n")
    ws = Workspace(
        filesystem=LocalFilesystem(workdir, read_only=True),
        sandbox=LocalSandbox(working_directory=str(workdir), isolation="bwrap"),
        bm25=None,
    )
    try:
        ws.init()
        r = ws.sandbox.execute_command(ATTACK)
        assert "Read-only file system" in r.stderr, r.stderr
        _untouched(workdir)
        assert ws.sandbox.execute_command("cat keep.txt").stdout == "original\n"  # still readable
        assert "(read-only)" in ws.sandbox.get_instructions()
        # HOME and TMPDIR stay writable: tools that need scratch space keep working.
        assert ws.sandbox.execute_command('touch "$HOME/x" "$TMPDIR/y"').success
    finally:
        ws.destroy()


def test_a_writable_filesystem_keeps_a_writable_sandbox(workdir):
    ws = Workspace(
        filesystem=LocalFilesystem(workdir),
        sandbox=LocalSandbox(working_directory=str(workdir), isolation="bwrap"),
        bm25=None,
    )
    try:
        ws.init()
        assert ws.sandbox.execute_command("echo ok > new.txt").success
        assert (workdir / "new.txt").read_text() == "ok\n"
    finally:
        ws.destroy()


@pytest.mark.slow
def test_mcp_read_only_server_cannot_change_files(workdir):
    (workdir / "keep.txt").write_text("original\n")
    cli = Path(sys.executable).with_name("ws-jupyter")
    params = StdioServerParameters(
        command=str(cli),
        args=[
            "mcp",
            "--dir",
            str(workdir),
            "--read-only",
            "--isolation",
            "bwrap",
            "--no-search",
            "--no-approval",
        ],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workdir.parent)},
        cwd=str(workdir),
    )

    async def session() -> tuple[list[str], bool]:
        with anyio.fail_after(90):
            async with Client(params) as client:
                result = await client.call_tool("workspace_execute_command", {"command": ATTACK})
                return [c.text for c in result.content if c.type == "text"], result.is_error

    texts, _is_error = anyio.run(session)
    assert "Read-only file system" in "\n".join(texts), texts
    _untouched(workdir)
