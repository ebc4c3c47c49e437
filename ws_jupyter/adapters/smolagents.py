"""Workspace tools for smolagents (``pip install ws-jupyter[frameworks]``).

>>> agent = ToolCallingAgent(tools=to_smolagents(ws.tools()), model=model)    # doctest: +SKIP

One ``smolagents.Tool`` subclass per workspace tool: ``inputs`` from the non-strict schema
(optional inputs ``nullable``, defaults in their descriptions), ``output_type="any"``. The text a
tool returns is its output; a result with an image is that image as an ``AgentImage`` (the
smolagents convention: a ToolCallingAgent stores it in its state and shows it to the model), so
any tool that returns images needs nothing special. Failures are returned as their error text,
which the agent observes. The workspace's approval policy applies (smolagents has no approval
step).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tools.types import Tool, ToolCallContext, ToolOutput, ToolResult, output_text

__all__ = ["to_smolagents"]

_TYPES = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "array": "array",
}


def _inputs(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    required = set(schema.get("required", ()))
    out: dict[str, dict[str, Any]] = {}
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type", "any")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "any")
        entry: dict[str, Any] = {
            "type": _TYPES.get(kind, "any"),
            "description": prop.get("description") or name,
        }
        if "enum" in prop:
            entry["enum"] = [v for v in prop["enum"] if v is not None]
        if name not in required:
            entry["nullable"] = True
        out[name] = entry
    return out


def _result(output: ToolOutput) -> Any:
    media = output.media if isinstance(output, ToolResult) else ()
    image = next((m for m in media if m.mime_type.startswith("image/")), None)
    if image is None:
        return output_text(output)
    from smolagents import AgentImage

    return AgentImage(image.to_bytes())


def _smol_tool(tool: Tool, request_context: Any) -> Any:
    from smolagents import Tool as SmolTool

    def forward(self: Any, **kwargs: Any) -> Any:
        args = {k: v for k, v in kwargs.items() if v is not None}
        return _result(tool.run(args, ToolCallContext(request_context=request_context)))

    attrs = {
        "name": tool.name,
        "description": tool.description,
        "inputs": _inputs(tool.schema(strict=False)),
        "output_type": "any",
        "skip_forward_signature_validation": True,
        "forward": forward,
        "__doc__": f"The workspace tool {tool.name}.",
    }
    cls_name = "".join(part.capitalize() for part in tool.name.split("_")) + "Tool"
    return type(cls_name, (SmolTool,), attrs)()


def to_smolagents(tools: Iterable[Tool], *, request_context: Any = None) -> list[Any]:
    """``smolagents.Tool`` instances for the tools (see the module docstring)."""
    return [_smol_tool(t, request_context) for t in tools]
