"""Glob patterns as agents write them: ``list_files`` (``pattern``, ``exclude``), ``grep`` paths, the
indexer's path globs and skill discovery all match with these.

One set of rules, the ones of ``.gitignore`` and ripgrep's ``-g`` that models already know:

* a pattern without ``/`` matches a *name* at any depth: ``*.py``, ``node_modules``, ``test_*``;
* a pattern with ``/`` is anchored at the base directory: ``src/*.py``, ``docs/**/*.md``;
* ``*`` stays within one path segment, ``**`` spans any number of them, ``?`` is one character,
  ``[abc]``/``[!abc]`` a character class, ``{a,b}`` alternatives (``*.{ts,tsx}``);
* a leading ``./`` and a trailing ``/`` are ignored.

>>> m = compile_globs(["*.{py,md}", "build/**"])
>>> [p for p in ["a.py", "src/b.md", "build/x/y.txt", "c.txt"] if m(p)]
['a.py', 'src/b.md', 'build/x/y.txt']
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable

from ..errors import InvalidArgumentError, ToolArgumentError

__all__ = ["GLOB_CHARS", "compile_globs", "expand_braces", "has_glob", "split_glob_path"]

GLOB_CHARS = frozenset("*?[{")
_MAX_EXPANSIONS = 256


def has_glob(text: str) -> bool:
    return any(c in GLOB_CHARS for c in text)


def expand_braces(pattern: str) -> list[str]:
    """``a{b,c}d`` -> ``[abd, acd]`` (nested braces work; unbalanced braces are literal)."""
    out: list[str] = []
    stack = [pattern]
    while stack:
        p = stack.pop()
        start = _find_open(p)
        if start < 0:
            out.append(p)
            continue
        depth = 0
        end = -1
        commas = []
        for i in range(start, len(p)):
            ch = p[i]
            if ch == "\\":
                continue
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    end = i
                    break
            elif ch == "," and depth == 1:
                commas.append(i)
        if end < 0 or not commas:
            # not an alternation: keep the brace literally
            out.append(p)
            continue
        bounds = [start, *commas, end]
        for a, b in itertools.pairwise(bounds):
            stack.append(p[:start] + p[a + 1 : b] + p[end + 1 :])
        if len(stack) + len(out) > _MAX_EXPANSIONS:
            raise InvalidArgumentError(f"glob {pattern!r} expands to too many alternatives")
    out.reverse()
    return out


def _find_open(p: str) -> int:
    i = p.find("{")
    while i > 0 and p[i - 1] == "\\":
        i = p.find("{", i + 1)
    return i


def _segment_regex(seg: str) -> str:
    out = []
    i = 0
    while i < len(seg):
        ch = seg[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            j = seg.find("]", i + 2 if i + 1 < len(seg) and seg[i + 1] in "!^" else i + 1)
            if j < 0:
                out.append(re.escape(ch))
            else:
                body = seg[i + 1 : j]
                neg = body[:1] in ("!", "^")
                if neg:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                out.append(f"[{'^' if neg else ''}{body}]")
                i = j
        elif ch == "\\" and i + 1 < len(seg):
            i += 1
            out.append(re.escape(seg[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _translate(pattern: str) -> str:
    p = pattern.strip()
    while p.startswith("./"):
        p = p[2:]
    p = p.strip("/")
    if not p or p == "**":
        return ".*"
    segments = [s for s in p.split("/") if s]
    anchored = len(segments) > 1
    parts: list[str] = []
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == "**":
            parts.append("(?:/.*)?" if last else "(?:.*/)?")
            continue
        parts.append(_segment_regex(seg) + ("" if last else "/"))
    body = "".join(parts).replace("/(?:/.*)?", "(?:/.*)?")
    return body if anchored else "(?:.*/)?" + body


def compile_globs(patterns: Iterable[str]) -> Callable[[str], bool]:
    """A matcher: True when a base-relative path (``a/b.py``) matches any of ``patterns``."""
    regexes = []
    for pattern in patterns:
        if not isinstance(pattern, str):
            raise ToolArgumentError(f"glob patterns must be strings, got {type(pattern).__name__}")
        for expanded in expand_braces(pattern):
            regexes.append(_translate(expanded))
    if not regexes:
        return lambda path: False
    rx = re.compile("^(?:" + "|".join(regexes) + ")$", re.DOTALL)
    return lambda path: rx.match(path) is not None


def split_glob_path(path: str) -> tuple[str, str | None]:
    """``"src/**/*.py"`` -> ``("src", "**/*.py")``; a plain path -> ``(path, None)``.

    The base is the part before the first segment with a glob character.
    """
    segments = path.split("/")
    for i, seg in enumerate(segments):
        if has_glob(seg):
            base = "/".join(segments[:i]) or ("/" if path.startswith("/") else ".")
            return base, "/".join(segments[i:])
    return path, None
