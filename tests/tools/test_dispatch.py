"""One-call dispatch of a whole assistant turn (OpenAI chat, Responses, Anthropic), checked with
the SDKs' own types; the definitions against the SDKs' param types; and ``Tool.arun``'s own pool."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from ws_jupyter import (
    LocalFilesystem,
    LocalSandbox,
    Workspace,
    run_anthropic_tool_calls,
    run_openai_tool_calls,
    to_anthropic,
    to_openai,
    tool_activity,
)

from ..helpers import write
from .test_filesystem_tools import png_bytes


@pytest.fixture
def ws(workdir: Path):
    write(workdir, "notes.md", "hello\n")
    (workdir / "img.png").write_bytes(png_bytes())
    w = Workspace(
        filesystem=LocalFilesystem(workdir),
        sandbox=LocalSandbox(working_directory=workdir, isolation="none"),
        bm25=False,
    )
    yield w
    w.destroy()


def test_definitions_validate_against_the_sdk_types(ws):
    from anthropic.types import ToolParam
    from openai.types.chat import ChatCompletionToolParam
    from openai.types.responses import FunctionToolParam

    tools = ws.tools()
    for item in to_openai(tools):
        TypeAdapter(ChatCompletionToolParam).validate_python(item)
    for item in to_openai(tools, api="responses", strict=False):
        TypeAdapter(FunctionToolParam).validate_python(item)
    for item in to_anthropic(tools):
        TypeAdapter(ToolParam).validate_python(item)
    strict = to_openai(tools)[0]["function"]["parameters"]
    loose = to_anthropic(tools)[0]["input_schema"]
    assert strict["required"] == ["path", "offset", "limit", "show_line_numbers", "encoding", "cell", "raw"]
    assert strict["properties"]["offset"]["type"] == ["integer", "null"]
    assert loose["required"] == ["path"] and loose["properties"]["offset"]["type"] == "integer"
    assert to_anthropic(tools, strict=True)[0]["input_schema"] == strict


def test_openai_chat_message(ws, workdir):
    from openai.types.chat import ChatCompletionMessage, ChatCompletionToolMessageParam
    from openai.types.chat.chat_completion_message_function_tool_call import (
        ChatCompletionMessageFunctionToolCall,
        Function,
    )

    def call(call_id: str, name: str, args: dict[str, Any]) -> Any:
        return ChatCompletionMessageFunctionToolCall(
            id=call_id, type="function", function=Function(name=name, arguments=json.dumps(args))
        )

    message = ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            call("call_a", "workspace_read_file", {"path": "notes.md"}),
            call("call_b", "workspace_execute_command", {"command": "touch b.txt"}),
            call("call_c", "workspace_execute_command", {"command": "touch c.txt"}),
        ],
    )
    out = run_openai_tool_calls(ws.tools(), message, approved={"call_b": True})
    for item in out:
        TypeAdapter(ChatCompletionToolMessageParam).validate_python(item)
    assert [m["tool_call_id"] for m in out] == ["call_a", "call_b", "call_c"]
    assert out[0]["content"] == "notes.md (6 bytes)\n     1→hello"
    assert out[1]["content"] == "(no output)" and (workdir / "b.txt").exists()
    # not approved and no approver: the tool's own refusal
    assert "requires approval" in out[2]["content"] and not (workdir / "c.txt").exists()
    ids = [e.tool_call_id for e in tool_activity(ws).recent() if e.kind == "finished"]
    assert ids[-3:] == ["call_a", "call_b", "call_c"]
    assert run_openai_tool_calls(ws.tools(), ChatCompletionMessage(role="assistant", content="hi")) == []
    # a plain-dict message works too, and approved=False refuses
    plain = {"tool_calls": [{"id": "d1", "function": {"name": "workspace_list_files", "arguments": "{}"}}]}
    assert (
        run_openai_tool_calls(ws.tools(), plain, approved=False)[0]["content"] == "Tool call refused by user."
    )


def test_openai_responses_output(ws):
    from openai.types.responses import ResponseFunctionToolCall, ResponseInputItemParam

    items = [
        ResponseFunctionToolCall(
            call_id="r1",
            name="workspace_read_file",
            arguments='{"path": "img.png"}',
            type="function_call",
            id="fc_1",
            status="completed",
        ),
        {"type": "message", "role": "assistant", "content": []},
        ResponseFunctionToolCall(call_id="r2", name="nope", arguments="{}", type="function_call"),
    ]
    out = run_openai_tool_calls(ws.tools(), items, api="responses")
    for item in out:
        TypeAdapter(ResponseInputItemParam).validate_python(item)
    assert [o["call_id"] for o in out] == ["r1", "r2"]
    assert [p["type"] for p in out[0]["output"]] == ["input_text", "input_image"]
    assert out[1]["output"].startswith("Error: Unknown tool 'nope'")


def test_anthropic_message(ws):
    from anthropic.types import Message, MessageParam, TextBlock, ToolUseBlock, Usage

    message = Message(
        id="msg_1",
        type="message",
        role="assistant",
        model="claude",
        stop_reason="tool_use",
        usage=Usage(input_tokens=1, output_tokens=1),
        content=[
            TextBlock(type="text", text="Reading."),
            ToolUseBlock(
                type="tool_use", id="toolu_1", name="workspace_read_file", input={"path": "img.png"}
            ),
            ToolUseBlock(
                type="tool_use", id="toolu_2", name="workspace_read_file", input={"path": "gone.md"}
            ),
        ],
    )
    reply = run_anthropic_tool_calls(ws.tools(), message)
    assert reply is not None
    TypeAdapter(MessageParam).validate_python(reply)
    first, second = reply["content"]
    assert first["tool_use_id"] == "toolu_1" and [c["type"] for c in first["content"]] == ["text", "image"]
    assert second["tool_use_id"] == "toolu_2" and second["is_error"] is True
    assert run_anthropic_tool_calls(ws.tools(), {"content": [{"type": "text", "text": "hi"}]}) is None


# --- Tool.arun: its own bounded pool -------------------------------------------------------------


def test_arun_concurrent_commands_run_in_parallel_and_leave_the_default_executor_free(make_ws, workdir):
    """Ten concurrent ``sleep 2`` commands all run at once (the loop's default executor has 6
    threads on two cores), and the loop's own executor — DNS lookups — answers meanwhile."""
    ws = make_ws(
        sandbox=LocalSandbox(working_directory=workdir, isolation="none"), tools={"require_approval": False}
    )
    command = next(t for t in ws.tools() if t.name == "workspace_execute_command")

    async def main() -> tuple[float, float, list[Any]]:
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        calls = [asyncio.ensure_future(command.arun({"command": "sleep 2; echo ok"})) for _ in range(10)]
        await asyncio.sleep(0.3)
        await loop.getaddrinfo("localhost", 80)  # uses the default executor
        await loop.run_in_executor(None, time.sleep, 0)
        free_after = time.monotonic() - started
        outs = await asyncio.gather(*calls)
        return free_after, time.monotonic() - started, outs

    free_after, total, outs = asyncio.run(main())
    assert outs == ["ok"] * 10
    assert free_after < 1.8  # answered while every command was still sleeping
    assert total < 3.9  # in parallel: one round of 2 s, not two


def test_cancelling_arun_kills_the_command(make_ws, workdir):
    import psutil

    from ..helpers import wait_for

    ws = make_ws(
        sandbox=LocalSandbox(working_directory=workdir, isolation="none"), tools={"require_approval": False}
    )
    command = next(t for t in ws.tools() if t.name == "workspace_execute_command")

    async def main() -> None:
        task = asyncio.ensure_future(command.arun({"command": "echo $$ > pid; exec sleep 60"}))
        await asyncio.to_thread(
            wait_for, lambda: (workdir / "pid").exists() and (workdir / "pid").read_text().strip()
        )
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    pid = int((workdir / "pid").read_text())

    def gone() -> bool:
        try:
            return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return True

    assert wait_for(gone, timeout=15)
