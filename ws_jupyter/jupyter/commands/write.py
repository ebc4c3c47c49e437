"""Write the cell body to a file of the workspace (parents are created; the write is atomic).

The body is written exactly as typed (no $ or {} expansion); a final newline is added when the body
lacks one.

Examples:
  %%ws write src/hello.py
  print("hello")

  %%ws write notes.md --append
  - one more line
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.base import MessageView
from ._common import require_filesystem
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="file to write")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--append", "-a", action="store_true", help="append instead of replacing")
    mode.add_argument("--no-overwrite", action="store_true", help="fail if the file exists")


def run(inv: Invocation) -> MessageView:
    fs = require_filesystem(inv.workspace, "write")
    body = inv.cell or ""
    if body and not body.endswith("\n"):
        body += "\n"
    size = len(body.encode("utf-8"))
    if inv.args.append:
        fs.append_file(inv.args.path, body)
        return MessageView(f"Appended {size} bytes to {inv.args.path}")
    fs.write_file(inv.args.path, body, overwrite=not inv.args.no_overwrite)
    return MessageView(f"Wrote {size} bytes to {inv.args.path}")


COMMAND = Subcommand(
    name="write",
    summary="write the cell body to a file: `%%ws write PATH [--append]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
    cell="required",
)
