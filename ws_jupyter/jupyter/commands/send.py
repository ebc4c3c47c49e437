"""Send text to a background process's stdin (a newline is added unless --no-newline).

The text is the rest of the line as typed; as a cell magic, the cell body is sent. --eof closes
stdin afterwards (the process sees end of file).

Examples:
  %ws send 12345 print(2 + 2)
  %ws send --eof 12345

  %%ws send 12345
  line one
  line two
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.base import MessageView
from ._common import require_processes
from ._pid import find_handle
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("--no-newline", "-n", action="store_true", help="do not add a newline")
    parser.add_argument("--eof", action="store_true", help="close stdin after sending")
    parser.add_argument("command", nargs="*", metavar="PID TEXT", help="process id, then the text to send")


def run(inv: Invocation) -> MessageView:
    args = inv.args
    pid_text, _, text = args.command.strip().partition(" ")
    if not pid_text:
        raise inv.usage_error("usage: %ws send PID TEXT (or %%ws send PID with the text as the cell body)")
    try:
        pid = int(pid_text)
    except ValueError:
        raise inv.usage_error(f"PID must be a number, got {pid_text!r}") from None
    manager = require_processes(inv.workspace, "send")
    handle = find_handle(inv, manager, pid)
    if inv.cell is not None:
        if text.strip():
            raise inv.usage_error("give the text either on the line or as the cell body, not both")
        text = inv.cell
    else:
        text = text.lstrip(" ")
    if not args.no_newline and text and not text.endswith("\n"):
        text += "\n"
    sent = 0
    if text:
        handle.send_stdin(text)
        sent = len(text.encode("utf-8"))
    if args.eof:
        handle.close_stdin()
    if not text and not args.eof:
        raise inv.usage_error("nothing to send")
    what = f"Sent {sent} bytes to PID {pid}" if sent else f"Closed stdin of PID {pid}"
    if sent and args.eof:
        what += " and closed its stdin"
    return MessageView(what)


COMMAND = Subcommand(
    name="send",
    summary="write to a background process's stdin: `%ws send PID TEXT`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
    cell="optional",
    tail=True,
)
