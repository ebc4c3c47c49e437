"""workspace_grep: golden outputs, file selection rules, and identical output from both engines."""

from __future__ import annotations

import os
import random

import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem
from ws_jupyter.filesystem.reading import MAX_LINE_BYTES
from ws_jupyter.tools import grep as grep_mod
from ws_jupyter.tools.grep import confine as grep_confine
from ws_jupyter.tools.grep import ripgrep as grep_ripgrep
from ws_jupyter.tools.types import ToolErrorText

from ..helpers import write
from .conftest import box

RG = grep_mod.find_ripgrep()
needs_rg = pytest.mark.skipif(
    RG is None or grep_confine.mode() is None,
    reason="ripgrep is not installed (pip install ripgrep), or cannot be confined here (Landlock, bubblewrap)",
)


def grep(tools, **args):
    return tools.run("workspace_grep", **args)


def test_summary_separator_and_matches(fs_tools, workdir):
    write(workdir, "col.ts", "let hello = 1;\nconst x = hello + hello;\n")
    write(workdir, "src/b.py", "print('hello')\n")
    write(workdir, "none.txt", "nothing here\n")
    assert grep(fs_tools, pattern="hello") == (
        "3 matches across 2 files\n"
        "---\n"
        "src/b.py:1:8: print('hello')\n"
        "col.ts:1:5: let hello = 1;\n"
        "col.ts:2:11: const x = hello + hello;"
    )
    assert grep(fs_tools, pattern="print") == "1 match across 1 file\n---\nsrc/b.py:1:1: print('hello')"
    assert grep(fs_tools, pattern="absent") == "0 matches across 0 files"


def test_context_lines_merge_and_separate_hunks(fs_tools, workdir):
    write(workdir, "a.txt", "".join(f"{'MATCH' if i in (3, 5, 12) else 'line'} {i}\n" for i in range(1, 16)))
    write(workdir, "b.txt", "x\nMATCH b\n")
    assert grep(fs_tools, pattern="MATCH", context_lines=1) == (
        "4 matches across 2 files\n"
        "---\n"
        "a.txt:2- line 2\n"
        "a.txt:3:1: MATCH 3\n"
        "a.txt:4- line 4\n"
        "a.txt:5:1: MATCH 5\n"
        "a.txt:6- line 6\n"
        "--\n"
        "a.txt:11- line 11\n"
        "a.txt:12:1: MATCH 12\n"
        "a.txt:13- line 13\n"
        "--\n"
        "b.txt:1- x\n"
        "b.txt:2:1: MATCH b"
    )


def test_max_count_per_file_and_case(fs_tools, workdir):
    write(workdir, "a.txt", "Foo\nfoo\nFOO\nfoo\n")
    assert grep(fs_tools, pattern="foo", max_count=1) == "1 match across 1 file\n---\na.txt:2:1: foo"
    out = grep(fs_tools, pattern="foo", case_sensitive=False, max_count=3)
    assert out.splitlines()[0] == "3 matches across 1 file"


def test_global_cap(make_ws, workdir):
    for i in range(3):
        write(workdir, f"f{i}.txt", "hit\n" * 600)
    tools = box(make_ws(tools={T.FILESYSTEM.GREP: {"max_output_tokens": 0}}))
    out = grep(tools, pattern="hit")
    # the true totals, what is shown, and how to go on
    assert out.splitlines()[0] == "1800 matches across 3 files (showing matches 1-1000; continue with offset=1000)"
    assert "f0.txt:600:1: hit" in out and "f1.txt:400:1: hit" in out and "f1.txt:401" not in out
    rest = grep(tools, pattern="hit", offset=1000)
    assert rest.splitlines()[0] == "1800 matches across 3 files (showing matches 1001-1800)"
    assert rest.splitlines()[2] == "f1.txt:401:1: hit" and rest.endswith("f2.txt:600:1: hit")
    assert grep(tools, pattern="hit", offset=5000).splitlines()[0] == (
        "1800 matches across 3 files (offset=5000 is past the last match)"
    )


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_paging_with_offset_shows_every_match_once(make_ws, workdir, monkeypatch, engine):
    if engine == "ripgrep" and RG is None:
        pytest.skip("ripgrep is not installed")
    monkeypatch.setattr(grep_mod, "MAX_MATCHES", 7)
    for i in range(4):
        write(workdir, f"d{i % 2}/f{i}.txt", "".join(f"{'hit' if k % 3 else 'miss'} {k}\n" for k in range(10)))
    fs = LocalFilesystem(workdir)
    seen: list[tuple[str, int]] = []
    offset = 0
    while True:
        r = grep_mod.search(fs, "hit", engine=engine, offset=offset, max_matches=7)
        assert (r.total_matches, r.total_files) == (24, 4)
        seen += [(f.path, line) for f in r.files for line, _, _ in f.matches]
        if not r.truncated or offset + r.match_count >= r.total_matches:
            break
        offset += r.match_count
    assert len(seen) == 24 == len(set(seen))


def test_files_only_lists_files_with_counts(make_ws, workdir):
    write(workdir, "a.txt", "x\nx\n")
    write(workdir, "sub/b.txt", "x\n")
    write(workdir, "c.txt", "y\n")
    tools = box(make_ws())
    assert grep(tools, pattern="x", files_only=True) == "2 files with 3 matches\n---\nsub/b.txt: 1\na.txt: 2"
    assert grep(tools, pattern="x", files_only=True, offset=1) == (
        "2 files with 3 matches (showing files 2-2)\n---\na.txt: 2"
    )
    assert grep(tools, pattern="zzz", files_only=True) == "0 files with 0 matches"


def test_no_match_says_which_skipped_files_match(make_ws, workdir):
    write(workdir, ".env", "TOKEN=abc\n")
    write(workdir, ".gitignore", "build/\n")
    write(workdir, "build/out.log", "TOKEN seen\n")
    write(workdir, "src/app.py", "print(1)\n")
    tools = box(make_ws())
    assert grep(tools, pattern="TOKEN") == (
        "0 matches across 0 files (skipped: hidden files that match, e.g. .env (include_hidden=true searches "
        "them); .gitignore'd files that match, e.g. build/out.log (respect_gitignore=false searches them))"
    )
    assert grep(tools, pattern="TOKEN", respect_gitignore=False) == (
        "1 match across 1 file\n---\nbuild/out.log:1:1: TOKEN seen"
    )
    assert grep(tools, pattern="TOKEN", include_hidden=True, respect_gitignore=False).startswith(
        "2 matches across 2 files"
    )
    assert grep(tools, pattern="nowhere") == "0 matches across 0 files"  # nothing skipped matches either


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_no_match_note_gives_the_true_reason_and_only_a_flag_that_finds(
    make_ws, workdir, monkeypatch, engine
):
    """A NUL byte past the first 64 KiB (after the match) makes a file binary: the note used to
    call it ".gitignore'd" (no .gitignore anywhere) and suggest respect_gitignore=false, which
    still found nothing. Each example is now searched as the suggestion would search it."""
    if engine == "python":
        monkeypatch.setattr(grep_confine, "MODES", ())
    late_nul = b"TOKEN here\n" + b"x" * 70_000 + b"\n\x00 tail\n"
    write(workdir, "data.log", late_nul)
    tools = box(make_ws())
    note = (
        "0 matches across 0 files (skipped: binary files that match, e.g. data.log (it holds a NUL byte; "
        "no grep option searches binary files))"
    )
    assert grep(tools, pattern="TOKEN") == note
    assert grep(tools, pattern="TOKEN", respect_gitignore=False) == note
    assert (
        grep(tools, pattern="TOKEN", path="data.log") == "0 matches across 0 files (1 file skipped: binary)"
    )
    write(workdir, ".hidden.log", late_nul)  # hidden, but binary: include_hidden would not find it
    write(workdir, ".gitignore", "build/\n")
    write(workdir, "build/out.txt", "TOKEN seen\n")
    write(workdir, ".cache/build/c.txt", "TOKEN cached\n")
    write(workdir, ".env", "TOKEN=abc\n")
    out = grep(tools, pattern="TOKEN")
    assert out == (
        "0 matches across 0 files (skipped: hidden files that match, e.g. .env (include_hidden=true searches "
        "them); .gitignore'd files that match, e.g. build/out.txt (respect_gitignore=false searches them); "
        "hidden, .gitignore'd files that match, e.g. .cache/build/c.txt (include_hidden=true with "
        "respect_gitignore=false searches them); binary files that match, e.g. .hidden.log (it holds a NUL "
        "byte; no grep option searches binary files))"
    )
    # each suggestion finds its example
    assert ".env:1:1: TOKEN=abc" in grep(tools, pattern="TOKEN", include_hidden=True)
    assert "build/out.txt:1:1: TOKEN seen" in grep(tools, pattern="TOKEN", respect_gitignore=False)
    assert "c.txt" not in grep(tools, pattern="TOKEN", include_hidden=True)
    assert "c.txt" not in grep(tools, pattern="TOKEN", respect_gitignore=False)
    assert ".cache/build/c.txt:1:1" in grep(
        tools, pattern="TOKEN", include_hidden=True, respect_gitignore=False
    )


def test_bad_patterns(fs_tools):
    out = grep(fs_tools, pattern="a(b")
    assert out == "Error: Invalid regex pattern: missing ), unterminated subpattern at position 1"
    assert isinstance(out, ToolErrorText)
    assert grep(fs_tools, pattern="x" * 1001) == (
        "Error: Pattern too long (1001 chars, max 1000). Use a shorter pattern."
    )


def test_content_sniffing_not_extensions(fs_tools, workdir):
    write(workdir, "Makefile", "build:\n\tgcc main.c\n")
    write(workdir, "data.sas7bcat.log", "gcc warning\n")
    write(workdir, "lib.so", b"\x7fELF\x00\x00gcc\x00")
    write(workdir, "latin.txt", "gcc caf\xe9\n".encode("latin-1"))
    assert grep(fs_tools, pattern="gcc") == (
        "2 matches across 2 files\n---\ndata.sas7bcat.log:1:1: gcc warning\nMakefile:2:2: \tgcc main.c"
    )
    assert grep(fs_tools, pattern="gcc", path="lib.so") == "0 matches across 0 files (1 file skipped: binary)"


def test_gitignore_hidden_and_git(fs_tools, workdir):
    write(workdir, ".gitignore", "build/\n*.log\n")
    write(workdir, "build/out.txt", "needle\n")
    write(workdir, "x.log", "needle\n")
    write(workdir, "pkg/.gitignore", "!keep.log\nlocal.txt\n")
    write(workdir, "pkg/keep.log", "needle\n")
    write(workdir, "pkg/local.txt", "needle\n")
    write(workdir, ".hidden/h.txt", "needle\n")
    write(workdir, ".git/config", "needle\n")
    write(workdir, "ok.txt", "needle\n")
    assert (
        grep(fs_tools, pattern="needle")
        == "2 matches across 2 files\n---\npkg/keep.log:1:1: needle\nok.txt:1:1: needle"
    )
    out = grep(fs_tools, pattern="needle", include_hidden=True)
    assert ".hidden/h.txt:1:1" in out and ".git" not in out
    # searching inside an ignored directory explicitly works; ancestor rules still apply to subpaths
    assert (
        grep(fs_tools, pattern="needle", path="build")
        == "1 match across 1 file\n---\nbuild/out.txt:1:1: needle"
    )
    assert (
        grep(fs_tools, pattern="needle", path="pkg") == "1 match across 1 file\n---\npkg/keep.log:1:1: needle"
    )


def test_paths_and_globs(fs_tools, workdir):
    write(workdir, "src/a.py", "target\n")
    write(workdir, "src/deep/b.py", "target\n")
    write(workdir, "src/c.ts", "target\n")
    write(workdir, "d.md", "target\n")
    assert grep(fs_tools, pattern="target", path="src/**/*.py").splitlines()[0] == "2 matches across 2 files"
    assert grep(fs_tools, pattern="target", path="*.{ts,md}") == (
        "2 matches across 2 files\n---\nsrc/c.ts:1:1: target\nd.md:1:1: target"
    )
    assert (
        grep(fs_tools, pattern="target", path="./src/a.py")
        == "1 match across 1 file\n---\nsrc/a.py:1:1: target"
    )
    assert grep(fs_tools, pattern="target", path="missing") == (
        "0 matches across 0 files (target path not found: nothing searched)"
    )
    assert grep(fs_tools, pattern="x", path="../outside").startswith("Error: Permission denied")


def test_long_lines_are_clipped_around_the_match(fs_tools, workdir):
    write(workdir, "long.txt", "a" * 2000 + "NEEDLE" + "b" * 2000 + "\n")
    out = grep(fs_tools, pattern="NEEDLE").splitlines()[2]
    assert out.startswith("long.txt:1:2001: ...") and "NEEDLE" in out and out.endswith("...")
    assert len(out) < 600


def test_crlf_and_anchors(fs_tools, workdir):
    write(workdir, "w.txt", b"end here\r\nnot\r\n")
    assert grep(fs_tools, pattern="here$") == "1 match across 1 file\n---\nw.txt:1:5: end here"


def test_symlinks_are_not_followed_while_walking(fs_tools, workdir):
    write(workdir, "real/f.txt", "needle\n")
    os.symlink("real", workdir / "alias")
    os.symlink("real/f.txt", workdir / "flink.txt")
    assert grep(fs_tools, pattern="needle") == "1 match across 1 file\n---\nreal/f.txt:1:1: needle"
    assert (
        grep(fs_tools, pattern="needle", path="flink.txt")
        == "1 match across 1 file\n---\nflink.txt:1:1: needle"
    )


def test_lookaround_patterns_work_through_the_fallback(fs_tools, workdir):
    write(workdir, "a.txt", "foobar\nfoobaz\n")
    assert grep(fs_tools, pattern="foo(?=baz)") == "1 match across 1 file\n---\na.txt:2:1: foobaz"


def test_budget_keeps_the_summary(make_ws, workdir):
    write(
        workdir, "a.txt", "".join(f"needle number {i} with some more words around it\n" for i in range(300))
    )
    tools = box(make_ws(tools={T.FILESYSTEM.GREP: {"max_output_tokens": 200}}))
    out = grep(tools, pattern="needle")
    assert out.startswith("300 matches across 1 file\n---\na.txt:1:1: needle number 0")
    assert out.splitlines()[-1].startswith("[output truncated: showing first ~")


@needs_rg
def test_ripgrep_is_used_when_installed(workdir):
    write(workdir, "a.txt", "x\n")
    result = grep_mod.search(LocalFilesystem(workdir), "x")
    assert result.engine == "ripgrep"
    assert grep_mod.search(LocalFilesystem(workdir), "x", engine="python").engine == "python"


def _random_tree(root, seed: int) -> None:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "TODO", "fixme", "café", "λx", "foo_bar", "FooBar"]
    dirs = [
        "",
        "src",
        "src/pkg",
        "src/pkg/sub",
        "docs",
        ".hidden",
        "build",
        "node_modules/m",
        "Mixed",
        "mixed",
    ]
    write(root, ".gitignore", "build/\n*.tmp\nnode_modules/\n")
    write(root, "src/.gitignore", "*.gen\n!keep.gen\n")
    for i in range(120):
        d = rng.choice(dirs)
        ext = rng.choice([".py", ".md", ".txt", "", ".tmp", ".gen", ".bin", ".JSON"])
        name = f"{d}/f{i}{ext}".lstrip("/")
        if ext == ".bin":
            write(root, name, bytes(rng.randrange(256) for _ in range(300)) + b"\x00alpha")
            continue
        lines = [
            " ".join(rng.choice(words) for _ in range(rng.randrange(1, 8)))
            for _ in range(rng.randrange(0, 40))
        ]
        write(root, name, "\n".join(lines) + ("\n" if rng.random() < 0.8 else ""))
    write(root, "src/keep.gen", "alpha gamma\n")
    write(root, "src/x.gen", "alpha\n")
    write(root, "late_nul.txt", "alpha\n" * 20000 + "\x00\nalpha after nul\n")
    write(root, "one.bin", b"alpha\n" + b"\x00" * 10)


@needs_rg
@pytest.mark.parametrize("seed", [1, 2])
def test_both_engines_give_identical_output(workdir, seed):
    _random_tree(workdir, seed)
    fs = LocalFilesystem(workdir)
    cases = [
        dict(pattern="alpha"),
        dict(pattern="TODO|fixme"),
        dict(pattern=r"\bgamma\b", context_lines=2),
        dict(pattern="foo", case_sensitive=False, max_count=2),
        dict(pattern="é|λ"),
        dict(pattern="^delta", context_lines=1, max_count=3),
        dict(pattern="beta", include_hidden=True),
        dict(pattern="alpha", path="src"),
        dict(pattern="alpha", path="src/**/*.py"),
        dict(pattern="a", path="*.md"),
        dict(pattern="a"),  # hits the global cap
        dict(pattern="a", offset=700),
        dict(pattern="a", files_only=True),
        dict(pattern="alpha", respect_gitignore=False),
        dict(pattern="alpha", files_only=True, offset=2, include_hidden=True),
        dict(pattern="Mixed|mixed", path="Mixed"),
        # one file: searched whatever the rules say; ripgrep's binary rule, the sniff
        dict(pattern="alpha", path="late_nul.txt"),
        dict(pattern="alpha", path="late_nul.txt", max_count=3),
        dict(pattern="alpha", path="src/x.gen", context_lines=1),
        dict(pattern="alpha", path="one.bin"),
        dict(pattern="zzz", path="src/keep.gen"),
        dict(pattern="a", path="late_nul.txt", offset=900, files_only=True),
    ]
    for case in cases:
        args = {"context_lines": 0, **case}
        rg = grep_mod.search(fs, engine="ripgrep", **args)
        py = grep_mod.search(fs, engine="python", **args)
        assert rg.engine == "ripgrep" and py.engine == "python"
        assert grep_mod.format_result(rg, args["context_lines"]) == grep_mod.format_result(
            py, args["context_lines"]
        ), case


@needs_rg
@pytest.mark.parametrize("path", [".", "huge.txt"])
def test_a_search_ripgrep_gives_up_on_is_counted_once_by_the_python_engine(workdir, path):
    """ripgrep counts first, then extracts the lines shown; a line too long for its JSON output
    makes the Python engine do the whole search instead, starting afresh: the matches ripgrep had
    counted were added a second time to the totals, and the result said ripgrep."""
    write(workdir, "a.txt", "needle\n" * 2)
    write(workdir, "b.txt", "needle\n")
    write(workdir, "huge.txt", "needle " + "x" * (2 * MAX_LINE_BYTES) + "\nneedle again\n")
    fs = LocalFilesystem(workdir)
    auto = grep_mod.search(fs, "needle", path=path)
    py = grep_mod.search(fs, "needle", path=path, engine="python")
    assert auto.engine == "python"
    assert (auto.total_matches, auto.total_files) == (py.total_matches, py.total_files)
    assert auto.total_matches == (5 if path == "." else 2)
    assert grep_mod.format_result(auto, 0) == grep_mod.format_result(py, 0)


@needs_rg
def test_line_extraction_in_many_ripgrep_runs_gives_the_same_output(workdir, monkeypatch):
    """The lines shown are extracted by ripgrep runs of at most _ARGS_BYTES of file names each."""
    _random_tree(workdir, 3)
    fs = LocalFilesystem(workdir)
    whole = grep_mod.format_result(grep_mod.search(fs, "a", context_lines=1), 1)
    monkeypatch.setattr(grep_ripgrep, "_ARGS_BYTES", 64)  # a few names per run
    assert grep_mod.format_result(grep_mod.search(fs, "a", context_lines=1), 1) == whole
    assert whole == grep_mod.format_result(grep_mod.search(fs, "a", context_lines=1, engine="python"), 1)


@needs_rg
def test_engines_agree_on_unicode_classes_and_python_only_syntax(workdir):
    write(workdir, "u.txt", "café au lait\nλx = 3\n١٢٣ digits\nnbsp\u00a0here\ntab\there\nend\r\n")
    fs = LocalFilesystem(workdir)
    for pattern in [r"^\w+\s", r"\w+é", r"^\d+", r"\D\d", r"p\sh", r"\S+$", r"[\w]+", r"x{,2} =", r"\Aλ", r"d\Z"]:
        rg = grep_mod.search(fs, pattern, engine="ripgrep")
        py = grep_mod.search(fs, pattern, engine="python")
        assert grep_mod.format_result(rg, 0) == grep_mod.format_result(py, 0), pattern


def test_translation_to_re2():
    from ws_jupyter.tools.grep.regex import translate

    assert translate(r"a{,3}") == "a{0,3}"
    assert translate(r"\u00e9\Z") == r"\x{00e9}$"
    assert translate(r"[\d\]]x\\d") == r"[\p{Nd}\]]x\\d"
    assert translate(r"[]a]\w") == r"[]a][\p{L}\p{M}\p{Nd}\p{Pc}]"


def test_patterns_re2_cannot_run_still_work(fs_tools, workdir):
    write(workdir, "a.txt", "abab\nabcd\n")
    assert grep(fs_tools, pattern=r"(ab)\1") == "1 match across 1 file\n---\na.txt:1:1: abab"
    assert grep(fs_tools, pattern=r"(?<=a)bc") == "1 match across 1 file\n---\na.txt:2:2: abcd"
