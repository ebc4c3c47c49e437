"""What changed in the workspace since a checkpoint, and who changed it.

Lists the files added, modified and deleted since the checkpoint (default: the newest; --since
takes a label, #number or id), each with who changed it when that is known — the agent's tool
call, the command or kernel code it ran — or "outside" (you, an editor, a command run from the
notebook). Changes made by shell commands and kernel code are found too: files are compared with
the checkpoint by size, time and inode, then by content. --diff shows unified diffs (notebooks
cell by cell, binary files by size and hash), of every changed file or of the PATHs given.
`%ws checkpoint` takes a checkpoint; `%ws restore` takes changes back; `%ws ui` has a Changes tab.

Examples:
  %ws changes
  %ws changes --since "before cleanup" --diff
  %ws changes --diff analysis.ipynb
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.changes import ChangesView
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="with --diff: only these files")
    parser.add_argument("--since", "-s", metavar="LABEL", help="the checkpoint (label, #number or id)")
    parser.add_argument("--diff", "-d", action="store_true", help="show the diffs")


def run(inv: Invocation) -> ChangesView:
    ws = inv.workspace
    if not ws.has_filesystem_config():
        raise inv.usage_error("the workspace has no filesystem")
    if inv.args.paths and not inv.args.diff:
        raise inv.usage_error("PATHs choose the files whose diff --diff shows")
    changes = ws.changes(inv.args.since)
    diffs: dict[str, str] = {}
    if inv.args.diff:
        wanted = set(inv.args.paths)
        for change in changes:
            if not wanted or change.path in wanted:
                diffs[change.path] = ws.checkpoints.file_diff(change, changes.since)
    return ChangesView(changes, diffs, notes=tuple(ws.checkpoints.notes[-3:]))


COMMAND = Subcommand(
    name="changes",
    summary="what changed since a checkpoint and who did it: `%ws changes [--since LABEL] [--diff]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
