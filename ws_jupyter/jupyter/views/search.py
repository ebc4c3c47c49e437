"""Views of search: ``%ws search`` results with highlighted snippets, ``%ws index``, and the
highlighting and snippet choice the SearchPanel uses too.

A hit's snippet is :meth:`SearchResult.snippet` — the lines of its reported range (so the lines
under ``guide.md:18-20`` are lines 18 to 20), indentation kept, a line of context either side, the
words the index matched marked (stopwords never are). ``snippet_of``/``highlight_terms`` remain for
texts that are not search hits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .base import RichView
from .common import BORDER, MARK, MONO, MUTED, cell_link, esc, format_duration

__all__ = ["IndexView", "SearchResultsView", "highlight_terms", "hit_snippet", "snippet_of"]


_STEM_CACHE: dict[str, str] = {}
_ANALYZER: list[Callable[[str], list[str]]] = []
_STOPWORDS: list[frozenset[str]] = []


def _stem(word: str) -> str:
    """The BM25 analyzer's form of one word (so highlighting agrees with what matched)."""
    key = word.lower()
    cached = _STEM_CACHE.get(key)
    if cached is not None:
        return cached
    if not _ANALYZER:
        try:
            from ... import BM25Config
            from ...search.tokenizer import Analyzer

            _ANALYZER.append(Analyzer(BM25Config(stopwords=frozenset(), min_token_length=1)))
        except Exception:  # search not importable: compare lowercase words
            _ANALYZER.append(lambda text: [text])
    tokens = _ANALYZER[0](key)
    value = tokens[0] if tokens else key
    if len(_STEM_CACHE) < 50_000:
        _STEM_CACHE[key] = value
    return value


_WORD = re.compile(r"\w+", re.UNICODE)


def _query_terms(query: str) -> set[str]:
    """The query's words as BM25 matches them: stemmed, without stopwords ("which", "the", "is"
    match nothing, so they are not marked and do not pick the snippet)."""
    if not _STOPWORDS:
        try:
            from ... import BM25Config

            _STOPWORDS.append(BM25Config().stopwords)
        except Exception:  # search not importable
            _STOPWORDS.append(frozenset())
    return {_stem(w) for w in _WORD.findall(query) if len(w) > 1 and w.lower() not in _STOPWORDS[0]}


def highlight_terms(text: str, query: str) -> str:
    """HTML-escapes ``text`` and wraps the words matching the query's terms in ``<mark>``.

    Words are compared after stemming, so "networks" in a query marks "network" and "networking";
    the query's stopwords mark nothing.
    """
    terms = _query_terms(query)
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


def snippet_of(content: str, query: str, max_lines: int = 4, max_chars: int = 400) -> tuple[str, int]:
    """The few lines of ``content`` that best show why it matched, and their offset in lines."""
    terms = _query_terms(query)
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


def hit_snippet(hit: Any, query: str, max_lines: int = 4, context: int = 1) -> tuple[str, str]:
    """``(text, html)`` of a search hit's snippet: its reported lines (at most ``max_lines``) with
    ``context`` lines either side (muted in the HTML), the matched words in ``<mark>``."""
    snippet_fn = getattr(hit, "snippet", None)
    if not callable(snippet_fn):  # not a SearchResult: choose lines by the query's words
        text, _ = snippet_of(str(getattr(hit, "content", "")), query, max_lines=max_lines)
        return text, highlight_terms(text, query)
    snippet = snippet_fn(context=context, max_lines=max_lines)
    texts, rows = [], []
    for line in snippet.lines:
        body = line.text + (" …" if line.cut else "")
        texts.append(body)
        out, pos = [], 0
        for start, end in line.marks:
            out.append(esc(line.text[pos:start]))
            out.append(f'<mark style="{MARK}">{esc(line.text[start:end])}</mark>')
            pos = end
        out.append(esc(line.text[pos:]) + (" …" if line.cut else ""))
        marked = "".join(out)
        rows.append(marked if line.in_range else f'<span style="{MUTED}">{marked}</span>')
    if snippet.omitted:
        more = f"… ({snippet.omitted} more line{'' if snippet.omitted == 1 else 's'} in range)"
        texts.append(more)
        rows.append(f'<span style="{MUTED}">{esc(more)}</span>')
    return "\n".join(texts), "\n".join(rows)


@dataclass(repr=False)
class SearchResultsView(RichView):
    """``%ws search``: ranked hits with ``path:lines``, score and a highlighted snippet."""

    query: str
    mode: str
    results: list[Any]
    base_path: str | None = None
    empty_hint: str = ""
    more_hint: str = ""  # how to see more hits, when there are more
    kind = "search"

    def title(self) -> str:
        return f"search “{self.query}”"

    def meta(self) -> str:
        n = len(self.results)
        return f"{n} result{'' if n == 1 else 's'} ({self.mode})"

    def _where(self, r: Any) -> str:
        location = getattr(r, "location", None)  # nb.ipynb [cell 4]:2-5 for a notebook cell
        if isinstance(location, str):
            return location
        lr = getattr(r, "line_range", None)
        return f"{r.source}:{lr[0]}-{lr[1]}" if lr else r.source

    def _link(self, r: Any, label: str) -> str:
        """The hit's file; a notebook cell opens in JupyterLab at that cell (``#cell-id=``)."""
        lr = getattr(r, "line_range", None)
        cell_id = (getattr(r, "metadata", None) or {}).get("cell_id")
        return cell_link(self.base_path, r.source, label, cell_id if isinstance(cell_id, str) else None, lr[0] if lr else None)

    def text(self) -> str:
        if not self.results:
            return f"No results for {self.query!r} ({self.mode}). {self.empty_hint}".rstrip()
        lines = []
        for i, r in enumerate(self.results, 1):
            snippet, _ = hit_snippet(r, self.query, max_lines=2, context=0)
            lines.append(f"{i:>2}. {self._where(r)}  score {r.score:.4f}")
            lines += [f"      {s}" for s in snippet.splitlines()]
        lines.append("---")
        lines.append(self.meta())
        if self.more_hint:
            lines.append(self.more_hint)
        return "\n".join(lines)

    def html_body(self) -> str:
        if not self.results:
            return f'<div style="{MUTED}">No results. {esc(self.empty_hint)}</div>'
        items = []
        for i, r in enumerate(self.results, 1):
            _, snippet_html = hit_snippet(r, self.query)
            label = self._where(r)
            details = _score_details(r)
            items.append(
                f'<div style="margin: 6px 0; padding-left: 6px; border-left: 3px solid {BORDER}">'
                f'<div><span style="{MUTED}">{i}.</span> {self._link(r, label)}'
                f' <span style="{MUTED}; font-size: 0.9em" title="{esc(details)}">score {r.score:.4f}</span></div>'
                f'<div style="white-space: pre-wrap; {MONO}">{snippet_html}</div></div>'
            )
        if self.more_hint:
            items.append(f'<div style="{MUTED}; font-size: 0.9em">{esc(self.more_hint)}</div>')
        return "".join(items)


def _score_details(result: Any) -> str:
    details = getattr(result, "score_details", None) or {}
    parts = []
    for side in ("bm25", "vector"):
        d = details.get(side)
        if isinstance(d, Mapping):
            parts.append(f"{side}: rank {d.get('rank')}, score {float(d.get('score', 0)):.4f}")
    return "; ".join(parts)


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

