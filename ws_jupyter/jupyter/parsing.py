"""Argument parsing for ``%ws`` subcommands: argparse that speaks IPython.

* Mistakes raise ``UsageError`` (IPython prints one line, no traceback) instead of exiting.
* ``--help`` prints the subcommand's help into the cell and ends the command quietly.
* Commands that run shell text (``run``, ``bg``, ``send``) take their options first and keep the
  rest of the line *exactly as typed* — quotes, ``|``, ``>`` and ``&&`` reach the shell untouched —
  so ``%ws run --timeout 5 grep -c "a b" f.txt | sort`` means what it says. ``--`` ends the options.
"""

from __future__ import annotations

import argparse
import io
import shlex
import sys
from typing import Any, NoReturn, cast

from IPython.core.error import UsageError

__all__ = ["HelpShown", "WsArgumentParser", "parse_line", "split_options_and_tail"]


class HelpShown(Exception):
    """Raised after ``--help`` printed its text: the command must stop without an error."""


class WsArgumentParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are ``UsageError`` and whose help goes to the cell."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status:
            raise UsageError(f"{self.prog}: {(message or 'invalid arguments').strip()}")
        if message:
            print(message, end="")
        raise HelpShown()

    def print_help(self, file: Any = None) -> None:
        # The cell's stdout, whatever argparse's default of the moment is.
        (file or sys.stdout).write(self.format_help())

    def help_text(self) -> str:
        """The help as a string (for ``%ws --help`` and the ``%ws?`` docstring)."""
        buf = io.StringIO()
        self.print_help(buf)
        return buf.getvalue()


def _tokens(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError as exc:  # "No closing quotation"
        raise UsageError(f"cannot parse {text!r}: {exc}") from None


def parse_line(parser: WsArgumentParser, text: str) -> argparse.Namespace:
    """Splits ``text`` like a shell would and parses it."""
    return parser.parse_args(_tokens(text))


def split_options_and_tail(parser: WsArgumentParser, text: str) -> tuple[list[str], str]:
    """Separates the leading options that ``parser`` knows from the raw rest of ``text``.

    >>> p = WsArgumentParser(prog="%ws run"); _ = p.add_argument("--timeout")
    >>> split_options_and_tail(p, '--timeout 5 echo "a  b" | wc -c')
    (['--timeout', '5'], 'echo "a  b" | wc -c')
    """
    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    stream = cast(io.StringIO, lexer.instream)  # shlex wraps a str in a StringIO
    options: list[str] = []
    while True:
        before = stream.tell()
        try:
            token = lexer.get_token()
        except ValueError as exc:
            raise UsageError(f"cannot parse {text!r}: {exc}") from None
        if token is None or token == lexer.eof:
            return options, ""
        if token == "--":
            return options, text[stream.tell() :].strip()
        if not token.startswith("-") or token == "-":
            return options, text[before:].strip()
        name = token.split("=", 1)[0]
        action = parser._option_string_actions.get(name)
        if action is None:
            parser.error(f"unrecognized option {name!r} (put '--' before a command that starts with '-')")
        options.append(token)
        if "=" in token or action.nargs == 0:
            continue
        value = lexer.get_token()
        if value is None or value == lexer.eof:
            parser.error(f"option {name} needs a value")
        options.append(value)
