"""Create the notebook's workspace over a directory and bind it to `ws`.

The directory (default: `%config WsMagics.default_dir`, "workspace") is created if needed. The
workspace gets a contained filesystem there, a sandbox whose working directory it is, BM25 search
(unless --no-bm25), vector search with the offline all-MiniLM-L6-v2 model with --vector, and the
skills found in DIR/skills (or the --skills paths, relative to DIR). Running `%ws init` again
replaces the workspace: background processes of the old one are killed, files are kept.
Commands find this kernel's Python first on PATH (`python`, `pip`), in every isolation mode.

Examples:
  %ws init
  %ws init project --vector --isolation auto
  %ws init data --skills skills team-skills --name analysis
"""

from __future__ import annotations

import glob
import os
from typing import Any

from ..parsing import WsArgumentParser
from ..views.workspace import InfoView, info_rows
from ._common import load_skills, positive_float
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument(
        "dir", nargs="?", metavar="DIR", help="workspace directory (default: WsMagics.default_dir)"
    )
    search = parser.add_mutually_exclusive_group()
    search.add_argument(
        "--bm25", dest="bm25", action="store_true", default=None, help="enable BM25 search (default)"
    )
    search.add_argument("--no-bm25", dest="bm25", action="store_false", help="no BM25 search")
    parser.add_argument(
        "--vector", action="store_true", default=None, help="enable vector search (all-MiniLM-L6-v2, offline)"
    )
    parser.add_argument(
        "--skills",
        nargs="+",
        metavar="PATH",
        help="where SKILL.md folders live, relative to DIR (created if missing; default: DIR/skills if present)",
    )
    parser.add_argument(
        "--isolation",
        choices=["auto", "none", "bwrap", "seatbelt"],
        help="sandbox isolation (default: WsMagics.isolation)",
    )
    parser.add_argument("--name", help="workspace name")
    parser.add_argument(
        "--timeout",
        type=positive_float,
        metavar="S",
        help="default time limit of foreground commands (seconds)",
    )


def run(inv: Invocation) -> InfoView:
    from ... import LocalFilesystem, LocalSandbox, Workspace

    magics, args = inv.magics, inv.args
    root = os.path.abspath(os.path.expanduser(args.dir or magics.default_dir))
    if os.path.exists(root) and not os.path.isdir(root):
        raise inv.usage_error(f"{args.dir or magics.default_dir!r} exists and is not a directory")
    os.makedirs(root, exist_ok=True)
    if args.skills:
        skills: Any = tuple(args.skills)
        for path in skills:  # a folder named explicitly is where skills will be written: create it
            if not glob.has_magic(path) and not os.path.isabs(path):
                os.makedirs(os.path.join(root, path), exist_ok=True)
    else:
        skills = ("skills",) if os.path.isdir(os.path.join(root, "skills")) else ()
    bm25 = magics.bm25 if args.bm25 is None else args.bm25
    vector = magics.vector if args.vector is None else args.vector
    timeout = args.timeout if args.timeout is not None else magics.timeout
    isolation = args.isolation or magics.isolation
    workspace = Workspace(
        name=args.name,
        filesystem=LocalFilesystem(root),
        sandbox=LocalSandbox(
            working_directory=root,
            isolation=isolation,
            timeout=timeout,
        ),
        bm25=True if bm25 else None,
        embedder="default" if vector else None,
        skills=skills,
    )
    workspace.init()
    inv.session.set_workspace(workspace, owned=True)
    if magics.variable_name:
        inv.user_ns[magics.variable_name] = workspace
    load_skills(workspace)
    info = workspace.get_info()
    heading = f"Workspace {workspace.name}"
    if magics.variable_name:
        heading += f" → {magics.variable_name}"
    return InfoView(heading, info_rows(info))


COMMAND = Subcommand(
    name="init",
    summary="create the notebook's workspace over a directory (binds it to `ws`)",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
