"""Value objects of the skills feature: a loaded ``Skill``, problems found while loading skills,
search hits, file reads and what a ``skills=fn(ctx)`` resolver receives.

They are plain frozen dataclasses with no I/O, so notebooks can display them, tools can format
them and tests can compare them without touching a source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ..request_context import RequestContext

__all__ = [
    "SOURCE_KIND_RANK",
    "Skill",
    "SkillChanges",
    "SkillFile",
    "SkillIssue",
    "SkillIssueKind",
    "SkillSearchResult",
    "SkillWarning",
    "SkillsContext",
    "SourceKind",
]

#: Where a skill comes from; decides which of two same-named skills wins.
SourceKind = Literal["local", "managed", "external"]

#: Lower rank wins a tie-break: the project's own skills beat managed ones (``.ws/skills``),
#: which beat skills shipped inside installed packages (``site-packages``, ``node_modules``).
SOURCE_KIND_RANK: Mapping[str, int] = MappingProxyType({"local": 0, "managed": 1, "external": 2})

SkillIssueKind = Literal["invalid", "duplicate", "missing", "unreadable"]


class SkillWarning(UserWarning):
    """Emitted once per problem found while discovering skills (invalid SKILL.md, duplicates...)."""


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Skill:
    """One loaded skill: a folder with a valid ``SKILL.md``.

    ``path`` is the folder as the source names it (``skills/data-cleaning``); ``references``,
    ``scripts`` and ``assets`` are paths relative to that folder (``references/style.md``);
    ``metadata`` holds the frontmatter's ``metadata`` mapping plus every top-level key this
    package does not model itself (nothing in the frontmatter is dropped; ``frontmatter`` keeps
    it verbatim).
    """

    name: str
    description: str
    instructions: str
    path: str
    source_kind: SourceKind = "local"
    license: str | None = None
    compatibility: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()
    user_invocable: bool = True
    references: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()
    assets: tuple[str, ...] = ()
    other_files: tuple[str, ...] = ()
    frontmatter: Mapping[str, Any] = field(default_factory=dict)
    real_path: str = ""
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", _frozen(self.metadata))
        object.__setattr__(self, "frontmatter", _frozen(self.frontmatter))
        if not self.real_path:
            object.__setattr__(self, "real_path", self.path)

    def __hash__(self) -> int:
        return hash((self.name, self.real_path))

    @property
    def skill_md_path(self) -> str:
        """Source path of this skill's ``SKILL.md``."""
        return "SKILL.md" if self.path in ("", ".") else f"{self.path}/SKILL.md"

    @property
    def files(self) -> tuple[str, ...]:
        """Every file of the skill, relative to its folder, ``SKILL.md`` first."""
        return ("SKILL.md", *self.references, *self.scripts, *self.assets, *self.other_files)

    def to_markdown(self) -> str:
        """What an agent sees when it activates the skill: instructions, then file lists.

        >>> Skill("x", "d", "Do it.", "skills/x", references=("references/a.md",)).to_markdown()
        'Do it.\\n\\n## References\\n- references/a.md'
        """
        parts = [self.instructions]
        for title, items in (
            ("References", self.references),
            ("Scripts", self.scripts),
            ("Assets", self.assets),
        ):
            if items:
                parts.append(f"## {title}\n" + "\n".join(f"- {item}" for item in items))
        return "\n\n".join(part for part in parts if part)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly summary (tool outputs, widgets)."""
        return {
            "name": self.name,
            "description": self.description,
            "path": self.path,
            "source_kind": self.source_kind,
            "license": self.license,
            "compatibility": self.compatibility,
            "metadata": dict(self.metadata),
            "allowed_tools": list(self.allowed_tools),
            "user_invocable": self.user_invocable,
            "references": list(self.references),
            "scripts": list(self.scripts),
            "assets": list(self.assets),
            "other_files": list(self.other_files),
        }

    def __repr__(self) -> str:
        return f"Skill(name={self.name!r}, path={self.path!r}, source_kind={self.source_kind!r})"


@dataclass(frozen=True)
class SkillIssue:
    """A problem found at discovery time, reported once (warning + ``WorkspaceSkills.issues()``).

    ``kind``: ``invalid`` (SKILL.md fails validation; ``reasons`` lists every rule broken),
    ``duplicate`` (two skills of one source kind share a name; ``paths`` names both),
    ``missing`` (a configured path does not exist), ``unreadable`` (I/O error).
    """

    kind: SkillIssueKind
    path: str
    message: str
    name: str | None = None
    reasons: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        """``missing`` is informational (a path may appear later); the rest are errors."""
        return self.kind != "missing"


@dataclass(frozen=True)
class SkillSearchResult:
    """One hit of ``WorkspaceSkills.search``.

    ``source`` is the file inside the skill (``SKILL.md`` or ``references/x.md``) and
    ``line_range`` is 1-based and inclusive, in that file's coordinates.
    """

    skill_name: str
    skill_path: str
    source: str
    content: str
    score: float
    line_range: tuple[int, int] | None = None
    score_details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "score_details", _frozen(self.score_details))

    def __hash__(self) -> int:
        return hash((self.skill_path, self.source, self.line_range, self.score))


@dataclass(frozen=True)
class SkillFile:
    """A file read from a skill, for ``skill_read``-style access.

    ``text`` is None for binary files (a NUL byte or invalid UTF-8); ``line_range`` is the part of
    the file ``text`` holds when a range was asked for (1-based, inclusive).
    """

    skill_name: str
    skill_path: str
    path: str
    size: int
    data: bytes = field(repr=False)
    text: str | None
    total_lines: int
    line_range: tuple[int, int] | None = None

    @property
    def is_binary(self) -> bool:
        return self.text is None


@dataclass(frozen=True)
class SkillChanges:
    """What one ``refresh()`` changed, by skill name. Falsy when nothing changed."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)


@dataclass(frozen=True)
class SkillsContext:
    """What a ``skills=fn(ctx)`` (or skill-source) resolver receives."""

    request_context: RequestContext | None = None
    workspace: Any = None
