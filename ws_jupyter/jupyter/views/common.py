"""The shared building blocks of every view: theme-following inline styles, escaping, tables,
badges, paths as links and the number/duration formats.

Views and widgets put their HTML together from these (and nothing else defines a colour or a
table), so all ``%ws`` outputs look alike and follow the JupyterLab theme through its CSS
variables; every text colour keeps a 4.5:1 contrast on the light and the dark theme.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote

__all__ = [
    "BAD",
    "BORDER",
    "CELL",
    "CODE",
    "ERROR_BACKGROUND",
    "GREY",
    "INFO",
    "MARK",
    "MONO",
    "MUTED",
    "NUMBER_CELL",
    "OK",
    "PRE",
    "WARN",
    "badge",
    "base_path_of",
    "cell_link",
    "code_table",
    "esc",
    "format_bytes",
    "format_duration",
    "one_line",
    "path_link",
    "table",
    "text_table",
    "theme_colour",
    "to_json_text",
]



def theme_colour(colour: str) -> str:
    """``colour`` made legible on both JupyterLab themes: mixed with the theme's strongest text
    colour (``--jp-content-font-color0``: black on the light theme, white on the dark one), it
    keeps a 4.5:1 contrast (WCAG AA) on either background while keeping its hue. ``colour`` may
    be a CSS variable: the mix happens in the browser, for whatever theme is on."""
    return f"color-mix(in srgb, {colour} {_THEME_MIX}%, var(--jp-content-font-color0, #000))"


#: Per cent of the colour itself in ``theme_colour`` (the rest is the theme's text colour): the
#: most saturated of JupyterLab's own editor colours need it to reach 4.5:1 on both themes.
_THEME_MIX = 65

MUTED = "color: var(--jp-ui-font-color2, #6a737d)"
MONO = "font-family: var(--jp-code-font-family, SFMono-Regular, Menlo, Consolas, monospace); font-size: var(--jp-code-font-size, 12.5px)"
BORDER = "var(--jp-border-color2, #e0e0e0)"
OK = theme_colour("#1a7f37")
BAD = theme_colour("#cf222e")
WARN = theme_colour("#9a6700")
INFO = theme_colour("#0969da")
GREY = theme_colour("#6a737d")
#: Behind stderr text: JupyterLab's own (light red on the light theme, dark red on the dark one).
ERROR_BACKGROUND = "var(--jp-rendermime-error-background, #fdd)"
MARK = "background: rgba(255, 200, 0, 0.45); color: inherit; padding: 0 1px; border-radius: 2px"
#: Code as typed: indentation kept, long lines wrapped only where they would overflow.
CODE = f"{MONO}; white-space: pre-wrap; overflow-wrap: anywhere; text-align: left"
PRE = f"{CODE}; margin: 0"
#: Table cells say their alignment and borders explicitly: JupyterLab's output CSS right-aligns
#: ``td``/``th`` and draws zebra rows, which would otherwise apply to every table here.
CELL = "text-align: left; vertical-align: top; border: none"
NUMBER_CELL = "text-align: right; vertical-align: top; border: none"


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def format_bytes(size: int | float | None) -> str:
    """``1536`` -> ``"1.5 KB"``."""
    if size is None:
        return ""
    size = float(size)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"  # pragma: no cover


def format_duration(seconds: float | None) -> str:
    """``0.0123`` -> ``"12 ms"``, ``75`` -> ``"1m 15s"``."""
    if seconds is None or math.isnan(seconds):
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def path_link(
    base_path: str | None, rel: str, text: str | None = None, line: int | None = None, fragment: str | None = None
) -> str:
    """An ``<a>`` to a workspace file, relative to the kernel's working directory.

    JupyterLab opens such links in its editor (relative links in outputs resolve against the
    notebook's directory, which is where the kernel runs); ``fragment`` is added after ``#``
    (``cell-id=ab12`` opens a notebook at that cell). Without a host base path (a remote
    filesystem) the path is shown as plain text.
    """
    label = esc(text if text is not None else rel)
    if not base_path:
        return f'<span style="{MONO}">{label}</span>'
    href = quote(os.path.relpath(os.path.join(base_path, rel), os.getcwd()))
    if fragment:
        href += "#" + quote(fragment, safe="=")
    title = rel + (f":{line}" if line else "")
    return (
        f'<a href="{esc(href)}" title="{esc(title)}" '
        f'style="text-decoration: none; color: var(--jp-content-link-color, #0969da)">{label}</a>'
    )


def cell_link(base_path: str | None, path: str, text: str, cell_id: str | None, line: int | None = None) -> str:
    """A link that opens the notebook ``path`` in JupyterLab at the cell ``cell_id``.

    JupyterLab 4 scrolls an open notebook to the cell named by ``#cell-id=``; without a cell id
    (nbformat < 4.5, or not a notebook) it is a plain link to the file.
    """
    return path_link(base_path, path, text, line, fragment=f"cell-id={cell_id}" if cell_id else None)


def base_path_of(workspace: Any) -> str | None:
    """The host directory of a workspace's filesystem, when it has one (for links)."""
    fs = getattr(workspace, "filesystem", None)
    base = getattr(fs, "base_path", None)
    return str(base) if base else None


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, numeric: Sequence[int] = ()) -> str:
    """An HTML table of already-escaped cells; ``numeric`` columns are right-aligned."""

    def align(i: int) -> str:
        return NUMBER_CELL if i in numeric else CELL

    head = "".join(
        f'<th style="{align(i)}; padding: 2px 10px 2px 0; border-bottom: 1px solid {BORDER}; '
        f'font-weight: 600">{esc(h)}</th>'
        for i, h in enumerate(headers)
    )
    body = []
    for row in rows:
        cells = "".join(
            f'<td style="{align(i)}; padding: 2px 10px 2px 0">{cell}</td>' for i, cell in enumerate(row)
        )
        body.append(f'<tr style="background: none">{cells}</tr>')
    return (
        '<table style="border-collapse: collapse; margin: 2px 0; font-size: inherit; table-layout: auto">'
        f'<thead><tr style="background: none">{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def code_table(rows: Iterable[tuple[str, str, str]]) -> str:
    """Numbered code lines (``%ws cat``, ``%ws grep``): ``(number_html, code_html, extra_style)``.

    The number column cannot be selected, so copying the code gives the code alone; an empty line
    stays empty (its row keeps its height from the number, not from an invisible character, which
    would break pasted code).
    """
    out = []
    for number, code, style in rows:
        out.append(
            f'<tr style="background: none"><td style="{MUTED}; {NUMBER_CELL}; padding: 0 10px 0 0; '
            f'user-select: none; line-height: 1.4">{number}</td>'
            f'<td style="{CODE}; {CELL}; padding: 0; line-height: 1.4; {style}">{code}</td></tr>'
        )
    return f'<table style="border-collapse: collapse; {MONO}">{"".join(out)}</table>'


def badge(text: str, colour: str) -> str:
    return (
        f'<span style="display: inline-block; padding: 0 6px; border-radius: 8px; border: 1px solid {colour}; '
        f'color: {colour}; font-size: 0.9em">{esc(text)}</span>'
    )


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def fmt(row: Sequence[str]) -> str:
        return "  ".join(
            (cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])) for i, cell in enumerate(row)
        ).rstrip()

    return "\n".join([fmt(headers), *(fmt(r) for r in rows)])


def one_line(text: str, width: int) -> str:
    """``text`` on one line (whitespace collapsed), cut with "…" to at most ``width`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def to_json_text(value: Any) -> str:
    """Pretty JSON for schemas and tool arguments (non-JSON values as their repr)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
