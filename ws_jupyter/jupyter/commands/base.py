"""The shape of one ``%ws`` subcommand and of one call to it.

A subcommand module defines ``COMMAND = Subcommand(...)``: its name, a one-line summary, the
arguments it adds to its own ``WsArgumentParser`` (whose description is the module docstring, so
``%ws <name> --help`` shows it), whether it takes a ``%%ws`` cell body, and ``run(invocation)``
returning the object the cell displays (or None).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from IPython.core.error import UsageError

from ..parsing import WsArgumentParser

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ...workspace import Workspace
    from ..magics import WsMagics
    from ..session import WsSession

__all__ = ["CellMode", "Invocation", "Subcommand"]

CellMode = Literal["no", "optional", "required"]


@dataclass(frozen=True)
class Subcommand:
    """One ``%ws`` subcommand.

    ``tail``: the options come first and the raw rest of the line becomes ``args.command``
    (for commands that run shell text). ``expand``: whether ``$name``/``{expr}`` are expanded in
    the line (see :mod:`ws_jupyter.jupyter.expansion`).
    """

    name: str
    summary: str
    doc: str
    configure: Callable[[WsArgumentParser], None]
    run: Callable[[Invocation], Any]
    cell: CellMode = "no"
    tail: bool = False
    expand: bool = True
    aliases: tuple[str, ...] = ()

    def parser(self) -> WsArgumentParser:
        parser = WsArgumentParser(prog=f"%ws {self.name}", description=self.doc.strip())
        self.configure(parser)
        return parser


@dataclass
class Invocation:
    """One call of a subcommand: parsed arguments, the cell body, and where to find things."""

    magics: WsMagics
    command: Subcommand
    args: argparse.Namespace
    line: str
    cell: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def shell(self) -> InteractiveShell:
        shell = self.magics.shell
        assert shell is not None
        return shell

    @property
    def in_kernel(self) -> bool:
        """True when a Jupyter kernel runs the shell, so widgets can be shown (not terminal IPython)."""
        return getattr(self.magics.shell, "kernel", None) is not None

    @property
    def user_ns(self) -> dict[str, Any]:
        return self.shell.user_ns

    @property
    def session(self) -> WsSession:
        return self.magics.session

    @property
    def workspace(self) -> Workspace:
        """The session workspace (a one-line UsageError when there is none)."""
        return self.session.require()

    def usage_error(self, message: str) -> UsageError:
        return UsageError(f"%ws {self.command.name}: {message}")
