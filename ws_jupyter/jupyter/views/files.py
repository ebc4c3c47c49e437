"""Views of files: ``%ws ls`` (a tree), ``%ws cat`` (one file) and ``%ws grep`` (matching lines)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import RichView
from .common import BORDER, MARK, MONO, MUTED, cell_link, code_table, esc, format_bytes, path_link

__all__ = ["MAX_LINE_CHARS", "FileView", "GrepMatch", "GrepView", "TreeEntry", "TreeView"]

#: Characters of one line ``%ws cat`` shows (the rest of the line is counted).
MAX_LINE_CHARS = 2_000


@dataclass(frozen=True)
class TreeEntry:
    path: str
    name: str
    type: str
    depth: int
    size: int | None = None
    is_symlink: bool = False


@dataclass(repr=False)
class TreeView(RichView):
    """``%ws ls``: a tree listing (entries in walk order, directories first)."""

    root: str
    entries: list[TreeEntry]
    base_path: str | None = None
    truncated: bool = False
    hidden_by_depth: bool = False
    kind = "tree"

    @property
    def files(self) -> list[str]:
        return [e.path for e in self.entries if e.type != "directory"]

    @property
    def directories(self) -> list[str]:
        return [e.path for e in self.entries if e.type == "directory"]

    def title(self) -> str:
        return self.root if self.root not in ("", ".") else "./"

    def summary(self) -> str:
        d, f = len(self.directories), len(self.files)
        text = f"{d} director{'y' if d == 1 else 'ies'}, {f} file{'' if f == 1 else 's'}"
        if self.truncated:
            text += " (listing cut short)"
        elif self.hidden_by_depth:
            text += " (deeper levels not shown: use --depth)"
        return text

    def meta(self) -> str:
        return self.summary()

    def _last_flags(self) -> list[bool]:
        last = [True] * len(self.entries)
        for i, e in enumerate(self.entries):
            for later in self.entries[i + 1 :]:
                if later.depth < e.depth:
                    break
                if later.depth == e.depth:
                    last[i] = False
                    break
        return last

    def text(self) -> str:
        lines = [self.title()]
        last = self._last_flags()
        open_levels: list[bool] = []
        for i, e in enumerate(self.entries):
            del open_levels[e.depth - 1 :]
            prefix = "".join("    " if done else "│   " for done in open_levels)
            name = e.name + ("/" if e.type == "directory" else "")
            size = f"  ({format_bytes(e.size)})" if e.type != "directory" and e.size is not None else ""
            lines.append(f"{prefix}{'└── ' if last[i] else '├── '}{name}{size}")
            open_levels.append(last[i])
        lines.append("")
        lines.append(self.summary())
        return "\n".join(lines)

    def html_body(self) -> str:
        parts: list[str] = []
        depth = 0
        for e in self.entries:
            while depth >= e.depth:
                parts.append("</div></details>")
                depth -= 1
            indent = "margin-left: 1.1em"
            if e.type == "directory":
                parts.append(
                    f'<details open style="{indent}"><summary style="cursor: pointer">'
                    f"<strong>{esc(e.name)}/</strong></summary><div>"
                )
                depth = e.depth
            else:
                size = (
                    f' <span style="{MUTED}">{esc(format_bytes(e.size))}</span>' if e.size is not None else ""
                )
                link = f'<span style="{MUTED}" title="symbolic link">↪ </span>' if e.is_symlink else ""
                parts.append(
                    f'<div style="{indent}; padding-left: 1em">{link}{path_link(self.base_path, e.path, e.name)}{size}</div>'
                )
        while depth > 0:
            parts.append("</div></details>")
            depth -= 1
        return f'<div style="{MONO}; margin-left: -1.1em">{"".join(parts)}</div>'


@dataclass(repr=False)
class FileView(RichView):
    """``%ws cat``: text with line numbers, an image, or a note for other binaries."""

    path: str
    text_content: str | None = None
    data: bytes | None = None
    mime_type: str = "text/plain"
    size: int | None = None
    first_line: int = 1
    total_lines: int | None = None
    omitted: tuple[int, int] | None = None  # lines left out in the middle (start, end), inclusive
    base_path: str | None = None
    highlight: int | None = None  # a line to mark (search hits, grep matches)
    kind = "file"

    @property
    def is_image(self) -> bool:
        return self.data is not None and self.mime_type.startswith("image/")

    @property
    def lines(self) -> list[str]:
        return (self.text_content or "").splitlines()

    def title(self) -> str:
        return self.path

    def meta(self) -> str:
        bits = []
        if self.size is not None:
            bits.append(format_bytes(self.size))
        if self.total_lines is not None and self.text_content is not None:
            shown_end = self.first_line + len(self.lines) - 1 + self._omitted_count()
            if self.first_line != 1 or shown_end != self.total_lines:
                bits.append(f"lines {self.first_line}-{shown_end} of {self.total_lines}")
            else:
                bits.append(f"{self.total_lines} line{'' if self.total_lines == 1 else 's'}")
        if self.text_content is None:
            bits.append(self.mime_type)
        return " · ".join(bits)

    def _omitted_count(self) -> int:
        return self.omitted[1] - self.omitted[0] + 1 if self.omitted else 0

    def _numbered(self) -> list[tuple[int | None, str, str]]:
        """``(number, line, cut note)``: each line at most ``MAX_LINE_CHARS`` (a minified file or a
        one-line JSON can be megabytes, which the notebook would save twice, as HTML and text)."""
        out: list[tuple[int | None, str, str]] = []
        n = self.first_line
        for line in self.lines:
            if self.omitted and n == self.omitted[0]:
                out.append((None, f"… {self._omitted_count()} lines not shown (use --lines A:B) …", ""))
                n = self.omitted[1] + 1
            cut = len(line) - MAX_LINE_CHARS
            if cut > 0:
                out.append((n, line[:MAX_LINE_CHARS], f" … ({cut:,} more characters on this line)"))
            else:
                out.append((n, line, ""))
            n += 1
        return out

    def text(self) -> str:
        head = f"{self.path} ({self.meta()})"
        if self.text_content is None:
            return head + ("" if self.is_image else "\nbinary file: not shown as text")
        width = len(str(self.first_line + len(self.lines) + self._omitted_count()))
        body = [f"{'' if n is None else n:>{width}}  {line}{cut}" for n, line, cut in self._numbered()]
        return "\n".join([head, *body])

    def html_body(self) -> str:
        if self.is_image:
            assert self.data is not None
            encoded = base64.b64encode(self.data).decode()
            return f'<img src="data:{esc(self.mime_type)};base64,{encoded}" style="max-width: 100%"/>'
        if self.text_content is None:
            return f'<div style="{MUTED}">Binary file ({esc(self.mime_type)}): not shown as text.</div>'
        rows = []
        for n, line, cut in self._numbered():
            style = MUTED + "; font-style: italic" if n is None else ""
            if n is not None and n == self.highlight:
                style = MARK
            more = f'<span style="{MUTED}; font-style: italic">{esc(cut)}</span>' if cut else ""
            rows.append(("" if n is None else str(n), esc(line) + more, style))
        return (
            f'<div style="max-height: 32em; overflow: auto; border: 1px solid {BORDER}; padding: 4px 6px">'
            f"{code_table(rows)}</div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {"text/plain": self.text()}
        if self.is_image and self.mime_type in ("image/png", "image/jpeg", "image/gif"):
            assert self.data is not None
            bundle[self.mime_type] = base64.b64encode(self.data).decode()
        else:  # SVG too: as an <img> (html_body), never inline — its scripts would run in some front-ends
            bundle["text/html"] = self.html()
        return bundle


@dataclass(frozen=True)
class GrepMatch:
    """One matching (or context) line. ``spans`` are the match offsets within ``text``.

    In a notebook, ``path`` names the cell (``nb.ipynb [cell 4]``, lines counted within it),
    ``file`` is the notebook and ``cell_id`` the cell's id (links open JupyterLab at that cell).
    """

    path: str
    line: int
    text: str
    column: int | None = None
    spans: tuple[tuple[int, int], ...] = ()
    context: bool = False
    file: str | None = None
    cell_id: str | None = None

    def link(self, base_path: str | None, text: str | None = None, line: int | None = None) -> str:
        """A link to the file — for a notebook cell, to that cell in JupyterLab."""
        return cell_link(base_path, self.file or self.path, text if text is not None else self.path, self.cell_id, line)


@dataclass(repr=False)
class GrepView(RichView):
    """``%ws grep``: matches grouped by file, the matched text marked, paths as links."""

    pattern: str
    matches: list[GrepMatch]
    base_path: str | None = None
    notes: list[str] = field(default_factory=list)
    kind = "grep"

    @property
    def match_count(self) -> int:
        return sum(1 for m in self.matches if not m.context)

    @property
    def files(self) -> list[str]:
        seen: dict[str, None] = {}
        for m in self.matches:
            if not m.context:
                seen.setdefault(m.file or m.path, None)
        return list(seen)

    def title(self) -> str:
        return f"grep {self.pattern}"

    def meta(self) -> str:
        n, f = self.match_count, len(self.files)
        text = f"{n} match{'' if n == 1 else 'es'} across {f} file{'' if f == 1 else 's'}"
        return "; ".join([text, *self.notes])

    def text(self) -> str:
        lines = [self.meta()]
        if not self.matches:
            return lines[0]
        lines.append("---")
        previous: GrepMatch | None = None
        for m in self.matches:
            if previous is not None and (previous.path != m.path or m.line > previous.line + 1):
                lines.append("--")
            if m.context:
                lines.append(f"{m.path}:{m.line}- {m.text}")
            else:
                lines.append(f"{m.path}:{m.line}:{m.column or 1}: {m.text}")
            previous = m
        return "\n".join(lines)

    def html_body(self) -> str:
        if not self.matches:
            return f'<div style="{MUTED}">No matches.</div>'
        blocks: list[str] = []
        current: str | None = None
        heading = ""
        rows: list[tuple[str, str, str]] = []

        def flush() -> None:
            if current is not None:
                blocks.append(
                    f'<div style="margin: 4px 0 2px 0">{heading}</div>'
                    + code_table(rows)
                )

        previous: GrepMatch | None = None
        for m in self.matches:
            if m.path != current:
                flush()
                current, rows, heading = m.path, [], m.link(self.base_path)
            elif previous is not None and m.line > previous.line + 1:
                rows.append(("⋯", "", ""))
            number = str(m.line) if m.context else m.link(self.base_path, str(m.line), m.line)
            rows.append((number, _mark_spans(m.text, m.spans), MUTED if m.context else ""))
            previous = m
        flush()
        return "".join(blocks)


def _mark_spans(text: str, spans: Sequence[tuple[int, int]]) -> str:
    out: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        if start < pos:
            continue
        out.append(esc(text[pos:start]))
        out.append(f'<mark style="{MARK}">{esc(text[start:end])}</mark>')
        pos = end
    out.append(esc(text[pos:]))
    return "".join(out)
