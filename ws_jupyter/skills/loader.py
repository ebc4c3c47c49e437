"""Loading one discovered skill folder into a ``Skill``: parse SKILL.md, list its files, and
record a fingerprint so an unchanged skill is never read twice.

Files are listed recursively (hidden files, caches and symlinked folders are skipped; a
symlinked file counts only if it resolves inside the skill folder, so a link cannot smuggle a
host file into an agent's reach) and sorted into ``references/``, ``scripts/``, ``assets/`` and
other files.
"""

from __future__ import annotations

import posixpath
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from ..errors import FileTooLargeError, SkillValidationError
from ..filesystem.containment import is_within
from ..filesystem.reading import MAX_CONFIG_BYTES
from .discovery import PRUNED_DIRS, SKILL_FILE, SkillLocation, join_path
from .model import Skill, SkillIssue
from .parsing import parse_skill_md
from .source import source_fingerprint, source_realpath

__all__ = [
    "MAX_SKILL_FILES",
    "SKILL_SUBDIRS",
    "LoadedSkill",
    "fingerprint_changed",
    "is_skill_content",
    "load_skill",
]

SKILL_SUBDIRS = ("references", "scripts", "assets")
#: Listing stops here (with a warning on the skill): a skill is a handful of files, not a tree.
MAX_SKILL_FILES = 1000
MAX_LIST_DEPTH = 20
_IGNORED = PRUNED_DIRS | {".DS_Store", "Thumbs.db"}


def is_skill_content(name: str) -> bool:
    """Whether a file or folder name can be part of a skill: not hidden, a tool cache, OS litter
    or bytecode. Listing a skill and publishing one (``VersionedSkillSource``) agree on this."""
    return not (name.startswith(".") or name in _IGNORED or name.endswith(".pyc"))


Fingerprint = tuple[tuple[str, Hashable | None], ...]


@dataclass(frozen=True)
class LoadedSkill:
    location: SkillLocation
    fingerprint: Fingerprint
    skill: Skill | None = None
    issue: SkillIssue | None = None


def fingerprint_changed(source: Any, fingerprint: Fingerprint) -> bool:
    return any(source_fingerprint(source, path) != fp for path, fp in fingerprint)


def _list_files(
    source: Any, location: SkillLocation, prints: list[tuple[str, Hashable | None]], warnings: list[str]
) -> list[str]:
    files: list[str] = []
    truncated = False

    def walk(directory: str, rel: str, depth: int) -> None:
        nonlocal truncated
        try:
            entries = source.readdir(directory)
        except (OSError, ValueError):
            return
        for entry in entries:
            if not is_skill_content(entry.name):
                continue
            path = join_path(directory, entry.name)
            rel_path = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_symlink:
                if entry.type == "directory":
                    continue
                if not is_within(source_realpath(source, path), location.real_path):
                    warnings.append(f"skipped {rel_path}: a symlink that leads outside the skill folder")
                    continue
            if entry.type == "directory":
                if depth < MAX_LIST_DEPTH:
                    prints.append((path, source_fingerprint(source, path)))
                    walk(path, rel_path, depth + 1)
                continue
            if not rel and entry.name == SKILL_FILE:
                continue
            if len(files) >= MAX_SKILL_FILES:
                truncated = True
                return
            prints.append((path, source_fingerprint(source, path)))
            files.append(rel_path)

    walk(location.path, "", 0)
    if truncated:
        warnings.append(f"more than {MAX_SKILL_FILES} files; only the first {MAX_SKILL_FILES} are listed")
    return files


def load_skill(source: Any, location: SkillLocation) -> LoadedSkill:
    """Read, validate and list one skill; problems come back as an issue, never raised."""
    skill_md = join_path(location.path, SKILL_FILE)
    prints: list[tuple[str, Hashable | None]] = [
        (location.path, source_fingerprint(source, location.path)),
        (skill_md, source_fingerprint(source, skill_md)),
    ]
    folder_name = posixpath.basename(location.path.rstrip("/"))
    if folder_name in ("", ".", ".."):
        folder_name = posixpath.basename(location.real_path.rstrip("/"))
    try:
        size = source.stat(skill_md).size
        if size > MAX_CONFIG_BYTES:
            raise FileTooLargeError(skill_md, size, MAX_CONFIG_BYTES)
        content = source.read_file(skill_md)
        if len(content) > MAX_CONFIG_BYTES:
            raise FileTooLargeError(skill_md, len(content), MAX_CONFIG_BYTES)
        definition = parse_skill_md(content, path=skill_md, folder_name=folder_name)
    except SkillValidationError as exc:
        reasons = tuple(getattr(exc, "reasons", (str(exc),)))
        issue = SkillIssue("invalid", location.path, str(exc), reasons=reasons)
        return LoadedSkill(location, tuple(prints), issue=issue)
    except (OSError, ValueError) as exc:
        issue = SkillIssue("unreadable", location.path, f"Cannot read {skill_md}: {exc}")
        return LoadedSkill(location, tuple(prints), issue=issue)

    warnings = list(definition.warnings)
    files = _list_files(source, location, prints, warnings)
    groups: dict[str, list[str]] = {name: [] for name in SKILL_SUBDIRS}
    other: list[str] = []
    for rel in files:
        head = rel.split("/", 1)[0]
        if head in groups and "/" in rel:
            groups[head].append(rel)
        else:
            other.append(rel)
    skill = Skill(
        name=definition.name,
        description=definition.description,
        instructions=definition.instructions,
        path=location.path,
        source_kind=location.kind,
        license=definition.license,
        compatibility=definition.compatibility,
        metadata=definition.metadata,
        allowed_tools=definition.allowed_tools,
        user_invocable=definition.user_invocable,
        references=tuple(groups["references"]),
        scripts=tuple(groups["scripts"]),
        assets=tuple(groups["assets"]),
        other_files=tuple(other),
        frontmatter=definition.frontmatter,
        real_path=location.real_path,
        warnings=tuple(warnings),
    )
    return LoadedSkill(location, tuple(prints), skill=skill)
