"""Serving a workspace over MCP (stdio), so any MCP client can use it.

    ws-jupyter mcp --dir ./project            # from a terminal or an MCP client config (cli.py)

or from Python: ``serve_mcp(workspace)`` (blocks until the client disconnects), or
``build_mcp_server(workspace)`` for a server object to run on other streams (tests, embedding).

What the server offers:

* **tools**: the workspace's (``workspace.tools()``), with the same names, descriptions, outputs
  and policy; schemas in their non-strict form (optional fields optional, defaults stated), a
  ``title`` and ``annotations`` (read-only / destructive / idempotent / open-world, from
  :mod:`ws_jupyter.tools.hints`). Text outputs become text content, images image content, PDFs
  embedded resources; failures are flagged ``isError``.
* **prompts**: the skills that are ``user-invocable``; a skill's declared ``arguments`` (or its
  ``argument-hint``) become prompt arguments, substituted for ``$ARGUMENTS`` / ``$name`` in one
  linear pass, the prompt bounded (:mod:`ws_jupyter.skills.prompt`).
* **resources**: workspace files as ``workspace://<path>`` — listed for the top-level files and the
  indexed files, any other through the ``workspace://{path}`` template — read through the
  workspace filesystem (contained like ``workspace_read_file``; regular files up to 10 MB). A
  path's bytes are percent-encoded in its URI, so a name that is not UTF-8 is listed (its name
  shown with ``\\xNN``) and read like any other; same-looking names say so in their description.
* **progress**: when a ``tools/call`` carries a progress token, a notification every second
  while the call runs (seconds elapsed, and the time limit of a command when it has one).
* **cancellation**: a cancelled (or timed-out, which the client cancels) call aborts the tool: a
  foreground command is killed, and the cancellation completes once it is gone.
* **logging**: the package's log records (``ws_jupyter.*``) at or above the level the client set
  with ``logging/setLevel`` (default ``warning``) are sent as ``notifications/message``.
* **approval**: a tool that requires approval (commands on a sandbox without isolation, or
  ``require_approval`` in the config) is decided, in order, by the workspace's ``approver``; by
  ``approve_all`` (``--approve-all``); by asking the user through the client (MCP elicitation)
  when the client supports it; else it is refused with text naming ``--approve-all`` and
  ``--no-approval``. ``--no-approval`` makes no tool require approval (the client confirms).

Calls run in the tools' own thread pool (:mod:`ws_jupyter.tools.executor`), so a long command
does not block other requests. The workspace's instructions become the server's.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
import time
import warnings
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from ..filesystem.display import name_notes, wire_text
from ..sandbox.capabilities import sandbox_runs_on_host, sandbox_timeout
from ..tools.executor import CANCEL_GRACE, tool_executor
from ..tools.hints import hints_for, title_for
from ..tools.types import Tool, ToolCallContext, ToolOutput, ToolResult, is_error_output, output_text

__all__ = ["MAX_RESOURCE_BYTES", "build_mcp_server", "serve_mcp"]

log = logging.getLogger("ws_jupyter.mcp")

#: Largest file ``resources/read`` returns (bytes).
MAX_RESOURCE_BYTES = 10 * 1024 * 1024
#: How many files ``resources/list`` lists at most.
MAX_LISTED_RESOURCES = 1000
#: Seconds between progress notifications of a running call.
PROGRESS_INTERVAL = 1.0

_URI_PREFIX = "workspace://"
_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_PY_LEVEL = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 5,
    "emergency": logging.CRITICAL + 10,
}
_APPROVAL_KEY = "approval"


def _content(output: ToolOutput) -> list[Any]:
    import mcp_types as types

    parts: list[Any] = [types.TextContent(text=wire_text(output_text(output)))]
    if isinstance(output, ToolResult):
        for i, m in enumerate(output.media):
            if m.mime_type.startswith("image/"):
                parts.append(types.ImageContent(data=m.data, mime_type=m.mime_type))
            else:
                parts.append(
                    types.EmbeddedResource(
                        resource=types.BlobResourceContents(
                            uri=f"{_URI_PREFIX}media/{i + 1}", mime_type=m.mime_type, blob=m.data
                        )
                    )
                )
    return parts


def _error_result(text: str) -> Any:
    import mcp_types as types

    return types.CallToolResult(content=[types.TextContent(text=wire_text(text))], is_error=True)


# --- resources -------------------------------------------------------------------------------------


def resource_uri(path: str) -> str:
    """``workspace://`` URI of a workspace-relative path: each segment's bytes percent-encoded (a
    name that is not UTF-8 included: its undecodable bytes are ``%XX`` of those bytes)."""
    return _URI_PREFIX + "/".join(quote(part, safe="", errors="surrogateescape") for part in path.split("/"))


def _uri_path(uri: str) -> str:
    from ..errors import InvalidPathError

    if not uri.startswith(_URI_PREFIX):
        raise InvalidPathError(uri, f'Unknown resource "{uri}": workspace resources are workspace://<path>')
    return unquote(uri[len(_URI_PREFIX) :], errors="surrogateescape") or "."


def _listed_files(workspace: Any, request_context: Any) -> list[str]:
    """Top-level files, then indexed files (each once, at most ``MAX_LISTED_RESOURCES``)."""
    from ..filesystem.walk import walk

    fs = workspace.resolve_filesystem(request_context)
    seen: dict[str, None] = {}
    try:
        for entry in walk(fs, ".", max_depth=1, stat=False):
            if entry.type == "file":
                seen[entry.path] = None
    except Exception:
        log.debug("listing top-level files for resources/list failed", exc_info=True)
    if getattr(workspace, "can_search", False):
        try:
            sources = sorted(workspace._engine().sources())
        except Exception:
            sources = []
        for source in sources:
            if len(seen) >= MAX_LISTED_RESOURCES:
                break
            if source in seen:
                continue
            try:
                if fs.stat(source).type == "file":
                    seen[source] = None
            except Exception:
                continue  # a free-text document indexed under a name, not a file
    return list(seen)[:MAX_LISTED_RESOURCES]


def _read_resource(workspace: Any, request_context: Any, uri: str) -> tuple[str, bytes]:
    """(mime type, bytes) of a workspace file, read like ``workspace_read_file``: through the
    filesystem's containment, regular files only, at most ``MAX_RESOURCE_BYTES``."""
    from ..errors import IsADirectory
    from ..filesystem.mime import guess_mime_type
    from ..filesystem.reading import read_limited

    path = _uri_path(uri)
    fs = workspace.resolve_filesystem(request_context)
    st = fs.stat(path)
    if st.type == "directory":
        raise IsADirectory(st.path)
    return guess_mime_type(st.path), read_limited(fs, st.path, MAX_RESOURCE_BYTES, size=st.size)


def _resource_contents(uri: str, mime: str, data: bytes) -> Any:
    import base64

    import mcp_types as types

    from ..filesystem.mime import is_text_mime, looks_like_text

    if is_text_mime(mime) or (
        not mime.startswith(("image/", "audio/", "video/")) and looks_like_text(data[:8192])
    ):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            shown = mime if mime != "application/octet-stream" else "text/plain"
            return types.TextResourceContents(uri=uri, mime_type=shown, text=text)
    return types.BlobResourceContents(uri=uri, mime_type=mime, blob=base64.b64encode(data).decode("ascii"))


# --- prompts (skills) ----------------------------------------------------------------------------


# --- logging -------------------------------------------------------------------------------------


class _LogBridge(logging.Handler):
    """Collects the package's log records for the client (sent by the request handlers)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.level_name = "warning"
        self.records: collections.deque[tuple[str, str, str]] = collections.deque(maxlen=200)

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < _PY_LEVEL[self.level_name]:
            return
        level = "debug"
        for name in _LEVELS:
            if record.levelno >= _PY_LEVEL[name]:
                level = name
        try:
            message = record.getMessage()
        except Exception:  # a malformed record must not break logging
            message = str(record.msg)
        self.records.append((level, record.name, wire_text(message)))

    def drain(self) -> list[tuple[str, str, str]]:
        out = []
        while self.records:
            out.append(self.records.popleft())
        return out


# --- the server ----------------------------------------------------------------------------------


@dataclass
class _State:
    workspace: Any
    request_context: Any
    tools: list[Tool]
    approve_all: bool
    elicit: bool
    bridge: _LogBridge = field(default_factory=_LogBridge)

    @property
    def by_name(self) -> dict[str, Tool]:
        return {t.name: t for t in self.tools}


def _has_approver(workspace: Any) -> bool:
    from ..tools.activity import tool_activity
    from ..tools.config import ToolsConfig

    try:
        if ToolsConfig.coerce(workspace.get_tools_config()).approver is not None:
            return True
        return tool_activity(workspace).has_approver
    except Exception:
        return False


def _refusal(tool: Tool, workspace: Any) -> str:
    why = ""
    if tool.workspace_tool_name == "workspace_execute_command" and sandbox_runs_on_host(
        getattr(workspace, "sandbox", None)
    ):
        why = " (commands would run on the host without isolation; --isolation bwrap avoids that)"
    return (
        f"Error: {tool.name} requires approval{why}, and this MCP client cannot be asked for it "
        "(it does not support elicitation). Restart the server with --approve-all to approve every "
        "call, or with --no-approval to leave confirmation to the MCP client."
    )


def _progress_token(ctx: Any) -> Any:
    meta = getattr(ctx, "meta", None) or {}
    if isinstance(meta, dict):
        return meta.get("progress_token", meta.get("progressToken"))
    return getattr(meta, "progress_token", None)


def _client_can_elicit(ctx: Any) -> bool:
    import mcp_types as types

    try:
        return bool(
            ctx.session.check_client_capability(
                types.ClientCapabilities(elicitation=types.ElicitationCapability())
            )
        )
    except Exception:
        return False


def _modern(ctx: Any) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS


def _approval_question(tool: Tool, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    import json

    shown = json.dumps(args, ensure_ascii=False)
    if len(shown) > 600:
        shown = shown[:597] + "..."
    message = f"Allow {title_for(tool)} ({tool.name})?\n{shown}"
    schema = {
        "type": "object",
        "properties": {"approve": {"type": "boolean", "title": "Approve", "description": "Run this call"}},
        "required": ["approve"],
    }
    return message, schema


def _accepted(result: Any) -> bool:
    """An elicitation answer that approves: accepted, with ``approve`` not false."""
    action = getattr(result, "action", None)
    content = getattr(result, "content", None)
    if isinstance(result, dict):
        action, content = result.get("action"), result.get("content")
    if action != "accept":
        return False
    return not (isinstance(content, dict) and content.get("approve") is False)


async def _send_logs(ctx: Any, bridge: _LogBridge) -> None:
    records = bridge.drain()
    if not records:
        return
    from mcp.shared.exceptions import MCPDeprecationWarning

    for level, logger_name, message in records:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await ctx.session.send_log_message(
                    level, message, logger=logger_name, related_request_id=ctx.request_id
                )
        except Exception:
            return


def _tools_definitions(state: _State) -> list[Any]:
    import mcp_types as types

    out = []
    for t in state.tools:
        hints = hints_for(t, state.workspace)
        title = title_for(t)
        out.append(
            types.Tool(
                name=t.name,
                title=title,
                description=t.description,
                input_schema=t.non_strict_schema,
                annotations=types.ToolAnnotations(
                    title=title,
                    read_only_hint=hints.read_only,
                    destructive_hint=hints.destructive,
                    idempotent_hint=hints.idempotent,
                    open_world_hint=hints.open_world,
                ),
            )
        )
    return out


async def _run_call(
    ctx: Any, state: _State, tool: Tool, args: dict[str, Any], approved: bool | None
) -> ToolOutput:
    """The call in the tool pool, with progress notifications; cancellation aborts it."""
    import anyio

    abort = threading.Event()
    call_ctx = ToolCallContext(
        request_context=state.request_context,
        tool_call_id=None if ctx.request_id is None else str(ctx.request_id),
        abort=abort,
    )
    loop = asyncio.get_running_loop()
    future = asyncio.wrap_future(
        tool_executor().submit(tool.run, args, call_ctx, approved=approved), loop=loop
    )
    token = _progress_token(ctx)
    limit = args.get("timeout") if tool.workspace_tool_name == "workspace_execute_command" else None
    if limit is None and tool.workspace_tool_name == "workspace_execute_command":
        limit = sandbox_timeout(getattr(state.workspace, "sandbox", None))
    total = float(limit) if isinstance(limit, (int, float)) and limit != float("inf") else None
    started = time.monotonic()
    try:
        while True:
            with anyio.move_on_after(PROGRESS_INTERVAL):
                return await asyncio.shield(future)
            if token is not None or _modern(ctx):  # 2026-07-28: the dispatcher knows the token
                elapsed = time.monotonic() - started
                with_total = f" of {total:g}s" if total else ""
                await ctx.session.report_progress(
                    round(elapsed, 1), total, f"{tool.name}: running for {elapsed:.0f}s{with_total}"
                )
            await _send_logs(ctx, state.bridge)
    except anyio.get_cancelled_exc_class():
        abort.set()
        log.info("call of %s cancelled by the client: aborting it", tool.name)
        with anyio.move_on_after(CANCEL_GRACE, shield=True):
            try:
                await asyncio.shield(future)
            except Exception:
                pass
        raise


def build_mcp_server(
    workspace: Any,
    *,
    request_context: Any = None,
    name: str = "ws-jupyter",
    tools: list[Tool] | None = None,
    approve_all: bool = False,
    elicit: bool = True,
) -> Any:
    """An ``mcp`` low-level ``Server`` for the workspace (see the module docstring).

    ``approve_all`` approves every call that requires approval (``--approve-all``); ``elicit``
    asks the user through the client, when it supports elicitation, for calls that require it.
    """
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
    from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

    from .._version import __version__
    from ..errors import SkillError, WorkspaceError
    from ..skills.prompt import skill_arguments, skill_prompt

    listed = tools if tools is not None else workspace.tools(request_context)
    state = _State(workspace, request_context, listed, approve_all, elicit)
    definitions = _tools_definitions(state)
    by_name = state.by_name

    @contextlib.asynccontextmanager
    async def lifespan(_server: Any) -> AsyncIterator[dict[str, Any]]:
        # records reach the bridge as far as the logger's level lets them (``ws-jupyter mcp``
        # opens it to debug; an embedding application keeps its own logging configuration)
        pkg_logger = logging.getLogger("ws_jupyter")
        pkg_logger.addHandler(state.bridge)
        try:
            yield {}
        finally:
            pkg_logger.removeHandler(state.bridge)

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=definitions)

    async def decide(ctx: Any, tool: Tool, args: dict[str, Any], params: Any) -> tuple[bool | None, Any]:
        """(approved, early result): None leaves it to the workspace policy."""
        try:
            needed = tool.needs_approval(args, ToolCallContext(request_context=request_context))
        except Exception:
            needed = True
        if not needed or _has_approver(workspace):
            return None, None
        if approve_all:
            log.warning("auto-approved %s (--approve-all)", tool.name)
            return True, None
        if not (elicit and _client_can_elicit(ctx)):
            return False, _error_result(_refusal(tool, workspace))
        message, schema = _approval_question(tool, args)
        if _modern(ctx):
            responses = getattr(params, "input_responses", None) or {}
            if getattr(params, "request_state", None) == _APPROVAL_KEY and _APPROVAL_KEY in responses:
                return _accepted(responses[_APPROVAL_KEY]), None
            request = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
            )
            return None, types.InputRequiredResult(
                input_requests={_APPROVAL_KEY: request}, request_state=_APPROVAL_KEY
            )
        try:
            answer = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        except Exception as exc:
            log.warning("asking the client to approve %s failed: %s", tool.name, exc)
            return False, _error_result(_refusal(tool, workspace))
        return _accepted(answer), None

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        tool = by_name.get(params.name)
        if tool is None:
            return _error_result(
                f"Error: Unknown tool {params.name!r}. Available tools: {', '.join(by_name)}"
            )
        args = dict(params.arguments or {})
        approved, early = await decide(ctx, tool, args, params)
        if early is not None:
            await _send_logs(ctx, state.bridge)
            return early
        output = await _run_call(ctx, state, tool, args, approved)
        await _send_logs(ctx, state.bridge)
        return types.CallToolResult(content=_content(output), is_error=is_error_output(output))

    def skills_list() -> list[Any]:
        skills = getattr(workspace, "skills", None)
        if skills is None:
            return []
        try:
            return [s for s in skills.list(request_context) if s.user_invocable]
        except Exception:
            log.warning("listing skills for prompts/list failed", exc_info=True)
            return []

    async def on_list_prompts(ctx: Any, params: Any) -> Any:
        found = await asyncio.get_running_loop().run_in_executor(tool_executor(), skills_list)
        prompts = [
            types.Prompt(
                name=s.name,
                title=s.name.replace("-", " ").capitalize(),
                description=s.description,
                arguments=[
                    types.PromptArgument(name=a.name, description=a.description, required=a.required)
                    for a in skill_arguments(s)
                ]
                or None,
            )
            for s in found
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def on_get_prompt(ctx: Any, params: Any) -> Any:
        skill = next(
            (
                s
                for s in await asyncio.get_running_loop().run_in_executor(tool_executor(), skills_list)
                if s.name == params.name
            ),
            None,
        )
        if skill is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt {params.name!r}")
        given = {k: str(v) for k, v in (params.arguments or {}).items()}
        declared = skill_arguments(skill)
        missing = [a.name for a in declared if a.required and not given.get(a.name)]
        if missing:
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"Missing required argument(s): {', '.join(missing)}"
            )
        try:
            text = skill_prompt(skill, given)
        except SkillError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=wire_text(str(exc))) from None
        return types.GetPromptResult(
            description=skill.description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=wire_text(text)))],
        )

    async def on_list_resources(ctx: Any, params: Any) -> Any:
        from ..filesystem.mime import guess_mime_type

        paths = await asyncio.get_running_loop().run_in_executor(
            tool_executor(), _listed_files, workspace, request_context
        )
        notes = name_notes(paths)
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name=wire_text(p),
                    uri=resource_uri(p),
                    mime_type=guess_mime_type(wire_text(p)),
                    description=notes.get(p),
                )
                for p in paths
            ]
        )

    async def on_list_templates(ctx: Any, params: Any) -> Any:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    name="workspace-file",
                    title="Workspace file",
                    uri_template=_URI_PREFIX + "{path}",
                    description="A file of the workspace by its relative path (e.g. workspace://src/app.py)",
                )
            ]
        )

    async def on_read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        try:
            mime, data = await asyncio.get_running_loop().run_in_executor(
                tool_executor(), _read_resource, workspace, request_context, uri
            )
        except WorkspaceError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=wire_text(str(exc))) from None
        return types.ReadResourceResult(contents=[_resource_contents(uri, mime, data)])

    async def on_set_level(ctx: Any, params: Any) -> Any:
        level = str(params.level)
        if level in _PY_LEVEL:
            state.bridge.level_name = level
        return types.EmptyResult()

    try:
        instructions = workspace.get_instructions(request_context) or None
    except Exception:
        instructions = None
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore", MCPDeprecationWarning
        )  # logging/setLevel: handshake-era clients use it
        server = Server(
            name,
            version=__version__,
            instructions=instructions,
            lifespan=lifespan,
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
            on_list_prompts=on_list_prompts,
            on_get_prompt=on_get_prompt,
            on_list_resources=on_list_resources,
            on_list_resource_templates=on_list_templates,
            on_read_resource=on_read_resource,
            on_set_logging_level=on_set_level,
        )
    # the approval round trip of 2026-07-28 clients carries a request state: sealed, bound to the call
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=name))
    return server


def serve_mcp(
    workspace: Any,
    *,
    request_context: Any = None,
    name: str = "ws-jupyter",
    approve_all: bool = False,
    elicit: bool = True,
) -> None:
    """Serve the workspace over stdin/stdout until the client disconnects."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_mcp_server(
        workspace, request_context=request_context, name=name, approve_all=approve_all, elicit=elicit
    )

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
