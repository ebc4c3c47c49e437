"""SKILL.md skills: parsing and validation, discovery, sources (local, filesystem, versioned),
and ``WorkspaceSkills`` (list/get/search/read/refresh).

Modules: ``model`` (values), ``parsing`` (SKILL.md rules), ``source`` (the ``SkillSource``
protocol, ``LocalSkillSource``, ``FilesystemSkillSource``), ``versioned`` (content-addressed
published versions), ``discovery`` (paths and globs -> skill folders), ``loader`` (one folder ->
``Skill``), ``workspace_skills`` (``WorkspaceSkills``), ``prompt`` (a skill as a prompt with its
arguments substituted, bounded).
"""

from __future__ import annotations

from .model import (
    Skill,
    SkillChanges,
    SkillFile,
    SkillIssue,
    SkillsContext,
    SkillSearchResult,
    SkillWarning,
    SourceKind,
)
from .parsing import SkillDefinition, parse_skill_md
from .source import FilesystemSkillSource, LocalSkillSource, SkillSource
from .versioned import BlobStore, SkillVersion, SkillVersionFile, VersionedSkillSource
from .workspace_skills import WorkspaceSkills

__all__ = [
    "BlobStore",
    "FilesystemSkillSource",
    "LocalSkillSource",
    "Skill",
    "SkillChanges",
    "SkillDefinition",
    "SkillFile",
    "SkillIssue",
    "SkillSearchResult",
    "SkillSource",
    "SkillVersion",
    "SkillVersionFile",
    "SkillWarning",
    "SkillsContext",
    "SourceKind",
    "VersionedSkillSource",
    "WorkspaceSkills",
    "parse_skill_md",
]
