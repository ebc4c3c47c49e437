"""``NotebookView``: a notebook shown as cells — ``%ws cat nb.ipynb`` and the file browser preview.

Markdown cells are rendered inert (``views.markdown``: raw HTML shown as text, never run; images
only from the cell's attachments or ``data:`` URIs, any other image as a link, so showing a
notebook makes the browser fetch nothing), code cells are highlighted (``syntax.py``: JupyterLab's editor colours, legible on both themes)
with their cell-relative line numbers, raw cells are shown as they are, and outputs compactly:
streams and results cut to their first and last lines, errors as ``ename: evalue`` with the last
traceback lines, images inline, anything else named with its size. HTML outputs are *not*
embedded: they come from another notebook's run and could carry scripts into this one (their
``text/plain`` is shown instead, when there is one).

A notebook can be megabytes of base64 and thousands of outputs: one view draws each image once
(an attachment referenced twenty times is inlined at its first reference), at most
``MAX_VIEW_IMAGE_BYTES`` of images and ``MAX_VIEW_OUTPUTS`` outputs in all, and its last line
says what it left out.

Each cell header links to the cell in JupyterLab: ``nb.ipynb#cell-id=<id>`` opens the notebook
and scrolls to that cell (JupyterLab 4's fragment navigation); a notebook without cell ids
(nbformat < 4.5) gets a link to the file. The text form is what ``workspace_read_file`` shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import RichView
from .common import BAD, BORDER, MARK, MONO, MUTED, PRE, cell_link, code_table, esc, format_bytes
from .markdown import ImageBudget, image_html, render_markdown
from .syntax import SYNTAX_COLOURS, highlight_lines

__all__ = ["NotebookView"]

#: Cells drawn at most (a longer notebook says how to see the rest: ``%ws cat nb.ipynb --cells A:B``).
MAX_CELLS = 200
_OUTPUT_LINES = 12
#: Lines of one code cell drawn at most (Pygments on a megabyte cell would stall the kernel).
MAX_CELL_LINES = 400
#: Characters of one cell drawn at most, and of all cells of one view that are rendered (Markdown)
#: or highlighted (code): markdown-it and Pygments cost ~0.1 ms a character on hostile text
#: (``[[[[``, ``+-+-``) and a notebook may hold megabytes in one cell. Past the view's budget,
#: cells are drawn as plain text.
MAX_CELL_CHARS = 20_000
MAX_VIEW_CHARS = 100_000
#: Outputs drawn per view (each at most ``_OUTPUT_LINES`` lines); the rest are counted.
MAX_VIEW_OUTPUTS = 500
#: Tokens of the plain-text form (what a front-end without HTML shows, and the notebook stores).
TEXT_BUDGET = 25_000


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
        drawing = _Drawing()
        for i in range(first, last + 1):
            size = min(len(cell_source(nb.cells[i])), MAX_CELL_CHARS)
            parts.append(self._cell_html(i, nb.cells[i], drawing, rich=size <= left))
            left -= size
        if last < len(nb) - 1:
            parts.append(
                f'<div style="{MUTED}">… cells {last + 1}-{len(nb) - 1} not shown (use --cells A:B)</div>'
            )
        for note in drawing.notes():
            parts.append(f'<div style="{MUTED}; font-style: italic">{esc(note)}</div>')
        return f'<div style="max-height: 48em; overflow: auto; {SYNTAX_COLOURS}">{"".join(parts)}</div>'

    def _cell_html(self, index: int, cell: Any, drawing: _Drawing, rich: bool = True) -> str:
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
            body = f'<div class="ws-nb-markdown" style="padding: 0 4px">{render_markdown(source, cell.get("attachments"), drawing.images)}</div>'
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
            body += self._outputs_html(cell, drawing)
        else:  # raw cells, and Markdown past the limits: plain text
            body = f'<pre style="{PRE}">{esc(source[:MAX_CELL_CHARS])}</pre>{more}'
        frame = "rgba(255, 200, 0, 0.9)" if marked else BORDER
        anchor = f' data-cell-index="{index}"' + (f' data-cell-id="{esc(cid)}"' if cid else "")
        return (
            f'<div class="ws-nb-cell"{anchor} style="border-left: 3px solid {frame}; margin: 6px 0; '
            f'padding: 2px 0 2px 8px">{head}{body}</div>'
        )

    def _outputs_html(self, cell: Any, drawing: _Drawing) -> str:
        from ...notebooks.outputs import summarize_output

        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        if not isinstance(outputs, list):
            return ""
        blocks: list[str] = []
        for n, output in enumerate(outputs):
            if drawing.outputs_left <= 0:
                drawing.outputs_omitted += len(outputs) - n
                blocks.append(f'<div style="{MUTED}; font-style: italic">… {len(outputs) - n:,} more outputs</div>')
                break
            drawing.outputs_left -= 1
            out = summarize_output(output, max_lines=_OUTPUT_LINES)
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
                shown = "max-width: 100%; max-height: 24em; display: block"
                items = [image_html(img.data, img.describe(), drawing.images, style=shown) for img in out.images]
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


class _Drawing:
    """What one drawing of a view has spent: images (``ImageBudget``) and outputs."""

    def __init__(self) -> None:
        self.images = ImageBudget()
        self.outputs_left = MAX_VIEW_OUTPUTS
        self.outputs_omitted = 0

    def notes(self) -> list[str]:
        out = [self.images.note()] if self.images.left_out else []
        if self.outputs_omitted:
            out.append(
                f"{self.outputs_omitted:,} outputs not shown: a view draws at most {MAX_VIEW_OUTPUTS} "
                "(open the notebook, or pick cells with --cells A:B)"
            )
        return out
