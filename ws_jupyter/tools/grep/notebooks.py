"""Grep in notebooks: cell sources (and, when asked, output text) instead of the JSON.

A line of a notebook's JSON is neither what its author wrote (quotes are escaped, each source line
is a JSON string) nor numbered as the cell numbers it, so ``workspace_grep`` never searches
``*.ipynb`` files as text: ripgrep (or the Python walk) searches every other file, and each
notebook in scope is parsed with :mod:`ws_jupyter.notebooks` and searched cell by cell with the
same regular expression. A cell with matches is reported like a file named ``nb.ipynb [cell 4]``
(``[cell 4 output]`` for its outputs), so a match reads ``nb.ipynb [cell 4]:2:5: text`` with the
line number inside the cell, context lines and ``--`` separators work as for files, and results
stay in tree order whichever engine found the other files. ``max_count`` counts matching lines per
notebook. A ``.ipynb`` that is not a readable notebook is searched as its text, so a broken file
can still be found.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...errors import WorkspaceError
from ...notebooks.cache import NotebookText, cell_text_cache
from .confine import Confined
from .files import count_file, per_file_limit, search_file
from .regex import GrepPattern
from .result import Matches, SearchOptions

_ALL = 1 << 62

if TYPE_CHECKING:
    from ...filesystem.types import WorkspaceFilesystem

__all__ = [
    "CellMatches",
    "NotebookListing",
    "glob_excludes_notebooks",
    "load_for_grep",
    "notebook_hits",
    "search_notebook",
    "workspace_path",
]


@dataclass
class CellMatches:
    """Matching lines of one cell (same shape as grep's per-file matches, plus where they are)."""

    path: str  # "nb.ipynb [cell 4]": how the output names it
    matches: list[tuple[int, int, str]] = field(default_factory=list)
    lines: dict[int, str] = field(default_factory=dict)
    file: str = ""  # the notebook's path
    cell: int | None = None
    cell_id: str | None = None
    part: str = "source"


def search_notebook(
    nb: NotebookText,
    shown: str,
    rx: GrepPattern,
    context: int,
    limit: int,
    deadline: float,
    max_count: int | None = None,
    outputs: bool = False,
    count_all: bool = True,
) -> tuple[list[CellMatches], int]:
    """``(cells with the matches shown, matching lines in all)`` of a notebook's cell texts: at
    most ``limit`` lines shown, at most ``max_count`` counted for the notebook (all of them with
    ``count_all``, else only those shown), found by grep's own pattern engine (RE2: linear time)
    in one pass over the cells' lines as one block (``ws_jupyter.notebooks.cache.SearchText``)."""
    if time.monotonic() > deadline:
        raise TimeoutError()
    block = nb.block(outputs)
    cap = _ALL if max_count is None else max_count
    want = cap if count_all else min(cap, limit)
    hits = rx.find_lines(block.blob, want, deadline) if want > 0 and block.blob else []
    found: list[CellMatches] = []
    current: CellMatches | None = None
    for line, col in hits[: max(0, limit)]:
        k, n = block.locate(line)
        ct, lines = block.texts[k], block.lines[k]
        if current is None or current.cell != ct.index or current.part != ct.part:
            current = CellMatches(f"{shown} {ct.label}", file=shown, cell=ct.index, cell_id=ct.cell_id, part=ct.part)
            found.append(current)
        current.matches.append((n, col, lines[n - 1]))
        for m in range(max(1, n - context), min(len(lines), n + context) + 1):
            current.lines[m] = lines[m - 1]
    return found, len(hits)


def load_for_grep(fs: WorkspaceFilesystem, path: str) -> NotebookText | None:
    """The notebook's cell texts to search cell by cell (kept between searches while the file
    does not change: ``ws_jupyter.notebooks.cache``), or None to search the file as text (not a
    notebook, or too large to hold as one: the line reader is bounded)."""
    try:
        return cell_text_cache.get(fs, path)
    except WorkspaceError:
        return None


def workspace_path(base: str, host_base: str, host: str) -> str | None:
    """The workspace path of ``host``, a host path printed by ripgrep or ``find`` run on
    ``host_base`` (the host path of the workspace directory ``base``); None when it is not at or
    below ``host_base``."""
    root = host_base.rstrip("/")
    if host == root:
        return base
    if not host.startswith(root + "/"):
        return None
    sub = host[len(root) + 1 :]
    return sub if base == "." else f"{base}/{sub}"


class NotebookListing:
    """The ``*.ipynb`` files under a directory as ripgrep walks it (the same ignore flags as the
    search), listed by a second ``rg --files`` process (confined like the search) that runs
    *while* the search runs, so it adds little to the search's wall time. :meth:`result` gives ``(path, host path)`` pairs, or
    None when ripgrep failed."""

    def __init__(
        self, rg: Confined, host_base: str, base: str, include_hidden: bool, respect_gitignore: bool = True
    ) -> None:
        self.host_base = host_base
        self.base = base
        args = [
            "--files", "--null", "--no-config", "--iglob", "*.ipynb",
            "--no-ignore-parent", "--no-ignore-global", "--no-ignore-dot", "--no-ignore-exclude",
            "--no-require-git", "-g", "!.git",
        ]  # fmt: skip
        if include_hidden:
            args.append("--hidden")
        if not respect_gitignore:
            args.append("--no-ignore")
        self._proc = rg.popen(
            [*args, "--", host_base], cwd=host_base, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )

    def result(self, timeout: float) -> list[tuple[str, str]] | None:
        proc = self._proc
        if proc is None:
            return None
        try:
            stdout, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return None
        if proc.returncode not in (0, 1):
            return None
        out = []
        for raw in stdout.split(b"\0"):
            if not raw:
                continue
            host = os.fsdecode(raw)
            rel = workspace_path(self.base, self.host_base, host)
            if rel is not None:
                out.append((rel, host))
        return out

    def cancel(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.communicate()


def glob_excludes_notebooks(glob: str | None) -> bool:
    """A path glob such as ``*.py`` or ``src/**/*.md`` that no notebook can match."""
    if glob is None:
        return False
    last = glob.rsplit("/", 1)[-1]
    return bool(re.fullmatch(r"\*\.[A-Za-z0-9_+-]+", last)) and last.lower() != "*.ipynb"


def notebook_hits(
    fs: WorkspaceFilesystem,
    rel: str,
    rx: GrepPattern,
    context: int,
    remaining: int,
    deadline: float,
    max_count: int | None,
    opts: SearchOptions,
) -> tuple[list[Matches], int]:
    """``(matches shown, matching lines in all)`` of a notebook: cell by cell; a ``.ipynb`` that
    is not a readable notebook is searched as its text. Raises ``BinaryFile`` like a file search."""
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
    hits = search_file(fs, rel, rel, rx, context, per_file_limit(max_count, limit), deadline, max_count)
    total = len(hits.matches)
    if opts.count_all and (max_count is None or total < max_count) and total >= limit:
        total = count_file(fs, rel, rx, deadline, max_count)
    return ([hits] if hits.matches else []), total
