"""``EmbedPolicy``: which workspace files get vectors, and which are searched by BM25 only.

Embedding is the slow part of indexing (the model reads every chunk); some files cost as much as
prose to embed yet carry little meaning for a vector: a lock file is pinned versions and hashes,
a data dump is rows of values, minified code is one endless line, generated code repeats what its
source says. Their words still matter to keyword search (a package name, a column, an id), so
they stay in BM25 and only the vectors are left out. ``IndexStatus`` reports what was left out and
why; the rules are options, so a workspace where those files *are* the content embeds them.

The decision is made per file, from its path and text, before it is chunked.

>>> EmbedPolicy().reason("poetry.lock", "[[package]]\\n")
'lock file'
>>> EmbedPolicy().reason("notes/plan.md", "# Plan\\n") is None
True
>>> EmbedPolicy(lock_files=False).reason("poetry.lock", "") is None
True
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import WorkspaceConfigError
from ..filesystem.globs import compile_globs

__all__ = ["DATA_FILE", "GENERATED", "LOCK_FILE", "MINIFIED", "RULE", "EmbedPolicy", "coerce_embed_policy"]

LOCK_FILE = "lock file"
DATA_FILE = "data file"
MINIFIED = "minified"
GENERATED = "generated"
RULE = "excluded by rule"

#: lock files of package managers, by name (pinned versions and hashes)
LOCK_NAMES = (
    "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lock", "poetry.lock",
    "Pipfile.lock", "uv.lock", "pdm.lock", "pixi.lock", "conda-lock.yml", "Cargo.lock", "Gemfile.lock",
    "composer.lock", "go.sum", "flake.lock", "mix.lock", "pubspec.lock", "Podfile.lock",
    "packages.lock.json", "gradle.lockfile", "*.lock",
)
#: data formats: a file of one of these kinds larger than ``data_max_bytes`` is a data dump
DATA_SUFFIXES = (".csv", ".tsv", ".psv", ".jsonl", ".ndjson", ".json", ".geojson", ".xml", ".log")
#: names of minified assets and source maps
MINIFIED_NAMES = ("*.min.js", "*.min.mjs", "*.min.css", "*.map")
#: suffixes of code that is minified when its lines are long (average over the file)
_MINIFIABLE = (".js", ".mjs", ".cjs", ".css")
_MINIFIED_LINE_CHARS = 300
#: names of generated code
GENERATED_NAMES = ("*_pb2.py", "*_pb2_grpc.py", "*.pb.go", "*.pb.cc", "*.pb.h", "*.g.dart", "*.designer.cs")
#: a marker of generated code near the top of a file (Go's "Code generated ... DO NOT EDIT.",
#: Facebook's "@generated", and the usual "auto-generated ... do not edit")
_GENERATED_MARK = re.compile(
    r"@generated\b|\bDO NOT EDIT\b|\b(?:auto-?generated|generated (?:by|from|with))\b.{0,120}\bdo not (?:edit|modify)\b",
    re.IGNORECASE | re.DOTALL)
_HEAD_CHARS = 1024


@dataclass(frozen=True)
class EmbedPolicy:
    """Which files are indexed for BM25 only (no vector). Every rule can be turned off.

    * ``lock_files`` — package-manager lock files (``poetry.lock``, ``package-lock.json``, ...);
    * ``data_max_bytes`` — csv/tsv/json/jsonl/xml/log files larger than this (None: never);
    * ``minified`` — ``*.min.js``, source maps, and js/css whose lines average over 300 characters;
    * ``generated`` — ``*_pb2.py``-style names, or a "DO NOT EDIT" / ``@generated`` mark in the
      first kilobyte;
    * ``exclude`` — more globs kept BM25-only (``list_files``/``.gitignore`` glob rules);
    * ``include`` — globs that always get vectors, whatever the rules above say.
    """

    lock_files: bool = True
    data_max_bytes: int | None = 64 * 1024
    minified: bool = True
    generated: bool = True
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    _match: dict[str, Callable[[str], bool]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("exclude", "include"):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, Sequence):
                raise WorkspaceConfigError(f"EmbedPolicy.{name} must be a list of globs, got {value!r}",
                                           code="INVALID_SEARCH_CONFIG")
            object.__setattr__(self, name, tuple(value))
        if self.data_max_bytes is not None and (not isinstance(self.data_max_bytes, int) or self.data_max_bytes < 0):
            raise WorkspaceConfigError("EmbedPolicy.data_max_bytes must be an int >= 0 or None",
                                       code="INVALID_SEARCH_CONFIG")
        try:
            self._match.update({
                "lock": compile_globs(LOCK_NAMES), "min": compile_globs(MINIFIED_NAMES),
                "gen": compile_globs(GENERATED_NAMES),
                "exclude": compile_globs(self.exclude) if self.exclude else _never,
                "include": compile_globs(self.include) if self.include else _never,
            })
        except ValueError as exc:
            raise WorkspaceConfigError(f"invalid EmbedPolicy glob: {exc}", code="INVALID_SEARCH_CONFIG") from exc

    @classmethod
    def everything(cls) -> EmbedPolicy:
        """Every file gets vectors."""
        return cls(lock_files=False, data_max_bytes=None, minified=False, generated=False)

    @property
    def fingerprint(self) -> str:
        """Changes when the rules do (the index then re-decides every file at its next pass)."""
        return repr((1, self.lock_files, self.data_max_bytes, self.minified, self.generated,
                     self.exclude, self.include))

    def reason(self, path: str, text: str) -> str | None:
        """Why the file at ``path`` (workspace-relative) with content ``text`` gets no vector, or
        None when it gets one."""
        m = self._match
        if m["include"](path):
            return None
        if m["exclude"](path):
            return RULE
        name = posixpath.basename(path)
        lower = name.lower()
        if self.lock_files and m["lock"](path):
            return LOCK_FILE
        if self.minified and (m["min"](path) or (lower.endswith(_MINIFIABLE) and _long_lines(text))):
            return MINIFIED
        if self.generated and (m["gen"](path) or _generated_mark(text)):
            return GENERATED
        if (self.data_max_bytes is not None and lower.endswith(DATA_SUFFIXES)
                and len(text.encode("utf-8", "surrogatepass")) > self.data_max_bytes):
            return DATA_FILE
        return None


def _never(_path: str) -> bool:
    return False


def _generated_mark(text: str) -> bool:
    head = text[:_HEAD_CHARS].lower()
    if "generated" not in head and "do not edit" not in head:  # the cheap test first
        return False
    return _GENERATED_MARK.search(text, 0, _HEAD_CHARS) is not None


def _long_lines(text: str) -> bool:
    lines = text.count("\n") + 1
    return len(text) > 2 * _MINIFIED_LINE_CHARS and len(text) / lines > _MINIFIED_LINE_CHARS


def coerce_embed_policy(value: Any) -> EmbedPolicy:
    """Accepts the Workspace ``embed_policy=`` forms: None/True (the default rules), False (embed
    every file), an :class:`EmbedPolicy` or a dict of its fields."""
    if value is None or value is True:
        return EmbedPolicy()
    if value is False:
        return EmbedPolicy.everything()
    if isinstance(value, EmbedPolicy):
        return value
    if isinstance(value, Mapping):
        try:
            return EmbedPolicy(**dict(value))
        except TypeError as exc:
            raise WorkspaceConfigError(f"Invalid embed_policy options: {exc}", code="INVALID_SEARCH_CONFIG") from exc
    raise WorkspaceConfigError(
        f"embed_policy must be True, False, None, an EmbedPolicy or a dict, got {type(value).__name__}",
        code="INVALID_SEARCH_CONFIG")
