"""Bring back a checkpoint's version of files (all of them, or the PATHs given: files or folders).

Each file is written atomically, with its permission bits, after any agent write in progress on
it has finished. A checkpoint of the state replaced is taken first: restore it to undo this
restore (the output names it). Files created since the checkpoint are kept unless --remove-new.

Examples:
  %ws restore "before cleanup"
  %ws restore "#3" data/clean.csv notebooks/
  %ws restore "before cleanup" --remove-new
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.changes import RestoreView
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument(
        "checkpoint", metavar="CHECKPOINT", help="label, #number or id (see `%%ws checkpoint --list`)"
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: all)")
    parser.add_argument("--remove-new", action="store_true", help="also delete files created since")


def run(inv: Invocation) -> RestoreView:
    ws = inv.workspace
    if not ws.has_filesystem_config():
        raise inv.usage_error("the workspace has no filesystem")
    report = ws.restore(inv.args.checkpoint, inv.args.paths or None, remove_new=inv.args.remove_new)
    return RestoreView(report)


COMMAND = Subcommand(
    name="restore",
    summary="take changes back: `%ws restore CHECKPOINT [PATH...] [--remove-new]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
