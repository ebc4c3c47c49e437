"""How ``$name`` and ``{expr}`` are expanded in a ``%ws`` line.

IPython expands a magic line all or nothing: if one ``$x`` or ``{...}`` cannot be evaluated, nothing
is expanded, so ``!echo $HOME {n}`` silently drops ``{n}``. Shell commands are full of ``$`` and
braces (``$HOME``, ``${PATH}``, ``awk '{print $1}'``, ``find -exec {} \\;``), so ``%ws`` (decorated
with ``@no_var_expand``) expands each piece on its own, by the rules in ``RULES`` (also shown by
``%ws --help``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["RULES", "expand"]

RULES = """\
* `$name` is replaced by the value of the Python variable `name` when the notebook defines it;
  otherwise it is left for the shell (`$HOME`, `$PATH`, `$1` reach the shell unchanged).
* `$$` is a literal `$` — use `$$HOME` to reach the shell's `HOME` even when a Python
  variable named `HOME` exists.
* `${...}` is always shell syntax and left alone.
* `{expr}` is replaced by the value of the Python expression when it parses and evaluates without
  error; otherwise it stays as written (`{print $1}`, `{}` and `{a,b}` with undefined names
  reach the shell). `{{` and `}}` are literal braces.
* Values are inserted as text, unquoted (quote them in the command: `%ws run cat "$path"`).
* Only the magic's line is expanded. `%%ws` cell bodies (file contents, scripts) are used verbatim,
  and `%ws call` evaluates its argument itself (JSON, or a Python expression giving a dict).
* `%config WsMagics.expand_variables = False` turns expansion off.
"""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _matching_brace(text: str, start: int) -> int:
    """Index of the ``}`` closing the ``{`` at ``start`` (nesting and quotes aware), or -1."""
    depth = 0
    quote: str | None = None
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _evaluate(expr: str, namespace: Mapping[str, Any]) -> tuple[bool, Any]:
    if not expr.strip():
        return False, None
    try:
        code = compile(expr, "<%ws expansion>", "eval")
    except SyntaxError:
        return False, None
    try:
        return True, eval(code, dict(namespace))  # the user's own expression, as IPython does
    except Exception:
        return False, None


def expand(text: str, namespace: Mapping[str, Any]) -> str:
    """Expands ``$name`` and ``{expr}`` in ``text`` against ``namespace`` (see the module rules).

    >>> expand("echo $x $HOME {x * 2} {print $1} $$x", {"x": 21})
    'echo 21 $HOME 42 {print $1} $x'
    """
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "$":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "{":
                end = _matching_brace(text, i + 1)
                stop = n if end < 0 else end + 1
                out.append(text[i:stop])
                i = stop
                continue
            m = _NAME.match(text, i + 1)
            if m:
                name = m.group(0)
                if name in namespace:
                    out.append(str(namespace[name]))
                else:
                    out.append("$" + name)
                i = m.end()
                continue
            out.append(ch)
            i += 1
        elif ch == "{":
            if text.startswith("{{", i):
                out.append("{")
                i += 2
                continue
            end = _matching_brace(text, i)
            if end < 0:
                out.append(text[i:])
                break
            ok, value = _evaluate(text[i + 1 : end], namespace)
            out.append(str(value) if ok else text[i : end + 1])
            i = end + 1
        elif ch == "}" and text.startswith("}}", i):
            out.append("}")
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)
