"""The regular-expression engine behind ``workspace_grep``'s Python search.

Patterns come from a model, so the engine must not be a tool for denial of service: Python's
``re`` backtracks (``(a+)+$`` on 27 ``a``\\ s takes seconds, doubling with each character, while
holding the GIL). Patterns are therefore run by **RE2** (``google-re2``), whose matching time is
linear in the text whatever the pattern:

* a pattern is first checked with Python's ``re`` (the documented syntax, and its error messages);
* it is translated to RE2 so that it means what ripgrep (the other engine) makes of it: ``\\d``,
  ``\\w``, ``\\s`` and their negations are Unicode classes, ``\\A``/``\\Z`` anchor at the line,
  ``{,n}`` is ``{0,n}``, ``\\uXXXX`` is a code point;
* RE2 then searches many lines at once (``never_nl``: a match never crosses a line end), and only
  the lines that match are looked at one by one.

A pattern that needs what RE2 does not have (look-around, back-references, atomic groups,
possessive quantifiers, conditionals) is run by Python's ``re`` in a child process that the
search kills when its time budget is spent: the budget holds even inside one line, and the
caller's interpreter stays free meanwhile.

``\\b``/``\\B`` are ASCII word boundaries in RE2 (ripgrep's are Unicode): a boundary next to a
non-ASCII letter may be seen differently by the two engines.
"""

from __future__ import annotations

import os
import re
import select
import struct
import subprocess
import sys
import time
from typing import Any

from ...errors import ToolError

__all__ = ["GrepPattern", "PatternError", "compile_pattern", "translate"]

_WORD = r"\p{L}\p{M}\p{Nd}\p{Pc}"
_SPACE = r"\t\n\x0b\f\r \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
_OUTSIDE = {
    "d": r"\p{Nd}",
    "D": r"\P{Nd}",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
    "A": "^",
    "Z": "$",
    "z": "$",
}
_INSIDE = {"d": r"\p{Nd}", "D": r"\P{Nd}", "w": _WORD, "s": _SPACE}
_HEX = re.compile(r"[0-9a-fA-F]+")


class PatternError(ToolError):
    """A grep pattern that cannot be used (invalid, or needing an engine that cannot run)."""

    default_code = "INVALID_PATTERN"


def translate(pattern: str) -> str:
    """``pattern`` (Python/ripgrep syntax) in RE2 syntax, with ripgrep's meaning (module docstring)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if e in ("u", "U"):
                width = 4 if e == "u" else 8
                digits = pattern[i + 2 : i + 2 + width]
                if len(digits) == width and _HEX.fullmatch(digits):
                    out.append(f"\\x{{{digits}}}")
                    i += 2 + width
                    continue
            table = _INSIDE if in_class else _OUTSIDE
            out.append(table.get(e, "\\" + e))
            i += 2
            continue
        if in_class:
            if c == "]":  # (a "]" right after "[" or "[^" was taken as a member already)
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            out.append(pattern[i:j])
            i = j
            continue
        if c == "{" and pattern.startswith("{,", i):
            close = pattern.find("}", i)
            if close > 0 and pattern[i + 2 : close].isdigit():
                out.append("{0," + pattern[i + 2 : close] + "}")
                i = close + 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


class GrepPattern:
    """A compiled grep pattern: :meth:`find_lines` finds the first match of each matching line."""

    engine = "re2"

    def find_lines(self, block: bytes, max_hits: int, deadline: float) -> list[tuple[int, int]]:
        """``(line index, 1-based column in characters)`` of the first match of each line of
        ``block`` (lines joined by ``\\n``) that matches, at most ``max_hits`` of them; raises
        ``TimeoutError`` past ``deadline`` (``time.monotonic()``)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the pattern holds (a worker process)."""


class _RE2Pattern(GrepPattern):
    def __init__(self, compiled: Any) -> None:
        self._rx = compiled

    def find_lines(self, block: bytes, max_hits: int, deadline: float) -> list[tuple[int, int]]:
        search = self._rx.search
        out: list[tuple[int, int]] = []
        pos, line = 0, 0
        while len(out) < max_hits:
            m = search(block, pos)
            if m is None:
                break
            start = m.start()
            line += block.count(b"\n", pos, start)
            line_start = block.rfind(b"\n", 0, start) + 1
            out.append((line, len(block[line_start:start].decode("utf-8", "replace")) + 1))
            end = block.find(b"\n", start)
            if end < 0:
                break
            pos, line = end + 1, line + 1
            if len(out) % 256 == 0 and time.monotonic() > deadline:
                raise TimeoutError()
        return out


# The child process: Python's ``re`` over the lines it is sent, killed by the parent when the
# search's time budget is spent (a backtracking pattern cannot be interrupted any other way).
_WORKER = r"""
import re, struct, sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
def take(n):
    data = inp.read(n)
    if len(data) != n:
        sys.exit(0)
    return data
size, flags = struct.unpack("<QQ", take(16))
rx = re.compile(take(size).decode("utf-8"), flags)
while True:
    size, max_hits = struct.unpack("<QQ", take(16))
    hits = []
    for i, raw in enumerate(take(size).split(b"\n")):
        line = raw.decode("utf-8", "replace")
        m = rx.search(line)
        if m is not None:
            hits.append((i, m.start() + 1))
            if len(hits) >= max_hits:
                break
    out.write(struct.pack("<Q", len(hits)) + b"".join(struct.pack("<QQ", a, b) for a, b in hits))
    out.flush()
"""


class _ChildRePattern(GrepPattern):
    """Python ``re`` in a child process (see the module docstring)."""

    engine = "re"

    def __init__(self, pattern: str, flags: int) -> None:
        self._pattern = pattern
        self._flags = flags
        self._proc: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WORKER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd="/",
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            )
            raw = self._pattern.encode("utf-8")
            self._send(struct.pack("<QQ", len(raw), self._flags) + raw)
        return self._proc

    def _send(self, data: bytes) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(data)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.close()
            raise PatternError("The regex worker process stopped unexpectedly") from None

    def _read(self, n: int, deadline: float) -> bytes:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        parts: list[bytes] = []
        while n > 0:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.close()
                raise TimeoutError()
            piece = os.read(fd, n)
            if not piece:
                self.close()
                raise PatternError("The regex worker process stopped unexpectedly")
            parts.append(piece)
            n -= len(piece)
        return b"".join(parts)

    def find_lines(self, block: bytes, max_hits: int, deadline: float) -> list[tuple[int, int]]:
        self._start()
        self._send(struct.pack("<QQ", len(block), min(max_hits, 2**63)) + block)
        (count,) = struct.unpack("<Q", self._read(8, deadline))
        data = self._read(16 * count, deadline) if count else b""
        return [struct.unpack_from("<QQ", data, 16 * k) for k in range(count)]

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.kill()
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        proc.wait()


def _re2_options(case_sensitive: bool) -> Any:
    import re2

    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.never_nl = True  # a match never spans lines, so a block of lines is searched at once
    options.log_errors = False
    return options


def compile_pattern(pattern: str, case_sensitive: bool = True) -> GrepPattern:
    """Check and compile a grep pattern (RE2 when it can express it; see the module docstring).

    Raises :class:`PatternError` with Python's message for an invalid pattern.
    """
    flags = 0 if case_sensitive else re.IGNORECASE
    try:
        re.compile(pattern, flags)
    except (re.error, OverflowError, RecursionError) as exc:
        raise PatternError(f"Invalid regex pattern: {exc}") from None
    import re2

    try:
        compiled = re2.compile("(?m)" + translate(pattern), _re2_options(case_sensitive))
    except re2.error:
        return _ChildRePattern(pattern, flags)
    return _RE2Pattern(compiled)
