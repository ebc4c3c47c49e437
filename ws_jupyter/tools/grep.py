"""``workspace_grep``: regex search over the workspace's text files.

Which files are searched is decided the same way whatever does the work: the workspace walker's
rules (``.gitignore`` at every level and ``.git/info/exclude``, ``.git`` skipped, hidden entries
only with ``include_hidden``, symlinks not followed), content-sniffed text detection (a
``Makefile`` or a ``.sas`` log is searched; a file whose first 8 KiB are not text is not), ripgrep's
binary rule (a file in which a NUL byte is met while searching is skipped whole; reading stops at
that byte, so the decision costs no more than reading up to it), and an optional glob in ``path``
(``src/**/*.py``, ``*.md``). One file named as ``path`` is searched whatever the rules say.

Two engines, one output (a test runs both on generated trees and compares):

* **ripgrep** (the ``rg`` binary — ``pip install ripgrep`` ships it; looked up next to the Python
  executable, then on ``PATH``), always run **confined to the workspace root**
  (:mod:`ws_jupyter.tools.grep_confine`: Landlock, else bubblewrap): it opens paths by name, and a
  sandboxed process can swap a workspace directory for a symlink to a host directory at any
  moment; confined, such a path leads to nothing it can read. One run walks the tree and counts
  matching lines per file; the files the output needs (in tree order, up to the 1000-line cap)
  are checked against the rules above (ancestor ``.gitignore`` files, hidden path parts, sniffing
  through the filesystem); a second run extracts their lines as JSON. One file is searched by a
  walk of its directory with an anchored glob, so that the binary rule applies to it as well.
* the **Python engine** walks with :func:`ws_jupyter.filesystem.walk.walk` and reads each file
  through the filesystem (``O_NOFOLLOW`` descriptors on a local one; any provider works) in
  blocks of whole lines, matched by RE2 in linear time (:mod:`ws_jupyter.tools.regex`; patterns
  RE2 cannot express run in a child process that the time budget kills), stopping as soon as the
  output is full. It is used when ripgrep is missing or cannot be confined here, for notebooks
  named as ``path``, for non-local filesystems, for patterns ripgrep's syntax rejects, when
  ripgrep fails (its heap is capped: a line longer than it may hold), when a ``.gitignore`` is
  not a regular file of at most 1 MiB (ripgrep would hang on a FIFO; ``find`` checks for that
  while ripgrep runs, and its result is reused while no directory or ``.gitignore`` of the tree
  changed: :mod:`ws_jupyter.tools.rules_scan`), and when ``WS_JUPYTER_GREP_ENGINE=python``. A
  search stops after 60 s (said in the summary), checked between blocks and enforced by killing
  the child process or ripgrep.

Patterns are Python regular expressions, validated first (an invalid one gives
``Error: Invalid regex pattern: ...``); ripgrep's Rust syntax agrees on everything common. At most
1000 matching lines are shown; past that the summary still gives the true number of matches and
files (counted on, within the time budget) and the ``offset`` to continue from. ``max_count`` caps
matching lines per file; ``files_only`` lists the matching files with their counts instead of
lines; ``respect_gitignore=false`` searches ignored files too. When nothing matches, a look at
the files the search skipped says which match and why (hidden, ignored, binary), naming an
argument only when it finds them.
"""

from __future__ import annotations

import base64
import json
import os
import posixpath
import re
import select
import shutil
import subprocess
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import DirectoryNotFound, FileNotFound, WorkspaceError
from ..filesystem.containment import open_child_dir
from ..filesystem.mime import SNIFF_BYTES, looks_like_text
from ..filesystem.reading import (
    CHUNK_BYTES,
    MAX_LINE_BYTES,
    file_chunks,
    open_regular,
    read_config,
    read_head,
    sized_line_blocks,
)
from ..filesystem.walk import IgnoreRules, relative_to, start_rules, walk
from ..notebooks.document import is_notebook_path
from . import grep_confine, rules_scan
from .base import ToolCall, ToolSpec
from .globs import compile_globs, split_glob_path
from .grep_confine import Confined
from .grep_notebooks import (
    NotebookListing,
    glob_excludes_notebooks,
    load_for_grep,
    search_notebook,
    workspace_path,
)
from .names import WORKSPACE_TOOLS
from .output import truncate_head
from .regex import GrepPattern, PatternError, compile_pattern
from .schema import Param
from .types import ToolErrorText

__all__ = ["MAX_MATCHES", "SPEC", "GrepResult", "find_ripgrep", "grep", "search"]

MAX_MATCHES = 1000
MAX_PATTERN = 1000
MAX_LINE_CHARS = 500
#: A NUL byte within this many leading bytes makes a file binary (ripgrep's first buffer).
NUL_WINDOW = 64 * 1024
_TIME_BUDGET = 60.0
_ALL = 1 << 62
_SIMPLE_EXT_GLOB = re.compile(r"^(?:\*\*/)?\*\.[A-Za-z0-9_+-]+$")

DESCRIPTION = (
    "Search file contents with a regular expression (Python syntax) and get matching lines as "
    "'path:line:column: text'. Searches text files under path (default: the whole workspace), "
    "honouring .gitignore; hidden files only with include_hidden. path may be a file, a directory or "
    "a glob such as 'src/**/*.py' or '*.md'. Use context_lines to see lines around each match and "
    "max_count to limit matches per file. Notebooks (.ipynb) are searched cell by cell, not as JSON: "
    "a match reads 'nb.ipynb [cell 4]:2:col: text' (line 2 of cell 4; cells count from 0), and "
    "cell outputs only with include_outputs. At most 1000 matching lines are returned (the summary "
    "gives the total; continue with offset); files_only=true lists matching files with counts."
)

PARAMS = (
    Param(
        "pattern",
        "string",
        "Regular expression to search for, e.g. 'def \\w+_test' or 'TODO'.",
        required=True,
    ),
    Param(
        "path", "string", "File, directory or glob to search, relative to the workspace root.", default="."
    ),
    Param(
        "context_lines",
        "integer",
        "Lines of context to show before and after each match.",
        default=0,
        minimum=0,
        maximum=50,
    ),
    Param("max_count", "integer", "Maximum matching lines per file. Default: no limit.", minimum=1),
    Param("case_sensitive", "boolean", "Match case exactly.", default=True),
    Param(
        "include_hidden",
        "boolean",
        "Also search files and directories whose name starts with '.'.",
        default=False,
    ),
    Param("respect_gitignore", "boolean", "Skip files that .gitignore excludes.", default=True),
    Param(
        "offset",
        "integer",
        "Skip this many matching lines (or files, with files_only) first: continue a truncated search.",
        default=0,
        minimum=0,
    ),
    Param(
        "files_only",
        "boolean",
        "List the matching files with their number of matching lines instead of the lines.",
        default=False,
    ),
    Param(
        "include_outputs",
        "boolean",
        "Notebooks: also search the text of cell outputs (reported as '[cell N output]').",
        default=False,
    ),
)


# --- results --------------------------------------------------------------------------------------


@dataclass
class FileMatches:
    """Matching lines of one file: ``matches`` as (line, column, text); ``lines`` every line known
    (matches and the context around them), by number."""

    path: str
    matches: list[tuple[int, int, str]] = field(default_factory=list)
    lines: dict[int, str] = field(default_factory=dict)


@dataclass
class GrepResult:
    """What a search found. ``files`` hold the lines shown (after ``offset``); ``total_matches`` /
    ``total_files`` count everything that matches (``count_complete`` False when counting stopped
    at the time budget); ``file_counts`` is the files-only listing."""

    files: list[FileMatches]  # notebooks contribute one CellMatches per cell with matches
    truncated: bool = False
    target_missing: bool = False
    binary_skipped: int = 0
    read_errors: int = 0
    engine: str = "python"
    timed_out: bool = False
    total_matches: int = 0
    total_files: int = 0
    count_complete: bool = True
    offset: int = 0
    file_counts: list[tuple[str, int]] | None = None

    @property
    def match_count(self) -> int:
        return sum(len(f.matches) for f in self.files)

    def add_total(self, matches: int) -> None:
        if matches > 0:
            self.total_matches += matches
            self.total_files += 1


# --- ripgrep --------------------------------------------------------------------------------------

_rg_lock = threading.Lock()
_rg_path: list[str | None] = []


def find_ripgrep() -> str | None:
    """Path of a working ``rg`` (next to this Python, then on PATH), or None. Checked once."""
    with _rg_lock:
        if _rg_path:
            return _rg_path[0]
        found = None
        if os.environ.get("WS_JUPYTER_GREP_ENGINE", "").lower() != "python":
            candidates = [
                os.path.join(os.path.dirname(sys.executable), "rg"),
                os.path.join(sys.prefix, "bin", "rg"),
                shutil.which("rg"),
            ]
            for cand in candidates:
                if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
                    try:
                        subprocess.run([cand, "--version"], capture_output=True, timeout=10, check=True)
                    except (OSError, subprocess.SubprocessError):
                        continue
                    found = cand
                    break
        _rg_path.append(found)
        return found


# --- text helpers ---------------------------------------------------------------------------------


def _clip(text: str, col: int) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    if col <= MAX_LINE_CHARS - 100:
        return text[:MAX_LINE_CHARS] + "..."
    start = max(0, col - 1 - 100)
    piece = text[start : start + MAX_LINE_CHARS]
    return "..." + piece + ("..." if start + MAX_LINE_CHARS < len(text) else "")


def _sort_key(path: str) -> tuple[tuple[int, str, str], ...]:
    """Tree order (the walker's): at each level directories first, then case-insensitive names."""
    parts = path.split("/")
    return tuple((0 if i < len(parts) - 1 else 1, p.lower(), p) for i, p in enumerate(parts))


class _Binary(Exception):
    pass


def _through_first_nul(chunks: Generator[bytes, None, None]) -> Generator[bytes, None, None]:
    """The bytes of a file up to and including its first NUL byte. ripgrep stops reading a file at
    its first NUL (the file is binary); so does grep, at once: a multi-gigabyte file with a hole
    (zeros) after a text header is decided in the time of reading the header, not of reading it
    all (as a whole-line reader would: the hole is one endless line)."""
    try:
        for chunk in chunks:
            nul = chunk.find(b"\0")
            if nul >= 0:
                yield chunk[: nul + 1]
                return
            yield chunk
    finally:
        chunks.close()


def _blocks(fs: Any, path: str) -> Iterator[tuple[bytes, int, int]]:
    """``(block, offset, first line number)`` over a text file: blocks of whole lines
    (``line_blocks``), with the file offset of their first byte. Raises ``_Binary`` when the first
    8 KiB do not look like text or a NUL byte is met within the first 64 KiB (ripgrep's first
    buffer). Reading ends just after the first NUL byte, wherever it is: the callers then decide
    (binary, unless ripgrep would have stopped reading before it)."""
    chunks = _through_first_nul(file_chunks(fs, path))
    head: list[bytes] = []
    size = 0
    for chunk in chunks:
        head.append(chunk)
        size += len(chunk)
        if size >= NUL_WINDOW:
            break
    data = b"".join(head)
    if b"\0" in data[:NUL_WINDOW] or not looks_like_text(data[:SNIFF_BYTES]):
        chunks.close()
        raise _Binary()

    def rest() -> Iterator[bytes]:
        yield data
        yield from chunks

    offset, line = 0, 1
    for block, consumed, _ended in sized_line_blocks(rest()):
        yield block, offset, line
        offset += consumed
        line += block.count(b"\n") + 1


def _normalized(block: bytes) -> bytes:
    """The block as lines are matched and shown: without the ``\r`` of CRLF line ends (the last
    line's newline is not in the block, so its ``\r`` is removed on its own)."""
    if b"\r" not in block:
        return block
    norm = block.replace(b"\r\n", b"\n")
    return norm[:-1] if norm.endswith(b"\r") else norm


def _line_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _drain(raw: bytes, rel_stop: int) -> tuple[bytes, bool]:
    """What ripgrep still reads of a block after its last wanted match: the bytes before
    ``rel_stop`` (block-relative end of the 64 KiB buffer holding that match) and the rest of
    the line that crosses it. Second value: the reading stops within this block."""
    if rel_stop >= len(raw):
        return raw, False
    end = raw.find(b"\n", max(rel_stop, 0))
    return (raw if end < 0 else raw[:end]), True


def search_file(
    fs: Any,
    path: str,
    shown: str,
    rx: GrepPattern,
    context: int,
    limit: int | None,
    deadline: float,
    max_count: int | None = None,
) -> FileMatches:
    """Matching lines of one file; raises ``_Binary`` for a binary file, ``TimeoutError`` past
    ``deadline``.

    Keeps ``limit`` matches and their context. To decide "binary" as ripgrep does, reading goes on
    (without matching) until ripgrep would stop: the end of the file, or — with ``max_count`` —
    the end of the 64 KiB buffer holding the ``max_count``-th match. A block of lines without a
    match costs one RE2 search; only the lines around matches are decoded.
    """
    result = FileMatches(shown)
    before: deque[tuple[int, str]] = deque(maxlen=max(context, 1))
    after_left = 0
    seen = 0
    stop_at: int | None = None  # file offset where reading ends once max_count is reached
    for raw, offset, first_no in _blocks(fs, path):
        if time.monotonic() > deadline:
            raise TimeoutError()
        if stop_at is not None:
            part, done = _drain(raw, stop_at - offset)
            if b"\0" in part:
                raise _Binary()
            if after_left:
                for k, piece in enumerate(_normalized(part).split(b"\n")[:after_left]):
                    result.lines[first_no + k] = _line_text(piece)
                after_left = max(0, after_left - (part.count(b"\n") + 1))
            if done:
                break
            continue
        collecting = limit is None or len(result.matches) < limit
        if max_count is None and not collecting and after_left == 0:
            if b"\0" in raw:
                raise _Binary()
            continue  # only looking for binary data until the end of the file
        norm = _normalized(raw)
        if max_count is not None:
            wanted = max_count - seen
        else:
            wanted = _ALL if limit is None else limit - len(result.matches)
        hits = rx.find_lines(norm, wanted, deadline)
        if not hits and not after_left:
            if b"\0" in raw:
                raise _Binary()
            if context and collecting:
                count = norm.count(b"\n") + 1
                tail = norm.rsplit(b"\n", context)[-context:]
                for k, piece in enumerate(tail):
                    before.append((first_no + count - len(tail) + k, _line_text(piece)))
            continue
        lines = norm.split(b"\n")
        cols = dict(hits)
        stop_line: int | None = None
        if max_count is not None and seen + len(hits) >= max_count:
            stop_line = hits[max_count - seen - 1][0]
            stop_at = -(-(offset + _raw_line_end(raw, stop_line)) // NUL_WINDOW) * NUL_WINDOW
            part, _ = _drain(raw, stop_at - offset)
        else:
            part = raw
        if b"\0" in part:
            raise _Binary()
        lo = 0 if after_left else max(0, hits[0][0] - context)
        hi = len(lines) - 1
        if not hits:
            hi = min(hi, after_left - 1)
        elif stop_line is None:
            hi = min(hi, hits[-1][0] + context)
        else:
            hi = min(hi, stop_line + context, part.count(b"\n"))
        if context:
            for k in range(max(0, lo - context), lo):
                before.append((first_no + k, _line_text(lines[k])))
        for idx in range(lo, hi + 1):
            n = first_no + idx
            line = _line_text(lines[idx])
            collecting = limit is None or len(result.matches) < limit
            if max_count is not None and seen >= max_count:
                if after_left > 0:
                    result.lines[n] = line
                    after_left -= 1
                continue
            col = cols.get(idx)
            if col is not None:
                seen += 1
                if collecting:
                    for bn, bt in before:
                        result.lines.setdefault(bn, bt)
                    before.clear()
                    result.matches.append((n, col, line))
                    result.lines[n] = line
                    after_left = context
                    continue
            if after_left > 0:
                result.lines[n] = line
                after_left -= 1
            elif context and collecting:
                before.append((n, line))
        if context and hi < len(lines) - 1 and stop_line is None:
            for k in range(max(hi + 1, len(lines) - context), len(lines)):
                before.append((first_no + k, _line_text(lines[k])))
        if stop_line is not None and part is not raw:
            break
    return result


def count_file(fs: Any, path: str, rx: GrepPattern, deadline: float, max_count: int | None = None) -> int:
    """Number of matching lines of one file (at most ``max_count``), without keeping any; raises
    ``_Binary`` and ``TimeoutError`` as :func:`search_file` does."""
    seen = 0
    for raw, _offset, _first in _blocks(fs, path):
        if time.monotonic() > deadline:
            raise TimeoutError()
        if b"\0" in raw:
            raise _Binary()
        wanted = _ALL if max_count is None else max_count - seen
        seen += len(rx.find_lines(_normalized(raw), wanted, deadline))
        if max_count is not None and seen >= max_count:
            break
    return seen


def _raw_line_end(raw: bytes, index: int) -> int:
    """Block-relative offset just past line ``index`` of ``raw`` (after its newline)."""
    pieces = raw.split(b"\n", index + 1)
    return sum(len(p) for p in pieces[: index + 1]) + index + 1


# --- visibility (the walker's rules, for files found by ripgrep) ---------------------------------


class _Visibility:
    """Whether a file below ``base`` is one the walker would yield (hidden, .git, .gitignore)."""

    def __init__(
        self,
        fs: Any,
        base: str,
        include_hidden: bool,
        host_base: str,
        respect_gitignore: bool = True,
        *,
        ignore_dirs: set[str] | None = None,
    ) -> None:
        self.fs = fs
        # the directories known to hold a .gitignore (from the rules scan): the others are not read
        self.ignore_dirs = ignore_dirs
        self.base = base
        self.host_base = host_base
        self.include_hidden = include_hidden
        self.respect_gitignore = respect_gitignore
        rules = start_rules(fs, base) if respect_gitignore else IgnoreRules()
        self._dir_rules: dict[str, IgnoreRules] = {}
        self._base_rules = rules
        self._dir_visible: dict[str, bool] = {}

    def _rules_in(self, rel_dir: str) -> IgnoreRules:
        """Rules in effect for the children of ``rel_dir`` (a directory at or below base)."""
        cached = self._dir_rules.get(rel_dir)
        if cached is not None:
            return cached
        if not self.respect_gitignore:
            return self._base_rules
        if rel_dir == self.base:
            parent_rules = self._base_rules
        else:
            parent_rules = self._rules_in(posixpath.dirname(rel_dir) or ".")
        if self.ignore_dirs is not None and rel_dir not in self.ignore_dirs:
            data = None
        else:
            data = read_config(self.fs, rel_dir + "/.gitignore" if rel_dir != "." else ".gitignore")
        text = None if data is None else data.decode("utf-8", "replace")
        rules = parent_rules.with_file(rel_dir, text) if text else parent_rules
        self._dir_rules[rel_dir] = rules
        return rules

    def _name_ok(self, name: str) -> bool:
        return name != ".git" and (self.include_hidden or not name.startswith("."))

    def _dir_ok(self, rel_dir: str) -> bool:
        if rel_dir == self.base:
            return True
        known = self._dir_visible.get(rel_dir)
        if known is not None:
            return known
        parent = posixpath.dirname(rel_dir) or "."
        ok = (
            self._dir_ok(parent)
            and self._name_ok(posixpath.basename(rel_dir))
            and not self._rules_in(parent).is_ignored(rel_dir, True)
        )
        self._dir_visible[rel_dir] = ok
        return ok

    def __call__(self, rel: str) -> bool:
        parent = posixpath.dirname(rel) or "."
        return (
            self._dir_ok(parent)
            and self._name_ok(posixpath.basename(rel))
            and not self._rules_in(parent).is_ignored(rel, False)
        )


# --- engines --------------------------------------------------------------------------------------


def _python_candidates(
    fs: Any,
    base: str,
    include_hidden: bool,
    on_error: Callable[[str, Exception], None],
    respect_gitignore: bool = True,
) -> Iterator[str]:
    for entry in walk(
        fs,
        base,
        include_hidden=include_hidden,
        respect_gitignore=respect_gitignore,
        on_error=on_error,
        stat=False,
    ):
        if not entry.is_dir and not entry.is_symlink:
            yield entry.path


def _rg_base_flags(case_sensitive: bool) -> list[str]:
    return ["--no-config", "--crlf", "-s" if case_sensitive else "-i"]


def _is_text(head: bytes) -> bool:
    return b"\0" not in head and looks_like_text(head)


class _Sniffer:
    """The fallback's text test (first 8 KiB) on files ripgrep found below the search directory
    ``base``, read by descriptors: each directory is opened once, with ``O_NOFOLLOW`` from its
    parent's descriptor (the search directory itself from the workspace root), and each file with
    ``O_NOFOLLOW`` in it, so a path that became a symlink meanwhile is not followed. At most
    ``_KEPT_DIRS`` directories stay open (results come in tree order: the nearest are reused)."""

    _KEPT_DIRS = 64

    def __init__(self, fs: Any, base: str) -> None:
        self.containment = fs.containment
        self.base = base
        self.dirs: OrderedDict[str, int] = OrderedDict()

    def __call__(self, rel: str) -> bool:
        try:
            dir_fd = self._dir(posixpath.dirname(rel) or ".")
            fd, _ = open_regular(posixpath.basename(rel), dir_fd=dir_fd, rel=rel)
        except (WorkspaceError, OSError):
            return False
        try:
            head = os.read(fd, SNIFF_BYTES)
        except OSError:
            return False
        finally:
            os.close(fd)
        return _is_text(head)

    def _dir(self, rel_dir: str) -> int:
        """The descriptor of ``rel_dir``: from the nearest open ancestor below ``base`` down."""
        chain: list[str] = []
        cur = rel_dir
        while cur not in self.dirs and cur != self.base and cur not in ("", "."):
            chain.append(cur)
            cur = posixpath.dirname(cur) or "."
        fd = self.dirs.get(cur)
        if fd is None:
            fd = self._keep(cur, self.containment.open_dir(self.containment.resolve(cur)))
        for sub in reversed(chain):
            fd = self._keep(sub, open_child_dir(posixpath.basename(sub), fd, sub))
        self.dirs.move_to_end(rel_dir)
        return fd

    def _keep(self, rel_dir: str, fd: int) -> int:
        self.dirs[rel_dir] = fd
        while len(self.dirs) > self._KEPT_DIRS:
            os.close(self.dirs.popitem(last=False)[1])
        return fd

    def close(self) -> None:
        while self.dirs:
            os.close(self.dirs.popitem()[1])


def _failed_to_start(stderr: str) -> bool:
    """bubblewrap, not ripgrep, failed (ripgrep's exit codes say nothing then): the search
    directory itself is a symlink at this moment, for instance."""
    return any(line.startswith("bwrap:") for line in stderr.splitlines())


def _ripgrep_extract(
    rg: Confined,
    selected: list[tuple[str, int, str]],
    pattern: str,
    case_sensitive: bool,
    context: int,
    max_count: int | None,
    deadline: float,
    last_partial: bool = True,
) -> list[FileMatches] | None:
    """Matching lines (and context) of the selected files, by ripgrep's JSON output (read with
    bounded memory: a line too long for it makes the Python engine do the search instead).

    The files are passed to ripgrep by path; ripgrep runs confined to the workspace
    (:mod:`~ws_jupyter.tools.grep_confine`), so a directory swapped for a symlink meanwhile leads
    to nothing it could read. ``last_partial``: fewer lines are wanted of the last file than it
    has (ripgrep is then asked for exactly that many).
    """
    by_host: dict[str, tuple[str, int]] = {host: (rel, take) for rel, take, host in selected}
    found: dict[str, FileMatches] = {rel: FileMatches(rel) for rel, _, _ in selected}
    hosts = list(by_host)
    # the last file may be needed only in part: ask for exactly what is needed
    head = hosts[:-1] if last_partial else hosts
    groups: list[tuple[list[str], int | None]] = [(g, max_count) for g in _arg_groups(head)]
    if hosts and last_partial:
        _, last_take = by_host[hosts[-1]]
        groups.append(([hosts[-1]], last_take if max_count is None else min(max_count, last_take)))
    for files, limit in groups:
        if not files:
            continue
        args = ["--json", *_rg_base_flags(case_sensitive)]
        if context:
            args += ["-C", str(context)]
        if limit is not None:
            args += ["-m", str(limit)]
        messages = _json_lines(rg, [*args, "-e", pattern, "--", *files], deadline)
        if messages is None:
            return None
        for raw in messages:
            if not raw.startswith(b'{"type":"match"') and not raw.startswith(b'{"type":"context"'):
                continue
            msg = json.loads(raw)
            data = msg["data"]
            host = data["path"].get("text")
            if host not in by_host:
                continue
            rel, take = by_host[host]
            lines = data["lines"]
            if "text" in lines:
                line_bytes = lines["text"].encode("utf-8", "surrogatepass")
            else:
                line_bytes = base64.b64decode(lines["bytes"])
            text = line_bytes.rstrip(b"\n").decode("utf-8", "replace")
            if text.endswith("\r"):
                text = text[:-1]
            n = int(data["line_number"])
            fm = found[rel]
            fm.lines[n] = text
            if msg["type"] == "match" and len(fm.matches) < take:
                subs = data.get("submatches") or []
                start = int(subs[0]["start"]) if subs else 0
                col = len(line_bytes[:start].decode("utf-8", "replace")) + 1
                fm.matches.append((n, col, text))
    return [found[rel] for rel, _, _ in selected]


#: Bytes of file names given to one ripgrep run (well below the kernel's limit on a command line).
_ARGS_BYTES = 256 << 10


def _arg_groups(paths: list[str]) -> Iterator[list[str]]:
    """``paths`` in runs of at most :data:`_ARGS_BYTES` of names (one process each)."""
    group: list[str] = []
    size = 0
    for path in paths:
        n = len(os.fsencode(path)) + 1
        if group and size + n > _ARGS_BYTES:
            yield group
            group, size = [], 0
        group.append(path)
        size += n
    if group:
        yield group


def _json_lines(rg: Confined, args: list[str], deadline: float) -> list[bytes] | None:
    """The output lines of a ``rg --json`` run; None when it failed, ran out of time, or printed a
    line longer than twice ``MAX_LINE_BYTES`` (its output is read with bounded memory)."""
    proc = rg.popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if proc is None or proc.stdout is None:
        return None
    cap = 2 * MAX_LINE_BYTES
    lines: list[bytes] = []
    try:
        fd = proc.stdout.fileno()

        def chunks() -> Iterator[bytes]:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    raise TimeoutError()
                piece = os.read(fd, CHUNK_BYTES)
                if not piece:
                    return
                yield piece

        for block, consumed, _ in sized_line_blocks(chunks(), cap):
            if consumed > len(block) + 1:
                return None  # a line was cut
            lines.extend(block.split(b"\n"))
    except (TimeoutError, OSError):
        return None
    finally:
        _stop(proc)
        proc.stdout.close()
    if proc.returncode not in (0, 1, -9):
        return None
    return lines


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()


def _ripgrep_candidates(
    rg: Confined,
    base: str,
    host_base: str,
    pattern: str,
    case_sensitive: bool,
    include_hidden: bool,
    max_count: int | None,
    glob: str | None,
    result: GrepResult,
    deadline: float,
    respect_gitignore: bool = True,
    single: str | None = None,
) -> tuple[list[tuple[str, int, str]], rules_scan.TreeScan | None] | None:
    """``(path, matching lines, host path)`` of files ripgrep found, in tree order, and the tree's
    rules scan (None when none ran: respect_gitignore=false, or no ``find``); None if rg cannot do
    this search.

    ``single`` names one file of the directory ``base`` to search alone, whatever the rules say
    (an explicit path). It is found by walking ``base`` one level deep with an anchored glob
    rather than named on the command line: ripgrep applies its binary rule (a NUL byte met
    while searching skips the file) only to files it finds by walking, and ``--include-zero``
    then tells a text file without matches (``name: 0``) from a binary one (no line).
    """
    args = ["--count", "--with-filename", "--null", *_rg_base_flags(case_sensitive)]
    if single is not None:
        args += [
            "--include-zero",
            "--hidden",
            "--no-ignore",
            "--max-depth",
            "1",
            "-g",
            "/" + _glob_escape(single),
        ]
        respect_gitignore = False
    else:
        args += [
            "--no-ignore-parent", "--no-ignore-global", "--no-ignore-dot", "--no-ignore-exclude",
            "--no-require-git", "-g", "!.git",
            "--iglob", "!*.ipynb",  # notebooks are searched cell by cell (grep_notebooks)
        ]  # fmt: skip
        if include_hidden:
            args.append("--hidden")
        if not respect_gitignore:
            args.append("--no-ignore")
        if glob is not None and _SIMPLE_EXT_GLOB.match(glob):
            args += ["-g", glob.removeprefix("**/")]
    if max_count is not None:
        args += ["-m", str(max_count)]

    # ripgrep reads every .gitignore it meets with a plain open(): a FIFO would hang it, a huge
    # file eat memory. While it runs, the tree's .gitignore files are checked (``rules_scan``: a
    # ``find`` pass, or the kept result of the last one when nothing changed since); if one is
    # unusable, the Python engine (which treats such files as absent, like the walker) does the
    # search. With respect_gitignore=false ripgrep reads none.
    proc = rg.popen(
        [*args, "-e", pattern, "--", host_base], cwd=host_base, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    if proc is None:
        return None
    pending = None
    scan: rules_scan.TreeScan | None = None
    try:
        if respect_gitignore:
            scan = rules_scan.check_tree(host_base, deadline)
            if scan is None:
                pending = rules_scan.start_scan(host_base, rg.root)
                scan = pending.result(deadline) if pending is not None else None
                if pending is not None and (scan is None or scan.unusable):
                    return None
        stdout, stderr_raw = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        result.timed_out = True
        return [], scan
    finally:
        _stop(proc)
        if pending is not None:
            pending.stop()
    stderr = stderr_raw.decode("utf-8", "replace")
    if (
        _failed_to_start(stderr)
        or proc.returncode < 0  # killed (out of memory: a line longer than ripgrep may hold)
        or (
            proc.returncode not in (0, 1)
            and ("regex" in stderr.lower() or "error parsing" in stderr.lower() or not stdout)
        )
    ):
        return None  # a pattern ripgrep's syntax rejects, no confinement, no memory: the fallback searches
    result.read_errors += sum(1 for line in stderr.splitlines() if "os error" in line.lower())
    found: list[tuple[str, int, str]] = []
    for line in stdout.split(b"\n"):
        if not line:
            continue
        raw_path, _, count = line.rpartition(b"\0")
        try:
            host = os.fsdecode(raw_path)
            n = int(count)
        except ValueError:
            continue
        rel = workspace_path(base, host_base, host)
        if rel is not None:
            found.append((rel, n, host))
    found.sort(key=lambda item: _sort_key(item[0]))
    return found, scan


def _glob_escape(name: str) -> str:
    """``name`` as a ripgrep glob that matches it literally."""
    return re.sub(r"([\\*?\[\]{}!,])", r"\\\1", name)


def _search_with_ripgrep(
    rg: Confined,
    fs: Any,
    base: str,
    host_base: str,
    pattern: str,
    matcher: Callable[[str], bool] | None,
    context: int,
    max_count: int | None,
    case_sensitive: bool,
    include_hidden: bool,
    glob: str | None,
    max_matches: int,
    result: GrepResult,
    deadline: float,
    opts: _Options,
    rx: GrepPattern,
) -> bool:
    """ripgrep counts per file; the files the output needs are checked against the walker's rules
    and sniffed; ripgrep then extracts their lines (the other files count towards the totals).
    Notebooks, which ripgrep skips, are listed by the rules scan (or, when it does not run, by a
    second ripgrep run meanwhile) and searched cell by cell in the same tree-order pass, with
    ``rx`` (the Python engine's pattern). False when ripgrep cannot do this search."""
    want_notebooks = not glob_excludes_notebooks(glob)
    # With .gitignore respected, the rules scan lists the notebooks too; otherwise rg --files does.
    listing = (
        NotebookListing(rg, host_base, base, include_hidden, False)
        if want_notebooks and not opts.respect_gitignore
        else None
    )
    candidates = _ripgrep_candidates(
        rg,
        base,
        host_base,
        pattern,
        case_sensitive,
        include_hidden,
        max_count,
        glob,
        result,
        deadline,
        opts.respect_gitignore,
    )
    if candidates is None:
        if listing is not None:
            listing.cancel()
        return False
    found, scan = candidates
    notebooks: list[tuple[str, str]] | None = []
    if want_notebooks and scan is not None:
        notebooks = [
            (rel, host)
            for host in scan.notebooks
            if (rel := workspace_path(base, host_base, host)) is not None
        ]
    elif want_notebooks:
        if listing is None:  # no scan could run (no find): list them now
            listing = NotebookListing(rg, host_base, base, include_hidden, opts.respect_gitignore)
        notebooks = listing.result(max(0.1, deadline - time.monotonic()))
    if notebooks is None:
        return False
    ignore_dirs = (
        None
        if scan is None
        else {rel for h in scan.ignore_dirs if (rel := workspace_path(base, host_base, h)) is not None}
    )
    visible = _Visibility(
        fs, base, include_hidden, host_base, opts.respect_gitignore, ignore_dirs=ignore_dirs
    )
    entries = sorted([*found, *((rel, -1, host) for rel, host in notebooks)], key=lambda e: _sort_key(e[0]))
    selected: list[tuple[str, int, str]] = []
    last_partial = False
    in_notebooks: list[Any] = []  # CellMatches, shaped like FileMatches
    remaining = max_matches
    counts: list[tuple[str, int]] = []
    sniff = _Sniffer(fs, base)
    try:
        for rel, count, host in entries:
            if count == 0 or not visible(rel):
                continue
            if matcher is not None and not matcher(relative_to(base, rel)):
                continue
            if remaining <= 0 and not opts.count_all:
                break
            if time.monotonic() > deadline:
                result.count_complete = False
                break
            if count < 0:  # a notebook: searched here, cell by cell
                try:
                    shown, count = _notebook_hits(fs, rel, rx, context, remaining, deadline, max_count, opts)
                except _Binary:
                    continue
                except TimeoutError:
                    result.count_complete = False
                    if remaining > 0:
                        result.timed_out = True
                    break
                except (WorkspaceError, OSError):
                    result.read_errors += 1
                    continue
                result.add_total(count)
                if opts.files_only:
                    if count:
                        counts.append((rel, count))
                    continue
                in_notebooks += shown
                remaining -= sum(len(h.matches) for h in shown)
                continue
            if not sniff(rel):
                continue
            result.add_total(count)
            if opts.files_only:
                counts.append((rel, count))
                continue
            if remaining > 0:
                take = min(count, remaining)
                selected.append((rel, take, host))
                last_partial = take < count
                remaining -= take
    finally:
        sniff.close()
    result.engine = "ripgrep"
    if opts.files_only:
        result.file_counts = counts
        return True
    if result.timed_out:
        result.files = in_notebooks
        return True
    files = _ripgrep_extract(
        rg, selected, pattern, case_sensitive, context, max_count, deadline, last_partial
    )
    if files is None:
        return False
    merged = [f for f in files if f.matches] + in_notebooks
    merged.sort(key=lambda f: _sort_key(getattr(f, "file", "") or f.path))  # stable: cells stay in order
    result.files = merged
    result.truncated = result.total_matches > result.match_count
    return True


def _confined_ripgrep(fs: Any, base: str) -> Confined | None:
    """ripgrep confined to the workspace root that holds ``base``; None when ripgrep is not
    installed, the filesystem is not local, or no confinement works here (then the Python engine
    searches)."""
    rg = find_ripgrep()
    containment = getattr(fs, "containment", None)
    if rg is None or containment is None or not callable(getattr(fs, "host_path", None)):
        return None
    if grep_confine.mode() is None:
        return None
    try:
        root = containment.resolve(base).root
    except (WorkspaceError, OSError):
        return None
    return Confined(rg, root)


def _search_one_with_ripgrep(
    rg: Confined,
    fs: Any,
    rel: str,
    pattern: str,
    context: int,
    max_count: int | None,
    case_sensitive: bool,
    max_matches: int,
    result: GrepResult,
    deadline: float,
    opts: _Options,
) -> bool:
    """One file (searched whatever the rules say): ripgrep counts, then extracts the lines shown.
    False when ripgrep cannot do this search."""
    try:
        host = fs.host_path(rel)
    except (WorkspaceError, OSError):
        return False
    parent, name = os.path.split(host)
    errors_before = result.read_errors
    candidates = _ripgrep_candidates(
        rg, rel, parent, pattern, case_sensitive, True, max_count, None, result, deadline, False, single=name
    )
    if candidates is None:
        return False
    result.engine = "ripgrep"
    if result.timed_out:
        return True
    count = next((n for _rel, n, found in candidates[0] if found == host), None)
    if count is None:  # walked but not listed: binary (a NUL byte met while searching), or unreadable
        if result.read_errors == errors_before:
            result.binary_skipped = 1
        return True
    try:  # the file as named (through a symlink inside the workspace, too)
        text = _is_text(read_head(fs, rel, SNIFF_BYTES))
    except (WorkspaceError, OSError):
        text = False
    if not text:
        result.binary_skipped = 1
        return True
    result.add_total(count)
    if opts.files_only:
        result.file_counts = [(rel, count)] if count else []
        return True
    if count:
        take = min(count, max_matches)
        files = _ripgrep_extract(
            rg, [(rel, take, host)], pattern, case_sensitive, context, max_count, deadline
        )
        if files is None:
            return False
        result.files = [f for f in files if f.matches]
    result.truncated = result.total_matches > result.match_count
    return True


def _notebook_hits(
    fs: Any,
    rel: str,
    rx: GrepPattern,
    context: int,
    remaining: int,
    deadline: float,
    max_count: int | None,
    opts: _Options,
) -> tuple[list[Any], int]:
    """``(matches shown, matching lines in all)`` of a notebook: cell by cell; a ``.ipynb`` that
    is not a readable notebook is searched as its text. Raises ``_Binary`` like a file search."""
    limit = 0 if opts.files_only else max(0, remaining)
    nb = load_for_grep(fs, rel)
    if nb is not None:
        cells, total = search_notebook(
            nb, rel, rx, context, limit, deadline, max_count, opts.notebook_outputs,
            opts.count_all or opts.files_only,
        )  # fmt: skip
        return list(cells), total
    if limit <= 0:
        return [], count_file(fs, rel, rx, deadline, max_count)
    hits = search_file(fs, rel, rel, rx, context, _limit(max_count, limit), deadline, max_count)
    total = len(hits.matches)
    if opts.count_all and (max_count is None or total < max_count) and total >= limit:
        total = count_file(fs, rel, rx, deadline, max_count)
    return ([hits] if hits.matches else []), total


@dataclass(frozen=True)
class _Options:
    respect_gitignore: bool = True
    files_only: bool = False
    count_all: bool = True
    notebook_outputs: bool = False


def search(
    fs: Any,
    pattern: str,
    path: str = ".",
    *,
    context_lines: int = 0,
    max_count: int | None = None,
    case_sensitive: bool = True,
    include_hidden: bool = False,
    engine: str = "auto",
    max_matches: int = MAX_MATCHES,
    respect_gitignore: bool = True,
    offset: int = 0,
    files_only: bool = False,
    count_all: bool = True,
    time_budget: float | None = None,
    notebook_outputs: bool = False,
) -> GrepResult:
    """Search ``fs``; ``engine`` is ``"auto"`` (ripgrep when usable), ``"ripgrep"`` or ``"python"``.

    ``offset`` skips that many matching lines (files, with ``files_only``) of the output; the
    ``max_matches`` shown follow. ``count_all`` counts every match for the totals (the Python
    engine reads on past the shown ones; ripgrep has counted them already). Notebooks are searched
    cell by cell (their outputs too with ``notebook_outputs``)."""
    rx = compile_pattern(pattern, case_sensitive)
    opts = _Options(respect_gitignore, files_only, count_all, notebook_outputs)
    try:
        result = _search(
            fs,
            rx,
            pattern,
            path,
            context_lines,
            max_count,
            case_sensitive,
            include_hidden,
            engine,
            max_matches if files_only else offset + max_matches,
            opts,
            _TIME_BUDGET if time_budget is None else time_budget,
        )
    finally:
        rx.close()
    result.offset = offset
    if files_only:
        listed = result.file_counts or []
        result.file_counts = listed[offset : offset + max_matches]
        result.truncated = len(listed) > offset + max_matches
    elif offset:
        _drop_first(result, offset)
    return result


def _drop_first(result: GrepResult, offset: int) -> None:
    """Remove the first ``offset`` matches (in output order) from ``result.files``."""
    left = offset
    kept: list[FileMatches] = []
    for fm in result.files:
        if left >= len(fm.matches):
            left -= len(fm.matches)
            continue
        if left:
            fm.matches = fm.matches[left:]
            left = 0
        kept.append(fm)
    result.files = kept


def _search(
    fs: Any,
    rx: GrepPattern,
    pattern: str,
    path: str,
    context_lines: int,
    max_count: int | None,
    case_sensitive: bool,
    include_hidden: bool,
    engine: str,
    max_matches: int,
    opts: _Options,
    time_budget: float,
) -> GrepResult:
    base, glob = split_glob_path(path)
    matcher = compile_globs([glob]) if glob else None
    result = GrepResult([])
    deadline = time.monotonic() + time_budget
    try:
        st = fs.stat(base)
    except (FileNotFound, DirectoryNotFound):
        result.target_missing = True
        return result
    base = st.path

    rg = _confined_ripgrep(fs, base) if engine in ("auto", "ripgrep") else None
    if st.type != "directory":
        one = (pattern, context_lines, max_count, case_sensitive, max_matches, result, deadline, opts)
        if rg is not None and not is_notebook_path(base) and _search_one_with_ripgrep(rg, fs, base, *one):
            return result
        # ripgrep gave up part way (the file gone before its lines were read, a line too long, a
        # timeout): the Python engine starts afresh, or the totals would count the file twice
        result = GrepResult([])
        candidates: Iterator[str] = iter([base])
        errors: list[str] = []
    else:
        if rg is not None and _search_with_ripgrep(
            rg,
            fs,
            base,
            fs.host_path(base),
            pattern,
            matcher,
            context_lines,
            max_count,
            case_sensitive,
            include_hidden,
            glob,
            max_matches,
            result,
            deadline,
            opts,
            rx,
        ):
            return result
        result = GrepResult([])  # afresh, as above: nothing the ripgrep attempt counted is kept
        errors = []
        candidates = _python_candidates(
            fs, base, include_hidden, lambda p, e: errors.append(p), opts.respect_gitignore
        )
    single = st.type != "directory"
    remaining = max_matches
    counts: list[tuple[str, int]] = []
    for rel in candidates:
        if matcher is not None and not single and not matcher(relative_to(base, rel)):
            continue
        full = remaining <= 0 or opts.files_only
        if full and not opts.files_only and not opts.count_all:
            break
        try:
            if is_notebook_path(rel):
                shown, n = _notebook_hits(fs, rel, rx, context_lines, remaining, deadline, max_count, opts)
                result.add_total(n)
                if n and opts.files_only:
                    counts.append((rel, n))
                result.files += shown
                remaining -= sum(len(h.matches) for h in shown)
                continue
            if full:
                n = count_file(fs, rel, rx, deadline, max_count)
                result.add_total(n)
                if n and opts.files_only:
                    counts.append((rel, n))
                continue
            hits = search_file(
                fs, rel, rel, rx, context_lines, _limit(max_count, remaining), deadline, max_count
            )
            if hits.matches:
                result.files.append(hits)
                remaining -= len(hits.matches)
                kept_all = remaining > 0 or (max_count is not None and len(hits.matches) >= max_count)
                rest = 0
                if not kept_all and opts.count_all:
                    rest = count_file(fs, rel, rx, deadline, max_count) - len(hits.matches)
                result.add_total(len(hits.matches) + max(0, rest))
        except _Binary:
            if single:
                result.binary_skipped = 1
            continue
        except TimeoutError:
            if remaining <= 0 or opts.files_only:
                result.count_complete = False
            else:
                result.timed_out = True
            break
        except (WorkspaceError, OSError):
            result.read_errors += 1
            continue
    result.read_errors += len(errors)
    if opts.files_only:
        result.file_counts = counts
    result.truncated = result.total_matches > result.match_count or not result.count_complete
    return result


def _limit(max_count: int | None, remaining: int) -> int:
    return remaining if max_count is None else min(max_count, remaining)


# --- formatting -----------------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else ("es" if word.endswith("ch") else "s"))


def format_result(result: GrepResult, context: int) -> tuple[str, str]:
    """(summary line, body) as the tool shows them.

    The summary counts everything that matches; when fewer are shown it says which and how to
    continue: ``5210 matches across 87 files (showing matches 1-1000; continue with offset=1000)``.
    """
    at_least = "" if result.count_complete else "at least "
    if result.file_counts is not None:
        listed = result.file_counts
        summary = (
            f"{at_least}{_plural(result.total_files, 'file')} with {_plural(result.total_matches, 'match')}"
        )
        if listed and (result.truncated or result.offset):
            first = result.offset + 1
            summary += f" (showing files {first}-{result.offset + len(listed)}"
            summary += f"; continue with offset={result.offset + len(listed)})" if result.truncated else ")"
        body = "\n".join(f"{path}: {n}" for path, n in listed)
    else:
        n = result.match_count
        summary = (
            f"{at_least}{_plural(result.total_matches, 'match')} across {_plural(result.total_files, 'file')}"
        )
        if n and (result.truncated or result.offset):
            first = result.offset + 1
            summary += f" (showing matches {first}-{result.offset + n}"
            more = result.truncated and result.offset + n < result.total_matches
            summary += (
                f"; continue with offset={result.offset + n})" if more or not result.count_complete else ")"
            )
        elif not n and result.offset and result.total_matches:
            summary += f" (offset={result.offset} is past the last match)"
        body = ""
    if result.target_missing:
        summary += " (target path not found: nothing searched)"
    if result.binary_skipped:
        summary += f" ({result.binary_skipped} file skipped: binary)"
    if result.read_errors:
        k = result.read_errors
        summary += f" ({k} {'path' if k == 1 else 'paths'} skipped: read error)"
    if result.timed_out:
        summary += f" (search stopped after {int(_TIME_BUDGET)}s)"
    elif not result.count_complete:
        summary += " (counting stopped at the time limit)"
    if result.file_counts is not None:
        return summary, body
    out: list[str] = []
    for fm in result.files:
        match_cols = {line: (col, text) for line, col, text in fm.matches}
        if context <= 0:
            for line, col, text in fm.matches:
                out.append(f"{fm.path}:{line}:{col}: {_clip(text, col)}")
            continue
        wanted: set[int] = set()
        for line, _, _ in fm.matches:
            wanted.update(range(max(1, line - context), line + context + 1))
        shown = sorted(k for k in wanted if k in fm.lines)
        prev = None
        for k in shown:
            if (prev is not None and k != prev + 1) or (prev is None and out):
                out.append("--")
            prev = k
            if k in match_cols:
                col, text = match_cols[k]
                out.append(f"{fm.path}:{k}:{col}: {_clip(text, col)}")
            else:
                out.append(f"{fm.path}:{k}- {_clip(fm.lines[k], 1)}")
    return summary, "\n".join(out)


#: Seconds the look at skipped files may take when nothing matched.
_PROBE_BUDGET = 5.0


def _skipped_note(call: ToolCall, pattern: str, result: GrepResult) -> str:
    """When nothing matched: which files this search skipped do match, why each was skipped, and
    the argument that searches them — named only when a search with it does find the example.

    A quick search with every skip turned off (hidden files, ``.gitignore``; one match per file is
    enough) lists candidates. Each example is then searched alone, as the suggested argument
    would search it: a file skipped as binary (a NUL byte met while searching it, possibly past
    the first match: the quick search stops there) is said to be binary, and no argument is
    suggested for it, since none makes grep search binary files.
    """
    args = call.args
    fs = call.filesystem()
    deadline = time.monotonic() + _PROBE_BUDGET
    try:
        probe = search(
            fs,
            pattern,
            args["path"],
            max_count=1,
            case_sensitive=args["case_sensitive"],
            include_hidden=True,
            respect_gitignore=False,
            files_only=True,
            max_matches=50,
            count_all=False,
            time_budget=_PROBE_BUDGET,
        )
        base = fs.stat(split_glob_path(args["path"])[0]).path
        rules = _Visibility(fs, base, True, "", respect_gitignore=True) if args["respect_gitignore"] else None
    except (PatternError, WorkspaceError, OSError):
        return ""
    examples: dict[str, str] = {}
    for rel, _count in probe.file_counts or ():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        parts = relative_to(base, rel).split("/") if rel != base else []
        hidden = not args["include_hidden"] and any(p.startswith(".") for p in parts)
        try:
            ignored = rules is not None and rel != base and not rules(rel)
            alone = search(  # as the main search would have searched it, without the skip
                fs, pattern, rel, max_count=args["max_count"], case_sensitive=args["case_sensitive"],
                files_only=True, count_all=False, time_budget=left,
            )  # fmt: skip
        except (PatternError, WorkspaceError, OSError):
            continue
        if alone.binary_skipped:
            kind = "binary" if not result.binary_skipped else ""
        elif not alone.total_matches:
            kind = ""  # changed meanwhile, unreadable...: nothing to say about it
        else:
            kind = ("hidden " if hidden else "") + ("ignored" if ignored else "")
        if kind.strip() and kind.strip() not in examples:
            examples[kind.strip()] = rel
        if len(examples) == 4:
            break
    notes = []
    if "hidden" in examples:
        notes.append(
            f"hidden files that match, e.g. {examples['hidden']} (include_hidden=true searches them)"
        )
    if "ignored" in examples:
        notes.append(
            f".gitignore'd files that match, e.g. {examples['ignored']} (respect_gitignore=false searches them)"
        )
    if "hidden ignored" in examples:
        notes.append(
            f"hidden, .gitignore'd files that match, e.g. {examples['hidden ignored']} "
            "(include_hidden=true with respect_gitignore=false searches them)"
        )
    if "binary" in examples:
        notes.append(
            f"binary files that match, e.g. {examples['binary']} (it holds a NUL byte; no grep option "
            "searches binary files)"
        )
    return " (skipped: " + "; ".join(notes) + ")" if notes else ""


def grep(call: ToolCall) -> str:
    args = call.args
    pattern = args["pattern"]
    if len(pattern) > MAX_PATTERN:
        return ToolErrorText(
            f"Error: Pattern too long ({len(pattern)} chars, max {MAX_PATTERN}). Use a shorter pattern."
        )
    try:
        result = search(
            call.filesystem(),
            pattern,
            args["path"],
            context_lines=args["context_lines"],
            max_count=args["max_count"],
            case_sensitive=args["case_sensitive"],
            include_hidden=args["include_hidden"],
            respect_gitignore=args["respect_gitignore"],
            offset=args["offset"],
            files_only=args["files_only"],
            notebook_outputs=args["include_outputs"],
        )
    except PatternError as exc:
        return ToolErrorText(f"Error: {exc}")
    summary, body = format_result(result, args["context_lines"])
    if result.total_matches == 0 and not result.target_missing and not result.timed_out:
        summary += _skipped_note(call, pattern, result)
    if not body:
        return summary
    body = truncate_head(
        body, call.max_tokens, reserve=60, hint="narrow path or pattern, set max_count, or use files_only"
    )
    return f"{summary}\n---\n{body}"


SPEC = ToolSpec(name=WORKSPACE_TOOLS.FILESYSTEM.GREP, description=DESCRIPTION, params=PARAMS, run=grep)
