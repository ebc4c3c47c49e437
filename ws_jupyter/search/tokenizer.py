"""Text analysis for the BM25 index: lowercase, split, drop stopwords and short tokens, stem.

Stemming is what lets "indexing" find "indexed"; it is done with Snowball English (PyStemmer's C
implementation when installed, the pure-Python ``snowballstemmer`` otherwise — same algorithm,
same output) behind a per-word cache, because corpora repeat a small vocabulary many times.

>>> Analyzer(BM25Config())("The Indexing of indexed files, fast!")
['index', 'index', 'file', 'fast']
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

from ..errors import SearchError
from .config import BM25Config

__all__ = ["Analyzer", "split_words"]

# Letters and digits of any script; "_" and punctuation separate words ("snake_case" -> 2 words).
_WORD = re.compile(r"[^\W_]+")
_CACHE_LIMIT = 500_000


def split_words(text: str) -> list[str]:
    """Lowercased runs of letters/digits (no stopword removal, no stemming)."""
    return _WORD.findall(text.lower())


def _load_stemmer() -> Callable[[str], str]:
    try:
        import Stemmer  # PyStemmer

        stemmer = Stemmer.Stemmer("english")
        return stemmer.stemWord
    except ImportError:  # pragma: no cover - PyStemmer is a declared dependency
        import snowballstemmer

        sb = snowballstemmer.stemmer("english")
        return sb.stemWord


class Analyzer:
    """Callable ``text -> list[str]`` built from a :class:`BM25Config`.

    With ``config.tokenizer`` set, that function is used as is (its output is validated: a
    tokenizer that returns something other than a list of strings raises ``SearchError``).
    """

    def __init__(self, config: BM25Config) -> None:
        self.config = config
        self._custom = config.tokenizer
        self._stopwords = config.stopwords
        self._min = config.min_token_length
        self._stem_word: Callable[[str], str] | None = _load_stemmer() if config.stem else None
        self._cache: dict[str, str] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, object]:
        # picklable (a SearchResult keeps its analyzer for highlighting): no lock, no cache
        state = dict(self.__dict__)
        state["_cache"] = {}
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def splits_on_lines(self) -> bool:
        """True when analysing a text gives the concatenation of analysing each of its lines
        (the default analysis: a newline always separates words). Then one pass per line yields
        both the document's terms and, for free, which line holds each term."""
        return self._custom is None

    def line_terms(self, text: str) -> tuple[list[str], str]:
        """The terms of ``text`` (as ``self(text)``) and its analysed lines: one line per line
        of ``text``, its terms separated by spaces (what :func:`~.chunking.line_range_from_terms`
        scans). Only for :attr:`splits_on_lines` analysers."""
        terms: list[str] = []
        lines: list[str] = []
        for line in text.split("\n"):
            found = self(line) if line else []
            terms += found
            lines.append(" ".join(found))
        return terms, "\n".join(lines)

    def __call__(self, text: str) -> list[str]:
        if self._custom is not None:
            tokens = self._custom(text)
            if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
                raise SearchError(
                    f"custom tokenizer {getattr(self._custom, '__name__', self._custom)!r} must return "
                    f"a list of strings, got {type(tokens).__name__}"
                )
            return list(tokens)
        words = _WORD.findall(text.lower())
        stop = self._stopwords
        n = self._min
        stem = self._stem_word
        if stem is None:
            return [w for w in words if len(w) >= n and w not in stop]
        cache = self._cache
        out: list[str] = []
        append = out.append
        for w in words:
            if len(w) < n or w in stop:
                continue
            s = cache.get(w)
            if s is None:
                with self._lock:  # Snowball stemmer objects are not thread-safe
                    s = stem(w)
                if len(cache) < _CACHE_LIMIT:
                    cache[w] = s
            if len(s) >= n:
                append(s)
        return out
