"""Create the notebook's workspace over a directory and bind it to `ws`.

The directory is created if needed. Without DIR it is `%config WsMagics.default_dir`, or else a
folder named after the notebook next to it (`analysis.ipynb` -> `analysis-workspace/`; `workspace/`
when the kernel does not know its notebook). Not the notebook's own folder: that is the kernel's
working directory, first on `sys.path`, so a module written there (say an agent's `pandas.py`)
would be imported by this notebook's own `import` — outside any sandbox. `%ws init .` is allowed
and warns about it.

The workspace gets a contained filesystem there, a sandbox whose working directory it is (isolated
with bubblewrap when it works here: --isolation auto, the default; `%ws info` says what this
machine offers), search over every file in it (BM25 unless --no-bm25; hybrid with the offline
all-MiniLM-L6-v2 model when it is installed, or --vector / --no-vector; vectors are computed in
the background, `%ws info` shows how far; --no-index indexes nothing until `%ws index`), and the
skills found in DIR/skills (or the --skills paths, relative to DIR). A folder that already holds
files gets a checkpoint of them first (`%ws changes`, `%ws restore`). Running `%ws init` again
replaces the workspace: files are kept, the old workspace's background processes are killed (the
output lists them). Commands find this kernel's Python first on PATH (`python`, `pip`), in every
isolation mode.

The sandbox has no network by default. `--network allow --allow pypi.org files.pythonhosted.org`
lets commands and kernels reach those hosts only, through a filtering proxy outside the sandbox
(`ws.sandbox.egress_log()` and the dashboard's Network tab list every attempt); `--network-secret
api.example.com:Authorization=API_AUTH` has the proxy add that header, valued from this kernel's
environment variable API_AUTH, without the value entering the sandbox. `--network full` gives the
host's network. Allow-lists need bubblewrap (--isolation bwrap or auto where it works).

Examples:
  %ws init
  %ws init project --no-vector
  %ws init data --skills skills team-skills --name analysis --isolation none
  %ws init --allow pypi.org files.pythonhosted.org
"""

from __future__ import annotations

import glob
import os
from typing import Any

from ...errors import WorkspaceError
from ...sandbox.capabilities import sandbox_processes
from ..parsing import WsArgumentParser
from ..skill_problems import skill_problems
from ..views.common import one_line
from ..views.workspace import InfoView, info_rows
from ._common import isolation_available, load_skills, positive_float, show_index_progress
from .base import Invocation, Subcommand

__all__ = ["COMMAND", "default_directory", "notebook_path"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument(
        "dir", nargs="?", metavar="DIR", help="workspace directory (default: WsMagics.default_dir)"
    )
    search = parser.add_mutually_exclusive_group()
    search.add_argument(
        "--bm25", dest="bm25", action="store_true", default=None, help="enable BM25 search (default)"
    )
    search.add_argument("--no-bm25", dest="bm25", action="store_false", help="no BM25 search")
    vector = parser.add_mutually_exclusive_group()
    vector.add_argument(
        "--vector",
        dest="vector",
        action="store_true",
        default=None,
        help="enable vector search (all-MiniLM-L6-v2, offline; default: when installed)",
    )
    vector.add_argument("--no-vector", dest="vector", action="store_false", help="no vector search")
    parser.add_argument(
        "--no-index", action="store_true", help="index nothing now (later: `%%ws index`)"
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
    from ...sandbox.network.arguments import add_network_arguments

    add_network_arguments(parser)
    parser.add_argument("--name", help="workspace name")
    parser.add_argument(
        "--timeout",
        type=positive_float,
        metavar="S",
        help="default time limit of foreground commands (seconds)",
    )


def notebook_path(user_ns: dict[str, Any]) -> str | None:
    """The path of the notebook this kernel runs, when the front-end tells it.

    Jupyter Server (JupyterLab, Notebook 7) starts kernels with ``JPY_SESSION_NAME``, which
    ipykernel puts in ``__session__``; VS Code sets ``__vsc_ipynb_file__``.
    """
    for name in ("__vsc_ipynb_file__", "__session__"):
        value = user_ns.get(name)
        if isinstance(value, str) and value.endswith(".ipynb"):
            return os.path.abspath(value)
    return None


def default_directory(magics: Any, user_ns: dict[str, Any]) -> tuple[str, str | None]:
    """``(directory, name)`` for ``%ws init`` without DIR: the setting, or NOTEBOOK-workspace."""
    if magics.default_dir:
        return magics.default_dir, None
    notebook = notebook_path(user_ns)
    if notebook is None:
        return "workspace", None
    stem = os.path.splitext(os.path.basename(notebook))[0]
    return os.path.join(os.path.dirname(notebook), f"{stem}-workspace"), stem


def _running_processes(inv: Invocation) -> list[Any]:
    """The background processes the current workspace would take with it when replaced."""
    previous = inv.session.workspace
    if previous is None or not inv.session.owned or not previous.has_sandbox_config():
        return []
    try:
        manager = sandbox_processes(previous.resolve_sandbox(None))
        return [p for p in manager.list() if p.running] if manager is not None else []
    except Exception:  # a workspace already half-destroyed has nothing left to lose
        return []


def run(inv: Invocation) -> InfoView:
    from ... import LocalFilesystem, LocalSandbox, Workspace
    from ...sandbox.network.arguments import network_from_arguments

    magics, args = inv.magics, inv.args
    given, name = (args.dir, None) if args.dir else default_directory(magics, inv.user_ns)
    root = os.path.abspath(os.path.expanduser(given))
    if os.path.exists(root) and not os.path.isdir(root):
        raise inv.usage_error(f"{given!r} exists and is not a directory")
    reused = False
    if os.path.isdir(root):
        with os.scandir(root) as entries:  # closed at once: an open iterator warns and holds a descriptor
            reused = any(True for _ in entries)
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
    if vector:  # asked for: say now, in one line, what the vectors would fail on in the background
        from ...install.model import require_default_model

        require_default_model()
    workspace = Workspace(
        name=args.name or name,
        filesystem=LocalFilesystem(root),
        sandbox=LocalSandbox(
            working_directory=root,
            isolation=isolation,
            timeout=timeout,
            network=network_from_arguments(args),
        ),
        bm25=True if bm25 else None,
        embedder="auto" if vector is None else "default" if vector else None,
        auto_index_paths=() if args.no_index else None,
        skills=skills,
    )
    with skill_problems() as problems:  # init discovers the skills: shown once, below
        workspace.init()
    doomed = _running_processes(inv)
    inv.session.set_workspace(workspace, owned=True)
    if magics.variable_name:
        inv.user_ns[magics.variable_name] = workspace
    problems += [p for p in load_skills(workspace) if p not in problems]
    info = workspace.get_info()
    heading = f"Workspace {workspace.name}"
    if magics.variable_name:
        heading += f" → {magics.variable_name}"
    rows = info_rows(info)
    available = isolation_available(workspace)
    if available is not None:
        at = next((i + 1 for i, (k, _) in enumerate(rows) if k == "isolation"), len(rows))
        rows.insert(at, available)
    notes = [f"skill problem: {p} (see `%ws skills`)" for p in problems]
    if doomed:
        listed = "; ".join(f"PID {p.pid} {one_line(p.command, 60)}" for p in doomed)
        notes.append(
            f"replacing the previous workspace killed {len(doomed)} running background "
            f"process{'' if len(doomed) == 1 else 'es'}: {listed}"
        )
    real_root = os.path.realpath(root)
    if os.path.commonpath([os.path.realpath(os.getcwd()), real_root]) == real_root:
        notes.append(
            "the workspace contains this kernel's working directory, first on sys.path: a .py file "
            "written in it (by a command or an agent) is imported by `import NAME` in this notebook"
        )
    if reused:  # the folder as it was found, before anyone works in it
        try:
            cp = workspace.checkpoints.take(reason="%ws init: the folder as found")
            rows.append(
                (
                    "checkpoint",
                    f"{cp.name}: the folder as found ({cp.files} files"
                    + (f", {len(cp.excluded)} not recorded" if cp.excluded else "")
                    + "); `%ws changes` shows what changes since, `%ws restore` takes it back",
                )
            )
        except (WorkspaceError, OSError) as exc:  # the workspace works without it: say why
            notes.append(f"no checkpoint of the folder as found: {exc}")
    show_index_progress(inv, workspace)  # vectors are computed after init() returns
    return InfoView(heading, rows, notes)


COMMAND = Subcommand(
    name="init",
    summary="create the notebook's workspace over a directory (binds it to `ws`)",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
