"""The MCP server: ``ws-jupyter mcp`` as a subprocess driven by the MCP client library, and an
in-process server for media content."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.adapters.mcp_server import build_mcp_server

from .test_filesystem_tools import png_bytes

CLI = Path(sys.executable).with_name("ws-jupyter")


def _texts(result) -> list[str]:
    return [c.text for c in result.content if c.type == "text"]


@pytest.mark.slow
def test_mcp_round_trip_over_stdio(workdir):
    (workdir / "docs").mkdir()
    (workdir / "docs" / "guide.md").write_text("# Guide\n\nThe launch code word is pineapple.\n")
    params = StdioServerParameters(
        command=str(CLI),
        args=["mcp", "--dir", str(workdir), "--index", "docs", "--isolation", "none", "--no-approval"],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workdir.parent)},
        cwd=str(workdir),
    )

    async def session() -> dict[str, object]:
        out: dict[str, object] = {}
        with anyio.fail_after(60):
            async with Client(params) as client:
                listed = await client.list_tools()
                out["names"] = [t.name for t in listed.tools]
                out["schema"] = next(t for t in listed.tools if t.name == "workspace_read_file").input_schema
                out["instructions"] = client.instructions
                w = await client.call_tool(
                    "workspace_write_file", {"path": "notes/todo.md", "content": "- ship it\n"}
                )
                out["write"] = (_texts(w), w.is_error)
                r = await client.call_tool("workspace_read_file", {"path": "notes/todo.md"})
                out["read"] = (_texts(r), r.is_error)
                e = await client.call_tool(
                    "workspace_execute_command", {"command": "cat notes/todo.md; exit 2"}
                )
                out["execute"] = (_texts(e), e.is_error)
                for _ in range(300):  # the first indexing pass runs while the server answers
                    s = await client.call_tool("workspace_search", {"query": "launch code word"})
                    if "results may be incomplete" not in "".join(_texts(s)):
                        break
                    await anyio.sleep(0.1)
                out["search"] = (_texts(s), s.is_error)
                bad = await client.call_tool("workspace_read_file", {"path": "../../etc/passwd"})
                out["escape"] = (_texts(bad), bad.is_error)
                missing = await client.call_tool("workspace_read_file", {})
                out["invalid"] = (_texts(missing), missing.is_error)
        return out

    out = anyio.run(session)
    names = out["names"]
    assert isinstance(names, list)
    for name in (
        "workspace_read_file",
        "workspace_write_file",
        "workspace_execute_command",
        "workspace_search",
    ):
        assert name in names
    # the non-strict schema: only what is really required, defaults stated
    assert out["schema"]["required"] == ["path"]
    assert out["schema"]["properties"]["show_line_numbers"] == {
        "type": "boolean",
        "description": out["schema"]["properties"]["show_line_numbers"]["description"],
        "default": True,
    }
    assert "Local filesystem at" in str(out["instructions"])
    assert out["write"] == (["Wrote 10 bytes to notes/todo.md"], False)
    assert out["read"] == (["notes/todo.md (10 bytes)\n     1→- ship it"], False)
    assert out["execute"] == (["- ship it\n\nExit code: 2"], False)
    search_text, search_error = out["search"]
    assert not search_error and search_text[0].startswith(
        "docs/guide.md:3-3\n3→The launch code word is pineapple.\n---\n1 result ("
    )
    assert out["escape"][1] is True and out["escape"][0][0].startswith("Error: Permission denied")
    assert out["invalid"] == (['Error: Invalid arguments: "path" is required'], True)
    assert (workdir / "notes" / "todo.md").read_text() == "- ship it\n"


def test_in_process_server_returns_images_and_flags_errors(workdir):
    (workdir / "img.png").write_bytes(png_bytes())
    ws = Workspace(filesystem=LocalFilesystem(workdir), bm25=False)
    try:
        server = build_mcp_server(ws)

        async def session():
            async with Client(server) as client:
                img = await client.call_tool("workspace_read_file", {"path": "img.png"})
                unknown = await client.call_tool("no_such_tool", {})
                return img, unknown

        img, unknown = anyio.run(session)
    finally:
        ws.destroy()
    assert [c.type for c in img.content] == ["text", "image"]
    assert img.content[1].mime_type == "image/png"
    assert base64.b64decode(img.content[1].data) == png_bytes()
    assert unknown.is_error and unknown.content[0].text.startswith("Error: Unknown tool 'no_such_tool'")


def test_cli_rejects_a_missing_directory(tmp_path):
    import subprocess

    proc = subprocess.run(
        [str(CLI), "mcp", "--dir", str(tmp_path / "nope")], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "not a directory" in proc.stderr
