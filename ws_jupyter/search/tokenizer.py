"""Text analysis for the BM25 index: lowercase, split, drop stopwords and short tokens, stem.

Stemming is what lets "indexing" find "indexed"; it is done with Snowball English (PyStemmer's C
implementation when installed, the pure-Python ``snowballstemmer`` otherwise — same algorithm,
same output). Corpora repeat a small vocabulary many times, so each distinct word is analysed once
(dropped, or stemmed) and remembered: analysing a text is then one regular-expression pass and
lookups done by the interpreter's C loops, not a Python step per word.

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
_WORD_OR_NEWLINE = re.compile(r"[^\W_]+|\n")
_CACHE_LIMIT = 500_000


def split_words(text: str) -> list[str]:
    """Lowercased runs of letters/digits (no stopword removal, no stemming)."""
    return _WORD.findall(text.lower())


def _load_stemmer() -> Callable[[list[str]], list[str]]:
    """Stems a list of words at once (one call into the C stemmer for all of them)."""
    try:
        import Stemmer  # PyStemmer

        stemmer = Stemmer.Stemmer("english")
        return stemmer.stemWords
    except ImportError:  # pragma: no cover - PyStemmer is a declared dependency
        import snowballstemmer

        sb = snowballstemmer.stemmer("english")
        return sb.stemWords


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
        self._stem_words: Callable[[list[str]], list[str]] | None = _load_stemmer() if config.stem else None
        # every word seen -> its term, or "" when it is dropped; "\n" stays "\n" (line_terms)
        self._cache: dict[str, str] = {"\n": "\n"}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, object]:
        # picklable (a SearchResult keeps its analyzer for highlighting): no lock, no cache
        state = dict(self.__dict__)
        state["_cache"] = {"\n": "\n"}
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
        words = _WORD_OR_NEWLINE.findall(text.lower())
        lines = " ".join(filter(None, self._analysed(words))).replace(" \n", "\n").replace("\n ", "\n")
        return lines.split(), lines

    def __call__(self, text: str) -> list[str]:
        if self._custom is not None:
            tokens = self._custom(text)
            if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
                raise SearchError(
                    f"custom tokenizer {getattr(self._custom, '__name__', self._custom)!r} must return "
                    f"a list of strings, got {type(tokens).__name__}"
                )
            return list(tokens)
        return list(filter(None, self._analysed(_WORD.findall(text.lower()))))

    def _analysed(self, words: list[str]) -> list[str]:
        """Each word's term ("" for a dropped one), analysing each distinct new word once."""
        cache = self._cache
        try:
            return list(map(cache.__getitem__, words))  # every word seen before: the usual case
        except KeyError:
            pass
        new = set(words).difference(cache)
        if new:
            if len(cache) + len(new) > _CACHE_LIMIT:
                cache.clear()
                cache["\n"] = "\n"
            stop, n = self._stopwords, self._min
            kept = [w for w in new if len(w) >= n and w not in stop]
            cache.update(dict.fromkeys(new, ""))
            if self._stem_words is None:
                cache.update(zip(kept, kept))
            else:
                with self._lock:  # Snowball stemmer objects are not thread-safe
                    stems = self._stem_words(kept)
                cache.update((w, s if len(s) >= n else "") for w, s in zip(kept, stems))
        return list(map(cache.__getitem__, words))
