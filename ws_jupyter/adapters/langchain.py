"""Workspace tools for LangChain (``pip install ws-jupyter[frameworks]``).

>>> lc_tools = to_langchain(ws.tools())                  # doctest: +SKIP
>>> model.bind_tools(lc_tools)                           # doctest: +SKIP

Each tool is a ``StructuredTool`` (non-strict JSON schema as ``args_schema``) with
``response_format="content_and_artifact"``: invoked with a model's ``ToolCall`` it returns a
``ToolMessage`` whose content is the text — or, when there are images or PDFs, LangChain content
blocks (text, then ``image``/``file`` blocks with base64 data) — and whose ``artifact`` is the
``ToolResult``. A failed call gives a ``ToolMessage`` with ``status="error"`` and the error text.
The tool-call id reaches the workspace tool (activity events, hooks). LangChain has no approval
step of its own, so the workspace's approval policy (``approver``, the notebook widget) applies.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable
from typing import Any

from ..tools.types import Tool, ToolCallContext, ToolOutput, ToolResult, is_error_output, output_text

__all__ = ["to_langchain"]

_CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("ws_langchain_call_id", default=None)


def _content_and_artifact(output: ToolOutput) -> tuple[Any, Any]:
    from langchain_core.tools import ToolException

    text = output_text(output)
    if is_error_output(output):
        raise ToolException(text)
    media = output.media if isinstance(output, ToolResult) else ()
    if not media:
        return text, output if isinstance(output, ToolResult) else None
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for m in media:
        kind = "image" if m.mime_type.startswith("image/") else "file"
        blocks.append({"type": kind, "base64": m.data, "mime_type": m.mime_type})
    return blocks, output


def _structured_tool(tool: Tool, request_context: Any) -> Any:
    from langchain_core.tools import StructuredTool

    class WorkspaceTool(StructuredTool):
        """A workspace tool; remembers the model's tool-call id for the run."""

        def run(self, tool_input: Any, *args: Any, tool_call_id: str | None = None, **kwargs: Any) -> Any:
            token = _CALL_ID.set(tool_call_id)
            try:
                return super().run(tool_input, *args, tool_call_id=tool_call_id, **kwargs)
            finally:
                _CALL_ID.reset(token)

        async def arun(
            self, tool_input: Any, *args: Any, tool_call_id: str | None = None, **kwargs: Any
        ) -> Any:
            token = _CALL_ID.set(tool_call_id)
            try:
                return await super().arun(tool_input, *args, tool_call_id=tool_call_id, **kwargs)
            finally:
                _CALL_ID.reset(token)

    def context() -> ToolCallContext:
        return ToolCallContext(request_context=request_context, tool_call_id=_CALL_ID.get())

    def func(**kwargs: Any) -> tuple[Any, Any]:
        return _content_and_artifact(tool.run(kwargs, context()))

    async def coroutine(**kwargs: Any) -> tuple[Any, Any]:
        return _content_and_artifact(await tool.arun(kwargs, context()))

    return WorkspaceTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.schema(strict=False),
        func=func,
        coroutine=coroutine,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def to_langchain(tools: Iterable[Tool], *, request_context: Any = None) -> list[Any]:
    """``langchain_core`` ``StructuredTool`` objects for the tools (see the module docstring)."""
    return [_structured_tool(t, request_context) for t in tools]
