"""`$name` / `{expr}` expansion in %ws lines: each piece on its own, shell syntax left alone."""

from __future__ import annotations

import pytest

from ws_jupyter.jupyter.expansion import RULES, expand

NS = {"x": 21, "path": "data/a b.csv", "items": [1, 2, 3], "HOME": "/py-home"}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("echo $x", "echo 21"),
        ("echo {x * 2}", "echo 42"),
        ("cat $path", "cat data/a b.csv"),
        ('cat "$path"', 'cat "data/a b.csv"'),
        ("echo {len(items)} items", "echo 3 items"),
        # undefined names reach the shell untouched
        ("echo $USER $1 $PWD", "echo $USER $1 $PWD"),
        # a Python variable shadows the shell's unless $$ is used
        ("echo $HOME $$HOME", "echo /py-home $HOME"),
        ("echo ${HOME} ${x}", "echo ${HOME} ${x}"),
        # braces that are not Python stay as written, and one failure does not cancel the rest
        ("awk '{print $1}' f $x", "awk '{print $1}' f 21"),
        ("find . -exec rm {} \\; {x}", "find . -exec rm {} \\; 21"),
        ("echo {undefined_name} {x}", "echo {undefined_name} 21"),
        ('echo {"a": 1}', 'echo {"a": 1}'),
        ("echo {{x}} }}", "echo {x} }"),
        ("price: $", "price: $"),
        ("unbalanced {x", "unbalanced {x"),
        ("", ""),
    ],
)
def test_expand(line: str, expected: str) -> None:
    assert expand(line, NS) == expected


def test_expression_errors_leave_text_and_do_not_raise() -> None:
    assert expand("{1/0} {x}", NS) == "{1/0} 21"


def test_rules_are_documented_for_help() -> None:
    assert "$$" in RULES and "{expr}" in RULES and "cell bodies" in RULES
