"""Handing workspace tools to model APIs: OpenAI and Anthropic tool definitions, and results.

>>> from ws_jupyter import to_openai, to_anthropic
>>> openai_tools = to_openai(ws.tools())          # doctest: +SKIP  chat.completions(tools=...)
>>> anthropic_tools = to_anthropic(ws.tools())    # doctest: +SKIP  messages.create(tools=...)

Then, for each tool call the model makes::

    out = run_tool_call(tools, call.function.name, call.function.arguments)       # OpenAI
    messages.append({"role": "tool", "tool_call_id": call.id, "content": openai_tool_output(out)})

    out = run_tool_call(tools, block.name, block.input)                             # Anthropic
    results.append(anthropic_tool_result(block.id, out))

Schemas are strict-mode ready (every property required, optional ones nullable, no extra
properties), so ``strict=True`` is the default for OpenAI.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from .types import Tool, ToolErrorText, ToolOutput, ToolResult, is_error_output, output_text

__all__ = [
    "anthropic_tool_result",
    "openai_tool_output",
    "run_tool_call",
    "to_anthropic",
    "to_openai",
]


def to_openai(
    tools: Iterable[Tool], *, api: Literal["chat", "responses"] = "chat", strict: bool = True
) -> list[dict[str, Any]]:
    """Tool definitions for OpenAI: Chat Completions (``api="chat"``) or the Responses API."""
    out = []
    for tool in tools:
        fn = {
            "name": tool.name,
            "description": tool.description,
            "parameters": copy.deepcopy(tool.input_schema),
            "strict": strict,
        }
        out.append({"type": "function", "function": fn} if api == "chat" else {"type": "function", **fn})
    return out


def to_anthropic(tools: Iterable[Tool], *, strict: bool = False) -> list[dict[str, Any]]:
    """Tool definitions for Anthropic's Messages API (``strict=True`` adds ``"strict": true``)."""
    out = []
    for tool in tools:
        item: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "input_schema": copy.deepcopy(tool.input_schema),
        }
        if strict:
            item["strict"] = True
        out.append(item)
    return out


def run_tool_call(
    tools: Iterable[Tool], name: str, arguments: Mapping[str, Any] | str | None, context: Any = None
) -> ToolOutput:
    """Run the tool a model asked for by its exposed name (an unknown name is an error output)."""
    listed = list(tools)
    for tool in listed:
        if tool.name == name:
            return tool.run(arguments, context)
    names = ", ".join(t.name for t in listed)
    return ToolErrorText(f"Error: Unknown tool {name!r}. Available tools: {names}")


def openai_tool_output(output: ToolOutput, *, api: Literal["chat", "responses"] = "chat") -> Any:
    """Content for a ``tool`` message (chat) or a ``function_call_output`` (responses).

    Chat Completions tool messages carry text only: media parts are described, not sent. The
    Responses API accepts images and files in a function call output.
    """
    text = output_text(output)
    media = output.media if isinstance(output, ToolResult) else ()
    if api == "chat" or not media:
        if media:
            kinds = ", ".join(m.mime_type for m in media)
            text += (
                f"\n[{len(media)} media part(s) ({kinds}) not shown: this API takes text tool results only]"
            )
        return text
    parts: list[dict[str, Any]] = [{"type": "input_text", "text": text}]
    for m in media:
        url = f"data:{m.mime_type};base64,{m.data}"
        if m.mime_type.startswith("image/"):
            parts.append({"type": "input_image", "image_url": url})
        else:
            parts.append({"type": "input_file", "filename": "file.pdf", "file_data": url})
    return parts


def anthropic_tool_result(tool_use_id: str, output: ToolOutput) -> dict[str, Any]:
    """A ``tool_result`` content block, with images and PDFs as image/document blocks."""
    content: list[dict[str, Any]] = [{"type": "text", "text": output_text(output)}]
    media = output.media if isinstance(output, ToolResult) else ()
    for m in media:
        source = {"type": "base64", "media_type": m.mime_type, "data": m.data}
        content.append(
            {"type": "image" if m.mime_type.startswith("image/") else "document", "source": source}
        )
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error_output(output):
        block["is_error"] = True
    return block
