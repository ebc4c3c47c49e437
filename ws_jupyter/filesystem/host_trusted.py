"""Host-trusted files: workspace files whose content decides what programs on the host run.

A sandbox keeps commands away from the host, but some files inside the workspace are read and
*acted on* by the notebook user's own programs, outside any sandbox: git runs the command a
repository's config names in ``core.fsmonitor`` at every ``git status`` (JupyterLab's git panel,
editors and shell prompts run it on their own), direnv runs ``.envrc``, an editor runs the tasks
of ``.vscode``. Whoever can change such a file can run code as the notebook user. The list, and
why each entry is on it:

==========================  =====================================================================
``.git`` (folder or file)   git runs what the repository's config names (fsmonitor, hooksPath,
                            pager, sshCommand, filter/diff/merge drivers, aliases) and its hooks;
                            a ``.git`` *file* points git at another repository (``gitdir:``)
a git directory             a folder holding ``HEAD``, ``objects/`` and ``refs/`` is a (bare)
                            repository for git run inside it, config and hooks included
``.hg``                     Mercurial runs the hooks of ``.hg/hgrc``
``.gitattributes``          selects the filter, diff and merge drivers git runs on each file
``.gitmodules``             submodule paths and URLs git fetches and checks out
``.lfsconfig``              the Git LFS server git sends credentials to
``.pre-commit-config.yaml`` the commands the pre-commit hook runs at every commit
``.envrc``                  direnv runs it when a shell enters the folder
``.vscode``, ``.idea``      editor tasks, run configurations and settings (interpreter path,
                            terminal environment) that the editor runs or applies
``.devcontainer(.json)``    dev-container commands; ``initializeCommand`` runs on the host
a virtual environment       (a folder with ``pyvenv.cfg``): the host runs its interpreter,
                            scripts and ``.pth`` files; uv, poetry and editors use ``.venv``
                            on their own
==========================  =====================================================================

Not on the list, on purpose: files that run only when the user chooses to run the workspace's
own code (``Makefile``, ``pyproject.toml``/``setup.py``, ``package.json``, ``conftest.py``,
``noxfile.py``) — running them is running the agent's code, a decision the user makes; and
``.python-version``, which only selects among installed interpreters.

Two uses: :func:`scan` finds the entries under a host directory (bounded: it must not make a
sandbox's start slow in a large workspace), which a bubblewrap sandbox binds read-only; and
:func:`write_reason` says why a write through the agent's file tools would change one (those
writes need the user's approval).
"""

from __future__ import annotations

import os
import posixpath
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "GIT_DIRECTORY",
    "NAMES",
    "VIRTUAL_ENVIRONMENT",
    "TrustedEntry",
    "TrustedScan",
    "name_reason",
    "scan",
    "submodule_paths",
    "write_reason",
]

_GIT = (
    "git runs the commands its config and hooks name, core.fsmonitor at every git status, and "
    "JupyterLab's git panel and editors run git on their own"
)
_EDITOR = (
    "an editor runs its tasks and applies its settings, such as the interpreter and terminal environment"
)

#: Entry name -> why the host trusts it.
NAMES: dict[str, str] = {
    ".git": _GIT,
    ".hg": "Mercurial runs the hooks its hgrc names",
    ".gitattributes": "selects the filter, diff and merge drivers git runs",
    ".gitmodules": "submodule paths and URLs git fetches and checks out",
    ".lfsconfig": "the Git LFS server git sends credentials to",
    ".pre-commit-config.yaml": "the pre-commit hook runs the commands it lists at every commit",
    ".envrc": "direnv runs it when a shell enters the folder",
    ".vscode": _EDITOR,
    ".idea": _EDITOR,
    ".devcontainer": "dev-container commands, initializeCommand on the host",
    ".devcontainer.json": "dev-container commands, initializeCommand on the host",
}
GIT_DIRECTORY = "a git directory, with HEAD, objects and refs: " + _GIT
VIRTUAL_ENVIRONMENT = (
    "a Python virtual environment: the host runs its interpreter, scripts and .pth files, "
    "and uv, poetry and editors use a .venv on their own"
)
#: Names that make their folder a git directory (all three) or a virtual environment.
_GIT_DIR_NAMES = frozenset({"HEAD", "objects", "refs"})
_VENV_MARKER = "pyvenv.cfg"
#: Folders not searched: big, generated, and never holding host-trusted files of their own.
_SKIPPED = frozenset({"node_modules", "__pycache__"})

#: Bounds of a scan (see ``scan``).
MAX_DEPTH = 4
MAX_DIRECTORIES = 4000
MAX_ENTRIES = 256
MAX_SECONDS = 2.0


def name_reason(name: str) -> str | None:
    """Why an entry called ``name`` is host-trusted wherever it is, or None."""
    return NAMES.get(name)


@dataclass(frozen=True)
class TrustedEntry:
    """One host-trusted file or folder found by :func:`scan`.

    ``path`` is the host path, ``rel`` the path below the scanned root (``"."`` for the root
    itself), ``symlink`` True when the entry is a symbolic link (which no bind can protect).
    """

    path: str
    rel: str
    reason: str
    is_dir: bool
    symlink: bool = False


@dataclass(frozen=True)
class TrustedScan:
    """What :func:`scan` found; ``complete`` is False when a bound stopped it (``note`` says which)."""

    entries: tuple[TrustedEntry, ...] = ()
    complete: bool = True
    note: str = ""

    def __bool__(self) -> bool:
        return bool(self.entries)

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(e.path for e in self.entries)

    @classmethod
    def merge(cls, scans: Iterable[TrustedScan]) -> TrustedScan:
        scans = list(scans)
        seen: dict[str, TrustedEntry] = {}
        for s in scans:
            for e in s.entries:
                seen.setdefault(e.path, e)
        notes = [s.note for s in scans if s.note]
        return cls(tuple(seen.values()), all(s.complete for s in scans), "; ".join(notes))


def _folder_kind(names: Iterable[str]) -> str | None:
    """Why a folder holding ``names`` is itself host-trusted (a git directory, a virtual environment)."""
    names = set(names)
    if names >= _GIT_DIR_NAMES:
        return GIT_DIRECTORY
    if _VENV_MARKER in names:
        return VIRTUAL_ENVIRONMENT
    return None


def _folder_kind_at(folder: str) -> str | None:
    """``_folder_kind`` of a host folder by a few ``lstat`` calls (no listing of a large folder)."""
    return _folder_kind(
        n for n in (*_GIT_DIR_NAMES, _VENV_MARKER) if os.path.lexists(os.path.join(folder, n))
    )


def scan(
    root: str,
    *,
    max_depth: int = MAX_DEPTH,
    max_directories: int = MAX_DIRECTORIES,
    max_entries: int = MAX_ENTRIES,
    max_seconds: float = MAX_SECONDS,
) -> TrustedScan:
    """The host-trusted entries under the host directory ``root`` (breadth first, bounded).

    Folders ``max_depth`` levels below ``root`` are the deepest searched; the scan also stops
    after ``max_directories`` listings, ``max_entries`` finds or ``max_seconds``, and says so
    (``complete=False``). A host-trusted folder is not searched further (all of it counts);
    symbolic links are reported, never followed. ``root`` itself is reported when it is a git
    directory or a virtual environment.

    >>> scan("/nonexistent").entries
    ()
    """
    found: list[TrustedEntry] = []
    queue: deque[tuple[str, str, int]] = deque([(root, ".", 0)])
    listed = 0
    deadline = time.monotonic() + max_seconds
    while queue:
        if listed >= max_directories or len(found) >= max_entries or time.monotonic() > deadline:
            what = (
                f"{max_entries} entries"
                if len(found) >= max_entries
                else f"{max_directories} folders"
                if listed >= max_directories
                else f"{max_seconds:g} s"
            )
            return TrustedScan(tuple(found), False, f"the search stopped after {what}")
        path, rel, depth = queue.popleft()
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError:
            continue
        listed += 1
        kind = _folder_kind(e.name for e in entries)
        if kind is not None:  # all of the folder counts: nothing below it is searched
            found.append(TrustedEntry(path, rel, kind, True))
            continue
        for e in sorted(entries, key=lambda e: e.name):
            child_rel = e.name if rel == "." else f"{rel}/{e.name}"
            try:
                is_link = e.is_symlink()
                is_dir = not is_link and e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            reason = NAMES.get(e.name)
            if reason is not None:
                found.append(TrustedEntry(e.path, child_rel, reason, is_dir, is_link))
            elif is_dir and depth < max_depth and e.name not in _SKIPPED:
                queue.append((e.path, child_rel, depth + 1))
    return TrustedScan(tuple(found))


_MAX_GITMODULES_BYTES = 1 << 16


def submodule_paths(repository: str) -> list[str]:
    """Host paths of the submodules a repository's ``.gitmodules`` lists (inside it only).

    A submodule that is not checked out is an empty folder; ``git status`` in the repository
    runs git *inside* it as soon as it holds a ``.git``, with that ``.git``'s config. Only the
    ``path = ...`` lines are read (no git is run: the repository may be hostile).
    """
    try:
        with open(os.path.join(repository, ".gitmodules"), "rb") as f:
            text = f.read(_MAX_GITMODULES_BYTES).decode("utf-8", "replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if not sep or key.strip().lower() != "path":
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        rel = posixpath.normpath(value.replace("\\", "/"))
        if not value or rel.startswith(("/", "..")) or rel == "." or "\0" in rel:
            continue
        out.append(os.path.join(repository, *rel.split("/")))
    return out


def _fs_parts(fs: Any, path: str) -> tuple[str | None, Sequence[str]]:
    """(real host root or None, components below it) of the target of a write through ``fs``.

    A local workspace resolves symlinks first (a link named ``x`` pointing at ``.git`` counts as
    ``.git``), the way the write itself will; other filesystems classify the path as given.
    """
    containment = getattr(fs, "containment", None)
    if containment is not None:
        resolved = containment.resolve(path, follow=True)
        return resolved.root, resolved.parts
    text = posixpath.normpath(str(path).replace("\\", "/")).strip("/")
    return None, [p for p in text.split("/") if p not in ("", ".")]


def write_reason(fs: Any, path: str) -> str | None:
    """Why writing (or deleting) ``path`` through ``fs`` would change host-trusted configuration.

    Name rules apply on any filesystem; on a local one the folders above the target are also
    checked for being a git directory or a virtual environment, and a file that would complete
    a git directory (``HEAD``) or make a virtual environment (``pyvenv.cfg``) counts as well.

    >>> from types import SimpleNamespace
    >>> write_reason(SimpleNamespace(), "sub/.git/config") is not None, write_reason(SimpleNamespace(), "a.py")
    (True, None)
    """
    root, parts = _fs_parts(fs, path)
    for name in parts:
        reason = NAMES.get(name)
        if reason is not None:
            return reason
    if parts and parts[-1] == "HEAD":
        return GIT_DIRECTORY
    if parts and parts[-1] == _VENV_MARKER:
        return VIRTUAL_ENVIRONMENT
    if root is None:
        return None
    folder = root
    for name in ("", *parts[:-1]):
        folder = os.path.join(folder, name) if name else folder
        kind = _folder_kind_at(folder)
        if kind is not None:
            return kind
    return None
