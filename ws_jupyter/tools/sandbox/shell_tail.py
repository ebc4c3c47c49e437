"""Recognising ``<pipeline> | tail -N`` in a shell command line, only where taking the tail off
cannot change what the shell does.

``execute_command`` runs ``cmd | tail -N`` as ``cmd`` and keeps the last N lines of its stdout
itself, so the exit code is ``cmd``'s own instead of ``tail``'s. That is the same command only
when the ``| tail -N`` applies to the *whole* command line: in ``a && b | tail -1`` the pipe binds
to ``b`` alone (``a``'s output is shown in full), and in ``seq 3 # | tail -1`` it is a comment. So
the line is scanned as the POSIX shell (dash) tokenises it — quotes, backslash escapes, ``$(...)``,
backquotes, ``${...}``, parentheses and braces — and the rewrite is made only when, outside all
of those, the part before the last ``|`` has no list operator (``;``, ``&``, ``&&``, ``||``), no
newline, no comment and no here-document, and what follows that ``|`` is exactly ``tail -N``,
``tail -nN`` or ``tail -n N``. Anything else is left to the shell as written.
"""

from __future__ import annotations

import re

__all__ = ["split_tail_pipe"]

_TAIL = re.compile(r"\s*tail\s+(?:-n\s*|-)(\d+)\s*")


def _top_level_pipes(command: str) -> list[int] | None:
    """Offsets of the ``|`` pipe operators at top level, or None when the line has something at
    top level that makes a trailing pipe not apply to the whole line (or cannot be scanned)."""
    pipes: list[int] = []
    stack: list[str] = []  # open constructs: "(", "{", "$(", "`", '"', "${"
    i, n = 0, len(command)
    word_start = True  # at the start of a word (where '#' starts a comment)
    cmd_pos = True  # where a command starts (where '{' and '}' are reserved words)
    while i < n:
        c = command[i]
        top = stack[-1] if stack else None
        if top == "'":
            if c == "'":
                stack.pop()
            i += 1
            continue
        if c == "\\":
            if i + 1 >= n:
                return None
            i += 2
            word_start = False
            continue
        if top == '"':
            if c == '"':
                stack.pop()
            elif c == "`":
                stack.append("`")
            elif command.startswith("$(", i):
                stack.append("$(")
                i += 1
            elif command.startswith("${", i):
                stack.append("${")
                i += 1
            i += 1
            continue
        if top == "`":
            if c == "`":
                stack.pop()
            elif c in "'\"":
                stack.append(c)
            i += 1
            continue
        if top == "${":
            if c == "}":
                stack.pop()
            elif c in "'\"":
                stack.append(c)
            elif command.startswith("$(", i):
                stack.append("$(")
                i += 1
            i += 1
            continue
        # unquoted text: top level, or inside (, {, $(
        if c in "'\"`":
            stack.append(c)
            word_start = False
            i += 1
            continue
        if command.startswith("$(", i):
            stack.append("$(")
            i += 2
            word_start = True
            cmd_pos = True
            continue
        if command.startswith("${", i):
            stack.append("${")
            i += 2
            word_start = False
            continue
        if c == "(":
            stack.append("(")
            i += 1
            word_start = True
            cmd_pos = True
            continue
        if c == ")":
            if not stack or stack[-1] not in ("(", "$("):
                return None
            stack.pop()
            i += 1
            word_start = False
            cmd_pos = False
            continue
        if c == "{" and cmd_pos and (i + 1 >= n or command[i + 1] in " \t\n"):
            stack.append("{")
            i += 1
            continue
        if (
            c == "}"
            and cmd_pos
            and stack
            and stack[-1] == "{"
            and (i + 1 >= n or command[i + 1] in " \t\n|);&")
        ):
            stack.pop()
            i += 1
            word_start = False
            cmd_pos = False
            continue
        if c == "#" and word_start:
            if not stack:
                return None  # a comment at top level: what follows is not a pipe
            end = command.find("\n", i)
            if end < 0:
                return None
            i = end
            continue
        if not stack:
            if c == "\n" or c == ";":
                return None
            if c == "&":
                prev = command[i - 1] if i else ""
                if prev not in "<>":  # >&2, 2>&1 are redirections; anything else is a list
                    return None
            if c == "|":
                if command.startswith("||", i):
                    return None
                pipes.append(i)
        if command.startswith("<<", i):
            return None  # a here-document: its body follows the line
        word_start = c in " \t\n|&;<>()"
        if c in "|&;\n(" or (c == "!" and _stands_alone(command, i)):
            cmd_pos = True
        elif c not in " \t":
            cmd_pos = False
        i += 1
    if stack:
        return None
    return pipes


def _stands_alone(command: str, i: int) -> bool:
    """``command[i]`` stands alone as a word (``!`` the pipeline negation, not ``a!b``)."""
    before = command[i - 1] if i else " "
    after = command[i + 1] if i + 1 < len(command) else " "
    return before in " \t\n|&;(" and after in " \t\n"


def split_tail_pipe(command: str) -> tuple[str, int] | None:
    """``(command before the pipe, N)`` when the line is ``<pipeline> | tail -N`` and the tail
    applies to all of it; else None.

    >>> split_tail_pipe("pytest -q 2>&1 | tail -20")
    ('pytest -q 2>&1', 20)
    >>> split_tail_pipe("make && make test | tail -1") is None
    True
    """
    pipes = _top_level_pipes(command)
    if not pipes:
        return None
    last = pipes[-1]
    m = _TAIL.fullmatch(command, last + 1)
    if m is None:
        return None
    head = command[:last]
    count = int(m.group(1))
    if not head.strip() or count == 0:  # "tail -0" prints nothing; tail=0 would mean "all"
        return None
    return head.rstrip(), count
