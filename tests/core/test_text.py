"""Output shaping and token counting."""

from __future__ import annotations

from pathlib import Path

import pytest

from ws_jupyter.text import tokens
from ws_jupyter.text.ansi import strip_ansi
from ws_jupyter.text.shaping import apply_tail, number_line, truncate_head, truncate_head_tail
from ws_jupyter.text.tokens import approximate_tokens, count_tokens, fits, tokenizer_name, use_tokenizer


def test_strip_ansi_colors_osc_and_progress_redraws():
    text = "\x1b[1;31mred\x1b[0m ok\n\x1b]8;;http://x\x07link\x1b]8;;\x07\n10%\r50%\r100%\r\nend"
    assert strip_ansi(text) == "red ok\nlink\n100%\nend"


def test_strip_ansi_leaves_plain_text_alone():
    assert strip_ansi("a\tb\nc") == "a\tb\nc"


#: escapes a terminal hides: 8-bit CSI, an OSC hyperlink ended by ST (ESC \\), a DCS string
HIDDEN = "\x9b1mbold\x9b0m \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1bP1$r\x1b\\end"


def test_strip_ansi_handles_c1_codes_and_st_terminated_strings():
    assert strip_ansi(HIDDEN) == "bold link end"


def test_one_strip_ansi_for_tracebacks_and_the_kernel_views():
    """A kernel's traceback text and the %ws kernel views clean terminal text as the tools do."""
    from ws_jupyter.sandbox.kernels import ExecutionError

    error = ExecutionError("ValueError", "bad", ("\x1b[31mTraceback\x1b[0m", HIDDEN))
    assert error.traceback_text == "Traceback\nbold link end"
    pytest.importorskip("IPython")
    from ws_jupyter.jupyter.views.kernels import _pre

    assert ">bold link end</pre>" in _pre(HIDDEN)


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        (2, "[showing last 2 of 4 lines]\nc\nd\n"),
        (-2, "[showing last 2 of 4 lines]\nc\nd\n"),
        (0, "a\nb\nc\nd\n"),
        (10, "a\nb\nc\nd\n"),
        (None, "a\nb\nc\nd\n"),
    ],
)
def test_apply_tail(tail, expected):
    assert apply_tail("a\nb\nc\nd\n", tail) == expected


def test_number_line_pads_to_six():
    assert number_line(1, "x") == "     1→x"
    assert number_line(1234567, "x") == "1234567→x"


def _lines(n: int) -> str:
    return "\n".join(f"line {i} says something about item {i}" for i in range(1, n + 1)) + "\n"


def test_truncate_head_keeps_start_and_says_so():
    text = _lines(2000)
    out = truncate_head(text, 100)
    assert out.startswith("line 1 says")
    assert out.splitlines()[-1].startswith("[output truncated: showing first ~")
    assert count_tokens(out) <= 100


def test_truncate_head_tail_keeps_both_ends_mostly_the_end():
    text = _lines(3000)
    out = truncate_head_tail(text, 300)
    lines = out.splitlines()
    assert lines[0].startswith("line 1 says")
    assert lines[-1].startswith("line 3000 says")
    marker = next(line for line in lines if line.startswith("[...output truncated"))
    assert "— showing first ~" in marker and "+ last ~" in marker and "tokens...]" in marker
    head = lines[: lines.index(marker)]
    tail = lines[lines.index(marker) + 1 :]
    assert len(tail) > len(head)
    assert count_tokens(out) <= 300


def test_truncate_head_tail_counts_the_whole_text_once(monkeypatch):
    text = _lines(3000)
    counter = tokens._get()
    whole_counts = []

    def counting(piece: str) -> int:
        if piece == text:
            whole_counts.append(piece)
        return counter(piece)

    monkeypatch.setattr(tokens, "_counter", counting)
    out = truncate_head_tail(text, 300)
    assert f"of ~{counter(text)} tokens...]" in out
    assert len(whole_counts) == 1


def test_truncate_cuts_a_single_huge_line():
    out = truncate_head_tail("x" * 200_000, 200)
    assert count_tokens(out) <= 200
    assert "[...output truncated" in out


def test_no_truncation_within_budget():
    assert truncate_head("short", 10) == "short"
    assert truncate_head_tail("short", 10) == "short"
    assert truncate_head("anything", None) == "anything"


def test_fits_is_exact_at_the_boundary():
    text = "word " * 50
    n = count_tokens(text)
    assert fits(text, n)
    assert not fits(text, n - 1)


def test_uses_an_offline_o200k_tokenizer_when_installed():
    pytest.importorskip("bpe_openai", reason="bpe-openai comes with the dev extras (scripts/setup.sh)")
    assert tokenizer_name().startswith("o200k_base")
    assert count_tokens("hello world") == 2


def test_approximation_is_close_to_o200k_on_varied_text(tmp_path):
    pytest.importorskip("bpe_openai", reason="needs the exact o200k counter to compare with")
    samples = {
        "python": Path(tokens.__file__).read_text(),
        "prose": "The quick brown fox jumps over the lazy dog. " * 40,
        "numbers": "\n".join(",".join(str(i * j * 1.37) for j in range(8)) for i in range(100)),
        "korean": "이 문장은 토큰 수를 추정하기 위한 한국어 예문입니다. " * 30,
    }
    for name, text in samples.items():
        exact = count_tokens(text)
        approx = approximate_tokens(text)
        assert 0.7 * exact <= approx <= 1.35 * exact, (name, exact, approx)


def test_forcing_the_approximation_and_back():
    pytest.importorskip("bpe_openai", reason="needs the exact o200k counter to switch back to")
    try:
        assert use_tokenizer("approx") == "approximation"
        assert count_tokens("hello world") == approximate_tokens("hello world")
    finally:
        use_tokenizer("auto")
    assert tokenizer_name().startswith("o200k_base")
