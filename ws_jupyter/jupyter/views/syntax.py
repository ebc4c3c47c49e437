"""Syntax highlighting in JupyterLab's own editor colours, legible on the light and dark themes.

Pygments splits the code into tokens; each kind of token takes the colour JupyterLab's editor gives
it (``--jp-mirror-editor-keyword-color``...), passed through ``theme_colour`` because several of
those colours fall below a 4.5:1 contrast on one theme or the other (the dark theme's comments,
the light theme's numbers). The colours are CSS variables resolved in the browser, so the code
follows a theme switch without running anything again.

A token's ``style`` names one short variable (``var(--ws-hl-keyword)``) that ``SYNTAX_COLOURS``
defines once on an enclosing element: a notebook of thousands of tokens does not repeat the mix.
Lines are returned separately, each self-contained (a string spanning lines is cut per line), for
the numbered code tables.
"""

from __future__ import annotations

from typing import Any

from .common import esc, theme_colour

__all__ = ["SYNTAX_COLOURS", "highlight_lines", "token_colour"]

#: JupyterLab's editor colour of each kind of token (the variables of its themes; the fallbacks
#: are the light theme's values, for front-ends without them).
_EDITOR_COLOURS = {
    "keyword": "#008000",
    "builtin": "#008000",
    "def": "#00f",
    "meta": "#a2f",
    "string": "#ba2121",
    "string-2": "#708",
    "number": "#080",
    "comment": "#408080",
    "operator": "#7800c2",
    "variable-2": "#00366d",
    "attribute": "#00c",
    "tag": "#170",
    "header": "blue",
    "error": "red",
}

#: The variables tokens use, to put on an element that encloses the highlighted code.
SYNTAX_COLOURS = "; ".join(
    f"--ws-hl-{name}: {theme_colour(f'var(--jp-mirror-editor-{name}-color, {fallback})')}"
    for name, fallback in _EDITOR_COLOURS.items()
)

#: Pygments token types (by their dotted name, the most specific first) -> editor colour.
_TOKEN_KINDS = (
    ("Keyword", "keyword"),
    ("Operator.Word", "keyword"),
    ("Operator", "operator"),
    ("Name.Builtin", "builtin"),
    ("Name.Exception", "builtin"),
    ("Name.Function", "def"),
    ("Name.Class", "def"),
    ("Name.Decorator", "meta"),
    ("Name.Variable", "variable-2"),
    ("Name.Constant", "variable-2"),
    ("Name.Attribute", "attribute"),
    ("Name.Tag", "tag"),
    ("Literal.String.Escape", "string-2"),
    ("Literal.String.Interpol", "string-2"),
    ("Literal.String.Regex", "string-2"),
    ("Literal.String", "string"),
    ("Literal.Number", "number"),
    ("Comment.Preproc", "meta"),
    ("Comment.Hashbang", "meta"),
    ("Comment", "comment"),
    ("Generic.Heading", "header"),
    ("Generic.Subheading", "header"),
    ("Generic.Error", "error"),
    ("Error", "error"),
)


def token_colour(token_type: Any) -> str | None:
    """The editor colour name of a Pygments token type (None: plain text)."""
    name = str(token_type).removeprefix("Token.")
    for prefix, kind in _TOKEN_KINDS:
        if name == prefix or name.startswith(prefix + "."):
            return kind
    return None


def _span(kind: str | None, text: str) -> str:
    if kind is None or not text:
        return esc(text)
    italic = "; font-style: italic" if kind == "comment" else ""
    return f'<span class="ws-hl-{kind}" style="color: var(--ws-hl-{kind}){italic}">{esc(text)}</span>'


def highlight_lines(source: str, language: str | None) -> list[str]:
    """The source as HTML lines, highlighted (an unknown language: escaped text)."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language or "python", stripnl=False, ensurenl=False)
    except ClassNotFound:
        return [esc(line) for line in source.split("\n")]
    lines: list[list[str]] = [[]]
    for token_type, value in lexer.get_tokens(source):
        kind = token_colour(token_type)
        first, *rest = value.split("\n")
        lines[-1].append(_span(kind, first))
        for piece in rest:
            lines.append([_span(kind, piece)])
    out = ["".join(parts) for parts in lines]
    if len(out) > 1 and out[-1] == "" and not source.endswith("\n"):
        out.pop()
    return out
