"""Workspace tools for pydantic-ai (``pip install ws-jupyter[frameworks]``; pydantic-ai-slim is enough).

>>> agent = Agent(model, toolsets=[to_pydantic_ai(ws.tools())])    # doctest: +SKIP

A ``FunctionToolset`` with one tool per workspace tool (non-strict JSON schema; pydantic-ai
validates nothing itself, the workspace tool validates and reports bad arguments). Images and
PDFs come back as ``BinaryContent`` in the tool return, after the text; a failed call raises
``ToolFailed`` with the error text (the model sees it, no retry prompt). A call that needs
approval raises ``ApprovalRequired`` — pydantic-ai's deferred-tool approval — and runs as
approved once the run is resumed with the call approved.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tools.types import Tool, ToolCallContext, ToolOutput, ToolResult, is_error_output, output_text

__all__ = ["to_pydantic_ai"]


def _return_value(output: ToolOutput) -> Any:
    from pydantic_ai import BinaryContent
    from pydantic_ai.exceptions import ToolFailed

    text = output_text(output)
    if is_error_output(output):
        raise ToolFailed(text)
    media = output.media if isinstance(output, ToolResult) else ()
    if not media:
        return text
    return [text, *(BinaryContent(data=m.to_bytes(), media_type=m.mime_type) for m in media)]


def _pydantic_tool(tool: Tool, request_context: Any) -> Any:
    from pydantic_ai import Tool as PydanticTool
    from pydantic_ai.exceptions import ApprovalRequired

    async def call(ctx: Any, **kwargs: Any) -> Any:
        call_ctx = ToolCallContext(request_context=request_context, tool_call_id=ctx.tool_call_id)
        approved: bool | None = None
        if tool.needs_approval(kwargs, call_ctx):
            if not ctx.tool_call_approved:
                raise ApprovalRequired(metadata={"tool": tool.name})
            approved = True
        return _return_value(await tool.arun(kwargs, call_ctx, approved=approved))

    return PydanticTool.from_schema(
        call,
        name=tool.name,
        description=tool.description,
        json_schema=tool.schema(strict=False),
        takes_ctx=True,
    )


def to_pydantic_ai(tools: Iterable[Tool], *, request_context: Any = None) -> Any:
    """A ``pydantic_ai`` ``FunctionToolset`` of the tools (see the module docstring)."""
    from pydantic_ai import FunctionToolset

    return FunctionToolset([_pydantic_tool(t, request_context) for t in tools])
