"""Options shared by the subcommands that start commands (`run`, `bg`)."""

from __future__ import annotations

import argparse

from ..parsing import WsArgumentParser
from ._common import positive_float

__all__ = ["add_launch_options", "env_from_args"]


def _env_item(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def add_launch_options(parser: WsArgumentParser) -> None:
    parser.add_argument("--cwd", metavar="DIR", help="working directory (relative to the sandbox's)")
    parser.add_argument(
        "--env",
        "-e",
        type=_env_item,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra environment variable",
    )
    parser.add_argument("--timeout", "-t", type=positive_float, metavar="S", help="time limit in seconds")


def env_from_args(args: argparse.Namespace) -> dict[str, str] | None:
    return dict(args.env) if args.env else None
