"""Default analysis (lowercase, split, stopwords, short tokens, Snowball) and the custom hook."""

from __future__ import annotations

import pytest

from ws_jupyter.errors import SearchError, WorkspaceConfigError
from ws_jupyter.search.config import ENGLISH_STOPWORDS, BM25Config, coerce_bm25_config
from ws_jupyter.search.tokenizer import Analyzer, split_words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, World! How are you?", ["hello", "world"]),
        ("The Indexing of indexed files", ["index", "index", "file"]),
        ("running runs ran", ["run", "run", "ran"]),
        ("snake_case_name and CamelCase", ["snake", "case", "name", "camelcas"]),
        ("a b c x1 42", ["x1", "42"]),  # 1-char tokens dropped, digits kept
        ("Café naïve Straße", ["café", "naïv", "straße"]),  # unicode letters are word characters
        ("", []),
        ("the of and to", []),  # stopwords only
        ("e-mail e.g. U.S.A.", ["mail"]),  # "e", "g", "u", "s", "a" are 1-char tokens
    ],
)
def test_default_analyzer(text, expected):
    assert Analyzer(BM25Config())(text) == expected


def test_options_change_analysis():
    assert Analyzer(BM25Config(stem=False))("Indexing files") == ["indexing", "files"]
    assert Analyzer(BM25Config(stopwords=()))("the cat") == ["the", "cat"]
    assert Analyzer(BM25Config(stopwords=["cat"], stem=False))("the cat") == ["the"]
    assert Analyzer(BM25Config(min_token_length=4, stem=False))("tiny word here") == ["tiny", "word"]
    assert Analyzer(BM25Config(min_token_length=5, stem=False))("tiny word here") == []  # "here" is a stopword
    assert split_words("Foo-Bar baz") == ["foo", "bar", "baz"]
    assert "the" in ENGLISH_STOPWORDS and "not" in ENGLISH_STOPWORDS


def test_custom_tokenizer_hook():
    cfg = BM25Config(tokenizer=lambda text: text.split("|"))
    assert Analyzer(cfg)("A|b|The") == ["A", "b", "The"]  # used as is: no lowercasing/stopwords
    with pytest.raises(SearchError, match="list of strings"):
        Analyzer(BM25Config(tokenizer=lambda text: 42))("x")


def test_config_validation_and_repr():
    assert repr(BM25Config()) == "BM25Config(k1=1.5, b=0.75, stem=True, stopwords='english(153)', min_token_length=2)"
    assert BM25Config(k1=1.2) == BM25Config(k1=1.2) and hash(BM25Config()) == hash(BM25Config())
    for bad in ({"k1": -1}, {"b": 2}, {"tokenizer": "split"}, {"min_token_length": 0}, {"stopwords": "the"}):
        with pytest.raises(WorkspaceConfigError) as exc:
            BM25Config(**bad)
        assert exc.value.code == "INVALID_SEARCH_CONFIG"
    assert coerce_bm25_config(True) == BM25Config()
    assert coerce_bm25_config(None) is None and coerce_bm25_config(False) is None
    assert coerce_bm25_config({"k1": 1.2}).k1 == 1.2
    with pytest.raises(WorkspaceConfigError):
        coerce_bm25_config({"k9": 1})
    with pytest.raises(WorkspaceConfigError):
        coerce_bm25_config("yes")
    # the fingerprint tracks analysis, not scoring parameters
    assert BM25Config(k1=0.9).analysis_fingerprint == BM25Config().analysis_fingerprint
    assert BM25Config(stem=False).analysis_fingerprint != BM25Config().analysis_fingerprint
