"""Serving a workspace's tools over MCP (stdio), so any MCP client can use the workspace.

    ws-jupyter mcp --dir ./project            # from a terminal or an MCP client config

or from Python: ``serve_mcp(workspace)`` (blocks until the client disconnects), or
``build_mcp_server(workspace)`` for a server object to run on other streams (tests, embedding).

The tools are the workspace's (``workspace.tools()``), with the same names, descriptions, schemas,
outputs and policy; text outputs become text content, images image content, PDFs embedded
resources; failures are flagged ``isError``. The workspace's instructions become the server's.
Calls run in worker threads, so a long command does not block other requests.

Approval: an MCP client asks its user before tool calls, but this server still applies the
workspace's policy; a tool that requires approval and has no ``approver`` configured is refused
with a message. ``ws-jupyter mcp --no-approval`` (or a config with ``require_approval=False``)
leaves the decision to the client.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .types import Tool, ToolOutput, ToolResult, is_error_output, output_text

__all__ = ["build_mcp_server", "cli_command", "serve_mcp"]


def _content(output: ToolOutput) -> list[Any]:
    import mcp_types as types

    parts: list[Any] = [types.TextContent(text=output_text(output))]
    if isinstance(output, ToolResult):
        for m in output.media:
            if m.mime_type.startswith("image/"):
                parts.append(types.ImageContent(data=m.data, mime_type=m.mime_type))
            else:
                parts.append(
                    types.EmbeddedResource(
                        resource=types.BlobResourceContents(
                            uri=f"workspace://media/{len(parts)}", mime_type=m.mime_type, blob=m.data
                        )
                    )
                )
    return parts


def build_mcp_server(
    workspace: Any,
    *,
    request_context: Any = None,
    name: str = "ws-jupyter",
    tools: list[Tool] | None = None,
) -> Any:
    """An ``mcp`` low-level ``Server`` exposing the workspace's tools."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from .. import __version__

    listed = tools if tools is not None else workspace.tools(request_context)
    by_name = {t.name: t for t in listed}
    definitions = [
        types.Tool(name=t.name, description=t.description, input_schema=t.input_schema) for t in listed
    ]

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=definitions)

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        tool = by_name.get(params.name)
        if tool is None:
            text = f"Error: Unknown tool {params.name!r}. Available tools: {', '.join(by_name)}"
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
        output = await anyio.to_thread.run_sync(tool.run, params.arguments or {})
        return types.CallToolResult(content=_content(output), is_error=is_error_output(output))

    try:
        instructions = workspace.get_instructions(request_context) or None
    except Exception:
        instructions = None
    return Server(
        name,
        version=__version__,
        instructions=instructions,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def serve_mcp(workspace: Any, *, request_context: Any = None, name: str = "ws-jupyter") -> None:
    """Serve the workspace's tools over stdin/stdout until the client disconnects."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_mcp_server(workspace, request_context=request_context, name=name)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


# --- the `ws-jupyter mcp` subcommand ---------------------------------------------------------------


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", default=".", help="workspace directory (default: the current directory)")
    parser.add_argument("--name", default="ws-jupyter", help="server name shown to the client")
    parser.add_argument(
        "--read-only", action="store_true", help="files can be read and searched, not changed"
    )
    parser.add_argument("--no-sandbox", action="store_true", help="no command execution tools")
    parser.add_argument(
        "--isolation",
        choices=("auto", "none", "bwrap", "seatbelt"),
        default="auto",
        help="how commands are isolated (default: auto = the best backend that works here)",
    )
    parser.add_argument("--no-search", action="store_true", help="no search tools")
    parser.add_argument(
        "--vector", action="store_true", help="also vector search (all-MiniLM-L6-v2, offline)"
    )
    parser.add_argument(
        "--index", action="append", default=[], metavar="PATH", help="index PATH (or glob) at start"
    )
    parser.add_argument(
        "--skills", action="append", default=None, metavar="PATH", help="skills folder (repeatable)"
    )
    parser.add_argument(
        "--no-approval",
        action="store_true",
        help="do not require approval for any tool (the MCP client confirms calls itself)",
    )


def _run(args: argparse.Namespace) -> int:
    from ..filesystem.local import LocalFilesystem
    from ..workspace import Workspace

    root = os.path.abspath(os.path.expanduser(args.dir))
    if not os.path.isdir(root):
        print(f"ws-jupyter mcp: not a directory: {root}", file=sys.stderr)
        return 2
    sandbox = None
    if not args.no_sandbox:
        from ..sandbox.local import LocalSandbox

        sandbox = LocalSandbox(working_directory=root, isolation=args.isolation)
    skills = args.skills
    if skills is None:
        skills = ["skills"] if os.path.isdir(os.path.join(root, "skills")) else []
    ws = Workspace(
        filesystem=LocalFilesystem(root, read_only=args.read_only),
        sandbox=sandbox,
        bm25=None if args.no_search else True,
        embedder="default" if args.vector and not args.no_search else None,
        auto_index_paths=args.index,
        skills=skills,
        tools={"require_approval": False} if args.no_approval else None,
    )
    try:
        ws.init()
        serve_mcp(ws, name=args.name)
    finally:
        ws.destroy()
    return 0


def cli_command() -> Any:
    """The ``mcp`` subcommand for the ``ws-jupyter`` console script (entry point)."""
    from ..cli import CliCommand

    return CliCommand("mcp", "serve a workspace's agent tools over MCP (stdio)", _configure, _run)
