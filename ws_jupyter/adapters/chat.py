"""Handing workspace tools to model APIs: OpenAI and Anthropic tool definitions, and results.

>>> from ws_jupyter import to_openai, to_anthropic
>>> openai_tools = to_openai(ws.tools())          # doctest: +SKIP  chat.completions(tools=...)
>>> anthropic_tools = to_anthropic(ws.tools())    # doctest: +SKIP  messages.create(tools=...)

Then one call runs every tool call of an assistant message and gives the messages to send back::

    messages += run_openai_tool_calls(tools, completion.choices[0].message)        # Chat Completions
    inputs += run_openai_tool_calls(tools, response, api="responses")              # Responses
    messages.append(run_anthropic_tool_calls(tools, message))                      # Anthropic

or, one call at a time, ``run_tool_call`` plus ``openai_tool_output`` / ``anthropic_tool_result``.
``approved=`` (True, False, or a mapping of tool-call id -> bool from your own approval UI) and
the tool-call id are passed to each tool run.

Strict schemas (every property required, optional ones nullable, no extra properties) are the
default for OpenAI; ``strict=False`` and Anthropic without ``strict`` get the non-strict schema
(optional properties optional, with defaults).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from ..tools.types import (
    Tool,
    ToolCallContext,
    ToolErrorText,
    ToolOutput,
    ToolResult,
    is_error_output,
    output_text,
)

__all__ = [
    "Approval",
    "anthropic_tool_result",
    "openai_tool_output",
    "run_anthropic_tool_calls",
    "run_openai_tool_calls",
    "run_tool_call",
    "to_anthropic",
    "to_openai",
]

#: What ``approved=`` takes: one decision for every call, or one per tool-call id.
Approval = bool | Mapping[str, bool] | None


def to_openai(
    tools: Iterable[Tool], *, api: Literal["chat", "responses"] = "chat", strict: bool = True
) -> list[dict[str, Any]]:
    """Tool definitions for OpenAI: Chat Completions (``api="chat"``) or the Responses API.

    ``strict=False`` hands over the non-strict schema (optional fields optional, with defaults)."""
    out = []
    for tool in tools:
        fn = {
            "name": tool.name,
            "description": tool.description,
            "parameters": copy.deepcopy(tool.schema(strict=strict)),
            "strict": strict,
        }
        out.append({"type": "function", "function": fn} if api == "chat" else {"type": "function", **fn})
    return out


def to_anthropic(tools: Iterable[Tool], *, strict: bool = False) -> list[dict[str, Any]]:
    """Tool definitions for Anthropic's Messages API.

    By default the non-strict schema (optional fields optional, with defaults); ``strict=True``
    adds ``"strict": true`` with the strict schema (every field present, optional ones nullable)."""
    out = []
    for tool in tools:
        item: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "input_schema": copy.deepcopy(tool.schema(strict=strict)),
        }
        if strict:
            item["strict"] = True
        out.append(item)
    return out


def run_tool_call(
    tools: Iterable[Tool],
    name: str,
    arguments: Mapping[str, Any] | str | None,
    context: Any = None,
    *,
    approved: bool | None = None,
    tool_call_id: str | None = None,
) -> ToolOutput:
    """Run the tool a model asked for by its exposed name (an unknown name is an error output).

    ``tool_call_id`` (the id the model gave the call) reaches the tool's context and activity
    events; ``approved`` is passed to ``Tool.run``."""
    listed = list(tools)
    for tool in listed:
        if tool.name == name:
            if tool_call_id is not None:
                context = _with_call_id(context, tool_call_id)
            return tool.run(arguments, context, approved=approved)
    names = ", ".join(t.name for t in listed)
    return ToolErrorText(f"Error: Unknown tool {name!r}. Available tools: {names}")


def _with_call_id(context: Any, tool_call_id: str) -> ToolCallContext:
    from dataclasses import replace

    return replace(ToolCallContext.coerce(context), tool_call_id=tool_call_id)


def _decision(approved: Approval, call_id: str) -> bool | None:
    if approved is None or isinstance(approved, bool):
        return approved
    value = approved.get(call_id)
    return None if value is None else bool(value)


def _get(obj: Any, key: str, default: Any = None) -> Any:
    """A field of an SDK object (pydantic model) or of its plain-dict form."""
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def run_openai_tool_calls(
    tools: Iterable[Tool],
    message: Any,
    *,
    api: Literal["chat", "responses"] = "chat",
    approved: Approval = None,
    context: Any = None,
) -> list[dict[str, Any]]:
    """Run every tool call of an OpenAI assistant turn; return the items to send back.

    ``api="chat"``: ``message`` is a Chat Completions assistant message (``choices[0].message``,
    SDK object or dict); the result is one ``{"role": "tool", "tool_call_id", "content"}`` message
    per call, in order. ``api="responses"``: ``message`` is a ``Response``, its ``output`` list, or
    one item; the result is one ``function_call_output`` item per ``function_call``, with media as
    input images/files. Nothing to run gives ``[]``.
    """
    listed = list(tools)
    out: list[dict[str, Any]] = []
    if api == "chat":
        for call in _get(message, "tool_calls") or ():
            fn = _get(call, "function")
            call_id = str(_get(call, "id"))
            output = run_tool_call(
                listed,
                _get(fn, "name"),
                _get(fn, "arguments"),
                context,
                approved=_decision(approved, call_id),
                tool_call_id=call_id,
            )
            out.append({"role": "tool", "tool_call_id": call_id, "content": openai_tool_output(output)})
        return out
    items = _get(message, "output", message)
    if not isinstance(items, (list, tuple)):
        items = [items]
    for item in items:
        if _get(item, "type") != "function_call":
            continue
        call_id = str(_get(item, "call_id"))
        output = run_tool_call(
            listed,
            _get(item, "name"),
            _get(item, "arguments"),
            context,
            approved=_decision(approved, call_id),
            tool_call_id=call_id,
        )
        out.append(
            {"type": "function_call_output", "call_id": call_id, "output": openai_tool_output(output, api="responses")}
        )
    return out


def run_anthropic_tool_calls(
    tools: Iterable[Tool], message: Any, *, approved: Approval = None, context: Any = None
) -> dict[str, Any] | None:
    """Run every ``tool_use`` block of an Anthropic assistant message (SDK ``Message`` or dict);
    return the ``{"role": "user", "content": [tool_result, ...]}`` message to send back, or None
    when the message asks for no tool."""
    listed = list(tools)
    results = []
    for block in _get(message, "content") or ():
        if _get(block, "type") != "tool_use":
            continue
        call_id = str(_get(block, "id"))
        output = run_tool_call(
            listed,
            _get(block, "name"),
            _get(block, "input"),
            context,
            approved=_decision(approved, call_id),
            tool_call_id=call_id,
        )
        results.append(anthropic_tool_result(call_id, output))
    return {"role": "user", "content": results} if results else None


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
