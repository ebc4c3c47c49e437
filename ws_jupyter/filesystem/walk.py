"""Walking a workspace the way a developer expects: ``.gitignore`` at every level, hidden files opt-in.

One walker serves listing, grep, the search indexer and the file browser, so they agree on what
"the files of this workspace" are:

* ``.gitignore`` files are honoured in every directory (deeper rules win, ``!`` re-includes),
  plus ``.git/info/exclude`` at the root; an ignored directory is not descended;
* ``.git`` is always skipped; names starting with ``.`` only with ``include_hidden``;
* symlinks are reported; symlinked directories are descended only with ``follow_symlinks`` and
  only when they resolve inside the workspace (each real directory once);
* within a directory: directories first, then files, each sorted case-insensitively — the
  order a tree listing shows.

On a :class:`LocalFilesystem` it runs on ``os.scandir``; any other provider is walked through
its ``readdir``/``read_file``.
"""

from __future__ import annotations

import os
import posixpath
import stat as stat_mod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    FilesystemError,
    InvalidArgumentError,
    InvalidPathError,
    NotADirectory,
    PathEscapeError,
    WorkspaceError,
)
from .containment import ResolvedPath, fd_levels, is_within, open_child_dir
from .reading import MAX_CONFIG_BYTES, open_regular, read_config, read_fd
from .types import mtime_of

__all__ = ["IgnoreRules", "WalkEntry", "ancestor_rules", "relative_to", "start_rules", "walk"]


@dataclass(frozen=True)
class WalkEntry:
    """One file or directory met by :func:`walk`.

    ``path`` is workspace-relative (as every other API returns it); ``depth`` is 1 for the
    children of the start directory.
    """

    path: str
    name: str
    type: str
    depth: int
    size: int | None = None
    mtime: float | None = None
    is_symlink: bool = False
    symlink_target: str | None = None
    #: The backend's ETag where the listing has one (object stores): a content version that
    #: changes even when size and a whole-second mtime do not.
    etag: str | None = None
    #: The entry's own ``lstat`` on a local filesystem when the walk took one (nanosecond mtime,
    #: inode and mode: what checkpoints compare), else None.
    stat: os.stat_result | None = field(default=None, compare=False, repr=False)

    @property
    def is_dir(self) -> bool:
        return self.type == "directory"


class IgnoreRules:
    """Gitignore rules stacked by directory; immutable, so each subtree extends its parent's."""

    __slots__ = ("_levels",)

    def __init__(self, levels: tuple[tuple[str, Any], ...] = ()) -> None:
        self._levels = levels

    def __bool__(self) -> bool:
        return bool(self._levels)

    def with_file(self, directory: str, text: str) -> IgnoreRules:
        """Rules extended by the ``.gitignore`` text found in ``directory`` (workspace-relative)."""
        import pathspec

        lines = text.splitlines()
        if not any(line.strip() and not line.lstrip().startswith("#") for line in lines):
            return self
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        prefix = "" if directory in ("", ".") else directory.rstrip("/") + "/"
        return IgnoreRules((*self._levels, (prefix, spec)))

    def is_ignored(self, path: str, is_dir: bool) -> bool:
        """Whether a workspace-relative path is ignored (the deepest matching rule decides)."""
        for prefix, spec in reversed(self._levels):
            if prefix and not path.startswith(prefix):
                continue
            sub = path[len(prefix) :]
            result = spec.check_file(sub + "/" if is_dir else sub)
            if result.include is not None:
                return bool(result.include)
        return False


def walk(
    fs: Any,
    path: str = ".",
    *,
    max_depth: int | None = None,
    include_hidden: bool = False,
    respect_gitignore: bool = True,
    follow_symlinks: bool = False,
    skip_dir: Callable[[WalkEntry], bool] | None = None,
    on_error: Callable[[str, Exception], None] | None = None,
    stat: bool = True,
) -> Iterator[WalkEntry]:
    """Yield the entries below ``path`` in tree order (see the module docstring).

    ``skip_dir(entry)`` returning True drops a directory and everything below it.
    ``on_error(path, exc)`` hears about unreadable directories (they are skipped either way).
    A ``path`` that is itself ignored is still walked (explicitly asked for), without the
    ancestor rules that ignore it. ``stat=False`` leaves ``size``/``mtime`` of plain entries unset
    on local filesystems (one system call less per entry, for listings that only show names).
    """
    if max_depth is not None and max_depth < 1:
        raise InvalidArgumentError("max_depth must be >= 1")
    start = fs.stat(path)
    if start.type != "directory":
        raise NotADirectory(start.path)
    start_rel = start.path
    rules = start_rules(fs, start_rel) if respect_gitignore else IgnoreRules()
    containment = getattr(fs, "containment", None)
    if containment is not None and hasattr(fs, "host_path"):
        yield from _walk_local(
            containment,
            containment.resolve(start_rel),
            start_rel,
            max_depth,
            include_hidden,
            respect_gitignore,
            follow_symlinks,
            skip_dir,
            on_error,
            rules,
            stat,
        )
    else:
        yield from _walk_generic(
            fs, start_rel, 1, max_depth, include_hidden, respect_gitignore, skip_dir, on_error, rules
        )


def _join(rel_dir: str, name: str) -> str:
    return name if rel_dir in ("", ".") else f"{rel_dir}/{name}"


def _sort_key(entry: WalkEntry) -> tuple[int, str, str]:
    return (0 if entry.is_dir else 1, entry.name.lower(), entry.name)


def start_rules(fs: Any, start_rel: str) -> IgnoreRules:
    """The rules in effect when walking from ``start_rel``: its ancestors' — or none when
    ``start_rel`` is itself ignored (a directory asked for explicitly is walked)."""
    rules = ancestor_rules(fs, start_rel)
    if rules and start_rel not in ("", ".") and rules.is_ignored(start_rel, True):
        return IgnoreRules()
    return rules


def ancestor_rules(fs: Any, start_rel: str) -> IgnoreRules:
    """Rules from the workspace root down to ``start_rel`` (inclusive), and .git/info/exclude."""
    rules = IgnoreRules()
    exclude = _read_text(fs, ".git/info/exclude")
    if exclude:
        rules = rules.with_file(".", exclude)
    dirs = ["."]
    if start_rel not in ("", "."):
        parts = start_rel.split("/")
        dirs += ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for d in dirs[:-1]:
        text = _read_text(fs, _join(d, ".gitignore"))
        if text:
            rules = rules.with_file(d, text)
    return rules


def _read_text(fs: Any, rel: str) -> str | None:
    """A rules file as text; None when absent or unusable (a symlink, a FIFO, over 1 MiB...)."""
    data = read_config(fs, rel)
    return None if data is None else data.decode("utf-8", "replace")




_Scanned = list[tuple[WalkEntry, "str | ResolvedPath | None"]]


def _walk_local(
    containment: Any,
    start: ResolvedPath,
    rel_dir: str,
    max_depth: int | None,
    include_hidden: bool,
    respect_gitignore: bool,
    follow_symlinks: bool,
    skip_dir: Callable[[WalkEntry], bool] | None,
    on_error: Callable[[str, Exception], None] | None,
    rules: IgnoreRules,
    stat: bool = True,
) -> Iterator[WalkEntry]:
    """The walk on a local filesystem, by directory descriptors: every directory is opened with
    ``O_NOFOLLOW`` relative to its parent's descriptor (a symlinked directory, when followed,
    from the root after containment resolved it), so a directory swapped for a symlink while
    walking cannot make the walk list, stat or read anything outside."""
    root_real = start.host

    def open_dir(parent_fd: int, child: str | ResolvedPath, rel: str) -> int | None:
        try:
            if isinstance(child, ResolvedPath):
                return int(containment.open_dir(child))
            if parent_fd < 0:
                return int(containment.open_dir(containment.resolve(rel, follow=False)))
            return open_child_dir(child, parent_fd, rel)
        except (OSError, WorkspaceError) as exc:
            if on_error is not None:
                on_error(rel, exc)
            return None

    try:
        top = containment.open_dir(start)
    except (OSError, WorkspaceError) as exc:
        if on_error is not None:
            on_error(rel_dir, exc)
        return
    # An explicit stack of per-directory iterators: pre-order without recursion, so a very deep
    # tree cannot exhaust the interpreter's stack. Each level holds its descriptor (-1 once closed).
    stack: list[list[Any]] = []
    try:
        st = os.fstat(top)
        seen = {(st.st_dev, st.st_ino)}
        entries, first_rules = _scan_local(
            containment, top, rel_dir, 1, include_hidden, respect_gitignore, follow_symlinks, on_error,
            rules, root_real, stat,
        )  # fmt: skip
        stack.append([iter(entries), first_rules, 1, top])
        while stack:
            frame = stack[-1]
            it, dir_rules, level, fd = frame
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                if fd >= 0:
                    os.close(fd)
                continue
            entry, descend = nxt
            if entry.is_dir and skip_dir is not None and skip_dir(entry):
                continue
            yield entry
            if descend is None or (max_depth is not None and level >= max_depth):
                continue
            child_fd = open_dir(fd, descend, entry.path)
            if child_fd is None:
                continue
            cst = os.fstat(child_fd)
            if (cst.st_dev, cst.st_ino) in seen:
                os.close(child_fd)
                continue
            seen.add((cst.st_dev, cst.st_ino))
            child_entries, child_rules = _scan_local(
                containment, child_fd, entry.path, level + 1, include_hidden, respect_gitignore,
                follow_symlinks, on_error, dir_rules, root_real, stat,
            )  # fmt: skip
            if len(stack) >= fd_levels():
                os.close(child_fd)
                child_fd = -1
            stack.append([iter(child_entries), child_rules, level + 1, child_fd])
    finally:
        for frame in stack:
            if frame[3] >= 0:
                os.close(frame[3])


def _read_rules_at(dir_fd: int) -> str | None:
    """The ``.gitignore`` of a directory being walked: a regular file (never a symlink, FIFO or
    device) of at most ``MAX_CONFIG_BYTES``, else treated as absent."""
    try:
        fd, st = open_regular(".gitignore", dir_fd=dir_fd)
    except (WorkspaceError, OSError):
        return None
    try:
        return read_fd(fd, max_bytes=MAX_CONFIG_BYTES, size=st.st_size).decode("utf-8", "replace")
    except (WorkspaceError, OSError):
        return None
    finally:
        os.close(fd)


def _scan_local(
    containment: Any,
    dir_fd: int,
    rel_dir: str,
    depth: int,
    include_hidden: bool,
    respect_gitignore: bool,
    follow_symlinks: bool,
    on_error: Callable[[str, Exception], None] | None,
    rules: IgnoreRules,
    root_real: str,
    stat: bool = True,
) -> tuple[_Scanned, IgnoreRules]:
    """One directory: its visible entries in tree order, and the rules its children inherit."""
    try:
        with os.scandir(dir_fd) as it:
            raw = list(it)
    except OSError as exc:
        if on_error is not None:
            on_error(rel_dir, exc)
        return [], rules
    if respect_gitignore and any(e.name == ".gitignore" for e in raw):
        text = _read_rules_at(dir_fd)
        if text:
            rules = rules.with_file(rel_dir, text)
    entries: _Scanned = []
    for e in raw:
        name = e.name
        if name == ".git" or (not include_hidden and name.startswith(".")):
            continue
        rel = _join(rel_dir, name)
        try:
            target = None
            descend: str | ResolvedPath | None = None
            st: os.stat_result | None = None
            if not stat and not e.is_symlink():
                # names only: the entry type comes with the directory listing (no stat call)
                is_link, size, mtime = False, None, None
                is_dir_entry = e.is_dir(follow_symlinks=False)
                kind = "directory" if is_dir_entry else "file"
                descend = name if is_dir_entry else None
            else:
                st = e.stat(follow_symlinks=False)
                is_link = stat_mod.S_ISLNK(st.st_mode)
                if is_link:
                    target = os.readlink(name, dir_fd=dir_fd)
                    kind, size, mtime, resolved = _link_target(containment, rel)
                    # a link to a directory inside the walked tree is walked where it really is
                    if resolved is not None and follow_symlinks and not is_within(resolved.host, root_real):
                        descend = resolved
                elif stat_mod.S_ISDIR(st.st_mode):
                    kind, size, mtime, descend = "directory", None, mtime_of(st), name
                else:
                    kind, size, mtime = "file", st.st_size, mtime_of(st)
        except OSError:
            continue  # vanished, or a dangling link target: nothing to report
        if rules and rules.is_ignored(rel, kind == "directory"):
            continue
        entries.append((WalkEntry(rel, name, kind, depth, size, mtime, is_link, target, stat=st), descend))
    entries.sort(key=lambda pair: _sort_key(pair[0]))
    return entries, rules


def _link_target(containment: Any, rel: str) -> tuple[str, int | None, float | None, ResolvedPath | None]:
    """(type, size, mtime, resolved directory) of a symlink at ``rel``. A target outside the
    workspace is never looked at (a file of unknown size); a dangling one raises ``OSError``."""
    try:
        resolved = containment.resolve(rel)
    except (PathEscapeError, InvalidPathError):
        return "file", None, None, None
    tst = containment.stat(resolved)
    if stat_mod.S_ISDIR(tst.st_mode):
        return "directory", None, mtime_of(tst), resolved
    return "file", tst.st_size, mtime_of(tst), None


def _walk_generic(
    fs: Any,
    rel_dir: str,
    depth: int,
    max_depth: int | None,
    include_hidden: bool,
    respect_gitignore: bool,
    skip_dir: Callable[[WalkEntry], bool] | None,
    on_error: Callable[[str, Exception], None] | None,
    rules: IgnoreRules,
) -> Iterator[WalkEntry]:
    def scan(rel: str, level: int, inherited: IgnoreRules) -> tuple[Iterator[WalkEntry], IgnoreRules]:
        try:
            raw = fs.readdir(rel)
        except (FilesystemError, OSError) as exc:
            if on_error is not None:
                on_error(rel, exc)
            return iter(()), inherited
        local_rules = inherited
        if respect_gitignore and any(e.name == ".gitignore" for e in raw):
            text = _read_text(fs, _join(rel, ".gitignore"))
            if text:
                local_rules = inherited.with_file(rel, text)
        entries = []
        for e in raw:
            if e.name == ".git" or (not include_hidden and e.name.startswith(".")):
                continue
            child = _join(rel, e.name)
            if local_rules and local_rules.is_ignored(child, e.type == "directory"):
                continue
            entries.append(
                WalkEntry(child, e.name, e.type, level, e.size, e.mtime, e.is_symlink, e.symlink_target, e.etag)
            )
        entries.sort(key=_sort_key)
        return iter(entries), local_rules

    first, first_rules = scan(rel_dir, depth, rules)
    stack = [(first, first_rules, depth)]
    while stack:
        entries, dir_rules, level = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        if entry.is_dir and skip_dir is not None and skip_dir(entry):
            continue
        yield entry
        if entry.is_dir and not entry.is_symlink and (max_depth is None or level < max_depth):
            child, child_rules = scan(entry.path, level + 1, dir_rules)
            stack.append((child, child_rules, level + 1))


def relative_to(base: str, path: str) -> str:
    """``path`` relative to the walked directory ``base`` (both workspace-relative)."""
    if base in ("", "."):
        return path
    return posixpath.relpath(path, base)
