"""Rich displays for everything ``%ws`` shows — the one place that knows about HTML.

The workspace's own result types (``CommandResult``, ``SearchResult``, ``WorkspaceInfo``...) know
nothing of Jupyter. Here, each ``%ws`` subcommand gets a small *view* object holding the data it
shows (so code can use it: ``r = %ws run make``; ``r.exit_code``) with three renderings:

* ``_repr_html_`` for JupyterLab, Notebook 7, VS Code and nbconvert (inline styles that follow the
  JupyterLab theme through its CSS variables, with fallbacks elsewhere);
* ``_repr_markdown_`` for front-ends that prefer Markdown;
* ``__repr__``: plain text for terminal IPython and logs.

``register_formatters(shell)`` also teaches IPython to render the core result types when a user
displays them directly (``ws.search("...")`` as a cell's last line). Paths in listings, matches
and search results are links relative to the kernel's working directory, which JupyterLab opens
in its editor.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

__all__ = [
    "DoctorView",
    "FileView",
    "GrepMatch",
    "GrepView",
    "IndexView",
    "InfoView",
    "JSONView",
    "LogView",
    "MessageView",
    "ProcessTableView",
    "RichView",
    "RunSummary",
    "SearchResultsView",
    "SkillTableView",
    "SkillView",
    "ToolCallView",
    "ToolTableView",
    "TreeView",
    "format_bytes",
    "format_duration",
    "highlight_terms",
    "one_line",
    "path_link",
    "process_state",
    "register_formatters",
    "unregister_formatters",
]

# --- small helpers ------------------------------------------------------------------------------

MUTED = "color: var(--jp-ui-font-color2, #6a737d)"
MONO = "font-family: var(--jp-code-font-family, SFMono-Regular, Menlo, Consolas, monospace); font-size: var(--jp-code-font-size, 12.5px)"
BORDER = "var(--jp-border-color2, #e0e0e0)"
OK = "#1a7f37"
BAD = "#cf222e"
WARN = "#9a6700"
MARK = "background: rgba(255, 200, 0, 0.45); color: inherit; padding: 0 1px; border-radius: 2px"


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


def path_link(base_path: str | None, rel: str, text: str | None = None, line: int | None = None) -> str:
    """An ``<a>`` to a workspace file, relative to the kernel's working directory.

    JupyterLab opens such links in its editor (relative links in outputs resolve against the
    notebook's directory, which is where the kernel runs). Without a host base path (a remote
    filesystem) the path is shown as plain text.
    """
    label = esc(text if text is not None else rel)
    if not base_path:
        return f'<span style="{MONO}">{label}</span>'
    target = os.path.relpath(os.path.join(base_path, rel), os.getcwd())
    title = rel + (f":{line}" if line else "")
    return (
        f'<a href="{esc(quote(target))}" title="{esc(title)}" '
        f'style="text-decoration: none; color: var(--jp-content-link-color, #0969da)">{label}</a>'
    )


def base_path_of(workspace: Any) -> str | None:
    """The host directory of a workspace's filesystem, when it has one (for links)."""
    fs = getattr(workspace, "filesystem", None)
    base = getattr(fs, "base_path", None)
    return str(base) if base else None


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, numeric: Sequence[int] = ()) -> str:
    head = "".join(
        f'<th style="text-align: {"right" if i in numeric else "left"}; padding: 2px 10px 2px 0; '
        f'border-bottom: 1px solid {BORDER}; font-weight: 600">{esc(h)}</th>'
        for i, h in enumerate(headers)
    )
    body = []
    for row in rows:
        cells = "".join(
            f'<td style="text-align: {"right" if i in numeric else "left"}; padding: 2px 10px 2px 0; '
            f'vertical-align: top">{cell}</td>'
            for i, cell in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return (
        '<table style="border-collapse: collapse; margin: 2px 0; font-size: inherit">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _badge(text: str, colour: str) -> str:
    return (
        f'<span style="display: inline-block; padding: 0 6px; border-radius: 8px; border: 1px solid {colour}; '
        f'color: {colour}; font-size: 0.9em">{esc(text)}</span>'
    )


def _text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def fmt(row: Sequence[str]) -> str:
        return "  ".join(
            (cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])) for i, cell in enumerate(row)
        ).rstrip()

    return "\n".join([fmt(headers), *(fmt(r) for r in rows)])


_STEM_CACHE: dict[str, str] = {}
_ANALYZER: list[Callable[[str], list[str]]] = []


def _stem(word: str) -> str:
    """The BM25 analyzer's form of one word (so highlighting agrees with what matched)."""
    key = word.lower()
    cached = _STEM_CACHE.get(key)
    if cached is not None:
        return cached
    if not _ANALYZER:
        try:
            from .. import BM25Config
            from ..search.tokenizer import Analyzer

            _ANALYZER.append(Analyzer(BM25Config(stopwords=frozenset(), min_token_length=1)))
        except Exception:  # search not importable: compare lowercase words
            _ANALYZER.append(lambda text: [text])
    tokens = _ANALYZER[0](key)
    value = tokens[0] if tokens else key
    if len(_STEM_CACHE) < 50_000:
        _STEM_CACHE[key] = value
    return value


_WORD = re.compile(r"\w+", re.UNICODE)


def highlight_terms(text: str, query: str) -> str:
    """HTML-escapes ``text`` and wraps the words matching the query's terms in ``<mark>``.

    Words are compared after stemming, so "networks" in a query marks "network" and "networking".
    """
    terms = {_stem(w) for w in _WORD.findall(query) if len(w) > 1}
    out: list[str] = []
    pos = 0
    for m in _WORD.finditer(text):
        out.append(esc(text[pos : m.start()]))
        word = m.group(0)
        if len(word) > 1 and _stem(word) in terms:
            out.append(f'<mark style="{MARK}">{esc(word)}</mark>')
        else:
            out.append(esc(word))
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


# --- the base view ------------------------------------------------------------------------------


class RichView:
    """A displayable result: subclasses give ``title``/``meta``, an HTML body and a text form."""

    kind = "view"

    def title(self) -> str:
        return ""

    def meta(self) -> str:
        return ""

    def html_body(self) -> str:
        return f'<pre style="{MONO}; margin: 0">{esc(self.text())}</pre>'

    def text(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        header = ""
        if self.title() or self.meta():
            header = (
                '<div style="margin-bottom: 4px">'
                f"<strong>{esc(self.title())}</strong>"
                + (f' <span style="{MUTED}">{esc(self.meta())}</span>' if self.meta() else "")
                + "</div>"
            )
        return f'<div class="ws-jupyter ws-{self.kind}" style="line-height: 1.45">{header}{self.html_body()}</div>'

    def _repr_markdown_(self) -> str:
        head = f"**{self.title()}** {self.meta()}".strip()
        text = self.text().replace("```", "`\u200b``")
        return (head + "\n\n" if head else "") + f"```text\n{text}\n```"


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

    def _repr_markdown_(self) -> str:
        return self.message


# --- workspace info -----------------------------------------------------------------------------


@dataclass(repr=False)
class InfoView(RichView):
    """``%ws info``: key/value rows."""

    heading: str
    rows: list[tuple[str, str]]
    kind = "info"

    def title(self) -> str:
        return self.heading

    def text(self) -> str:
        width = max((len(k) for k, _ in self.rows), default=0)
        return "\n".join([self.heading, *(f"  {k:<{width}}  {v}" for k, v in self.rows)])

    def html_body(self) -> str:
        rows = "".join(
            f'<tr><td style="{MUTED}; padding: 1px 14px 1px 0; vertical-align: top">{esc(k)}</td>'
            f'<td style="padding: 1px 0">{esc(v)}</td></tr>'
            for k, v in self.rows
        )
        return f'<table style="border-collapse: collapse">{rows}</table>'

    def _repr_markdown_(self) -> str:
        lines = [f"**{self.heading}**", "", "| | |", "|---|---|"]
        lines += ["| " + k + " | " + v.replace("|", "\\|") + " |" for k, v in self.rows]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, str]:
        return dict(self.rows)


def info_rows(info: Any) -> list[tuple[str, str]]:
    """Rows for a ``WorkspaceInfo`` (duck-typed, so other providers' infos render too)."""
    rows: list[tuple[str, str]] = [("id", str(info.id)), ("status", str(info.status))]
    fs = getattr(info, "filesystem", None)
    if fs == "dynamic":
        rows.append(("filesystem", "dynamic (resolved per request)"))
    elif fs is not None:
        desc = f"{fs.provider} · {fs.base_path or ''}".rstrip(" ·")
        if getattr(fs, "read_only", False):
            desc += " · read-only"
        rows.append(("filesystem", desc))
        if getattr(fs, "total_files", None) is not None:
            rows.append(("files", f"{fs.total_files:,}"))
    sb = getattr(info, "sandbox", None)
    if sb == "dynamic":
        rows.append(("sandbox", "dynamic (resolved per request)"))
    elif sb is not None:
        rows.append(("sandbox", f"{sb.provider} · {sb.status}"))
        rows.append(("isolation", str(getattr(sb, "isolation", "none"))))
        if getattr(sb, "working_directory", None):
            rows.append(("working directory", str(sb.working_directory)))
        warning = (getattr(sb, "metadata", None) or {}).get("warning")
        if warning:
            rows.append(("warning", str(warning)))
    search = getattr(info, "search", None)
    if search:
        rows.append(("search", ", ".join(search.get("modes", [])) or "none"))
        if "documents" in search:
            rows.append(("index size", f"{search['documents']:,} documents"))
    else:
        rows.append(("search", "not configured"))
    skills = getattr(info, "skills", None)
    if skills is not None:
        rows.append(("skills", str(skills.get("count", "?"))))
    for what, err in (getattr(info, "errors", None) or {}).items():
        rows.append((f"{what} error", err))
    created = getattr(info, "created_at", None)
    if isinstance(created, datetime):
        rows.append(("created", created.astimezone().strftime("%Y-%m-%d %H:%M:%S")))
    return rows


# --- file tree ----------------------------------------------------------------------------------


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

    def _repr_markdown_(self) -> str:
        return f"```text\n{self.text()}\n```"


# --- one file -----------------------------------------------------------------------------------


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

    def _numbered(self) -> list[tuple[int | None, str]]:
        out: list[tuple[int | None, str]] = []
        n = self.first_line
        for line in self.lines:
            if self.omitted and n == self.omitted[0]:
                out.append((None, f"… {self._omitted_count()} lines not shown (use --lines A:B) …"))
                n = self.omitted[1] + 1
            out.append((n, line))
            n += 1
        return out

    def text(self) -> str:
        head = f"{self.path} ({self.meta()})"
        if self.text_content is None:
            return head + ("" if self.is_image else "\nbinary file: not shown as text")
        width = len(str(self.first_line + len(self.lines) + self._omitted_count()))
        body = [f"{'' if n is None else n:>{width}}  {line}" for n, line in self._numbered()]
        return "\n".join([head, *body])

    def html_body(self) -> str:
        if self.is_image:
            assert self.data is not None
            encoded = base64.b64encode(self.data).decode()
            return f'<img src="data:{esc(self.mime_type)};base64,{encoded}" style="max-width: 100%"/>'
        if self.text_content is None:
            return f'<div style="{MUTED}">Binary file ({esc(self.mime_type)}): not shown as text.</div>'
        rows = []
        for n, line in self._numbered():
            number = "" if n is None else str(n)
            style = MUTED + "; font-style: italic" if n is None else ""
            if n is not None and n == self.highlight:
                style = MARK
            rows.append(
                f'<tr style="background: none"><td style="{MUTED}; text-align: right; padding: 0 10px 0 0; '
                f'user-select: none; vertical-align: top; border: none; line-height: 1.4">{number}</td>'
                f'<td style="white-space: pre-wrap; word-break: break-all; padding: 0; border: none; '
                f'text-align: left; line-height: 1.4; {style}">{esc(line) or "&#8203;"}</td></tr>'
            )
        return (
            f'<div style="max-height: 32em; overflow: auto; border: 1px solid {BORDER}; padding: 4px 6px">'
            f'<table style="border-collapse: collapse; {MONO}">{"".join(rows)}</table></div>'
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {"text/plain": self.text()}
        if self.is_image and self.mime_type in ("image/png", "image/jpeg", "image/gif"):
            assert self.data is not None
            bundle[self.mime_type] = base64.b64encode(self.data).decode()
        elif self.is_image and self.mime_type == "image/svg+xml" and self.data is not None:
            bundle["image/svg+xml"] = self.data.decode("utf-8", "replace")
        else:
            bundle["text/html"] = self._repr_html_()
            bundle["text/markdown"] = self._repr_markdown_()
        return bundle


# --- grep ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GrepMatch:
    """One matching (or context) line. ``spans`` are the match offsets within ``text``."""

    path: str
    line: int
    text: str
    column: int | None = None
    spans: tuple[tuple[int, int], ...] = ()
    context: bool = False


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
                seen.setdefault(m.path, None)
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
        rows: list[str] = []

        def flush() -> None:
            if current is not None:
                blocks.append(
                    f'<div style="margin: 4px 0 2px 0">{path_link(self.base_path, current)}</div>'
                    f'<table style="border-collapse: collapse; {MONO}">{"".join(rows)}</table>'
                )

        previous: GrepMatch | None = None
        for m in self.matches:
            if m.path != current:
                flush()
                current, rows = m.path, []
            elif previous is not None and m.line > previous.line + 1:
                rows.append(f'<tr><td style="{MUTED}">⋯</td><td></td></tr>')
            text = _mark_spans(m.text, m.spans)
            style = MUTED if m.context else ""
            rows.append(
                f'<tr><td style="{MUTED}; text-align: right; padding-right: 10px; user-select: none">'
                f"{path_link(self.base_path, m.path, str(m.line), m.line) if not m.context else m.line}</td>"
                f'<td style="white-space: pre-wrap; {style}">{text}</td></tr>'
            )
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
    return "".join(out) or "&#8203;"


# --- commands and processes ---------------------------------------------------------------------


@dataclass(repr=False)
class RunSummary(RichView):
    """``%ws run``: the outcome line shown after the streamed output (which it also keeps).

    ``streamed`` says the output already appeared in the cell, so only the status line is drawn.
    """

    command: str
    exit_code: int | None
    duration: float
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    killed: bool = False
    interrupted: bool = False
    streamed: bool = True
    kind = "run"

    @classmethod
    def of(
        cls,
        result: Any,
        *,
        command: str | None = None,
        duration: float | None = None,
        streamed: bool = False,
        interrupted: bool = False,
    ) -> RunSummary:
        """The summary of a ``CommandResult`` (``duration``: its ``execution_time_ms`` unless given)."""
        return cls(
            command=getattr(result, "command", "") if command is None else command,
            exit_code=result.exit_code,
            duration=float(getattr(result, "execution_time_ms", 0.0)) / 1000
            if duration is None
            else duration,
            stdout=result.stdout,
            stderr=result.stderr,
            timed_out=bool(getattr(result, "timed_out", False)),
            killed=bool(getattr(result, "killed", False)) and not interrupted,
            interrupted=interrupted,
            streamed=streamed,
        )

    @property
    def success(self) -> bool:
        return self.exit_code == 0 and not (self.timed_out or self.killed or self.interrupted)

    def status(self) -> str:
        when = format_duration(self.duration)
        if self.interrupted:
            return f"interrupted after {when}: process tree killed"
        if self.timed_out:
            return f"timed out after {when} (exit {self.exit_code})"
        if self.killed:
            return f"killed after {when} (exit {self.exit_code})"
        return f"exit {self.exit_code} · {when}"

    def text(self) -> str:
        lines = []
        if not self.streamed:
            if self.stdout:
                lines.append(self.stdout.rstrip("\n"))
            if self.stderr:
                lines.append(self.stderr.rstrip("\n"))
        lines.append(("✓ " if self.success else "✗ ") + self.status())
        return "\n".join(lines)

    def html_body(self) -> str:
        colour = OK if self.success else BAD
        out = ""
        if not self.streamed and (self.stdout or self.stderr):
            out = f'<pre style="{MONO}; margin: 0 0 4px 0; white-space: pre-wrap">{esc(self.stdout)}'
            if self.stderr:
                out += f'<span style="color: {BAD}">{esc(self.stderr)}</span>'
            out += "</pre>"
        return (
            f'{out}<div style="{MUTED}; font-size: 0.92em">{_badge("✓" if self.success else "✗", colour)} '
            f"{esc(self.status())}</div>"
        )

    def _repr_markdown_(self) -> str:
        return ("✓ " if self.success else "✗ ") + self.status()


def process_state(process: Any) -> str:
    """``running``, ``exited`` (0), ``failed`` (non-zero), ``killed`` or ``timed out``.

    ``process`` is a ``ProcessHandle`` or a ``ProcessInfo``: the state comes from what the sandbox
    recorded (``killed``, ``timed_out``), so ``%ws ps``, the process monitor and the live output
    widget of one process always agree.
    """
    if process.exit_code is None:
        return "running"
    if getattr(process, "timed_out", False):
        return "timed out"
    if getattr(process, "killed", False):
        return "killed"
    return "exited" if process.exit_code == 0 else "failed"


STATE_COLOURS = {"running": OK, "failed": BAD, "killed": WARN, "timed out": WARN}


@dataclass(frozen=True)
class ProcessRow:
    pid: int
    command: str
    state: str
    runtime: float | None
    exit_code: int | None

    @classmethod
    def from_info(cls, info: Any) -> ProcessRow:
        return cls(
            pid=int(info.pid),
            command=str(info.command),
            state=process_state(info),
            runtime=getattr(info, "runtime_seconds", None),
            exit_code=info.exit_code,
        )


@dataclass(repr=False)
class ProcessTableView(RichView):
    """``%ws ps``: one row per background process."""

    rows: list[ProcessRow]
    kind = "ps"

    def title(self) -> str:
        return "Background processes"

    def meta(self) -> str:
        running = sum(1 for r in self.rows if r.state == "running")
        return f"{len(self.rows)} total, {running} running"

    def _cells(self) -> list[list[str]]:
        return [
            [
                str(r.pid),
                r.state,
                format_duration(r.runtime),
                "" if r.exit_code is None else str(r.exit_code),
                r.command,
            ]
            for r in self.rows
        ]

    def text(self) -> str:
        if not self.rows:
            return "No background processes."
        return _text_table(["PID", "STATE", "RUNTIME", "EXIT", "COMMAND"], self._cells(), numeric=(0, 3))

    def html_body(self) -> str:
        if not self.rows:
            return (
                f'<div style="{MUTED}">No background processes. Start one with <code>%ws bg CMD</code>.</div>'
            )
        rows = [
            [
                f'<span style="{MONO}">{esc(c[0])}</span>',
                f'<span style="color: {STATE_COLOURS.get(c[1], "inherit")}">{esc(c[1])}</span>',
                esc(c[2]),
                esc(c[3]),
                f'<span style="{MONO}">{esc(c[4])}</span>',
            ]
            for c in self._cells()
        ]
        return _table(["PID", "state", "runtime", "exit", "command"], rows, numeric=(0, 3))


@dataclass(repr=False)
class LogView(RichView):
    """``%ws logs``: a process's retained output (stdout, then stderr)."""

    pid: int
    command: str
    stdout: str
    stderr: str
    running: bool
    exit_code: int | None
    shown: str = ""
    kind = "logs"

    def title(self) -> str:
        return f"PID {self.pid}: {self.command}"

    def meta(self) -> str:
        state = "running" if self.running else f"exited ({self.exit_code})"
        return " · ".join(x for x in (state, self.shown) if x)

    def text(self) -> str:
        parts = [f"{self.title()} [{self.meta()}]"]
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append("stderr:\n" + self.stderr.rstrip("\n"))
        if not self.stdout and not self.stderr:
            parts.append("(no output yet)")
        return "\n".join(parts)

    def html_body(self) -> str:
        if not self.stdout and not self.stderr:
            return f'<div style="{MUTED}">(no output yet)</div>'
        body = f'<pre style="{MONO}; margin: 0; white-space: pre-wrap; max-height: 30em; overflow: auto">{esc(self.stdout)}'
        if self.stderr:
            body += f'<span style="color: {BAD}">{esc(self.stderr)}</span>'
        return body + "</pre>"


# --- search -------------------------------------------------------------------------------------


def snippet_of(content: str, query: str, max_lines: int = 4, max_chars: int = 400) -> tuple[str, int]:
    """The few lines of ``content`` that best show why it matched, and their offset in lines."""
    terms = {_stem(w) for w in _WORD.findall(query) if len(w) > 1}
    lines = content.splitlines() or [content]
    best, best_score = 0, -1
    for i in range(len(lines)):
        window = " ".join(lines[i : i + max_lines])
        score = sum(1 for w in _WORD.findall(window) if _stem(w) in terms)
        if score > best_score:
            best, best_score = i, score
        if i > 400:  # long chunks: good enough
            break
    text = "\n".join(line.strip() for line in lines[best : best + max_lines] if line.strip())
    if len(text) > max_chars:
        text = text[: max_chars - 1] + "…"
    return text, best


@dataclass(repr=False)
class SearchResultsView(RichView):
    """``%ws search``: ranked hits with ``path:lines``, score and a highlighted snippet."""

    query: str
    mode: str
    results: list[Any]
    base_path: str | None = None
    empty_hint: str = ""
    kind = "search"

    def title(self) -> str:
        return f"search “{self.query}”"

    def meta(self) -> str:
        n = len(self.results)
        return f"{n} result{'' if n == 1 else 's'} ({self.mode})"

    def _where(self, r: Any) -> str:
        lr = getattr(r, "line_range", None)
        return f"{r.source}:{lr[0]}-{lr[1]}" if lr else r.source

    def text(self) -> str:
        if not self.results:
            return f"No results for {self.query!r} ({self.mode}). {self.empty_hint}".rstrip()
        lines = []
        for i, r in enumerate(self.results, 1):
            snippet, _ = snippet_of(r.content, self.query, max_lines=2, max_chars=200)
            lines.append(f"{i:>2}. {self._where(r)}  score {r.score:.4f}")
            lines += [f"      {s}" for s in snippet.splitlines()]
        lines.append("---")
        lines.append(self.meta())
        return "\n".join(lines)

    def html_body(self) -> str:
        if not self.results:
            return f'<div style="{MUTED}">No results. {esc(self.empty_hint)}</div>'
        items = []
        for i, r in enumerate(self.results, 1):
            snippet, _ = snippet_of(r.content, self.query)
            lr = getattr(r, "line_range", None)
            label = self._where(r)
            details = _score_details(r)
            items.append(
                f'<div style="margin: 6px 0; padding-left: 6px; border-left: 3px solid {BORDER}">'
                f'<div><span style="{MUTED}">{i}.</span> {path_link(self.base_path, r.source, label, lr[0] if lr else None)}'
                f' <span style="{MUTED}; font-size: 0.9em" title="{esc(details)}">score {r.score:.4f}</span></div>'
                f'<div style="white-space: pre-wrap; {MONO}">{highlight_terms(snippet, self.query)}</div></div>'
            )
        return "".join(items)


def _score_details(result: Any) -> str:
    details = getattr(result, "score_details", None) or {}
    parts = []
    for side in ("bm25", "vector"):
        d = details.get(side)
        if isinstance(d, Mapping):
            parts.append(f"{side}: rank {d.get('rank')}, score {float(d.get('score', 0)):.4f}")
    return "; ".join(parts)


# --- core types displayed directly ---------------------------------------------------------------


def _command_result_html(result: Any) -> str:
    return RunSummary.of(result)._repr_html_()


def _search_result_html(result: Any) -> str:
    return SearchResultsView(query="", mode="result", results=[result])._repr_html_()


def _workspace_info_html(info: Any) -> str:
    return InfoView(f"Workspace {info.name}", info_rows(info))._repr_html_()


_HTML_FORMATTERS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("ws_jupyter.sandbox.types", "CommandResult", _command_result_html),
    ("ws_jupyter.search.results", "SearchResult", _search_result_html),
    ("ws_jupyter.workspace", "WorkspaceInfo", _workspace_info_html),
]


def _skill_markdown(skill: Any) -> str:
    return SkillView(skill)._repr_markdown_()


_MARKDOWN_FORMATTERS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("ws_jupyter.skills.model", "Skill", _skill_markdown),
]


def register_formatters(shell: Any) -> None:
    """Teaches ``shell`` to render the core result types (by name: nothing is imported)."""
    formatters = shell.display_formatter.formatters
    for module, name, fn in _HTML_FORMATTERS:
        formatters["text/html"].for_type_by_name(module, name, fn)
    for module, name, mfn in _MARKDOWN_FORMATTERS:
        formatters["text/markdown"].for_type_by_name(module, name, mfn)


def unregister_formatters(shell: Any) -> None:
    formatters = shell.display_formatter.formatters
    tables: list[tuple[str, list[Any]]] = [
        ("text/html", _HTML_FORMATTERS),
        ("text/markdown", _MARKDOWN_FORMATTERS),
    ]
    for mime, table in tables:
        fmt = formatters[mime]
        for module, name, _ in table:
            fmt.deferred_printers.pop((module, name), None)
            for typ in list(fmt.type_printers):
                if getattr(typ, "__module__", None) == module and typ.__name__ == name:
                    fmt.type_printers.pop(typ, None)


def to_json_text(value: Any) -> str:
    """Pretty JSON for schemas and tool arguments (non-JSON values as their repr)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=repr)


# --- indexing -----------------------------------------------------------------------------------


@dataclass(repr=False)
class IndexView(RichView):
    """``%ws index``: what one incremental indexing pass did."""

    paths: list[str]
    indexed: int
    unchanged: int
    removed: int
    skipped: int
    chunks: int
    seconds: float
    documents: int | None = None
    kind = "index"

    def title(self) -> str:
        return "Indexed " + ", ".join(self.paths)

    def text(self) -> str:
        parts = [f"{self.indexed} file{'' if self.indexed == 1 else 's'} indexed ({self.chunks} chunks)"]
        parts.append(f"{self.unchanged} unchanged")
        if self.removed:
            parts.append(f"{self.removed} removed")
        if self.skipped:
            parts.append(f"{self.skipped} skipped (binary or too large)")
        text = ", ".join(parts) + f" in {format_duration(self.seconds)}"
        if self.documents is not None:
            text += f"; the index holds {self.documents:,} documents"
        return text

    def html_body(self) -> str:
        return f"<div>{esc(self.text())}</div>"

    def _repr_markdown_(self) -> str:
        return f"**{self.title()}**: {self.text()}"


# --- skills -------------------------------------------------------------------------------------


@dataclass(repr=False)
class SkillTableView(RichView):
    """``%ws skills --list``: one row per skill, then the problems found while loading skills."""

    skills: list[Any]
    issues: list[Any] = field(default_factory=list)
    kind = "skills"

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.skills]

    def title(self) -> str:
        return "Skills"

    def meta(self) -> str:
        n = len(self.skills)
        text = f"{n} skill{'' if n == 1 else 's'}"
        problems = [i for i in self.issues if getattr(i, "is_error", True)]
        if problems:
            text += f", {len(problems)} problem{'' if len(problems) == 1 else 's'}"
        return text

    def text(self) -> str:
        rows = [[s.name, s.source_kind, s.path, one_line(s.description, 70)] for s in self.skills]
        out = _text_table(["NAME", "SOURCE", "PATH", "DESCRIPTION"], rows) if rows else "No skills."
        for issue in self.issues:
            out += f"\n! {issue.kind}: {issue.message}"
        return out

    def html_body(self) -> str:
        if not self.skills:
            body = f'<div style="{MUTED}">No skills found.</div>'
        else:
            rows = [
                [
                    f"<strong>{esc(s.name)}</strong>",
                    esc(one_line(s.description, 160)),
                    f'<span style="{MUTED}">{esc(s.source_kind)}</span>',
                    f'<span style="{MONO}">{esc(s.path)}</span>',
                    esc(_count_files(s)),
                ]
                for s in self.skills
            ]
            body = _table(["name", "description", "source", "path", "files"], rows)
        for issue in self.issues:
            colour = BAD if getattr(issue, "is_error", True) else WARN
            body += f'<div style="color: {colour}">! {esc(issue.kind)}: {esc(issue.message)}</div>'
        return body


def one_line(text: str, width: int) -> str:
    """``text`` on one line (whitespace collapsed), cut with "…" to at most ``width`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _count_files(skill: Any) -> str:
    bits = []
    for label, items in (("refs", skill.references), ("scripts", skill.scripts), ("assets", skill.assets)):
        if items:
            bits.append(f"{len(items)} {label}")
    return ", ".join(bits)


@dataclass(repr=False)
class SkillView(RichView):
    """``%ws skill NAME``: the skill rendered as Markdown (instructions, then its files)."""

    skill: Any
    kind = "skill"

    def title(self) -> str:
        return self.skill.name

    def meta(self) -> str:
        return f"{self.skill.source_kind} · {self.skill.path}"

    def _repr_markdown_(self) -> str:
        s = self.skill
        lines = [f"### {s.name}", "", f"*{s.description}*", ""]
        facts = [f"`{s.path}` ({s.source_kind})"]
        if s.license:
            facts.append(f"license: {s.license}")
        if s.compatibility:
            facts.append(f"compatibility: {s.compatibility}")
        if s.allowed_tools:
            facts.append("allowed tools: " + ", ".join(f"`{t}`" for t in s.allowed_tools))
        lines += [" · ".join(facts), "", "---", "", s.to_markdown()]
        return "\n".join(lines)

    def text(self) -> str:
        s = self.skill
        return f"{s.name} ({s.source_kind}, {s.path})\n{s.description}\n\n{s.to_markdown()}"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # Markdown is the faithful rendering of a SKILL.md: offer it without an HTML rival.
        return {"text/markdown": self._repr_markdown_(), "text/plain": self.text()}


# --- tools --------------------------------------------------------------------------------------


@dataclass(repr=False)
class ToolTableView(RichView):
    """``%ws tools``: the agent tools as a model sees them (name, description, schema)."""

    tools: list[Any]
    kind = "tools"

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]

    def title(self) -> str:
        return "Agent tools"

    def meta(self) -> str:
        n = len(self.tools)
        approval = sum(1 for t in self.tools if _needs_approval(t))
        text = f"{n} tool{'' if n == 1 else 's'}"
        if approval:
            text += f", {approval} need approval"
        return text

    def text(self) -> str:
        rows = [
            [
                t.name,
                "yes" if _needs_approval(t) else "",
                ", ".join(_params(t)),
                one_line(t.description, 60),
            ]
            for t in self.tools
        ]
        return _text_table(["NAME", "APPROVAL", "PARAMETERS", "DESCRIPTION"], rows) if rows else "No tools."

    def html_body(self) -> str:
        if not self.tools:
            return f'<div style="{MUTED}">No tools (configure a filesystem, sandbox, search or skills).</div>'
        items = []
        for t in self.tools:
            flag = " " + _badge("approval", WARN) if _needs_approval(t) else ""
            params = ", ".join(_params(t))
            items.append(
                f'<details style="margin: 3px 0"><summary style="cursor: pointer"><strong style="{MONO}">'
                f"{esc(t.name)}</strong>({esc(params)}){flag} "
                f'<span style="{MUTED}">{esc(one_line(t.description, 120))}</span></summary>'
                f'<div style="margin: 4px 0 6px 1.2em"><div style="white-space: pre-wrap">{esc(t.description)}</div>'
                f'<pre style="{MONO}; margin: 4px 0; padding: 4px; border: 1px solid {BORDER}">'
                f"{esc(to_json_text(t.input_schema))}</pre></div></details>"
            )
        return "".join(items)


def _needs_approval(tool: Any) -> bool:
    flag = getattr(tool, "require_approval", False)
    return bool(flag) if not callable(flag) else True


def _params(tool: Any) -> list[str]:
    schema = getattr(tool, "input_schema", None) or {}
    props = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
    required = set(schema.get("required", [])) if isinstance(schema, Mapping) else set()
    return [p if p in required else p + "?" for p in props]


@dataclass(repr=False)
class JSONView(RichView):
    """Tool schemas in a provider's format: JSON (a collapsible tree in JupyterLab)."""

    heading: str
    value: Any
    kind = "json"

    def title(self) -> str:
        return self.heading

    def text(self) -> str:
        return to_json_text(self.value)

    def _repr_json_(self) -> Any:
        return json.loads(json.dumps(self.value, default=repr))

    def _repr_markdown_(self) -> str:
        return f"**{self.heading}**\n\n```json\n{self.text()}\n```"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {
            "application/json": self._repr_json_(),
            "text/markdown": self._repr_markdown_(),
            "text/plain": self.text(),
        }


@dataclass(repr=False)
class ToolCallView(RichView):
    """``%ws call``: a tool's output exactly as the model would receive it."""

    tool: str
    arguments: Any
    output: str
    duration: float
    is_error: bool = False
    media: list[tuple[str, str]] = field(default_factory=list)  # (mime, base64)
    kind = "call"

    @classmethod
    def of(cls, tool: str, arguments: Any, output: Any, duration: float) -> ToolCallView:
        """The view of what ``Tool.run`` returned: text (``ToolErrorText`` marks an error) or a
        ``ToolResult`` with media parts."""
        from ..tools.types import is_error_output, output_text

        media = [(m.mime_type, m.data) for m in getattr(output, "media", ())]
        return cls(tool, arguments, output_text(output), duration, is_error_output(output), media)

    def title(self) -> str:
        return f"{self.tool}({_short_args(self.arguments)})"

    def meta(self) -> str:
        return ("error · " if self.is_error else "") + format_duration(self.duration)

    def text(self) -> str:
        return self.output

    def html_body(self) -> str:
        colour = f"color: {BAD}; " if self.is_error else ""
        body = (
            f'<pre style="{MONO}; {colour}margin: 0; white-space: pre-wrap; max-height: 36em; overflow: auto; '
            f'border-left: 3px solid {BORDER}; padding-left: 8px">{esc(self.output)}</pre>'
        )
        for mime, data in self.media:
            if mime.startswith("image/"):
                body += f'<img src="data:{esc(mime)};base64,{data}" style="max-width: 100%"/>'
        return body

    def _repr_markdown_(self) -> str:
        return f"**{self.title()}** {self.meta()}\n\n```text\n{self.output}\n```"


def _short_args(arguments: Any, width: int = 80) -> str:
    text = json.dumps(arguments, ensure_ascii=False, default=repr)
    if isinstance(arguments, Mapping):
        text = text[1:-1]
    return text if len(text) <= width else text[: width - 1] + "…"


# --- %ws doctor ---------------------------------------------------------------------------------

_DOCTOR_COLOURS = {"ok": OK, "warning": WARN, "missing": WARN, "info": "var(--jp-ui-font-color2, #6a737d)"}


@dataclass(repr=False)
class DoctorView(RichView):
    """The report of ``check_environment()``; ``report`` keeps it (``view.report.ok``, ``.get(name)``)."""

    report: Any
    kind = "doctor"

    @property
    def ok(self) -> bool:
        return bool(self.report.ok)

    def title(self) -> str:
        return "ws-jupyter doctor"

    def meta(self) -> str:
        return self.report.python

    def text(self) -> str:
        return str(self.report.text())

    def html_body(self) -> str:
        rows = []
        for check in self.report.checks:
            if check.failed:
                status = _badge("missing · needed", BAD)
            else:
                status = _badge(check.status, _DOCTOR_COLOURS.get(check.status, "inherit"))
            cost = esc(check.cost) if check.status != "ok" else ""
            fix = f'<code style="{MONO}">{esc(check.fix)}</code>' if check.fix and check.status != "ok" else ""
            rows.append([status, f"<strong>{esc(check.name)}</strong>", esc(check.found), cost, fix])
        colour = BAD if self.report.failed else OK
        summary = f'<div style="color: {colour}; margin-top: 4px">{esc(self.report.summary())}</div>'
        return _table(["", "component", "this environment", "without it", "fix"], rows) + summary
