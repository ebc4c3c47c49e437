"""``NotebookView``: a notebook shown as cells — ``%ws cat nb.ipynb`` and the file browser preview.

Markdown cells are rendered (markdown-it-py, CommonMark with tables; raw HTML in them is shown as
text, never run, and ``attachment:`` images come from the cell's attachments), code cells are
highlighted (Pygments, inline styles) with their cell-relative line numbers, raw cells are shown
as they are, and outputs compactly: streams and results cut to their first and last lines, errors
as ``ename: evalue`` with the last traceback lines, images inline, anything else named with its
size. HTML outputs are *not* embedded: they come from another notebook's run and could carry
scripts into this one (their ``text/plain`` is shown instead, when there is one).

Each cell header links to the cell in JupyterLab: ``nb.ipynb#cell-id=<id>`` opens the notebook
and scrolls to that cell (JupyterLab 4's fragment navigation); a notebook without cell ids
(nbformat < 4.5) gets a link to the file. The text form is what ``workspace_read_file`` shows.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .base import RichView
from .common import BAD, BORDER, MARK, MONO, MUTED, PRE, cell_link, code_table, esc, format_bytes

__all__ = ["NotebookView"]

#: Cells drawn at most (a longer notebook says how to see the rest: ``%ws cat nb.ipynb --cells A:B``).
MAX_CELLS = 200
_OUTPUT_LINES = 12
_INLINE_IMAGES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_ATTACHMENT = re.compile(r"attachment:([^\s)\"'>]+)")
#: Lines of one code cell drawn at most (Pygments on a megabyte cell would stall the kernel).
MAX_CELL_LINES = 400
#: Characters of one cell drawn at most, and of all cells of one view that are rendered (Markdown)
#: or highlighted (code): markdown-it and Pygments cost ~0.1 ms a character on hostile text
#: (``[[[[``, ``+-+-``) and a notebook may hold megabytes in one cell. Past the view's budget,
#: cells are drawn as plain text.
MAX_CELL_CHARS = 20_000
MAX_VIEW_CHARS = 100_000
#: Tokens of the plain-text form (what a front-end without HTML shows, and the notebook stores).
TEXT_BUDGET = 25_000
#: ``attachment:`` images inlined per Markdown cell (each is a data URI of the whole image).
MAX_ATTACHMENT_IMAGES = 20


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render_markdown(source: str, attachments: Any = None) -> str:
    """Markdown to HTML; ``attachment:name`` images point at the cell's attachments (data URIs)."""
    if isinstance(attachments, dict) and "attachment:" in source:

        def inline(m: re.Match[str]) -> str:
            bundle = attachments.get(m.group(1))
            if isinstance(bundle, dict):
                for mime in _INLINE_IMAGES:
                    data = bundle.get(mime)
                    if isinstance(data, str):
                        return f"data:{mime};base64,{''.join(data.split())}"
            return m.group(0)

        source = _ATTACHMENT.sub(inline, source, count=MAX_ATTACHMENT_IMAGES)
    return str(_markdown().render(source))


def highlight_lines(source: str, language: str | None) -> list[str]:
    """The source as HTML lines, highlighted with inline styles (each line self-contained)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language or "python", stripnl=False, ensurenl=False)
    except ClassNotFound:
        return [esc(line) for line in source.split("\n")]
    html = highlight(source, lexer, HtmlFormatter(noclasses=True, nowrap=True, style="default"))
    lines = html.split("\n")
    if lines and lines[-1] == "" and not source.endswith("\n"):
        lines.pop()
    return lines


@dataclass(repr=False)
class NotebookView(RichView):
    """A notebook rendered as cells (see the module docstring).

    ``notebook`` is a :class:`ws_jupyter.notebooks.Notebook`; ``cells`` the ``(first, last)``
    cell indexes to draw (inclusive; default: all, at most ``MAX_CELLS``); ``highlight_cell``
    marks a cell (a search or grep hit), ``highlight_line`` a line in it.
    """

    path: str
    notebook: Any
    size: int | None = None
    base_path: str | None = None
    cells: tuple[int, int] | None = None
    highlight_cell: int | None = None
    highlight_line: int | None = None
    kind = "notebook"

    def _range(self) -> tuple[int, int]:
        n = len(self.notebook)
        if self.cells is not None:
            first, last = self.cells
            return max(0, first), min(n - 1, last)
        if self.highlight_cell is not None and n > MAX_CELLS:
            first = max(0, min(self.highlight_cell - MAX_CELLS // 3, n - MAX_CELLS))
            return first, first + MAX_CELLS - 1
        return 0, min(n, MAX_CELLS) - 1

    def title(self) -> str:
        return self.path

    def meta(self) -> str:
        nb = self.notebook
        bits = [f"{len(nb)} cell{'' if len(nb) == 1 else 's'}"]
        if nb.language:
            bits.append(nb.language)
        bits.append(f"nbformat {nb.nbformat_version}")
        if self.size is not None:
            bits.append(format_bytes(self.size))
        first, last = self._range()
        if len(nb) and (first, last) != (0, len(nb) - 1):
            bits.append(f"cells {first}-{last} shown")
        return " · ".join(bits)

    def text(self) -> str:
        from ...notebooks.render import render_notebook

        first, last = self._range()
        rendering = render_notebook(
            self.notebook, label=self.path, offset=first, limit=last - first + 1, size=self.size,
            budget=TEXT_BUDGET,
        )  # fmt: skip
        return rendering.text

    # --- HTML -------------------------------------------------------------------------------------

    def html_body(self) -> str:
        nb = self.notebook
        first, last = self._range()
        parts: list[str] = []
        if nb.problem:
            parts.append(f'<div style="color: {BAD}">Not a valid notebook: {esc(nb.problem)}</div>')
        if not len(nb):
            parts.append(f'<div style="{MUTED}">No cells.</div>')
        if first > 0:
            parts.append(f'<div style="{MUTED}">… cells 0-{first - 1} not shown (use --cells A:B)</div>')
        from ...notebooks.document import cell_source

        left = MAX_VIEW_CHARS
        for i in range(first, last + 1):
            size = min(len(cell_source(nb.cells[i])), MAX_CELL_CHARS)
            parts.append(self._cell_html(i, nb.cells[i], rich=size <= left))
            left -= size
        if last < len(nb) - 1:
            parts.append(
                f'<div style="{MUTED}">… cells {last + 1}-{len(nb) - 1} not shown (use --cells A:B)</div>'
            )
        return f'<div style="max-height: 48em; overflow: auto">{"".join(parts)}</div>'

    def _cell_html(self, index: int, cell: Any, rich: bool = True) -> str:
        from ...notebooks.document import cell_source

        kind = str(cell.get("cell_type", "?"))
        cid = cell.get("id") if isinstance(cell.get("id"), str) else None
        count = cell.get("execution_count")
        prompt = f"In [{count}]" if isinstance(count, int) and not isinstance(count, bool) else ""
        marked = index == self.highlight_cell
        head = (
            f'<div style="{MUTED}; font-size: 0.85em; {MONO}">'
            + cell_link(self.base_path, self.path, f"[{index}]", cid)
            + f" {esc(kind)}"
            + (f" · {esc(cid)}" if cid else "")
            + (f" · {esc(prompt)}" if prompt else "")
            + "</div>"
        )
        source = cell_source(cell)
        cut = len(source) - MAX_CELL_CHARS
        more = f'<div style="{MUTED}; font-style: italic">… {cut:,} more characters</div>' if cut > 0 else ""
        if kind == "markdown" and rich and cut <= 0:
            body = f'<div class="ws-nb-markdown" style="padding: 0 4px">{render_markdown(source, cell.get("attachments"))}</div>'
        elif kind == "code":
            shown, hidden = source, 0
            if source.count("\n") >= MAX_CELL_LINES:
                all_lines = source.split("\n")
                shown, hidden = "\n".join(all_lines[:MAX_CELL_LINES]), len(all_lines) - MAX_CELL_LINES
            line_cut = False
            if len(shown) > MAX_CELL_CHARS:  # plain text, whole lines up to the limit
                head = shown[:MAX_CELL_CHARS]
                keep = head.rsplit("\n", 1)[0] if "\n" in head else head
                line_cut = keep is head
                hidden += shown.count("\n") - keep.count("\n")
                shown, rich = keep, False
            if not source:
                lines = []
            elif rich:
                lines = highlight_lines(shown, self.notebook.language)
            else:
                lines = [esc(line) for line in shown.split("\n")]
            rows = [
                (str(n), line, MARK if marked and n == self.highlight_line else "")
                for n, line in enumerate(lines, 1)
            ]
            if line_cut:
                rows.append(("", f"… the line goes on past {MAX_CELL_CHARS:,} characters", MUTED + "; font-style: italic"))
            if hidden:
                rows.append(("", f"… {hidden} more lines", MUTED + "; font-style: italic"))
            body = code_table(rows) if rows else f'<div style="{MUTED}; {MONO}">(empty)</div>'
            body += self._outputs_html(cell)
        else:  # raw cells, and Markdown past the limits: plain text
            body = f'<pre style="{PRE}">{esc(source[:MAX_CELL_CHARS])}</pre>{more}'
        frame = "rgba(255, 200, 0, 0.9)" if marked else BORDER
        anchor = f' data-cell-index="{index}"' + (f' data-cell-id="{esc(cid)}"' if cid else "")
        return (
            f'<div class="ws-nb-cell"{anchor} style="border-left: 3px solid {frame}; margin: 6px 0; '
            f'padding: 2px 0 2px 8px">{head}{body}</div>'
        )

    def _outputs_html(self, cell: Any) -> str:
        from ...notebooks.outputs import cell_outputs

        blocks: list[str] = []
        for out in cell_outputs(cell, max_lines=_OUTPUT_LINES):
            if out.kind == "stream":
                colour = f"color: {BAD}; " if out.name == "stderr" else ""
                blocks.append(f'<pre style="{PRE}; {colour}">{esc(out.text)}</pre>')
            elif out.kind == "error":
                tb = "\n".join(out.traceback)
                blocks.append(
                    f'<pre style="{PRE}; color: {BAD}"><strong>{esc(out.headline)}</strong>'
                    + (f"\n{esc(tb)}" if tb else "")
                    + "</pre>"
                )
            else:
                items: list[str] = []
                for img in out.images:
                    if img.mime_type in _INLINE_IMAGES:
                        data = base64.b64encode(img.data).decode("ascii")
                        items.append(
                            f'<img src="data:{esc(img.mime_type)};base64,{data}" alt="{esc(img.describe())}" '
                            'style="max-width: 100%; max-height: 24em; display: block"/>'
                        )
                if out.text and not items:
                    items.append(f'<pre style="{PRE}">{esc(out.text)}</pre>')
                if out.others:
                    named = ", ".join(f"{m} {format_bytes(n)}" for m, n in out.others)
                    items.append(f'<div style="{MUTED}; font-size: 0.85em">{esc(named)}</div>')
                blocks.extend(items)
        if not blocks:
            return ""
        return (
            f'<div class="ws-nb-outputs" style="margin: 2px 0 0 0; padding: 2px 6px; '
            f'border-top: 1px dashed {BORDER}">{"".join(blocks)}</div>'
        )
