"""The base of every view (``RichView``: a title, a meta line, an HTML body and a text form) and
``MessageView``, the one-line outcome."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .common import BAD, MONO, MUTED, OK, PRE, WARN, esc

__all__ = ["MessageView", "RichView"]


class RichView:
    """A displayable result: subclasses give ``title``/``meta``, an HTML body and a text form.

    What a notebook stores is exactly ``_repr_mimebundle_``: HTML and plain text (no Markdown or
    JSON twin, which would double or triple every saved output). ``html()`` is the full HTML;
    there is deliberately no ``_repr_html_``, so IPython adds nothing to the bundle on its own
    (a view whose bundle is an image or Markdown gets no HTML copy of it).
    """

    kind = "view"

    def title(self) -> str:
        return ""

    def meta(self) -> str:
        return ""

    def html_body(self) -> str:
        return f'<pre style="{PRE}">{esc(self.text())}</pre>'

    def text(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.text()

    def html(self) -> str:
        header = ""
        if self.title() or self.meta():
            header = (
                '<div style="margin-bottom: 4px">'
                f"<strong>{esc(self.title())}</strong>"
                + (f' <span style="{MUTED}">{esc(self.meta())}</span>' if self.meta() else "")
                + "</div>"
            )
        return (
            f'<div class="ws-jupyter ws-{self.kind}" style="line-height: 1.45; text-align: left">'
            f"{header}{self.html_body()}</div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/html": self.html(), "text/plain": self.text()}


@dataclass(repr=False)
class MessageView(RichView):
    """A one-line outcome (``Wrote 12 bytes to a.txt``)."""

    message: str
    level: str = "ok"  # ok | info | warn | error
    kind = "message"

    def text(self) -> str:
        return self.message

    def html_body(self) -> str:
        colour = {"ok": OK, "warn": WARN, "error": BAD}.get(self.level, "inherit")
        mark = {"ok": "✓ ", "warn": "! ", "error": "✗ "}.get(self.level, "")
        return (
            f'<div style="color: {colour}">{esc(mark)}<span style="{MONO}">{esc(self.message)}</span></div>'
        )
