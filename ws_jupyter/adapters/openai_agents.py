"""Workspace tools for the OpenAI Agents SDK (``pip install ws-jupyter[frameworks]``).

>>> from agents import Agent                                         # doctest: +SKIP
>>> agent = Agent(name="dev", tools=to_openai_agents(ws.tools()))    # doctest: +SKIP

Each tool is a ``FunctionTool`` whose ``needs_approval`` is the tool's own rule, evaluated per
call (a command on an unisolated sandbox, a ``require_approval`` function): the SDK interrupts
the run, your code approves or rejects through ``RunState``, and an approved call runs as
approved. Images come back as the SDK's image output (``ToolOutputImage`` with a data URL) next
to the text, PDFs as ``ToolOutputFileContent``; failures are the error text the model reads.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..tools.types import Tool, ToolCallContext, ToolOutput, ToolResult, output_text

__all__ = ["to_openai_agents"]


def _sdk_output(output: ToolOutput) -> Any:
    from agents import ToolOutputFileContent, ToolOutputImage, ToolOutputText

    media = output.media if isinstance(output, ToolResult) else ()
    if not media:
        return output_text(output)
    parts: list[Any] = [ToolOutputText(text=output_text(output))]
    for i, m in enumerate(media):
        url = f"data:{m.mime_type};base64,{m.data}"
        if m.mime_type.startswith("image/"):
            parts.append(ToolOutputImage(image_url=url))
        else:
            parts.append(ToolOutputFileContent(file_data=url, filename=f"file-{i + 1}.pdf"))
    return parts


def _function_tool(tool: Tool, strict: bool, request_context: Any) -> Any:
    from agents import FunctionTool

    def call_context(call_id: str | None) -> ToolCallContext:
        return ToolCallContext(request_context=request_context, tool_call_id=call_id)

    async def needs_approval(_run_context: Any, params: dict[str, Any], call_id: str) -> bool:
        return tool.needs_approval(params, call_context(call_id))

    async def on_invoke(tool_context: Any, arguments: str) -> Any:
        call_id = getattr(tool_context, "tool_call_id", None)
        ctx = call_context(call_id)
        # the SDK runs a call that needs approval only once the run's owner approved it
        try:
            import json

            parsed = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            parsed = None
        approved = True if isinstance(parsed, dict) and tool.needs_approval(parsed, ctx) else None
        return _sdk_output(await tool.arun(arguments, ctx, approved=approved))

    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=copy.deepcopy(tool.schema(strict=strict)),
        on_invoke_tool=on_invoke,
        strict_json_schema=strict,
        needs_approval=needs_approval,
    )


def to_openai_agents(tools: Iterable[Tool], *, strict: bool = True, request_context: Any = None) -> list[Any]:
    """``agents.FunctionTool`` objects for the tools.

    ``strict=True`` (the SDK's default and recommendation) uses the strict schema; ``strict=False``
    the non-strict one, for models without strict function calling. ``request_context`` selects
    per-request providers for every call.
    """
    return [_function_tool(t, strict, request_context) for t in tools]
