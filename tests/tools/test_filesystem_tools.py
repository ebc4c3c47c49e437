"""Golden outputs of the file tools: read, write, edit, list, delete, mkdir, file_stat."""

from __future__ import annotations

import base64
import os
import re
import struct
import time
import zlib

import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter.tools.types import ToolErrorText, ToolResult

from ..helpers import write
from .conftest import box


def png_bytes(width: int = 2, height: int = 2) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


# --- read_file --------------------------------------------------------------------------------------


def test_read_numbered_lines(fs_tools, workdir):
    (workdir / "hello.txt").write_text("Hello World")
    assert fs_tools.run("workspace_read_file", path="hello.txt") == "hello.txt (11 bytes)\n     1→Hello World"


def test_read_trailing_newline_is_not_an_extra_line(fs_tools, workdir):
    (workdir / "a.txt").write_text("one\ntwo\n")
    assert fs_tools.run("workspace_read_file", path="a.txt") == "a.txt (8 bytes)\n     1→one\n     2→two"


def test_read_window_header(fs_tools, workdir):
    (workdir / "a.txt").write_text("".join(f"line{i}\n" for i in range(1, 6)))
    out = fs_tools.run("workspace_read_file", path="a.txt", offset=2, limit=2)
    assert out == "a.txt (lines 2-3 of 5, 30 bytes)\n     2→line2\n     3→line3"
    out = fs_tools.run("workspace_read_file", path="./a.txt", offset=4)
    assert out == "a.txt (lines 4-5 of 5, 30 bytes)\n     4→line4\n     5→line5"


def test_read_without_line_numbers(fs_tools, workdir):
    (workdir / "a.txt").write_text("x\ny\n")
    assert (
        fs_tools.run("workspace_read_file", path="a.txt", show_line_numbers=False) == "a.txt (4 bytes)\nx\ny"
    )


def test_read_empty_file_and_offset_past_end(fs_tools, workdir):
    (workdir / "empty.txt").write_text("")
    assert fs_tools.run("workspace_read_file", path="empty.txt") == "empty.txt (0 bytes)"
    (workdir / "a.txt").write_text("a\nb\n")
    assert fs_tools.run("workspace_read_file", path="a.txt", offset=9) == (
        "a.txt (2 lines, 4 bytes)\n"
        "[offset 9 is past the end of the file: it has 2 lines; the file has been fully read]"
    )


def test_read_crlf_lines_are_shown_without_carriage_returns(fs_tools, workdir):
    (workdir / "win.txt").write_bytes(b"a\r\nb\r\n")
    assert fs_tools.run("workspace_read_file", path="win.txt") == "win.txt (6 bytes)\n     1→a\n     2→b"


def test_read_over_budget_ends_with_the_offset_to_continue(make_ws, workdir):
    (workdir / "big.txt").write_text(
        "".join(f"this is line number {i} of the file\n" for i in range(1, 1001))
    )
    tools = box(make_ws(tools={T.FILESYSTEM.READ_FILE: {"max_output_tokens": 200}}))
    out = tools.run("workspace_read_file", path="big.txt")
    lines = out.splitlines()
    assert lines[0] == f"big.txt ({(workdir / 'big.txt').stat().st_size} bytes)"
    m = re.fullmatch(
        r"\[output truncated: showing lines 1-(\d+) of 1000; continue with offset=(\d+)\]", lines[-1]
    )
    assert m and int(m[2]) == int(m[1]) + 1
    assert lines[-2].endswith(f"this is line number {m[1]} of the file")
    nxt = tools.run("workspace_read_file", path="big.txt", offset=int(m[2]))
    assert nxt.splitlines()[1].endswith(f"this is line number {m[2]} of the file")
    assert nxt.splitlines()[0].startswith(f"big.txt (lines {m[2]}-")


def test_read_a_single_huge_line_is_cut(make_ws, workdir):
    (workdir / "min.js").write_text("x=1;" * 50_000 + "\nsecond\n")
    tools = box(make_ws(tools={T.FILESYSTEM.READ_FILE: {"max_output_tokens": 300}}))
    out = tools.run("workspace_read_file", path="min.js")
    assert "[line 1 has 200,000 characters; the rest is not shown]" in out
    assert out.endswith("[output truncated: showing lines 1-1 of 2; continue with offset=2]")


def test_read_missing_and_directory(fs_tools, workdir):
    (workdir / "d").mkdir()
    out = fs_tools.run("workspace_read_file", path="nope.txt")
    assert out == "Error: File not found: nope.txt" and isinstance(out, ToolErrorText)
    assert fs_tools.run("workspace_read_file", path="d") == (
        "Error: Path is a directory: d (use workspace_list_files to see what it contains)"
    )


def test_read_image_is_a_media_result(fs_tools, workdir):
    data = png_bytes()
    (workdir / "img.png").write_bytes(data)
    out = fs_tools.run("workspace_read_file", path="img.png")
    assert isinstance(out, ToolResult)
    assert out.text == f"img.png ({len(data)} bytes, image/png)"
    assert out.media[0].mime_type == "image/png"
    assert base64.b64decode(out.media[0].data) == data


def test_read_media_over_the_limit_gives_metadata(make_ws, workdir):
    (workdir / "img.png").write_bytes(png_bytes())
    tools = box(make_ws(tools={T.FILESYSTEM.READ_FILE: {"max_media_bytes": 10}}))
    out = tools.run("workspace_read_file", path="img.png")
    assert out.startswith("img.png (")
    assert "image/png) — exceeds max_media_bytes (10). Returning metadata only" in out


def test_read_binary_gives_metadata_and_encodings_give_bytes(fs_tools, workdir):
    (workdir / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    out = fs_tools.run("workspace_read_file", path="blob.bin")
    assert out.startswith("blob.bin (9 bytes, application/octet-stream) — binary file not readable as text.")
    assert (
        fs_tools.run("workspace_read_file", path="blob.bin", encoding="hex")
        == "blob.bin (9 bytes, hex)\n00010262696e617279"
    )
    assert fs_tools.run("workspace_read_file", path="blob.bin", encoding="base64") == (
        "blob.bin (9 bytes, base64)\nAAECYmluYXJ5"
    )
    (workdir / "img.png").write_bytes(png_bytes())
    as_text = fs_tools.run("workspace_read_file", path="img.png", encoding="utf-8")
    assert isinstance(as_text, str) and as_text.startswith("img.png (") and "PNG" in as_text


def test_read_text_with_an_unusual_extension_and_latin1(fs_tools, workdir):
    (workdir / "Makefile").write_text("all:\n\techo hi\n")
    assert (
        fs_tools.run("workspace_read_file", path="Makefile")
        == "Makefile (14 bytes)\n     1→all:\n     2→\techo hi"
    )
    (workdir / "old.txt").write_bytes("café\n".encode("latin-1"))
    assert (
        fs_tools.run("workspace_read_file", path="old.txt", encoding="latin-1")
        == "old.txt (5 bytes)\n     1→café"
    )


# --- write_file -------------------------------------------------------------------------------------


def test_write_reports_utf8_bytes_and_creates_parents(fs_tools, workdir):
    assert (
        fs_tools.run("workspace_write_file", path="new.txt", content="Hello World")
        == "Wrote 11 bytes to new.txt"
    )
    assert (
        fs_tools.run("workspace_write_file", path="./deep/er/é.txt", content="é")
        == "Wrote 2 bytes to deep/er/é.txt"
    )
    assert (workdir / "deep" / "er" / "é.txt").read_text() == "é"


def test_write_overwrite_false_refuses(fs_tools, workdir):
    (workdir / "a.txt").write_text("keep")
    out = fs_tools.run("workspace_write_file", path="a.txt", content="x", overwrite=False)
    assert out == "Error: File already exists: a.txt"
    assert (workdir / "a.txt").read_text() == "keep"


def test_write_absolute_path_inside_is_shown_relative(fs_tools, workdir):
    out = fs_tools.run("workspace_write_file", path=str(workdir / "abs.txt"), content="x")
    assert out == "Wrote 1 bytes to abs.txt"


# --- edit_file --------------------------------------------------------------------------------------


def test_edit_single_line(fs_tools, workdir):
    (workdir / "a.txt").write_text("one\ntwo\nthree\n")
    out = fs_tools.run("workspace_edit_file", path="a.txt", old_string="two", new_string="2")
    assert out == "Replaced 1 occurrence in a.txt (line 2):\n     1→one\n     2→2\n     3→three"
    assert (workdir / "a.txt").read_text() == "one\n2\nthree\n"


def test_edit_range_grows_with_new_text(fs_tools, workdir):
    (workdir / "a.txt").write_text("one\ntwo\nthree\n")
    out = fs_tools.run("workspace_edit_file", path="a.txt", old_string="two\n", new_string="2a\n2b\n2c\n")
    assert out == "Replaced 1 occurrence in a.txt (lines 2-4):\n     1→one\n     2→2a\n     3→2b\n     4→2c\n     5→three"
    assert (workdir / "a.txt").read_text() == "one\n2a\n2b\n2c\nthree\n"


def test_edit_snippet_of_a_long_change_and_of_a_deletion(fs_tools, workdir):
    (workdir / "a.txt").write_text("".join(f"l{i}\n" for i in range(1, 31)))
    body = "".join(f"n{i}\n" for i in range(1, 21))
    out = fs_tools.run("workspace_edit_file", path="a.txt", old_string="l5\n", new_string=body)
    head, *shown = out.split("\n")
    assert head == "Replaced 1 occurrence in a.txt (lines 5-24):"
    assert shown == [
        "     3→l3", "     4→l4", "     5→n1", "     6→n2", "     7→n3", "     8→n4", "     …",
        "    21→n17", "    22→n18", "    23→n19", "    24→n20", "    25→l6", "    26→l7",
    ]  # fmt: skip
    out = fs_tools.run("workspace_edit_file", path="a.txt", old_string="l2\n", new_string="")
    assert out == "Replaced 1 occurrence in a.txt (line 2):\n     1→l1\n     2→l3\n     3→l4\n     4→n1"


def test_edit_replace_all_lists_lines(fs_tools, workdir):
    (workdir / "a.txt").write_text("x = 1\ny\nx = 1\nz\nx = 1\n")
    out = fs_tools.run(
        "workspace_edit_file", path="a.txt", old_string="x = 1", new_string="x = 2", replace_all=True
    )
    assert out == "Replaced 3 occurrences in a.txt (lines 1, 3, 5)"


def test_edit_replace_all_reports_lines_in_the_new_file(fs_tools, workdir):
    (workdir / "a.txt").write_text("x\ny\nx\nz\nx\n")
    out = fs_tools.run(
        "workspace_edit_file", path="a.txt", old_string="x\n", new_string="a\nb\n", replace_all=True
    )
    assert out == "Replaced 3 occurrences in a.txt (lines 1, 4, 7)"
    lines = (workdir / "a.txt").read_text().split("\n")
    assert [i + 1 for i, line in enumerate(lines) if line == "a"] == [1, 4, 7]
    out = fs_tools.run(
        "workspace_edit_file", path="a.txt", old_string="a\nb\n", new_string="", replace_all=True
    )
    assert out == "Replaced 3 occurrences in a.txt (lines 1, 2, 3)"
    assert (workdir / "a.txt").read_text() == "y\nz\n"


def test_edit_replace_all_is_linear_in_the_occurrences(fs_tools, workdir):
    (workdir / "big.txt").write_text("".join(f"line {i} foo\n" for i in range(100_000)))
    started = time.perf_counter()
    out = fs_tools.run(
        "workspace_edit_file", path="big.txt", old_string="foo", new_string="bar\n", replace_all=True
    )
    assert time.perf_counter() - started < 5  # counted from the start of the file each time: ~40 s
    assert out.startswith("Replaced 100000 occurrences in big.txt (lines 1, 3, 5, 7, ")


def test_edit_ambiguous_match_is_refused_with_lines(fs_tools, workdir):
    (workdir / "a.txt").write_text("x\ny\nx\n")
    out = fs_tools.run("workspace_edit_file", path="a.txt", old_string="x", new_string="z")
    assert out == (
        "The specified text appears 2 times (lines 1, 3). Provide more surrounding context to make the "
        "match unique, or set replace_all=true to replace every occurrence."
    )
    assert isinstance(out, ToolErrorText)
    assert (workdir / "a.txt").read_text() == "x\ny\nx\n"


def test_edit_not_found_suggests_the_closest_lines(fs_tools, workdir):
    (workdir / "a.py").write_text("def main():\n    print('hello')\n    return 0\n")
    out = fs_tools.run(
        "workspace_edit_file", path="a.py", old_string="def main():\n  print('hello')", new_string=""
    )
    assert out == (
        "The specified text was not found. Make sure you use the exact text from the file, including "
        "whitespace and indentation.\nClosest match (lines 1-2):\n     1→def main():\n     2→    print('hello')"
    )
    out = fs_tools.run("workspace_edit_file", path="a.py", old_string="completely unrelated", new_string="")
    assert out.startswith("The specified text was not found.") and "Closest" not in out


def test_edit_empty_old_string(fs_tools, workdir):
    (workdir / "a.txt").write_text("x")
    out = fs_tools.run("workspace_edit_file", path="a.txt", old_string="", new_string="y")
    assert out.startswith("old_string is empty")


def test_edit_dollar_and_backslash_are_literal(fs_tools, workdir):
    (workdir / "a.txt").write_text("price\n")
    fs_tools.run("workspace_edit_file", path="a.txt", old_string="price", new_string=r"$1 \1 \n $&")
    assert (workdir / "a.txt").read_text() == "$1 \\1 \\n $&\n"


def test_edit_crlf_file_with_lf_text(fs_tools, workdir):
    (workdir / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    out = fs_tools.run("workspace_edit_file", path="w.txt", old_string="a\nb", new_string="A\nB")
    assert out == "Replaced 1 occurrence in w.txt (lines 1-2):\n     1→A\n     2→B\n     3→c"
    assert (workdir / "w.txt").read_bytes() == b"A\r\nB\r\nc\r\n"


# --- list_files -------------------------------------------------------------------------------------


@pytest.fixture
def tree(workdir):
    for rel in [
        "src/app.py",
        "src/util/helpers.py",
        "src/util/deep/x.py",
        "README.md",
        "img.png",
        "Zeta.txt",
        "alpha.txt",
    ]:
        write(workdir, rel)
    (workdir / "docs").mkdir()
    (workdir / ".hidden").mkdir()
    (workdir / ".hidden" / "h.txt").write_text("h")
    (workdir / ".git").mkdir()
    (workdir / ".git" / "HEAD").write_text("ref")
    return workdir


def test_list_tree_format(fs_tools, tree):
    assert fs_tools.run("workspace_list_files") == (
        ".\n"
        "docs/\n"
        "src/\n"
        "\tutil/\n"
        "\tapp.py\n"
        "alpha.txt\n"
        "img.png\n"
        "README.md\n"
        "Zeta.txt\n"
        "\n"
        "3 directories, 5 files (truncated at depth 2)"
    )


def test_list_depth_note_only_when_something_is_hidden(fs_tools, tree):
    assert fs_tools.run("workspace_list_files", path="src", max_depth=3).endswith("2 directories, 3 files")
    assert (
        fs_tools.run("workspace_list_files", path="src/util/deep", max_depth=1)
        == "src/util/deep\nx.py\n\n0 directories, 1 file"
    )
    assert fs_tools.run("workspace_list_files", path="docs") == "docs\n\n0 directories, 0 files"


def test_list_depth_note_ignores_what_a_deeper_listing_would_not_show(fs_tools, workdir):
    (workdir / ".gitignore").write_text("*.o\n")
    write(workdir, "ignored/sub/out.o")
    write(workdir, "hidden/sub/.env")
    write(workdir, "excluded/sub/node_modules/x.js")
    write(workdir, "filesonly/sub/a.txt")

    def listing(path: str, **args: object) -> str:
        return fs_tools.run("workspace_list_files", path=path, max_depth=1, **args)

    assert listing("ignored").endswith("1 directory, 0 files")
    assert listing("ignored", respect_gitignore=False).endswith("(truncated at depth 1)")
    assert listing("hidden").endswith("1 directory, 0 files")
    assert listing("hidden", show_hidden=True).endswith("(truncated at depth 1)")
    assert listing("excluded", exclude="node_modules").endswith("1 directory, 0 files")
    assert listing("excluded").endswith("(truncated at depth 1)")
    assert listing("filesonly").endswith("(truncated at depth 1)")
    assert listing("filesonly", dirs_only=True).endswith("1 directory, 0 files")


def test_list_hidden_and_git(fs_tools, tree):
    out = fs_tools.run("workspace_list_files", max_depth=1, show_hidden=True)
    assert ".hidden/" in out and ".git" not in out


def test_list_dirs_only(fs_tools, tree):
    assert fs_tools.run("workspace_list_files", dirs_only=True, max_depth=5) == (
        ".\ndocs/\nsrc/\n\tutil/\n\t\tdeep/\n\n4 directories, 0 files"
    )


def test_list_exclude_is_a_glob_not_a_substring(fs_tools, tree):
    out = fs_tools.run("workspace_list_files", exclude=["ig"], max_depth=1)
    assert "img.png" in out
    out = fs_tools.run("workspace_list_files", exclude=["src", "*.txt"], max_depth=3)
    assert "src" not in out and "alpha.txt" not in out and "README.md" in out


def test_list_pattern_and_extension(fs_tools, tree):
    assert fs_tools.run("workspace_list_files", pattern="*.py", max_depth=5) == (
        ".\nsrc/\n\tutil/\n\t\tdeep/\n\t\t\tx.py\n\t\thelpers.py\n\tapp.py\n\n3 directories, 3 files"
    )
    assert (
        fs_tools.run("workspace_list_files", pattern=["src/*.py"], max_depth=5)
        == ".\nsrc/\n\tapp.py\n\n1 directory, 1 file"
    )
    out = fs_tools.run("workspace_list_files", extension="md,png", max_depth=1)
    assert out == ".\nimg.png\nREADME.md\n\n0 directories, 2 files (truncated at depth 1)"


def test_list_gitignore_at_every_level(fs_tools, workdir):
    (workdir / ".gitignore").write_text("build/\n*.log\n")
    (workdir / "pkg").mkdir()
    (workdir / "pkg" / ".gitignore").write_text("secret.txt\n!keep.log\n")
    for rel in ["build/out.o", "pkg/secret.txt", "pkg/keep.log", "pkg/drop.log", "pkg/code.py", "top.log"]:
        write(workdir, rel)
    assert fs_tools.run("workspace_list_files") == ".\npkg/\n\tcode.py\n\tkeep.log\n\n1 directory, 2 files"
    out = fs_tools.run("workspace_list_files", respect_gitignore=False, show_hidden=True)
    for name in ("build/", "secret.txt", "drop.log", "top.log", ".gitignore"):
        assert name in out
    # a directory that is itself ignored can still be listed explicitly
    assert fs_tools.run("workspace_list_files", path="build") == "build\nout.o\n\n0 directories, 1 file"


def test_list_symlinks_are_shown_not_followed(fs_tools, workdir):
    (workdir / "real").mkdir()
    (workdir / "real" / "f.txt").write_text("x")
    os.symlink("real", workdir / "alias")
    os.symlink("real/f.txt", workdir / "f-link")
    out = fs_tools.run("workspace_list_files", max_depth=3)
    assert "alias/ -> real" in out and "f-link -> real/f.txt" in out
    assert out.count("f.txt") == 2  # real/f.txt and the link target, never alias/f.txt


def test_list_budget_keeps_the_summary(make_ws, workdir):
    for i in range(400):
        (workdir / f"file_number_{i:04d}.txt").write_text("x")
    tools = box(make_ws(tools={T.FILESYSTEM.LIST_FILES: {"max_output_tokens": 150}}))
    out = tools.run("workspace_list_files")
    assert "[output truncated: showing first ~" in out
    assert out.endswith("0 directories, 400 files")


def test_list_a_file_is_an_error(fs_tools, workdir):
    (workdir / "a.txt").write_text("x")
    assert fs_tools.run("workspace_list_files", path="a.txt") == (
        "Error: Not a directory: a.txt (use workspace_read_file or workspace_file_stat for a file)"
    )


# --- delete / mkdir / file_stat ----------------------------------------------------------------------


def test_delete_file_and_directories(fs_tools, workdir):
    (workdir / "a.txt").write_text("x")
    assert fs_tools.run("workspace_delete", path="a.txt") == "Deleted a.txt"
    (workdir / "d" / "e").mkdir(parents=True)
    (workdir / "d" / "e" / "f.txt").write_text("x")
    assert fs_tools.run("workspace_delete", path="d") == (
        "Error: Directory not empty: d (pass recursive=true to delete it with everything in it)"
    )
    assert fs_tools.run("workspace_delete", path="d", recursive=True) == "Deleted d"
    assert not (workdir / "d").exists()
    assert fs_tools.run("workspace_delete", path="d") == "Error: File not found: d"


def test_delete_symlink_keeps_the_target(fs_tools, workdir):
    (workdir / "real").mkdir()
    (workdir / "real" / "f.txt").write_text("keep")
    os.symlink("real", workdir / "alias")
    assert fs_tools.run("workspace_delete", path="alias", recursive=True) == "Deleted alias"
    assert (workdir / "real" / "f.txt").read_text() == "keep"


def test_delete_the_root_is_refused(fs_tools, workdir):
    out = fs_tools.run("workspace_delete", path=".", recursive=True)
    assert out.startswith("Error: ") and workdir.exists()


def test_mkdir(fs_tools, workdir):
    assert fs_tools.run("workspace_mkdir", path="a/b/c") == "Created directory a/b/c"
    assert (workdir / "a" / "b" / "c").is_dir()
    assert fs_tools.run("workspace_mkdir", path="a/b") == "Directory a/b already exists"
    (workdir / "f").write_text("x")
    assert fs_tools.run("workspace_mkdir", path="f") == "Error: File already exists: f"


def test_file_stat(fs_tools, workdir):
    (workdir / "a.txt").write_text("sixteen bytes!!\n")
    out = fs_tools.run("workspace_file_stat", path="./a.txt")
    assert re.fullmatch(r"a\.txt Type: file Size: 16 bytes Modified: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", out)
    (workdir / "d").mkdir()
    assert fs_tools.run("workspace_file_stat", path="d").startswith("d Type: directory Size: ")
    assert fs_tools.run("workspace_file_stat", path="missing.txt") == "missing.txt: not found"


def test_escapes_are_refused_with_the_relative_hint(fs_tools, workdir):
    (workdir / "src").mkdir()
    out = fs_tools.run("workspace_read_file", path="/src/app.py")
    assert (
        out
        == 'Error: Permission denied: "/src/app.py" is outside the workspace; use a relative path like "src/app.py"'
    )
    assert fs_tools.run("workspace_write_file", path="../x.txt", content="x") == (
        'Error: Permission denied: "../x.txt" is outside the workspace'
    )
    assert not (workdir.parent / "x.txt").exists()
