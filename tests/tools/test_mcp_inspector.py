"""A client nobody here wrote: the MCP Inspector's CLI (npm ``@modelcontextprotocol/inspector``,
``--cli``) lists and calls the tools of a workspace served over Streamable HTTP. ``scripts/setup.sh``
installs it into ``.venv/mcp-inspector``; without node or that install the test is skipped, saying
which."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem, Workspace

INSPECTOR = Path(sys.prefix) / "mcp-inspector" / "node_modules" / ".bin" / "mcp-inspector"


def _inspector() -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (scripts/setup.sh installs it with npm)")
    if not INSPECTOR.exists():
        pytest.skip(
            f"the MCP Inspector is not installed in {INSPECTOR.parent.parent.parent} (run scripts/setup.sh)"
        )
    return INSPECTOR


def _cli(url: str, token: str | None, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    headers = ["--header", f"Authorization: Bearer {token}"] if token else []
    env = {**os.environ, "HOME": str(home), "CI": "1"}
    return subprocess.run(
        [str(_inspector()), "--cli", url, "--transport", "http", *headers, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_the_inspector_cli_lists_and_calls_tools_over_http(workdir: Path, tmp_path: Path) -> None:
    _inspector()
    (workdir / "a.txt").write_text("from the workspace\n")
    ws = Workspace(filesystem=LocalFilesystem(workdir), bm25=False)
    ws.init()
    try:
        handle = ws.serve_mcp_http()
        listed = _cli(handle.url, handle.token, "--method", "tools/list", home=tmp_path)
        assert listed.returncode == 0, listed.stderr
        names = [t["name"] for t in json.loads(listed.stdout)["tools"]]
        assert "workspace_read_file" in names and set(names) == set(handle.tools)
        called = _cli(
            handle.url,
            handle.token,
            "--method",
            "tools/call",
            "--tool-name",
            "workspace_read_file",
            "--tool-arg",
            "path=a.txt",
            home=tmp_path,
        )
        assert called.returncode == 0, called.stderr
        result = json.loads(called.stdout)
        assert result["isError"] is False and "from the workspace" in result["content"][0]["text"]
        refused = _cli(handle.url, "wrong-token", "--method", "tools/list", home=tmp_path)
        assert refused.returncode != 0 and "workspace_read_file" not in refused.stdout
    finally:
        ws.destroy()
