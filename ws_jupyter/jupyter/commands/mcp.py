"""Let an agent outside the notebook (Claude Code, Codex, Cursor...) work in this workspace: serve
it over MCP (Streamable HTTP) from this kernel.

`%ws mcp serve` prints the URL, a token and ready-to-paste client configurations. The outside
agent's calls run here: they appear in the tool activity widget with the client's name, their
approvals are asked in the notebook, their kernels and processes are this workspace's.
Listens on 127.0.0.1 only (use --host to choose otherwise); every request needs the token.
Stops with `%ws mcp stop`, `%unload_ext ws_jupyter` and the kernel.

--allow gives outside agents tools that reach beyond the workspace's files: `open-notebook`
(read, edit and run this open notebook), `user-data`.

Examples:
  %ws mcp serve
  %ws mcp serve --port 8765 --allow open-notebook
  %ws mcp
  %ws mcp stop
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from ..parsing import WsArgumentParser
from ..views.base import MessageView
from ..views.mcp import McpServersView
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]

_lock = threading.Lock()
_served: weakref.WeakKeyDictionary[Any, list[Any]] = weakref.WeakKeyDictionary()


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument(
        "action", nargs="?", choices=("serve", "stop", "status"), default="status", help="default: status"
    )
    parser.add_argument("--port", type=int, default=None, help="port to listen on (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument(
        "--allow",
        default="",
        metavar="GROUPS",
        help="comma-separated tool groups outside agents may use: open-notebook, user-data",
    )
    parser.add_argument("--name", default="ws-jupyter", help="server name shown to the client")
    parser.add_argument(
        "--approve-all",
        action="store_true",
        help="approve every call that requires approval without asking (logged as a warning)",
    )


def _running(session: Any) -> list[Any]:
    with _lock:
        live = [h for h in _served.get(session, []) if h.running]
        _served[session] = live
        return list(live)


def run(inv: Invocation) -> Any:
    session = inv.session
    action = inv.args.action
    if action == "stop":
        running = _running(session)
        for handle in running:
            handle.stop()
            session.untrack(handle.stop)
        with _lock:
            _served.pop(session, None)
        if not running:
            return MessageView("No MCP server was running.", "info")
        return MessageView(f"Stopped {len(running)} MCP server{'' if len(running) == 1 else 's'}.")
    if action == "status":
        return McpServersView(_running(session))
    from ...errors import WorkspaceConfigError

    ws = inv.workspace
    try:
        handle = ws.serve_mcp_http(
            port=inv.args.port,
            host=inv.args.host,
            allow=inv.args.allow or None,
            name=inv.args.name,
            approve_all=inv.args.approve_all,
        )
    except WorkspaceConfigError as exc:
        raise inv.usage_error(str(exc)) from None
    with _lock:
        _served.setdefault(session, []).append(handle)
    session.track(handle.stop)
    return McpServersView([handle], "MCP server started", handle.client_configs(inv.args.name))


COMMAND = Subcommand(
    name="mcp",
    summary="serve this workspace to outside agents over MCP: `%ws mcp serve`, `stop`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
