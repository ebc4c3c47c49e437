"""Finding skill folders from configured paths and globs.

Each configured entry may be:

* a skill folder (``skills/pdf``) or its ``SKILL.md`` (``skills/pdf/SKILL.md``);
* a parent folder (``skills``): its sub-folders are searched for ``SKILL.md``, also in nested
  layouts (``skills/data/cleaning/SKILL.md``) down to ``max_depth`` levels; a folder that is a
  skill is not searched further (its sub-folders are its references, scripts and assets);
  hidden folders and tool caches are skipped;
* a glob (``**/skills``, ``skills/*``, ``**/SKILL.md``, ``{a,b}/skills``): ``**`` spans at most
  ``max_depth`` folders and does not enter ``.git``, caches, virtual environments,
  ``node_modules`` or ``site-packages`` (name them literally to search there); each hit is
  handled as above.

A trailing slash is ignored. Missing paths are reported as ``missing`` issues (not errors: the
folder may appear later and ``refresh()`` picks it up). Folders reached twice — through two
patterns or through a symlink — are one skill, identified by real path.

Every folder read during discovery is fingerprinted, so ``refresh()`` can tell with ``stat``
calls alone whether discovery must run again.
"""

from __future__ import annotations

import posixpath
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from types import MappingProxyType
from typing import Any

from ..filesystem.globs import expand_braces, has_glob
from ..filesystem.types import FileEntry
from .model import SkillIssue, SourceKind
from .source import normalize_source_path, source_fingerprint, source_realpath

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "PRUNED_DIRS",
    "SKILL_FILE",
    "DiscoveryResult",
    "SkillLocation",
    "classify_source_kind",
    "discover_skills",
    "join_path",
    "watched_changed",
]

SKILL_FILE = "SKILL.md"
DEFAULT_MAX_DEPTH = 4
#: Never entered by ``**`` or by parent-folder scans (a literal pattern segment still enters them).
PRUNED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".ipynb_checkpoints",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        "node_modules",
        "site-packages",
        "dist-packages",
    }
)
_EXTERNAL_SEGMENTS = frozenset({"node_modules", "site-packages", "dist-packages"})


def join_path(parent: str, name: str) -> str:
    """Join source paths without producing ``./x`` or ``//x``."""
    if parent in ("", "."):
        return name
    if parent.endswith("/"):
        return parent + name
    return f"{parent}/{name}"


def classify_source_kind(path: str) -> SourceKind:
    """``external`` inside ``site-packages``/``node_modules``, ``managed`` under ``.ws/skills``,
    else ``local``.

    >>> classify_source_kind(".ws/skills/pdf"), classify_source_kind("node_modules/x/skills/pdf")
    ('managed', 'external')
    """
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    if any(p in _EXTERNAL_SEGMENTS for p in parts):
        return "external"
    if any(parts[i] == ".ws" and parts[i + 1] == "skills" for i in range(len(parts) - 1)):
        return "managed"
    return "local"


@dataclass(frozen=True)
class SkillLocation:
    """A folder that holds a ``SKILL.md``; ``aliases`` are other paths that reached it."""

    path: str
    real_path: str
    kind: SourceKind
    origin: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class DiscoveryResult:
    locations: tuple[SkillLocation, ...]
    issues: tuple[SkillIssue, ...]
    #: every path discovery looked at -> its fingerprint then (None: it did not exist)
    watched: Mapping[str, Hashable | None] = field(default_factory=dict)


def watched_changed(source: Any, watched: Mapping[str, Hashable | None]) -> bool:
    """True when any watched path changed since discovery (stat calls only)."""
    return any(source_fingerprint(source, path) != fp for path, fp in watched.items())


class _Discovery:
    def __init__(self, source: Any, max_depth: int) -> None:
        self.source = source
        self.max_depth = max_depth
        self.watched: dict[str, Hashable | None] = {}
        self.found: dict[str, SkillLocation] = {}  # real path -> location
        self.issues: list[SkillIssue] = []

    # -- primitives ------------------------------------------------------------------------------

    def watch(self, path: str) -> None:
        if path not in self.watched:
            self.watched[path] = source_fingerprint(self.source, path)

    def readdir(self, path: str) -> list[FileEntry]:
        self.watch(path)
        try:
            return list(self.source.readdir(path))
        except (OSError, ValueError):
            return []

    def is_skill_dir(self, path: str) -> bool:
        try:
            return bool(self.source.exists(join_path(path, SKILL_FILE)))
        except (OSError, ValueError):
            return False

    def is_dir(self, path: str) -> bool | None:
        """True/False, or None when the path does not exist."""
        try:
            st = self.source.stat(path)
        except (OSError, ValueError):
            return None
        return st.type == "directory"

    def add(self, path: str, origin: str) -> None:
        path = normalize_source_path(path)
        real = source_realpath(self.source, path)
        known = self.found.get(real)
        if known is not None:
            if path != known.path and path not in known.aliases:
                self.found[real] = SkillLocation(
                    known.path, known.real_path, known.kind, known.origin, (*known.aliases, path)
                )
            return
        self.found[real] = SkillLocation(path, real, classify_source_kind(path), origin)

    # -- strategies ------------------------------------------------------------------------------

    def handle_dir(self, path: str, origin: str) -> None:
        self.watch(path)
        if self.is_skill_dir(path):
            self.add(path, origin)
        else:
            self.scan(path, 1, origin)

    def scan(self, path: str, depth: int, origin: str) -> None:
        for entry in self.readdir(path):
            if entry.type != "directory" or entry.name.startswith(".") or entry.name in PRUNED_DIRS:
                continue
            child = join_path(path, entry.name)
            self.watch(child)
            if self.is_skill_dir(child):
                self.add(child, origin)
            elif depth < self.max_depth:
                self.scan(child, depth + 1, origin)

    def handle_pattern(self, raw: str) -> None:
        pattern = raw.strip()
        while len(pattern) > 1 and pattern.endswith("/"):
            pattern = pattern[:-1]
        if not pattern:
            pattern = "."
        if has_glob(pattern):
            hits: list[str] = []
            for expanded in expand_braces(pattern):
                hits.extend(self.glob(expanded))
            for hit in hits:
                if posixpath.basename(hit) == SKILL_FILE:
                    if self.is_dir(hit) is False:
                        self.add(posixpath.dirname(hit) or ".", raw)
                elif self.is_dir(hit):
                    self.handle_dir(hit, raw)
            return
        path = normalize_source_path(pattern)
        if posixpath.basename(path) == SKILL_FILE:
            folder = posixpath.dirname(path) or "."
            self.watch(folder)
            if self.is_dir(path) is False:
                self.add(folder, raw)
            else:
                self.issues.append(SkillIssue("missing", path, f"Skill file not found: {path}"))
            return
        kind = self.is_dir(path)
        self.watch(path)
        if kind is None:
            self.issues.append(SkillIssue("missing", path, f"Skills path not found: {path}"))
        elif kind:
            self.handle_dir(path, raw)
        else:
            self.issues.append(
                SkillIssue("missing", path, f"Skills path is a file, not a skill folder or SKILL.md: {path}")
            )

    def glob(self, pattern: str) -> list[str]:
        absolute = pattern.startswith("/")
        segments = [s for s in pattern.split("/") if s not in ("", ".")]
        literal: list[str] = []
        while segments and not has_glob(segments[0]):
            literal.append(segments.pop(0))
        base = ("/" if absolute else "") + "/".join(literal) if literal else ("/" if absolute else ".")
        base = normalize_source_path(base)
        if not segments:
            return [base] if self.is_dir(base) is not None else []
        hits: list[str] = []
        visited: set[tuple[str, int]] = set()

        def walk(directory: str, index: int, depth: int) -> None:
            if (directory, index) in visited:
                return
            visited.add((directory, index))
            if index == len(segments):
                hits.append(directory)
                return
            segment = segments[index]
            if segment == "**":
                walk(directory, index + 1, depth)
                if depth >= self.max_depth:
                    return
                for entry in self.readdir(directory):
                    if entry.type == "directory" and entry.name not in PRUNED_DIRS:
                        walk(join_path(directory, entry.name), index, depth + 1)
                return
            last = index == len(segments) - 1
            for entry in self.readdir(directory):
                if not fnmatchcase(entry.name, segment):
                    continue
                if entry.name in PRUNED_DIRS and entry.name != segment:
                    continue
                child = join_path(directory, entry.name)
                if last:
                    hits.append(child)
                elif entry.type == "directory":
                    walk(child, index + 1, depth + 1)

        walk(base, 0, 0)
        return hits


def discover_skills(
    source: Any, patterns: Sequence[str], *, max_depth: int = DEFAULT_MAX_DEPTH
) -> DiscoveryResult:
    """Find every skill folder the configured ``patterns`` reach, in pattern order."""
    discovery = _Discovery(source, max_depth)
    for pattern in patterns:
        discovery.handle_pattern(pattern)
    return DiscoveryResult(
        locations=tuple(discovery.found.values()),
        issues=tuple(discovery.issues),
        watched=MappingProxyType(dict(discovery.watched)),
    )
