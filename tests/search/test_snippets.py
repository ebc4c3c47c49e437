"""Snippets are the reported line range: for bm25, vector and hybrid hits, in the Python results
and in the workspace_search output; indentation kept; only analysed query terms (never stopwords)
marked; the line ranges found from the analysed lines stored at index time equal the ranges found
by analysing the content again."""

from __future__ import annotations

import random
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.search.chunking import best_line_range, line_range_from_terms
from ws_jupyter.search.config import BM25Config
from ws_jupyter.search.tokenizer import Analyzer

from ..helpers import write
from ..tools.conftest import box
from .conftest import HashEmbedder

# The scenario: query words occur early (as substrings, and as whole words in a comment),
# the densest window is lines 18-20.
PRICING = """\
from decimal import Decimal
# helpers for discounted prices and the total
from .tax import add_vat

CURRENCY = "EUR"


def round_cents(value):
    return value.quantize(Decimal("0.01"))


def line_total(item):
    return item.price * item.quantity


def order_total(order):
    if order.coupon:
        discount = order.coupon.discount_for(order)
        return round_cents(sum(line_total(i) for i in order.items) - discount)
    return round_cents(sum(line_total(i) for i in order.items))
"""


def _ws(root: Path, **kw) -> Workspace:
    write(root, "src/shop/pricing.py", PRICING)
    write(root, "docs/notes.md", "# Notes\n\nThe coupon code is printed on the receipt.\n")
    kw.setdefault("embedder", HashEmbedder())
    ws = Workspace(id="snip", filesystem=LocalFilesystem(root), **kw)
    ws.init()
    assert ws.wait_for_index(60)
    return ws


def _file_lines(root: Path, rel: str) -> list[str]:
    return (root / rel).read_text().split("\n")


def test_snippet_lines_equal_the_reported_range_in_every_mode(workdir):
    ws = _ws(workdir)
    try:
        for mode in ("bm25", "vector", "hybrid"):
            hits = ws.search("coupon discount order total", top_k=5, mode=mode)
            assert hits, mode
            for hit in hits:
                lo, hi = hit.line_range
                lines = _file_lines(workdir, hit.source)
                snip = hit.snippet(context=1)
                in_range = [ln for ln in snip.lines if ln.in_range]
                assert [ln.number for ln in in_range] == list(range(lo, hi + 1)), (mode, hit)
                for ln in snip.lines:  # every line is the file's own line, indentation kept
                    assert ln.text == lines[ln.number - 1]
                context = [ln.number for ln in snip.lines if not ln.in_range]
                assert all(n in (lo - 1, hi + 1) for n in context)
        pricing = ws.search("coupon discount order total", mode="bm25")[0]
        assert pricing.source == "src/shop/pricing.py" and pricing.line_range == (18, 20)
        assert pricing.kind == "file" and pricing.start_line == 1
        assert pricing.snippet().lines[1].text == "        discount = order.coupon.discount_for(order)"
    finally:
        ws.destroy()


def test_tool_output_prints_the_reported_lines(workdir):
    ws = _ws(workdir, embedder=None)
    try:
        out = box(ws).run("workspace_search", query="coupon discount order total", top_k=1)
        head, summary = out.rsplit("\n---\n", 1)
        assert summary == "1 result (bm25 search)"
        first, *body = head.split("\n")
        assert first == "src/shop/pricing.py:18-20"
        numbers = [int(m.group(1)) for m in (re.match(r"\s*(\d+)→", b) for b in body) if m]
        assert numbers == [17, 18, 19, 20]  # the range, one line of context before (21 is blank)
        lines = _file_lines(workdir, "src/shop/pricing.py")
        for b in body:
            n, text = b.split("→", 1)
            assert text == lines[int(n) - 1]  # indentation kept
    finally:
        ws.destroy()


def test_marks_use_the_analyzers_terms_not_stopwords(workdir):
    ws = _ws(workdir, embedder=None)
    try:
        hit = ws.search("the discounts of the order", mode="bm25")[0]
        assert set(hit.terms) == {"discount", "order"}  # stopwords never become terms
        line = next(ln for ln in hit.snippet().lines if ln.number == 18)
        marked = [line.text[a:b] for a, b in line.marks]
        assert marked == ["discount", "order", "discount", "order"]  # stems match; "for" is not marked
        assert not hit.marks("the of and to")
    finally:
        ws.destroy()


def test_long_ranges_are_clipped_and_say_so():
    from ws_jupyter.search.results import SearchResult

    content = "\n".join(f"line {i}" for i in range(1, 41))
    # the content starts at file line 101; ranges and snippet lines are file lines
    hit = SearchResult("a.txt", content, 1.0, line_range=(105, 130), start_line=101)
    snip = hit.snippet(context=1, max_lines=12)
    assert [ln.number for ln in snip.lines] == list(range(104, 117))  # no context after a cut
    assert snip.omitted == 14 and snip.text().endswith("… (14 more lines in range)")
    assert snip.lines[1].text == "line 5"


def _lines_strategy():
    words = st.sampled_from(
        "the cat sat on mat running runs ran dog dogs index indexed indexing quokka zebra of a "
        "Zebra_Case snake_case café naïve 42 x".split())
    line = st.lists(words, max_size=6).map(" ".join)
    return st.lists(line, min_size=1, max_size=30).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(_lines_strategy(), st.lists(st.sampled_from("cat running index zebra quokka dog the".split()), min_size=1,
                                   max_size=3), st.randoms(use_true_random=False))
def test_ranges_from_stored_line_terms_equal_a_fresh_analysis(text, query, rnd):
    analyzer = Analyzer(BM25Config())
    terms = analyzer(" ".join(query))
    weights = {t: rnd.random() for t in terms}
    _, lines = analyzer.line_terms(text)
    assert line_range_from_terms(lines, terms, weights.get) == best_line_range(text, terms, analyzer, weights.get)


def test_line_terms_agree_with_whole_text_analysis():
    analyzer = Analyzer(BM25Config())
    rng = random.Random(4)
    vocab = "Alpha beta GAMMA the running ran indexes, café! snake_case 3.14 x".split()
    for _ in range(200):
        text = "\n".join(" ".join(rng.choice(vocab) for _ in range(rng.randrange(8))) for _ in range(rng.randrange(1, 9)))
        terms, lines = analyzer.line_terms(text)
        assert terms == analyzer(text)
        assert len(lines.split("\n")) == len(text.split("\n"))
