"""argparse for %ws: UsageError instead of exit, help into the cell, raw command tails."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from ws_jupyter.jupyter.parsing import HelpShown, WsArgumentParser, parse_line, split_options_and_tail


@pytest.fixture
def parser() -> WsArgumentParser:
    p = WsArgumentParser(prog="%ws run", description="Run things.")
    p.add_argument("--timeout", type=float)
    p.add_argument("--check", action="store_true")
    p.add_argument("--env", action="append", default=[])
    return p


@pytest.mark.parametrize(
    ("text", "options", "tail"),
    [
        ('--timeout 5 echo "a  b" | wc -c', ["--timeout", "5"], 'echo "a  b" | wc -c'),
        ("--timeout=5 --check ls", ["--timeout=5", "--check"], "ls"),
        ("-- --version", [], "--version"),
        ("   ls   -la  ", [], "ls   -la"),
        ('--env A="x y" printf "%s" $A', ["--env", "A=x y"], 'printf "%s" $A'),
        ("echo --timeout 3", [], "echo --timeout 3"),
        ("", [], ""),
        ("--check", ["--check"], ""),
        ("echo 'it''s' && true", [], "echo 'it''s' && true"),
    ],
)
def test_tail_keeps_the_command_exactly(
    parser: WsArgumentParser, text: str, options: list[str], tail: str
) -> None:
    assert split_options_and_tail(parser, text) == (options, tail)


def test_unknown_option_before_command_is_a_usage_error(parser: WsArgumentParser) -> None:
    with pytest.raises(UsageError, match="unrecognized option '--nope'"):
        split_options_and_tail(parser, "--nope ls")


def test_missing_option_value(parser: WsArgumentParser) -> None:
    with pytest.raises(UsageError, match="needs a value"):
        split_options_and_tail(parser, "--timeout")


def test_unclosed_quote(parser: WsArgumentParser) -> None:
    with pytest.raises(UsageError, match="cannot parse"):
        parse_line(parser, '--env "oops')


def test_bad_value_is_one_line_usage_error(parser: WsArgumentParser) -> None:
    with pytest.raises(UsageError) as info:
        parse_line(parser, "--timeout soon")
    assert "\n" not in str(info.value)
    assert "--timeout" in str(info.value) and "--help" in str(info.value)


def test_help_prints_and_stops(parser: WsArgumentParser, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(HelpShown):
        parse_line(parser, "--help")
    out = capsys.readouterr().out
    assert out.startswith("usage: %ws run") and "Run things." in out
