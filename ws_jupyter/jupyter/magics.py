"""``%ws`` / ``%%ws``: one magic, many subcommands, settings as traitlets.

Dispatch only: each subcommand lives in its own module under ``commands/`` with its parser and
help. Mistakes (unknown subcommand, bad arguments, a missing workspace) and errors the workspace
reports (a missing file, an unknown PID, an unavailable search mode) are shown as one line —
IPython's ``UsageError`` — never as a traceback from deep inside; the original error stays
available as ``.error`` on the raised ``WsCommandError``.

    %load_ext ws_jupyter
    %ws init demo
    %ws run ls -la
    %config WsMagics.default_dir = "data"
"""

from __future__ import annotations

import difflib
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from traitlets import Bool, Enum, Float, Int, Unicode, validate

from ..errors import WorkspaceError
from .commands import Invocation, all_commands, find_command, overview
from .expansion import expand
from .parsing import HelpShown, parse_line, split_options_and_tail
from .session import WsSession
from .views.processes import HEAD_LINES, TAIL_LINES

__all__ = ["WsCommandError", "WsMagics"]


class WsCommandError(UsageError):
    """A workspace error shown as one line; the original exception is ``.error``.

    IPython shortens only ``UsageError`` itself (``etype is UsageError``), not a subclass, so the
    one line comes from ``_render_traceback_``, which IPython and ipykernel use in place of the
    traceback. After a failed cell the error is ``sys.last_value`` (``sys.last_value.error`` is
    the workspace's own exception, ``%tb`` does not show more).
    """

    def __init__(self, message: str, error: BaseException) -> None:
        super().__init__(message)
        self.error = error

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31m{type(self.error).__name__}\x1b[0m: {self}"]


@magics_class
class WsMagics(Magics):
    """The ``%ws`` magics and their settings (``%config WsMagics.<name> = value``)."""

    default_dir = Unicode(
        "",
        help="Directory `%ws init` uses when none is given; '' (default): NOTEBOOK-workspace next to the "
        "notebook ('workspace' when the notebook is unknown).",
    ).tag(config=True)
    variable_name = Unicode(
        "ws", help="Name under which `%ws init` binds the workspace in the notebook ('' to not bind it)."
    ).tag(config=True)
    bm25 = Bool(True, help="Whether `%ws init` enables BM25 keyword search.").tag(config=True)
    vector = Bool(
        None,
        allow_none=True,
        help="Whether `%ws init` enables vector search with the default embedder (all-MiniLM-L6-v2); "
        "None (the default): when the model is installed.",
    ).tag(config=True)
    isolation = Enum(
        ["none", "auto", "bwrap", "seatbelt"],
        "auto",
        help="Sandbox isolation `%ws init` asks for: auto (the best that works here: bubblewrap on Linux, "
        "else none), none, bwrap, seatbelt.",
    ).tag(config=True)
    timeout = Float(
        600.0,
        allow_none=True,
        help="Default time limit in seconds for foreground commands in sandboxes `%ws init` creates.",
    ).tag(config=True)
    expand_variables = Bool(True, help="Expand $name and {expr} in %ws lines (see `%ws --help`).").tag(
        config=True
    )
    max_lines = Int(2000, help="Most lines `%ws cat` / `%ws logs` show before cutting the middle out.").tag(
        config=True
    )
    stream_head_lines = Int(
        HEAD_LINES,
        help="Lines of output `%ws run` and `%%ws py` stream into the cell before they show only the newest (0: no limit).",
    ).tag(config=True)
    stream_tail_lines = Int(
        TAIL_LINES, help="Newest lines `%ws run` and `%%ws py` keep showing (updated live) once the first lines are shown."
    ).tag(config=True)
    max_stream_chars = Int(
        100_000,
        help="Most characters `%ws run` and `%%ws py` stream into the cell before they show only the newest lines (0: no limit).",
    ).tag(config=True)
    max_output_bytes = Int(
        64 << 20,
        help="Most bytes of each output stream a `%ws run` result keeps (the newest); 0: the sandbox's default.",
    ).tag(config=True)
    update_interval = Float(
        0.2, help="Seconds between refreshes of live widgets (at least 0.1: at most 10 updates a second)."
    ).tag(config=True)

    @validate("update_interval")
    def _valid_interval(self, proposal: Any) -> float:
        return max(0.1, float(proposal["value"]))

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.session = WsSession()

    @no_var_expand
    @line_cell_magic
    def ws(self, line: str, cell: str | None = None) -> Any:
        return self.dispatch(line, cell)

    def dispatch(self, line: str, cell: str | None = None) -> Any:
        """Runs one ``%ws`` line (and ``%%ws`` cell body); returns what the cell displays."""
        text = line.strip()
        name, _, rest = text.partition(" ")
        if name in ("", "-h", "--help", "help") and not (name == "help" and rest.strip()):
            print(overview(), end="")
            return None
        if name == "help":
            name, rest = rest.strip().split()[0], "--help"
        command = find_command(name)
        if command is None:
            close = difflib.get_close_matches(name, list(all_commands()), n=1)
            hint = f" Did you mean `%ws {close[0]}`?" if close else ""
            raise UsageError(f"Unknown subcommand {name!r}.{hint} See `%ws --help`.")
        if self.expand_variables and command.expand and self.shell is not None:
            rest = expand(rest, self.shell.user_ns)
        parser = command.parser()
        try:
            if command.tail:
                options, tail = split_options_and_tail(parser, rest)
                args = parser.parse_args(options)
                args.command = tail
            else:
                args = parse_line(parser, rest)
        except HelpShown:
            return None
        if cell is None and command.cell == "required":
            raise UsageError(f"`%ws {command.name}` needs a cell body: write it as `%%ws {command.name} ...`")
        if cell is not None and command.cell == "no":
            raise UsageError(
                f"`%%ws {command.name}` takes no cell body; use the line form `%ws {command.name}`"
            )
        invocation = Invocation(magics=self, command=command, args=args, line=rest, cell=cell)
        try:
            return command.run(invocation)
        except HelpShown:
            return None
        except (WorkspaceError, OSError) as exc:  # OSError: the host refused something (permissions, disk)
            raise WsCommandError(f"%ws {command.name}: {exc}", exc) from None


WsMagics.ws.__doc__ = overview()
