"""Take a checkpoint of the workspace's files now (or --list them).

A checkpoint records every file (copies are shared between checkpoints: after the first only
what changed is stored), except .gitignore'd files, caches, virtual environments and files over
the size limit, which are named as not recorded. One is also taken automatically before each
agent turn's first change. `%ws changes` shows what changed since one; `%ws restore` takes it back.

Examples:
  %ws checkpoint "before cleanup"
  %ws checkpoint --list
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.changes import CheckpointsView
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("label", nargs="?", metavar="LABEL", help="a name for the checkpoint")
    parser.add_argument("--list", "-l", action="store_true", help="list the checkpoints")


def run(inv: Invocation) -> CheckpointsView:
    ws = inv.workspace
    if not ws.has_filesystem_config():
        raise inv.usage_error("the workspace has no filesystem")
    manager = ws.checkpoints
    if inv.args.list:
        if inv.args.label:
            raise inv.usage_error("--list takes no LABEL")
        found = manager.list()
        return CheckpointsView(found, f"{len(found)} checkpoints", manager.usage(), manager.notes[-3:])
    cp = manager.take(inv.args.label)
    heading = f"Checkpoint {cp.name} taken" if cp.new else f"Nothing changed since checkpoint {cp.name}"
    return CheckpointsView([cp], heading, manager.usage(), manager.notes[-3:] if cp.pruned else ())


COMMAND = Subcommand(
    name="checkpoint",
    summary="record the workspace's files now: `%ws checkpoint [LABEL]`, `--list`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
