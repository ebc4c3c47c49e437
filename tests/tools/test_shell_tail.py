"""The ``| tail -N`` rewrite of ``workspace_execute_command`` never changes what the shell prints:
on generated command lines (pipes, lists, subshells, brace groups, quotes, escapes, comments,
command substitutions, redirections) every line the rewrite accepts gives, run by ``sh`` without
its tail and cut by the tool, exactly the stdout ``sh`` prints for the original line; and it does
accept the common shapes (so the property is not vacuous)."""

from __future__ import annotations

import random
import subprocess

import pytest

from ws_jupyter.text.shaping import apply_tail
from ws_jupyter.tools.sandbox.shell_tail import split_tail_pipe

WORDS = [
    "seq 3", "seq 2 4", "echo a", "printf 'x\\ny\\n'", "echo 'p | q'", 'echo "s; t"', "echo u\\;v",
    "echo w\\|z", "true", "false", "echo $((1+2))", "echo $(seq 2)", "echo `echo bq`", "echo '#' c",
    "echo d#e", "printf 'n1\\nn2'", "echo ${HOME:+h;i}", "echo x >&2", "seq 2 2>&1", "echo !",
    "echo '&&' \"||\"", "echo $(echo 'a;b' && echo c)",
]  # fmt: skip


def _element(r: random.Random, depth: int) -> str:
    k = r.random()
    if depth < 2 and k < 0.12:
        return "( " + _list(r, depth + 1) + " )"
    if depth < 2 and k < 0.22:
        return "{ " + _list(r, depth + 1) + "; }"
    return r.choice(WORDS)


def _pipeline(r: random.Random, depth: int) -> str:
    p = " | ".join(_element(r, depth) for _ in range(r.choice([1, 1, 2, 3])))
    return ("! " + p) if r.random() < 0.05 else p


def _list(r: random.Random, depth: int = 0) -> str:
    out = _pipeline(r, depth)
    # background jobs inside a group would race for the output order: only at top level
    ops = [" && ", " || ", "; ", "\n"] + ([" & "] if depth == 0 else [])
    for _ in range(r.choice([0, 0, 1, 2])):
        out += r.choice(ops) + _pipeline(r, depth)
    if r.random() < 0.08:
        out += " # note | x"
    return out


def _sh(command: str) -> str:
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=30).stdout


def _lines(text: str) -> list[str]:
    return text.rstrip("\n").split("\n") if text.strip("\n") else []


@pytest.mark.slow
def test_rewrite_keeps_the_shells_stdout_on_generated_lines():
    r = random.Random(20261201)
    accepted = rejected = 0
    for _ in range(500):
        n = r.choice([1, 2, 3, 5])
        suffix = r.choice([f" | tail -{n}", f" | tail -n {n}", f"|tail -n{n}", f" | tail -{n}  "])
        line = _list(r) + suffix
        split = split_tail_pipe(line)
        if split is None:
            rejected += 1
            continue
        accepted += 1
        head, count = split
        assert count == n
        kept = apply_tail(_sh(head), count)
        if kept.startswith("[showing last"):
            kept = kept.split("\n", 1)[1]
        assert _lines(kept) == _lines(_sh(line)), line
    assert accepted > 150 and rejected > 150, (accepted, rejected)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("pytest -q 2>&1 | tail -20", ("pytest -q 2>&1", 20)),
        ("seq 5 | sort -r | tail -n 2", ("seq 5 | sort -r", 2)),
        ("(make; make test) | tail -3", ("(make; make test)", 3)),
        ("{ a; b; } | tail -n4", ("{ a; b; }", 4)),
        ("echo 'x | y' | tail -1", ("echo 'x | y'", 1)),
        ("a && b | tail -1", None),
        ("a || b | tail -1", None),
        ("a; b | tail -1", None),
        ("a & b | tail -1", None),
        ("a\nb | tail -1", None),
        ("seq 3 # | tail -1", None),
        ("echo x \\| tail -1", None),
        ("echo 'a | tail -1'", None),
        ("cat <<EOF | tail -1", None),
        ("a &> f | tail -1", None),  # in sh: "a &" then "> f | tail -1"
        ("echo { a; b; } | tail -1", None),  # '{' is an argument here, not a group
        ("seq 9 | tail -0", None),
        ("seq 9 | tail -n +2", None),
        ("seq 9 | tail -5 file", None),
        ("| tail -1", None),
        ("echo 'unterminated | tail -1", None),
    ],
)
def test_accepts_only_what_is_provably_the_whole_line(line, expected):
    assert split_tail_pipe(line) == expected
