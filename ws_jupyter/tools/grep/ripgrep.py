"""The ripgrep engine: ``rg`` run confined to the workspace root (:mod:`.confine`) counts matching
lines per file; the files the output needs are checked against the walker's rules
(:mod:`.visibility`) and sniffed through descriptors; a second run extracts their lines as JSON.
Notebooks, which ripgrep skips, are searched cell by cell in the same tree-order pass
(:mod:`.notebooks`). Each function says None/False when ripgrep cannot do the search; the Python
engine then does it."""

from __future__ import annotations

import base64
import json
import os
import posixpath
import re
import select
import subprocess
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol, cast

from ...errors import WorkspaceError
from ...filesystem.containment import open_child_dir
from ...filesystem.mime import SNIFF_BYTES
from ...filesystem.reading import CHUNK_BYTES, MAX_LINE_BYTES, open_regular, read_head, sized_line_blocks
from ...filesystem.types import WorkspaceFilesystem
from ...filesystem.walk import relative_to
from . import confine as grep_confine
from . import rules_scan
from .confine import Confined, find_ripgrep
from .files import BinaryFile, is_text
from .notebooks import NotebookListing, glob_excludes_notebooks, notebook_hits, workspace_path
from .regex import GrepPattern
from .result import FileMatches, GrepResult, Matches, SearchOptions, tree_order
from .visibility import Visibility

if TYPE_CHECKING:
    from ...filesystem.containment import Containment

__all__ = ["HostFilesystem", "confined_ripgrep", "host_view", "search_one_with_ripgrep", "search_with_ripgrep"]


class HostFilesystem(WorkspaceFilesystem, Protocol):
    """A filesystem whose files are files of this host (``LocalFilesystem``): ripgrep can search it."""

    @property
    def containment(self) -> Containment: ...

    def host_path(self, path: str, *, follow: bool = True) -> str: ...


def host_view(fs: WorkspaceFilesystem) -> HostFilesystem | None:
    """``fs`` when its files are host files ripgrep can read, else None."""
    if getattr(fs, "containment", None) is None or not callable(getattr(fs, "host_path", None)):
        return None
    return cast("HostFilesystem", fs)

_SIMPLE_EXT_GLOB = re.compile(r"^(?:\*\*/)?\*\.[A-Za-z0-9_+-]+$")

def _rg_base_flags(case_sensitive: bool) -> list[str]:
    return ["--no-config", "--crlf", "-s" if case_sensitive else "-i"]


class _Sniffer:
    """The fallback's text test (first 8 KiB) on files ripgrep found below the search directory
    ``base``, read by descriptors: each directory is opened once, with ``O_NOFOLLOW`` from its
    parent's descriptor (the search directory itself from the workspace root), and each file with
    ``O_NOFOLLOW`` in it, so a path that became a symlink meanwhile is not followed. At most
    ``_KEPT_DIRS`` directories stay open (results come in tree order: the nearest are reused)."""

    _KEPT_DIRS = 64

    def __init__(self, fs: HostFilesystem, base: str) -> None:
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
        return is_text(head)

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
    (:mod:`.confine`), so a directory swapped for a symlink meanwhile leads
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
            "--iglob", "!*.ipynb",  # notebooks are searched cell by cell (notebooks.py)
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
    found.sort(key=lambda item: tree_order(item[0]))
    return found, scan


def _glob_escape(name: str) -> str:
    """``name`` as a ripgrep glob that matches it literally."""
    return re.sub(r"([\\*?\[\]{}!,])", r"\\\1", name)


def search_with_ripgrep(
    rg: Confined,
    fs: HostFilesystem,
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
    opts: SearchOptions,
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
    visible = Visibility(
        fs, base, include_hidden, host_base, opts.respect_gitignore, ignore_dirs=ignore_dirs
    )
    entries = sorted([*found, *((rel, -1, host) for rel, host in notebooks)], key=lambda e: tree_order(e[0]))
    selected: list[tuple[str, int, str]] = []
    last_partial = False
    in_notebooks: list[Matches] = []  # CellMatches
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
                    shown, count = notebook_hits(fs, rel, rx, context, remaining, deadline, max_count, opts)
                except BinaryFile:
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
    merged.sort(key=lambda f: tree_order(getattr(f, "file", "") or f.path))  # stable: cells stay in order
    result.files = merged
    result.truncated = result.total_matches > result.match_count
    return True


def confined_ripgrep(fs: HostFilesystem, base: str) -> Confined | None:
    """ripgrep confined to the workspace root that holds ``base``; None when ripgrep is not
    installed or no confinement works here (then the Python engine searches)."""
    rg = find_ripgrep()
    if rg is None or grep_confine.mode() is None:
        return None
    try:
        root = fs.containment.resolve(base).root
    except (WorkspaceError, OSError):
        return None
    return Confined(rg, root)


def search_one_with_ripgrep(
    rg: Confined,
    fs: HostFilesystem,
    rel: str,
    pattern: str,
    context: int,
    max_count: int | None,
    case_sensitive: bool,
    max_matches: int,
    result: GrepResult,
    deadline: float,
    opts: SearchOptions,
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
        text = is_text(read_head(fs, rel, SNIFF_BYTES))
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
