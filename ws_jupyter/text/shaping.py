"""Shaping output for a model: tail, token budgets, line numbers.

Every cut says what was cut and how to get the rest, so a model never mistakes a truncated
output for the whole. Budgets are in tokens (:mod:`ws_jupyter.text.tokens`); cuts fall on line
boundaries except inside a single over-long line.

>>> apply_tail("a\\nb\\nc\\n", 2)
'[showing last 2 of 3 lines]\\nb\\nc\\n'
"""

from __future__ import annotations

from collections.abc import Sequence

from .tokens import count_tokens, fits, over_budget

__all__ = [
    "apply_tail",
    "cut_line",
    "number_line",
    "take_lines",
    "truncate_head",
    "truncate_head_tail",
]

def _split_keep_final(text: str) -> tuple[list[str], bool]:
    """Lines of ``text`` and whether it ended with a newline (which is not a line of its own)."""
    ends = text.endswith("\n")
    body = text[:-1] if ends else text
    return (body.split("\n") if body else []), ends


def apply_tail(text: str, tail: int | None = 200, hint: str = "") -> str:
    """Keep the last ``tail`` lines (``None`` -> 200, ``0`` -> all, negative -> its absolute value).

    A cut is announced on the first line: ``[showing last N of M lines]``, or
    ``[showing last N of M lines; <hint>]`` saying how to see more.
    """
    n = 200 if tail is None else abs(int(tail))
    if n == 0 or not text:
        return text
    lines, ends = _split_keep_final(text)
    if len(lines) <= n:
        return text
    kept = "\n".join(lines[-n:]) + ("\n" if ends else "")
    note = f"; {hint}" if hint else ""
    return f"[showing last {n} of {len(lines)} lines{note}]\n{kept}"


def cut_line(line: str, max_tokens: int, *, from_end: bool = False) -> str:
    """The longest start (or end) of one line within ``max_tokens``."""
    if max_tokens <= 0:
        return ""
    if fits(line, max_tokens):
        return line
    total = max(1, count_tokens(line))
    keep = max(1, int(len(line) * max_tokens / total))
    for _ in range(20):
        piece = line[-keep:] if from_end else line[:keep]
        if count_tokens(piece) <= max_tokens:
            return piece
        keep = max(1, int(keep * 0.85))
    return line[-keep:] if from_end else line[:keep]


def take_lines(lines: Sequence[str], budget: int, *, from_end: bool = False) -> tuple[list[str], int]:
    """Leading (or trailing) lines within ``budget`` tokens, counting only as far as needed.

    A first line that alone exceeds the budget is cut (marked with ``…``). Returns the lines kept
    (in their original order) and the tokens they use (a newline counts as one).
    """
    kept: list[str] = []
    used = 0
    order = reversed(lines) if from_end else iter(lines)
    for line in order:
        n = count_tokens(line) if line else 0
        if used + n + 1 > budget:
            if not kept:
                piece = cut_line(line, budget - 1, from_end=from_end)
                if piece:
                    kept.append(("… " + piece) if from_end else (piece + " …"))
                    used += count_tokens(piece) + 1
            break
        kept.append(line)
        used += n + 1
    if from_end:
        kept.reverse()
    return kept, used


def truncate_head(text: str, max_tokens: int | None, *, reserve: int = 15, hint: str = "") -> str:
    """Keep the start of ``text`` within ``max_tokens``; announce the cut at the end.

    ``[output truncated: showing first ~N of ~M tokens]``, or ``[...tokens; <hint>]`` saying how
    to see the rest. ``reserve`` tokens of the budget are left for the marker and for what the
    caller puts around the text.
    """
    total = None if max_tokens is None else over_budget(text, max_tokens)
    if max_tokens is None or total is None:
        return text
    lines, _ = _split_keep_final(text)
    kept, used = take_lines(lines, max(1, max_tokens - reserve))
    note = f"; {hint}" if hint else ""
    return "\n".join(kept) + f"\n[output truncated: showing first ~{used} of ~{total} tokens{note}]"


def truncate_head_tail(text: str, max_tokens: int | None, head_ratio: float = 0.1) -> str:
    """Keep the start and (mostly) the end of ``text`` within ``max_tokens``.

    Command output matters most at its end (errors, summaries), so by default 10% of the budget
    keeps the first lines and 90% the last, around
    ``[...output truncated — showing first ~H + last ~T of ~N tokens...]``.
    """
    total = None if max_tokens is None else over_budget(text, max_tokens)
    if max_tokens is None or total is None:
        return text
    lines, ends = _split_keep_final(text)
    budget = max(2, max_tokens - 25)
    head, head_used = take_lines(lines, max(1, int(budget * head_ratio)))
    tail, tail_used = take_lines(lines[len(head) :], budget - head_used, from_end=True)
    marker = f"[...output truncated — showing first ~{head_used} + last ~{tail_used} of ~{total} tokens...]"
    return "\n".join([*head, marker, *tail]) + ("\n" if ends and tail else "")


def number_line(n: int, text: str) -> str:
    """A line as ``read_file`` shows it: the number right-aligned in 6 columns, then ``→``."""
    return f"{n:>6}→{text}"
