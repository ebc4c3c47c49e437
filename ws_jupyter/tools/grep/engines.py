"""``search()``: one grep over a filesystem, whichever engine does the work — ripgrep when it is
installed and can be confined here (:mod:`.ripgrep`), else the Python engine (:mod:`.files`) —
with the same ``GrepResult`` either way, and ``offset`` paging over the output."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...errors import DirectoryNotFound, FileNotFound, WorkspaceError
from ...filesystem.globs import compile_globs, split_glob_path
from ...filesystem.walk import relative_to
from ...notebooks.document import is_notebook_path
from .files import BinaryFile, count_file, per_file_limit, python_candidates, search_file
from .notebooks import notebook_hits
from .regex import GrepPattern, compile_pattern
from .result import MAX_MATCHES, TIME_BUDGET, GrepResult, Matches, SearchOptions
from .ripgrep import confined_ripgrep, host_view, search_one_with_ripgrep, search_with_ripgrep

if TYPE_CHECKING:
    from ...filesystem.types import WorkspaceFilesystem

__all__ = ["TIME_BUDGET", "search"]


def search(
    fs: WorkspaceFilesystem,
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
    opts = SearchOptions(respect_gitignore, files_only, count_all, notebook_outputs)
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
            TIME_BUDGET if time_budget is None else time_budget,
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
    kept: list[Matches] = []
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
    fs: WorkspaceFilesystem,
    rx: GrepPattern,
    pattern: str,
    path: str,
    context_lines: int,
    max_count: int | None,
    case_sensitive: bool,
    include_hidden: bool,
    engine: str,
    max_matches: int,
    opts: SearchOptions,
    time_budget: float,
) -> GrepResult:
    base, glob = split_glob_path(path)
    matcher = compile_globs([glob]) if glob else None
    result = GrepResult([], time_budget=time_budget)
    deadline = time.monotonic() + time_budget
    try:
        st = fs.stat(base)
    except (FileNotFound, DirectoryNotFound):
        result.target_missing = True
        return result
    base = st.path

    local = host_view(fs) if engine in ("auto", "ripgrep") else None  # ripgrep reads host files
    rg = confined_ripgrep(local, base) if local is not None else None
    if st.type != "directory":
        one = (pattern, context_lines, max_count, case_sensitive, max_matches, result, deadline, opts)
        if (
            rg is not None
            and local is not None
            and not is_notebook_path(base)
            and search_one_with_ripgrep(rg, local, base, *one)
        ):
            return result
        # ripgrep gave up part way (the file gone before its lines were read, a line too long, a
        # timeout): the Python engine starts afresh, or the totals would count the file twice
        result = GrepResult([], time_budget=time_budget)
        candidates: Iterator[str] = iter([base])
        errors: list[str] = []
    else:
        if rg is not None and local is not None and search_with_ripgrep(
            rg,
            local,
            base,
            local.host_path(base),
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
        result = GrepResult([], time_budget=time_budget)  # afresh, as above: nothing ripgrep counted is kept
        errors = []
        candidates = python_candidates(
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
                shown, n = notebook_hits(fs, rel, rx, context_lines, remaining, deadline, max_count, opts)
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
                fs, rel, rel, rx, context_lines, per_file_limit(max_count, remaining), deadline, max_count
            )
            if hits.matches:
                result.files.append(hits)
                remaining -= len(hits.matches)
                kept_all = remaining > 0 or (max_count is not None and len(hits.matches) >= max_count)
                rest = 0
                if not kept_all and opts.count_all:
                    rest = count_file(fs, rel, rx, deadline, max_count) - len(hits.matches)
                result.add_total(len(hits.matches) + max(0, rest))
        except BinaryFile:
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
