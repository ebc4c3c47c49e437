"""Chunking on line boundaries with overlap, and the best-matching line range."""

from __future__ import annotations

import itertools

import pytest

from ws_jupyter.search.chunking import best_line_range, line_count, split_into_chunks
from ws_jupyter.search.config import BM25Config
from ws_jupyter.search.tokenizer import Analyzer


def test_small_text_is_one_chunk():
    (c,) = split_into_chunks("one\ntwo\n")
    assert (c.content, c.start_line, c.end_line) == ("one\ntwo\n", 1, 2)
    (e,) = split_into_chunks("")
    assert (e.start_line, e.end_line) == (1, 1)


def test_chunks_cover_the_file_with_overlap_and_file_line_numbers():
    lines = [f"line {i:04d} " + "x" * (i % 50) for i in range(1, 601)]
    text = "\n".join(lines) + "\n"
    chunks = split_into_chunks(text, max_chars=4000, overlap_lines=3)
    assert len(chunks) > 3
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 600
    for prev, cur in itertools.pairwise(chunks):
        assert cur.start_line == prev.end_line - 2  # 3 lines shared
    for c in chunks:
        assert len(c.content) <= 4000
        # line numbers are in file coordinates: the content is exactly those lines of the file
        assert c.content == "\n".join(lines[c.start_line - 1:c.end_line])


def test_overlong_line_is_cut_and_keeps_its_line_number():
    text = "short\n" + "y" * 10_000 + "\nafter"
    chunks = split_into_chunks(text, max_chars=4000, overlap_lines=3)
    long_parts = [c for c in chunks if c.content and set(c.content) == {"y"}]
    assert len(long_parts) == 3 and all(c.start_line == c.end_line == 2 for c in long_parts)
    assert "".join(c.content for c in long_parts) == "y" * 10_000
    assert chunks[-1].content.endswith("after") and chunks[-1].end_line == 3


def test_invalid_chunk_size():
    with pytest.raises(ValueError):
        split_into_chunks("x", max_chars=0)


def test_line_count():
    assert [line_count(t) for t in ("", "a", "a\n", "a\nb", "a\nb\n", "\n\n")] == [1, 1, 1, 2, 2, 2]


def test_best_line_range_prefers_dense_rare_matches():
    analyze = Analyzer(BM25Config())
    content = "\n".join([
        "intro text",                   # 1
        "the parser handles tokens",    # 2
        "unrelated",                    # 3
        "unrelated",                    # 4
        "tokenizer and parser config",  # 5
        "parser tokenizer stemming",    # 6
        "end",                          # 7
    ])
    # line 6 alone has both terms: the tightest window wins
    assert best_line_range(content, analyze("parser stemming"), analyze, max_lines=2) == (6, 6)
    # "stemming" and "config" are only together in the window 5-6
    assert best_line_range(content, analyze("stemming config"), analyze, max_lines=3) == (5, 6)
    assert best_line_range(content, analyze("nothing here"), analyze) is None
    assert best_line_range(content, [], analyze) is None
    # a rare term outweighs a frequent one when weights (e.g. IDF) are given
    weights = {"parser": 0.1, "intro": 5.0}.get
    assert best_line_range(content, analyze("parser intro"), analyze,
                           weights=lambda t: weights(t) or 1.0, max_lines=1) == (1, 1)
