"""ReDoS: patterns that make a backtracking engine take exponential time.

Before: grep on one file (or with any pattern ripgrep rejects) ran Python's ``re`` in the calling
thread; ``(a+)+$`` on 27 ``a``s took 7.8 s holding the GIL, doubling every 2 characters, and the
time budget was only checked every 4,096 lines. Now RE2 runs what it can express (linear time) and
the rest runs in a child process that the budget kills.
"""

from __future__ import annotations

from ..helpers import write
from .conftest import replay


def test_catastrophic_pattern_runs_in_linear_time(workdir):
    write(workdir, "a.txt", "a" * 40 + "\n" + "a" * 40 + "b\n")
    r = replay(
        f"""
        ws, t = tools_of({str(workdir)!r})
        emit(str(t["workspace_grep"].run({{"pattern": "(a+)+$", "path": "a.txt"}})))
        emit(str(t["workspace_grep"].run({{"pattern": "^(a|aa)+$"}})))
        emit(str(t["workspace_grep"].run({{"pattern": "(x+x+)+y", "path": "a.txt"}})))
        """,
        timeout=60,
        WS_JUPYTER_GREP_ENGINE="python",
    )
    assert r.finished, "a backtracking pattern hung grep"
    one_file, tree, none = r.results
    assert one_file == f"1 match across 1 file\n---\na.txt:1:1: {'a' * 40}"
    assert tree == f"1 match across 1 file\n---\na.txt:1:1: {'a' * 40}"
    assert none == "0 matches across 0 files"


def test_budget_holds_inside_one_line_for_patterns_re2_cannot_run(workdir):
    # look-ahead is not in RE2: this one runs in Python's re, in a child process the budget kills
    write(workdir, "a.txt", "a" * 40 + "\n")
    r = replay(
        f"""
        import time
        from ws_jupyter.tools.grep import engines
        engines.TIME_BUDGET = 2.0
        ws, t = tools_of({str(workdir)!r})
        t0 = time.monotonic()
        out = str(t["workspace_grep"].run({{"pattern": "(a+)+(?=b)", "path": "a.txt"}}))
        emit([out, time.monotonic() - t0])
        emit(str(t["workspace_grep"].run({{"pattern": "aa(?=a)", "path": "a.txt"}})))
        """,
        timeout=90,
    )
    assert r.finished, "the time budget did not stop a backtracking pattern"
    (out, seconds), lookahead = r.results
    assert out == "0 matches across 0 files (search stopped after 2s)"
    assert seconds < 60
    assert lookahead.startswith("1 match across 1 file\n---\na.txt:1:1: aaa")


def test_the_interpreter_stays_free_while_a_pattern_backtracks(workdir):
    write(workdir, "a.txt", "a" * 40 + "\n")
    r = replay(
        f"""
        import threading, time
        from ws_jupyter.tools.grep import engines
        engines.TIME_BUDGET = 3.0
        ws, t = tools_of({str(workdir)!r})
        th = threading.Thread(target=t["workspace_grep"].run, args=({{"pattern": "(a+)+(?=b)", "path": "a.txt"}},))
        th.start()
        ticks = 0
        while th.is_alive():
            time.sleep(0.01)
            ticks += 1
        emit(ticks)
        """,
        timeout=90,
    )
    assert r.finished
    (ticks,) = r.results
    assert ticks > 20  # the main thread kept running while the search was under way
