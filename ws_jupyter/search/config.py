"""``BM25Config``: the immutable settings of the keyword index.

A value object (not a loose dict) so it can be compared, hashed, shown in a notebook and
fingerprinted: the persisted index remembers which tokenizer built it and rebuilds itself when the
tokenizer changes, while ``k1``/``b`` only affect scoring and can change freely between sessions.

>>> BM25Config(k1=1.2)
BM25Config(k1=1.2, b=0.75, stem=True, stopwords='english(153)', min_token_length=2)
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import WorkspaceConfigError

__all__ = ["ENGLISH_STOPWORDS", "BM25Config", "Tokenizer", "coerce_bm25_config"]

#: A tokenizer turns text into the list of terms the index stores and queries with.
Tokenizer = Callable[[str], list[str]]

#: English function words (pronouns, auxiliaries, articles, prepositions, conjunctions and the
#: pieces of contractions). Tokens are split at apostrophes, so only apostrophe-free forms appear.
#: This fuller list scored better than the 33-word Lucene list on both collections of
#: ``bench/search_quality.py`` (SciFact and the standard-library docstring set), so it is the default.
ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about against
    between into through during before after above below to from up down in out on off over
    under again further then once here there when where why how all any both each few more
    most other some such no nor not only own same so than too very s t can will just don
    should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn
    needn shan shouldn wasn weren won wouldn
    """.split()
)


@dataclass(frozen=True)
class BM25Config:
    """Settings of the BM25 (Okapi) keyword index.

    ``k1`` saturates term frequency, ``b`` scales length normalisation, ``epsilon`` is rank-bm25's
    IDF floor factor for terms found in more than half the documents. ``tokenizer`` replaces the
    default analysis entirely (``stem``/``stopwords``/``min_token_length`` then do nothing).
    """

    k1: float = 1.5
    b: float = 0.75
    tokenizer: Tokenizer | None = field(default=None, compare=False)
    stem: bool = True
    stopwords: frozenset[str] = ENGLISH_STOPWORDS
    min_token_length: int = 2
    epsilon: float = 0.25

    def __post_init__(self) -> None:
        if not isinstance(self.k1, (int, float)) or self.k1 < 0:
            raise WorkspaceConfigError(f"BM25Config.k1 must be a number >= 0, got {self.k1!r}",
                                       code="INVALID_SEARCH_CONFIG")
        if not isinstance(self.b, (int, float)) or not 0 <= self.b <= 1:
            raise WorkspaceConfigError(f"BM25Config.b must be between 0 and 1, got {self.b!r}",
                                       code="INVALID_SEARCH_CONFIG")
        if self.tokenizer is not None and not callable(self.tokenizer):
            raise WorkspaceConfigError("BM25Config.tokenizer must be a callable str -> list[str]",
                                       code="INVALID_SEARCH_CONFIG")
        if not isinstance(self.min_token_length, int) or self.min_token_length < 1:
            raise WorkspaceConfigError("BM25Config.min_token_length must be an int >= 1",
                                       code="INVALID_SEARCH_CONFIG")
        if not isinstance(self.stopwords, frozenset):
            if isinstance(self.stopwords, str) or not isinstance(self.stopwords, Iterable):
                raise WorkspaceConfigError("BM25Config.stopwords must be a collection of words",
                                           code="INVALID_SEARCH_CONFIG")
            object.__setattr__(self, "stopwords", frozenset(w.lower() for w in self.stopwords))

    def __repr__(self) -> str:
        if self.stopwords == ENGLISH_STOPWORDS:
            sw = f"'english({len(ENGLISH_STOPWORDS)})'"
        else:
            sw = f"<{len(self.stopwords)} words>"
        tok = "" if self.tokenizer is None else f", tokenizer={callable_name(self.tokenizer)}"
        eps = "" if self.epsilon == 0.25 else f", epsilon={self.epsilon}"
        return (f"BM25Config(k1={self.k1}, b={self.b}{tok}, stem={self.stem}, stopwords={sw}, "
                f"min_token_length={self.min_token_length}{eps})")

    @property
    def analysis_fingerprint(self) -> str:
        """Identifies how text becomes terms; a persisted index built otherwise is rebuilt."""
        if self.tokenizer is not None:
            desc = "custom:" + callable_name(self.tokenizer)
        else:
            desc = f"default:v1:stem={self.stem}:min={self.min_token_length}:" + ",".join(sorted(self.stopwords))
        return hashlib.sha256(desc.encode()).hexdigest()[:16]


def callable_name(fn: Callable[..., Any]) -> str:
    """``module.qualname`` of a function or callable object (stable across sessions: fingerprints)."""
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{mod}.{name}" if mod else name


def coerce_bm25_config(value: Any) -> BM25Config | None:
    """Accepts the Workspace ``bm25=`` forms: ``True``/``False``/``None``, a config or a dict."""
    if value is None or value is False:
        return None
    if value is True:
        return BM25Config()
    if isinstance(value, BM25Config):
        return value
    if isinstance(value, Mapping):
        try:
            return BM25Config(**dict(value))
        except TypeError as exc:
            raise WorkspaceConfigError(f"Invalid bm25 options: {exc}", code="INVALID_SEARCH_CONFIG")
    raise WorkspaceConfigError(
        f"bm25 must be True, None, a BM25Config or a dict, got {type(value).__name__}",
        code="INVALID_SEARCH_CONFIG",
    )

