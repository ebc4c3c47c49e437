"""The MCP server beyond tools/call: annotations, prompts (skills), resources (files), progress,
cancellation, logging and approval — each driven by the official ``mcp`` client, in-process in
both protocol eras (the 2025-11-25 handshake real clients speak today, and 2026-07-28), and over
stdio where a real process tree matters (cancellation)."""

from __future__ import annotations

import base64
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import psutil
import pytest
from mcp import Client, StdioServerParameters

from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace
from ws_jupyter.adapters.mcp_server import MAX_RESOURCE_BYTES, build_mcp_server

from ..helpers import wait_for, write
from .test_filesystem_tools import png_bytes

CLI = Path(sys.executable).with_name("ws-jupyter")
# logging/setLevel is what handshake-era clients use; the SDK flags it as deprecated for 2026-07-28
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
MODES = ["legacy", "auto"]  # "auto" negotiates 2026-07-28 with this server


@pytest.fixture
def make_server(workdir: Path):
    made: list[Workspace] = []

    def make(isolation: str = "none", **kwargs: Any) -> Any:
        kwargs.setdefault("filesystem", LocalFilesystem(workdir))
        kwargs.setdefault("sandbox", LocalSandbox(working_directory=workdir, isolation=isolation))
        kwargs.setdefault("bm25", False)
        server_kwargs = {k: kwargs.pop(k) for k in ("approve_all", "elicit") if k in kwargs}
        ws = Workspace(**kwargs)
        made.append(ws)
        ws.init()
        return build_mcp_server(ws, **server_kwargs)

    yield make
    for ws in made:
        ws.destroy()


def session(server: Any, mode: str, body: Any, **client_kwargs: Any) -> Any:
    async def main() -> Any:
        with anyio.fail_after(60):
            async with Client(server, mode=mode, **client_kwargs) as client:
                return await body(client)

    return anyio.run(main)


@pytest.mark.parametrize("mode", MODES)
def test_tools_have_titles_annotations_and_non_strict_schemas(make_server, mode):
    server = make_server(isolation="none")
    listed = session(server, mode, lambda c: c.list_tools()).tools
    by_name = {t.name: t for t in listed}
    read = by_name["workspace_read_file"]
    assert read.title == "Read file"
    a = read.annotations
    assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == (
        True,
        False,
        True,
        False,
    )
    delete = by_name["workspace_delete"].annotations
    assert (delete.read_only_hint, delete.destructive_hint, delete.idempotent_hint) == (False, True, True)
    mkdir = by_name["workspace_mkdir"].annotations
    assert (mkdir.read_only_hint, mkdir.destructive_hint) == (False, False)
    command = by_name["workspace_execute_command"].annotations
    # isolation "none": commands run on the host, so the tool reaches beyond the workspace
    assert (command.read_only_hint, command.destructive_hint, command.open_world_hint) == (False, True, True)
    schema = read.input_schema
    assert schema["required"] == ["path"]
    assert schema["properties"]["show_line_numbers"]["default"] is True
    assert "null" not in str(schema["properties"]["offset"]["type"])


def test_isolated_commands_are_not_open_world(make_server):
    from ws_jupyter.tools.hints import hints_for

    server = make_server(isolation="none")
    del server
    ws = Workspace(filesystem=LocalFilesystem("."), sandbox=LocalSandbox(isolation="none"))
    try:
        tool = next(t for t in ws.tools() if t.name == "workspace_execute_command")
        assert hints_for(tool, ws).open_world is True
    finally:
        ws.destroy()
    sb = LocalSandbox(isolation="auto")
    ws = Workspace(sandbox=sb)
    try:
        tool = next(t for t in ws.tools() if t.name == "workspace_execute_command")
        expected = sb.isolation == "none" or sb.native_sandbox.allow_network
        assert hints_for(tool, ws).open_world is expected
    finally:
        ws.destroy()


SKILL = """---
name: greet
description: Greets someone by name.
arguments:
  - name: who
    description: whom to greet
    required: true
---
Say hello to $who, warmly.
"""


@pytest.mark.parametrize("mode", MODES)
def test_skills_are_prompts_with_their_arguments(make_server, workdir, mode):
    write(workdir, "skills/greet/SKILL.md", SKILL)
    write(
        workdir,
        "skills/hidden/SKILL.md",
        "---\nname: hidden\ndescription: Internal.\nuser-invocable: false\n---\nNo.\n",
    )
    write(
        workdir,
        "skills/review/SKILL.md",
        "---\nname: review\ndescription: Reviews.\nargument-hint: '[file]'\n---\nReview $ARGUMENTS.\n",
    )
    server = make_server(skills=["skills"])

    async def body(c: Client) -> Any:
        listed = await c.list_prompts()
        greet = await c.get_prompt("greet", {"who": "Ada"})
        review = await c.get_prompt("review", {"arguments": "app.py"})
        try:
            await c.get_prompt("greet", {})
            missing = None
        except Exception as exc:
            missing = str(exc)
        return listed, greet, review, missing

    listed, greet, review, missing = session(server, mode, body)
    prompts = {p.name: p for p in listed.prompts}
    assert set(prompts) == {"greet", "review"}  # user-invocable: false is not offered
    assert prompts["greet"].description == "Greets someone by name."
    assert [(a.name, a.required) for a in prompts["greet"].arguments] == [("who", True)]
    assert prompts["review"].arguments[0].name == "arguments"
    assert greet.messages[0].role == "user"
    assert greet.messages[0].content.text.startswith("Say hello to Ada, warmly.")
    assert review.messages[0].content.text == "Review app.py."
    assert missing is not None and "who" in missing


def test_a_hostile_skill_prompt_is_refused_at_once(make_server, workdir):
    """A 1 MiB SKILL.md of placeholders and a 2,000-character argument made a 181 MiB prompt in
    96 s; an argument holding another's placeholder was substituted again. Now: one pass, and a
    prompt over the limit is an error that says why."""
    head = "---\nname: flood\ndescription: Floods.\narguments: [a, b]\n---\n"
    body = "$ARGUMENTS $a $b\n" * (((1 << 20) - len(head) - 64) // 17)
    write(workdir, "skills/flood/SKILL.md", head + body)
    write(
        workdir,
        "skills/echo/SKILL.md",
        "---\nname: echo\ndescription: Echoes.\narguments: [a, b]\n---\n[$a] [$b]\n",
    )
    server = make_server(skills=["skills"])

    async def body_(c: Client) -> Any:
        t0 = time.monotonic()
        try:
            await c.get_prompt("flood", {"a": "$b" * 1000, "b": "x" * 2000})
            flood = None
        except Exception as exc:
            flood = str(exc)
        took = time.monotonic() - t0
        echo = await c.get_prompt("echo", {"a": "$b" * 3, "b": "x"})
        return flood, took, echo

    flood, took, echo = session(server, "legacy", body_)
    assert flood is not None and "over the 2,097,152-character limit" in flood, flood
    assert took < 10
    assert echo.messages[0].content.text == "[$b$b$b] [x]"


@pytest.mark.parametrize("mode", MODES)
def test_files_are_resources_read_with_containment(make_server, workdir, mode, tmp_path):
    write(workdir, "README.md", "# Project\n")
    write(workdir, "docs/guide.md", "guide\n")
    write(workdir, ".secret", "hidden\n")
    (workdir / "img.png").write_bytes(png_bytes())
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours\n")
    (workdir / "link.txt").symlink_to(outside)
    server = make_server(bm25=True, auto_index_paths=["docs"])

    async def body(c: Client) -> Any:
        out: dict[str, Any] = {}
        out["list"] = await c.list_resources()
        out["templates"] = await c.list_resource_templates()
        out["readme"] = await c.read_resource("workspace://README.md")
        out["nested"] = await c.read_resource("workspace://docs/guide.md")
        out["png"] = await c.read_resource("workspace://img.png")
        for key, uri in [
            ("escape", "workspace://../outside.txt"),
            ("symlink", "workspace://link.txt"),
            ("missing", "workspace://nope.md"),
            ("dir", "workspace://docs"),
        ]:
            try:
                await c.read_resource(uri)
                out[key] = None
            except Exception as exc:
                out[key] = str(exc)
        return out

    out = session(server, mode, body)
    uris = [r.uri for r in out["list"].resources]
    assert "workspace://README.md" in uris and "workspace://img.png" in uris
    assert "workspace://docs/guide.md" in uris  # indexed
    assert "workspace://.secret" not in uris
    assert out["templates"].resource_templates[0].uri_template == "workspace://{path}"
    assert out["readme"].contents[0].text == "# Project\n"
    assert out["nested"].contents[0].text == "guide\n"
    png = out["png"].contents[0]
    assert png.mime_type == "image/png" and base64.b64decode(png.blob) == png_bytes()
    assert out["escape"] and "not yours" not in out["escape"]
    assert out["symlink"] and "not yours" not in out["symlink"]
    assert out["missing"] and "nope.md" in out["missing"]
    assert out["dir"] and "directory" in out["dir"].lower()


def test_hostile_resources_are_refused_at_once(make_server, workdir):
    with open(workdir / "big.bin", "wb") as fh:
        fh.truncate(MAX_RESOURCE_BYTES + 1)  # sparse: costs no disk
    os.mkfifo(workdir / "pipe")  # opening it for reading would wait for a writer forever
    (workdir / "zero").symlink_to("/dev/zero")
    server = make_server()

    async def body(c: Client) -> dict[str, str]:
        out = {}
        for name in ("big.bin", "pipe", "zero"):
            try:
                await c.read_resource(f"workspace://{name}")
                out[name] = ""
            except Exception as exc:
                out[name] = str(exc)
        return out

    out = session(server, "legacy", body)
    assert out["big.bin"].startswith("File too large: big.bin") and f"{MAX_RESOURCE_BYTES:,}" in out["big.bin"]
    assert "Not a regular file: pipe" in out["pipe"]
    assert out["zero"] and "\x00" not in out["zero"]


@pytest.mark.parametrize("mode", MODES)
def test_progress_notifications_while_a_command_runs(make_server, mode):
    server = make_server(approve_all=True)
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        seen.append((p, total, message))

    async def body(c: Client) -> Any:
        return await c.call_tool(
            "workspace_execute_command",
            {"command": "sleep 2.5; echo done", "timeout": 60},
            progress_callback=progress,
        )

    result = session(server, mode, body)
    assert result.content[0].text == "done"
    assert len(seen) >= 2
    assert [p for p, _, _ in seen] == sorted(p for p, _, _ in seen)
    assert all(total == 60 for _, total, _ in seen)
    assert "workspace_execute_command: running for" in str(seen[0][2])


def test_no_progress_without_a_token(make_server):
    server = make_server(approve_all=True)
    messages: list[Any] = []

    async def handler(message: Any) -> None:
        messages.append(message)

    async def body(c: Client) -> Any:
        return await c.call_tool("workspace_execute_command", {"command": "sleep 1.5; echo ok"})

    assert session(server, "legacy", body, message_handler=handler).content[0].text == "ok"
    assert not [m for m in messages if "progress" in type(m).__name__.lower() or "progress" in str(m)[:200]]


@pytest.mark.parametrize("mode", MODES)
def test_cancelling_a_call_kills_the_command_in_process(make_server, workdir, mode):
    server = make_server(approve_all=True)

    async def body(c: Client) -> float:
        started = time.monotonic()
        with anyio.move_on_after(1.5):
            await c.call_tool("workspace_execute_command", {"command": "echo $$ > pid; exec sleep 60"})
        return time.monotonic() - started

    assert session(server, mode, body) < 30
    pid = int((workdir / "pid").read_text())
    assert wait_for(lambda: not _alive(pid), timeout=15)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _stdio(workdir: Path, *extra: str, search: bool = False) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(CLI),
        args=["mcp", "--dir", str(workdir), *([] if search else ["--no-search"]), "--isolation", "none", *extra],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workdir.parent)},
        cwd=str(workdir),
    )


@pytest.mark.slow
@pytest.mark.parametrize("how", ["cancel", "timeout"])
def test_cancelled_or_timed_out_stdio_call_kills_the_command(workdir, how):
    """The regression of the hardening review: the call returned, the command ran on."""
    params = _stdio(workdir, "--approve-all")

    async def main() -> None:
        with anyio.fail_after(90):
            async with Client(params) as client:
                command = {"command": "echo $$ > pid; exec sleep 120", "timeout": 300}
                if how == "cancel":
                    with anyio.move_on_after(3):
                        await client.call_tool("workspace_execute_command", command)
                else:
                    with pytest.raises(Exception):  # noqa: B017 - the client's own timeout error
                        await client.call_tool("workspace_execute_command", command, read_timeout_seconds=3)
                pid = int(
                    wait_for(lambda: (workdir / "pid").exists() and (workdir / "pid").read_text().strip())
                )
                # the server is still up and has killed the command: it answers the next call at once
                await anyio.to_thread.run_sync(lambda: wait_for(lambda: not _alive(pid), timeout=20))
                assert not _alive(pid)
                again = await client.call_tool("workspace_execute_command", {"command": "echo still here"})
                assert again.content[0].text == "still here"

    anyio.run(main)


@pytest.mark.parametrize("mode", MODES)
def test_log_messages_follow_the_level_the_client_sets(make_server, mode):
    server = make_server(approve_all=True)
    received: list[Any] = []

    async def on_log(params: Any) -> None:
        received.append(params)

    async def body(c: Client) -> None:
        if mode == "legacy":
            await c.set_logging_level("error")
            await c.call_tool("workspace_execute_command", {"command": "true"})
            assert received == []  # the auto-approval is a warning: below "error"
            await c.set_logging_level("warning")
        await c.call_tool("workspace_execute_command", {"command": "true"})

    session(server, mode, body, logging_callback=on_log, log_level="warning" if mode == "auto" else None)
    assert any("auto-approved workspace_execute_command" in str(p.data) for p in received)
    assert all(p.level in ("warning", "error") for p in received)


def test_refusal_names_the_flags_when_the_client_cannot_be_asked(make_server, workdir):
    server = make_server(isolation="none")

    async def body(c: Client) -> Any:
        return await c.call_tool("workspace_execute_command", {"command": "touch ran"})

    result = session(server, "legacy", body)
    text = result.content[0].text
    assert result.is_error
    assert "--approve-all" in text and "--no-approval" in text and "widget" not in text
    assert not (workdir / "ran").exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("answer", ["accept", "decline", "uncheck"])
def test_approval_by_elicitation(make_server, workdir, mode, answer):
    server = make_server(isolation="none")
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> Any:
        asked.append(params.message)
        if answer == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"approve": answer == "accept"})

    async def body(c: Client) -> Any:
        return await c.call_tool("workspace_execute_command", {"command": "touch ran; echo ran"})

    result = session(server, mode, body, elicitation_callback=elicit)
    assert len(asked) == 1 and "workspace_execute_command" in asked[0] and "touch ran" in asked[0]
    if answer == "accept":
        assert result.content[0].text == "ran" and (workdir / "ran").exists()
    else:
        assert result.content[0].text == "Tool call refused by user." and result.is_error
        assert not (workdir / "ran").exists()


def test_no_elicitation_when_nothing_needs_approval(make_server):
    server = make_server(isolation="none")
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async def body(c: Client) -> Any:
        return await c.call_tool("workspace_list_files", {})

    assert not session(server, "legacy", body, elicitation_callback=elicit).is_error
    assert asked == []


def test_workspace_approver_wins_over_elicitation(make_server, workdir):
    calls: list[str] = []
    server = make_server(
        isolation="none", tools={"approver": lambda name, args, ctx: calls.append(name) or False}
    )

    async def elicit(context: Any, params: Any) -> Any:
        raise AssertionError("the workspace approver decides")

    async def body(c: Client) -> Any:
        return await c.call_tool("workspace_execute_command", {"command": "touch ran"})

    result = session(server, "legacy", body, elicitation_callback=elicit)
    assert calls == ["workspace_execute_command"]
    assert result.content[0].text == "Tool call refused by user."


@pytest.mark.slow
def test_cli_approval_flags(workdir):
    async def run(*flags: str) -> str:
        async with Client(_stdio(workdir, *flags)) as client:
            result = await client.call_tool("workspace_execute_command", {"command": "echo hi"})
            return result.content[0].text

    async def main() -> dict[str, str]:
        with anyio.fail_after(90):
            return {
                "default": await run(),
                "approve": await run("--approve-all"),
                "none": await run("--no-approval"),
            }

    out = anyio.run(main)
    assert "--approve-all" in out["default"]
    assert out["approve"] == "hi" and out["none"] == "hi"


@pytest.mark.slow
def test_a_name_that_is_not_utf8_does_not_break_resources_over_stdio(workdir):
    """One file name that is not UTF-8 (any bytes are allowed on the disk) failed
    ``resources/list`` for the whole workspace — and its error text, which held the name, killed
    the server's output stream. Its bytes are percent-encoded in the URI (it reads back), its
    name is shown with ``\\xNN``; names that differ only by Unicode normalisation stay apart."""
    write(workdir, "ok.md", "fine\n")
    with open(os.path.join(os.fsencode(workdir), b"bad\xff.txt"), "w") as fh:
        fh.write("not a UTF-8 name\n")
    write(workdir, "cafe\u0301.md", "decomposed\n")
    write(workdir, "caf\u00e9.md", "composed\n")
    params = _stdio(workdir, "--no-vector", search=True)  # with search: indexing meets the name first

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        with anyio.fail_after(60):
            async with Client(params) as client:
                out["list"] = (await client.list_resources()).resources
                out["read"] = {
                    r.uri: (await client.read_resource(r.uri)).contents[0].text for r in out["list"]
                }
                out["tree"] = (await client.call_tool("workspace_list_files", {})).content[0].text
                out["still"] = (
                    (await client.call_tool("workspace_read_file", {"path": "ok.md"})).content[0].text
                )
        return out

    out = anyio.run(main)
    by_uri = {str(r.uri): r for r in out["list"]}
    assert set(by_uri) == {
        "workspace://ok.md",
        "workspace://bad%FF.txt",
        "workspace://cafe%CC%81.md",
        "workspace://caf%C3%A9.md",
    }
    assert by_uri["workspace://bad%FF.txt"].name == "bad\\xff.txt"
    assert out["read"]["workspace://bad%FF.txt"] == "not a UTF-8 name\n"
    assert out["read"]["workspace://cafe%CC%81.md"] == "decomposed\n"
    assert out["read"]["workspace://caf%C3%A9.md"] == "composed\n"
    assert "cafe\\u0301.md" in by_uri["workspace://cafe%CC%81.md"].description
    assert "caf\\u00e9.md" in by_uri["workspace://caf%C3%A9.md"].description
    tree = out["tree"]
    assert "bad\\xff.txt  [name is not UTF-8" in tree
    assert "[same-looking name: cafe\\u0301.md]" in tree and "[same-looking name: caf\\u00e9.md]" in tree
    assert "fine" in out["still"]
