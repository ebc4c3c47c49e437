"""The text of an HTML output, for reading and searching — never rendered.

A notebook's HTML outputs (``display(HTML(...))``, a report, a table) carry what they say inside
markup. :func:`html_to_text` keeps the words: tags are dropped, block elements and table rows
start new lines (blank lines dropped), cells are separated by `` | ``, list items start with ``- ``, ``<script>`` and
``<style>`` contents are skipped and entities decoded. It parses with the standard library's
``html.parser`` (a tokenizer: nothing is fetched, run or laid out), over at most
:data:`MAX_HTML_CHARS` characters, so a hostile output costs bounded time.

>>> html_to_text("<h3>Summary</h3><p>Revenue grew <b>12%</b>.</p><script>x()</script>")
'Summary\\nRevenue grew 12%.'
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["MAX_HTML_CHARS", "html_to_text"]

#: HTML past this many characters is not read (the start of a huge output says what it is).
MAX_HTML_CHARS = 1 << 20
_BLOCK = frozenset(
    "address article aside blockquote br caption dd details div dl dt figcaption figure footer form "
    "h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody tfoot thead tr ul".split()
)
_SKIP = frozenset({"script", "style", "template", "head", "title", "noscript"})
_SPACES = re.compile(r"[ \t\r\f\v]+")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0
        self.pre = 0
        self.had_pre = False
        self.first_cell = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip += 1
        elif tag == "pre":
            self.pre += 1
            self.had_pre = True
            self.parts.append("\n")
        elif tag == "tr":
            self.parts.append("\n")
            self.first_cell = True
        elif tag in ("td", "th"):
            if not self.first_cell:
                self.parts.append(" | ")
            self.first_cell = False
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self.parts.append("\n")
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        self.parts.append(data if self.pre else _SPACES.sub(" ", data.replace("\n", " ")))


def html_to_text(html: str) -> str:
    """The readable text of ``html`` (see the module docstring)."""
    parser = _Text()
    try:
        parser.feed(html[:MAX_HTML_CHARS])
        parser.close()
    except (AssertionError, ValueError):  # malformed markup the tokenizer gives up on
        pass
    lines = "".join(parser.parts).split("\n")
    if parser.had_pre:  # preformatted text keeps its indentation
        return "\n".join(line.rstrip() for line in lines if line.strip())
    return "\n".join(line.strip() for line in lines if line.strip())
