"""to_openai / to_anthropic definitions and result helpers."""

from __future__ import annotations

import json

from ws_jupyter import to_anthropic, to_openai
from ws_jupyter.adapters.chat import anthropic_tool_result, openai_tool_output, run_tool_call
from ws_jupyter.tools.types import MediaPart, ToolErrorText, ToolResult

from .test_filesystem_tools import png_bytes


def test_openai_chat_and_responses_shapes(fs_tools):
    tools = list(fs_tools.values())
    chat = to_openai(tools)
    read = next(t for t in chat if t["function"]["name"] == "workspace_read_file")
    assert read["type"] == "function" and read["function"]["strict"] is True
    assert read["function"]["parameters"] == fs_tools["workspace_read_file"].input_schema
    read["function"]["parameters"]["properties"].clear()  # a copy: the tool is unaffected
    assert fs_tools["workspace_read_file"].input_schema["properties"]
    responses = to_openai(tools, api="responses", strict=False)
    assert responses[0] == {
        "type": "function",
        "name": "workspace_read_file",
        "description": fs_tools["workspace_read_file"].description,
        "parameters": fs_tools["workspace_read_file"].non_strict_schema,
        "strict": False,
    }
    json.dumps(chat)  # plain JSON


def test_anthropic_shape(fs_tools):
    defs = to_anthropic(fs_tools.values())
    assert set(defs[0]) == {"name", "description", "input_schema"}
    assert to_anthropic([fs_tools["workspace_grep"]], strict=True)[0]["strict"] is True


def test_run_tool_call_with_json_arguments(fs_tools, workdir):
    (workdir / "a.txt").write_text("hi\n")
    tools = list(fs_tools.values())
    assert run_tool_call(tools, "workspace_read_file", '{"path": "a.txt"}') == "a.txt (3 bytes)\n     1→hi"
    out = run_tool_call(tools, "nope", {})
    assert isinstance(out, ToolErrorText) and out.startswith("Error: Unknown tool 'nope'. Available tools: ")


def test_result_helpers_carry_media_and_errors():
    data = png_bytes()
    media = ToolResult("img.png (70 bytes, image/png)", (MediaPart.from_bytes("image/png", data),))
    block = anthropic_tool_result("toolu_1", media)
    assert block["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": media.media[0].data},
    }
    assert "is_error" not in block
    assert anthropic_tool_result("toolu_2", ToolErrorText("Error: x"))["is_error"] is True
    pdf = ToolResult("doc.pdf", (MediaPart.from_bytes("application/pdf", b"%PDF-1.4"),))
    assert anthropic_tool_result("t", pdf)["content"][1]["type"] == "document"
    assert openai_tool_output("plain") == "plain"
    chat = openai_tool_output(media)
    assert chat.startswith("img.png") and "media part(s) (image/png) not shown" in chat
    parts = openai_tool_output(media, api="responses")
    assert parts[0] == {"type": "input_text", "text": "img.png (70 bytes, image/png)"}
    assert parts[1]["type"] == "input_image" and parts[1]["image_url"].startswith("data:image/png;base64,")
