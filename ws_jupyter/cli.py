"""The ``ws-jupyter`` console script: a small registry of subcommands.

Built in: ``install-kernel`` and ``uninstall-kernel``. Other parts of the package (or other
packages) add subcommands without touching this file, either in code::

    from ws_jupyter.cli import CliCommand, register_command

    register_command(CliCommand("mcp", "serve a workspace over MCP (stdio)", configure, run))

or declaratively, through the ``ws_jupyter.commands`` entry-point group (the value is a
``CliCommand`` or a zero-argument callable returning one), which ``main()`` loads on demand::

    [project.entry-points."ws_jupyter.commands"]
    mcp = "ws_jupyter.tools.mcp:cli_command"

Errors from ws-jupyter (``WorkspaceError``) print one line on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
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
    from .jupyter.kernel_install import DISPLAY_NAME, KERNEL_NAME, install_kernel

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
    from .jupyter.kernel_install import KERNEL_NAME, uninstall_kernel

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


# --- entry point --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one sub-parser per registered subcommand."""
    from . import __version__

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
