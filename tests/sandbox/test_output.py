"""Retained output and UTF-8 splitting: bounded, newest bytes kept, never split inside a character."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from ws_jupyter.sandbox.output import RetainedOutput, Utf8Splitter, incomplete_utf8_tail

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    out, prev = [], 0
    for p in [*points, len(data)]:
        out.append(data[prev:p])
        prev = p
    return out


@given(TEXT, st.lists(st.integers(min_value=0, max_value=2000), max_size=20))
@settings(max_examples=300, deadline=None)
def test_splitter_reassembles_any_chunking(text, cuts):
    splitter = Utf8Splitter()
    pieces = [splitter.feed(c) for c in chunked(text.encode(), cuts)]
    assert "".join(pieces) + splitter.flush() == text
    assert all("\ufffd" not in p for p in pieces)


@given(TEXT, st.lists(st.integers(min_value=0, max_value=2000), max_size=20), st.integers(0, 21))
@settings(max_examples=300, deadline=None)
def test_reading_after_skipped_chunks_starts_on_a_whole_character(text, cuts, skipped):
    # What a process's stream does when a subscriber arrives mid-stream.
    chunks = chunked(text.encode(), cuts)
    splitter = Utf8Splitter()
    for chunk in chunks[:skipped]:
        splitter.skip(chunk)
    rest = "".join(splitter.feed(c) for c in chunks[skipped:]) + splitter.flush()
    fed = sum(len(c) for c in chunks[skipped:])
    assert text.endswith(rest) and "\ufffd" not in rest
    assert fed <= len(rest.encode()) < fed + 4


@given(TEXT, st.lists(st.integers(min_value=0, max_value=2000), max_size=20), st.integers(0, 64))
@settings(max_examples=300, deadline=None)
def test_retained_text_is_a_bounded_suffix(text, cuts, limit):
    out = RetainedOutput(max_bytes=limit)
    data = text.encode()
    for chunk in chunked(data, cuts):
        out.append(chunk)
    out.close()
    kept = out.text
    assert text.endswith(kept)
    assert len(kept.encode()) <= limit
    assert len(kept.encode()) > limit - 4 or len(data) <= limit  # at most one character lost
    assert out.total_bytes == len(data) and out.dropped_bytes == len(data) - out.retained_bytes
    assert out.truncated == (len(data) > limit)


def test_incomplete_tail_detection():
    euro = "€".encode()  # 3 bytes
    emoji = "😀".encode()  # 4 bytes
    assert incomplete_utf8_tail(b"") == 0
    assert incomplete_utf8_tail(euro[:1]) == 1
    assert incomplete_utf8_tail(euro[:2]) == 2
    assert incomplete_utf8_tail(euro) == 0
    assert incomplete_utf8_tail(b"ab" + emoji[:3]) == 3
    assert incomplete_utf8_tail(b"ab" + emoji) == 0
    assert incomplete_utf8_tail(b"\xff") == 0  # invalid byte: nothing to wait for


def test_running_text_hides_an_incomplete_last_character():
    out = RetainedOutput()
    out.append("ab€".encode()[:-1])
    assert out.text == "ab"
    out.append("€".encode()[-1:])
    assert out.text == "ab€"
    out.append(b"\xe2")
    out.close()  # the stream ended mid-character: show it as a replacement character
    assert out.text == "ab€\ufffd"


def test_limits_zero_and_unlimited():
    none = RetainedOutput(max_bytes=0)
    none.append(b"abc")
    assert none.text == "" and none.dropped_bytes == 3
    everything = RetainedOutput(max_bytes=None)
    for _ in range(1000):
        everything.append(b"x" * 1000)
    assert everything.retained_bytes == 1_000_000 and not everything.truncated


def test_big_chunk_larger_than_limit():
    out = RetainedOutput(max_bytes=5)
    out.append(b"0123456789")
    assert out.data == b"56789" and out.dropped_bytes == 5


def test_concurrent_reads_while_appending():
    out = RetainedOutput(max_bytes=1000)
    stop = threading.Event()
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            while not stop.is_set():
                text = out.text
                assert len(text.encode()) <= 1000 and set(text) <= {"é"}
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    t = threading.Thread(target=reader)
    t.start()
    for _ in range(20000):
        out.append("é".encode() * 7)
    stop.set()
    t.join()
    assert not errors
