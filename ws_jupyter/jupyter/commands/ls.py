"""List the workspace as a tree, the way `git` sees it: .gitignore rules at every level are
honoured and hidden files are left out (--all shows both). Directories come first; names link to
the files (JupyterLab opens them).

Examples:
  %ws ls
  %ws ls src --depth 4
  %ws ls --all
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.common import base_path_of
from ..views.files import TreeEntry, TreeView
from ._common import positive_int, require_filesystem
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="directory to list (default: the root)"
    )
    parser.add_argument(
        "--depth", "-d", type=positive_int, default=2, metavar="N", help="levels to show (default: 2)"
    )
    parser.add_argument("--all", "-a", action="store_true", help="include hidden and gitignored files")
    parser.add_argument(
        "--limit", type=positive_int, default=2000, metavar="N", help="most entries to show (default: 2000)"
    )


def run(inv: Invocation) -> TreeView:
    from ...filesystem import walk

    args = inv.args
    fs = require_filesystem(inv.workspace, "ls")
    entries: list[TreeEntry] = []
    truncated = False
    for e in walk(
        fs, args.path, max_depth=args.depth, include_hidden=args.all, respect_gitignore=not args.all
    ):
        if len(entries) >= args.limit:
            truncated = True
            break
        entries.append(TreeEntry(e.path, e.name, e.type, e.depth, e.size, e.is_symlink))
    deeper = False
    if not truncated:
        for entry in entries:
            if entry.type == "directory" and entry.depth == args.depth and not entry.is_symlink:
                try:
                    below = walk(
                        fs, entry.path, max_depth=1, include_hidden=args.all, respect_gitignore=not args.all
                    )
                    if next(iter(below), None) is not None:
                        deeper = True
                        break
                except Exception:
                    continue
    root = fs.stat(args.path).path
    return TreeView(root, entries, base_path_of(inv.workspace), truncated=truncated, hidden_by_depth=deeper)


COMMAND = Subcommand(
    name="ls",
    summary="tree listing (gitignore-aware): `%ws ls [PATH] [--depth N] [--all]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
