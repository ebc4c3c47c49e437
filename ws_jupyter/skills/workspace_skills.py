"""``WorkspaceSkills``: the skills of a workspace — discovery, tie-breaking, lookup, file access,
search and refresh.

Design points (each fixes a weakness of the reference implementation):

* Problems are found at discovery time and reported once: an invalid SKILL.md or two skills of
  one source kind sharing a name produce one ``SkillWarning`` (and an entry in ``issues()``),
  not an exception at every call. ``get(name)`` of an ambiguous name raises the recorded
  ``DuplicateSkillError`` naming both folders; ``get(path)`` still picks one.
* ``refresh()`` is mtime-based with no cooldown: when nothing changed it costs ``stat`` calls
  only; changed skills are re-read one by one, the others are kept as they are. Read methods
  run the same check at most every ``refresh_interval`` seconds (1 s by default).
* Skill search uses its own search engine (from ``search_engine_factory``), so skill documents
  never appear in the workspace's file search; without an engine a substring search is used.
* Readers see an immutable snapshot, swapped atomically when a refresh completes: a refresh in
  one thread never shows a half-built catalogue to another.

>>> skills = WorkspaceSkills(LocalSkillSource("."), ["skills"])   # doctest: +SKIP
>>> [s.name for s in skills.list()]                                  # doctest: +SKIP
['data-cleaning', 'notebook-review', 'plotting-style']
"""

from __future__ import annotations

import builtins
import logging
import posixpath
import re
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    DuplicateSkillError,
    FileNotFound,
    FileTooLargeError,
    SkillError,
    SkillNotFoundError,
    SkillPathError,
    SkillValidationError,
    WorkspaceConfigError,
    WorkspaceNotReadyError,
)
from ..filesystem.containment import is_within
from ..request_context import RequestContext
from .discovery import DEFAULT_MAX_DEPTH, DiscoveryResult, discover_skills, join_path, watched_changed
from .loader import SKILL_SUBDIRS, LoadedSkill, fingerprint_changed, load_skill
from .model import (
    SOURCE_KIND_RANK,
    Skill,
    SkillChanges,
    SkillFile,
    SkillIssue,
    SkillsContext,
    SkillSearchResult,
    SkillWarning,
)
from .source import (
    FilesystemSkillSource,
    LocalSkillSource,
    SkillSource,
    normalize_source_path,
    source_realpath,
)

__all__ = ["SkillPaths", "SkillSourceOption", "WorkspaceSkills"]

logger = logging.getLogger("ws_jupyter.skills")

#: ``paths=`` option: one path, a list of paths/globs, or ``fn(SkillsContext) -> list``.
SkillPaths = str | Sequence[str] | Callable[[SkillsContext], Sequence[str]]
#: ``source=`` option: a source, or ``fn(SkillsContext) -> source`` (e.g. per-request filesystems).
SkillSourceOption = SkillSource | Callable[[SkillsContext], SkillSource] | None

#: Files larger than this are not indexed for search (they are still readable).
MAX_INDEXED_BYTES = 1 << 20
_TEXT_DOC_SUFFIXES = (".md", ".markdown", ".txt", ".rst")
_PREVIEW_LINES = 4
_WORD = re.compile(r"\w+", re.UNICODE)


def _as_text(data: bytes) -> str | None:
    """The text of a skill file, or None when it is binary (a NUL byte or invalid UTF-8)."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass(frozen=True)
class _View:
    """An immutable snapshot of one catalogue (what readers see)."""

    skills: tuple[Skill, ...] = ()
    by_name: Mapping[str, tuple[Skill, ...]] = field(default_factory=dict)
    by_path: Mapping[str, Skill] = field(default_factory=dict)
    duplicates: Mapping[str, DuplicateSkillError] = field(default_factory=dict)
    issues: tuple[SkillIssue, ...] = ()


def _build_view(loaded: Mapping[str, LoadedSkill], discovery: DiscoveryResult) -> _View:
    skills: list[Skill] = []
    by_path: dict[str, Skill] = {}
    issues: list[SkillIssue] = list(discovery.issues)
    for entry in loaded.values():
        if entry.skill is None:
            if entry.issue is not None:
                issues.append(entry.issue)
            continue
        skill = entry.skill
        skills.append(skill)
        for alias in (entry.location.path, *entry.location.aliases, entry.location.real_path):
            by_path.setdefault(alias, skill)
    skills.sort(key=lambda s: (s.name, SOURCE_KIND_RANK[s.source_kind], s.path))
    by_name: dict[str, list[Skill]] = {}
    for skill in skills:
        by_name.setdefault(skill.name, []).append(skill)
    duplicates: dict[str, DuplicateSkillError] = {}
    for name, candidates in by_name.items():
        if len(candidates) < 2:
            continue
        best_kind = candidates[0].source_kind
        rivals = [c for c in candidates if c.source_kind == best_kind]
        if len(rivals) < 2:
            others = ", ".join(f'"{c.path}" ({c.source_kind})' for c in candidates[1:])
            logger.info('Skill "%s": using "%s" (%s) over %s', name, candidates[0].path, best_kind, others)
            continue
        listed = " and ".join(f'"{c.path}"' for c in rivals)
        message = (
            f'Two {best_kind} skills are named "{name}": {listed}. Rename one (name and folder), or move '
            f"one to another source kind (local > managed .ws/skills > external site-packages/node_modules). "
            f"To use one now, pass its path instead of the name."
        )
        error = DuplicateSkillError(message, path=rivals[0].path)
        error.name = name  # type: ignore[attr-defined]
        error.paths = tuple(c.path for c in rivals)  # type: ignore[attr-defined]
        duplicates[name] = error
        issues.append(
            SkillIssue("duplicate", rivals[0].path, message, name=name, paths=tuple(c.path for c in rivals))
        )
    issues.sort(key=lambda i: (i.path, i.kind))
    return _View(
        skills=tuple(skills),
        by_name={name: tuple(c) for name, c in by_name.items()},
        by_path=by_path,
        duplicates=duplicates,
        issues=tuple(issues),
    )


class _Catalog:
    """The skills one (source, paths) pair yields, with its refresh state and search index."""

    def __init__(self, source: Any, paths: tuple[str, ...], max_depth: int) -> None:
        self.source = source
        self.paths = paths
        self.max_depth = max_depth
        self.lock = threading.RLock()
        self.discovery: DiscoveryResult | None = None
        self.loaded: dict[str, LoadedSkill] = {}
        self.view = _View()
        self.last_check = 0.0
        self.reported: set[tuple[Any, str, str]] = set()
        # search
        self.engine: Any = None
        self.engine_made = False
        self.indexed: dict[str, tuple[Hashable, tuple[str, ...]]] = {}  # real path -> (fingerprint, doc ids)
        self.texts: dict[tuple[str, str], tuple[Hashable, str | None]] = {}

    @property
    def loaded_once(self) -> bool:
        return self.discovery is not None

    def unchanged(self) -> bool:
        assert self.discovery is not None
        if watched_changed(self.source, self.discovery.watched):
            return False
        return not any(fingerprint_changed(self.source, entry.fingerprint) for entry in self.loaded.values())

    def refresh(self) -> tuple[SkillChanges, builtins.list[SkillIssue]]:
        """Bring the catalogue up to date; returns the changes and the issues not reported before."""
        with self.lock:
            self.last_check = time.monotonic()
            if self.discovery is not None and self.unchanged():
                return SkillChanges(), []
            discovery = discover_skills(self.source, self.paths, max_depth=self.max_depth)
            loaded: dict[str, LoadedSkill] = {}
            for location in discovery.locations:
                old = self.loaded.get(location.real_path)
                if (
                    old is not None
                    and old.location == location
                    and not fingerprint_changed(self.source, old.fingerprint)
                ):
                    loaded[location.real_path] = old
                else:
                    loaded[location.real_path] = load_skill(self.source, location)
            # Changes are keyed by the skill's path: a new version of a published skill has a new
            # real path but is the same skill, changed.
            before = {e.location.path: e for e in self.loaded.values() if e.skill is not None}
            after = {e.location.path: e for e in loaded.values() if e.skill is not None}
            changes = SkillChanges(
                added=tuple(sorted(e.skill.name for p, e in after.items() if p not in before and e.skill)),
                changed=tuple(
                    sorted(
                        e.skill.name
                        for p, e in after.items()
                        if p in before and e is not before[p] and e.skill is not None
                    )
                ),
                removed=tuple(sorted(e.skill.name for p, e in before.items() if p not in after and e.skill)),
            )
            for rp in set(self.loaded) - set(loaded):
                for key in [k for k in self.texts if k[0] == rp]:
                    del self.texts[key]
            self.discovery = discovery
            self.loaded = loaded
            self.view = _build_view(loaded, discovery)
            keys = {(i.kind, i.path, i.message) for i in self.view.issues}
            fresh = [i for i in self.view.issues if (i.kind, i.path, i.message) not in self.reported]
            self.reported = keys
            return changes, fresh

    def file_fingerprint(self, skill: Skill, source_path: str) -> Hashable | None:
        entry = self.loaded.get(skill.real_path)
        if entry is None:
            return None
        for path, fp in entry.fingerprint:
            if path == source_path:
                return fp
        return None


class _ResolvedFilesystemSources:
    """Source resolver for workspaces whose filesystem is a resolver: one source per resolved
    filesystem, kept while that filesystem is, so catalogues are reused across calls."""

    def __init__(self, workspace: Any) -> None:
        self._workspace = workspace
        self._sources: OrderedDict[int, tuple[Any, FilesystemSkillSource]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, ctx: SkillsContext) -> FilesystemSkillSource:
        filesystem = self._workspace.resolve_filesystem(ctx.request_context)
        with self._lock:
            known = self._sources.get(id(filesystem))
            if known is not None and known[0] is filesystem:
                self._sources.move_to_end(id(filesystem))
                return known[1]
            source = FilesystemSkillSource(filesystem)
            self._sources[id(filesystem)] = (filesystem, source)
            while len(self._sources) > 64:
                self._sources.popitem(last=False)
            return source


class WorkspaceSkills:
    """The skills of a workspace (``workspace.skills``).

    ``source`` reads the files (default: ``LocalSkillSource()`` on the current directory);
    ``paths`` says where skills live (paths, globs, or ``fn(SkillsContext) -> paths``);
    ``search_engine_factory`` returns a *fresh* search engine dedicated to skills, or None for
    substring search. ``workspace`` is handed to resolvers in ``SkillsContext``.
    ``refresh_interval``: read methods re-check for changes at most this often (seconds;
    0 = every call, None = only on ``refresh()``). ``strict=True`` makes ``refresh()`` raise the
    first problem found (handy in a skill repository's own tests).

    Every read method accepts ``request_context`` for workspaces whose paths or source depend on
    the request.
    """

    def __init__(
        self,
        source: SkillSourceOption = None,
        paths: SkillPaths = (),
        *,
        search_engine_factory: Callable[[], Any] | None = None,
        workspace: Any = None,
        refresh_interval: float | None = 1.0,
        strict: bool = False,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_catalogs: int = 32,
    ) -> None:
        if isinstance(paths, str):
            paths = (paths,)
        if not callable(paths):
            if not isinstance(paths, Sequence) or not all(isinstance(p, str) for p in paths):
                raise WorkspaceConfigError(
                    f"skills paths must be a list of path strings or a function, got {paths!r}"
                )
            paths = tuple(paths)
        if refresh_interval is not None and refresh_interval < 0:
            raise WorkspaceConfigError("refresh_interval must be >= 0 seconds or None")
        if max_depth < 0:
            raise WorkspaceConfigError("max_depth must be >= 0")
        self._source_option = source if source is not None else LocalSkillSource()
        self._paths_option = paths
        self._engine_factory = search_engine_factory
        self._workspace = workspace
        self._refresh_interval = refresh_interval
        self._strict = strict
        self._max_depth = max_depth
        self._max_catalogs = max(1, max_catalogs)
        self._catalogs: OrderedDict[tuple[int, tuple[str, ...]], _Catalog] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def for_workspace(cls, workspace: Any) -> WorkspaceSkills:
        """The skills of ``workspace``: its ``skills`` paths, read through its ``skill_source``, else
        through its filesystem (containment applies; a resolver filesystem is resolved per request),
        else from the current directory; searched with an engine of the workspace's search
        configuration kept apart from file search."""
        paths = getattr(workspace, "_skills_paths", ())
        source: SkillSourceOption = getattr(workspace, "_skill_source", None)
        if source is None and workspace.has_filesystem_config():
            if workspace.filesystem is not None:
                source = FilesystemSkillSource(workspace.filesystem)
            else:
                source = _ResolvedFilesystemSources(workspace)
        factory: Callable[[], Any] | None = None
        if getattr(workspace, "can_search", False):

            def factory() -> Any:
                from ..search.engine import SearchEngine

                return SearchEngine.for_workspace(workspace, purpose="skills")

        return cls(source, paths, search_engine_factory=factory, workspace=workspace)

    # -- configuration ---------------------------------------------------------------------------

    @property
    def paths(self) -> SkillPaths:
        """The configured paths (or resolver function)."""
        return self._paths_option

    @property
    def source(self) -> SkillSourceOption:
        """The configured source (or resolver function)."""
        return self._source_option

    def __repr__(self) -> str:
        paths = "<resolver>" if callable(self._paths_option) else list(self._paths_option)
        return f"WorkspaceSkills(paths={paths!r}, source={self._source_option!r})"

    def _context(self, request_context: RequestContext | None) -> SkillsContext:
        return SkillsContext(request_context=request_context, workspace=self._workspace)

    def _resolve_source(self, ctx: SkillsContext) -> Any:
        option = self._source_option
        if callable(option) and not hasattr(option, "readdir"):
            try:
                source = option(ctx)
            except Exception as exc:
                raise SkillError(f"The skill source resolver failed: {exc}") from exc
            if source is None or not hasattr(source, "readdir"):
                raise WorkspaceConfigError(
                    f"The skill source resolver returned {source!r}, not a SkillSource"
                )
            return source
        return option

    def _resolve_paths(self, ctx: SkillsContext) -> tuple[str, ...]:
        option = self._paths_option
        if not callable(option):
            return tuple(option)
        try:
            value = option(ctx)
        except Exception as exc:
            raise SkillError(f"The skills path resolver failed: {exc}") from exc
        if isinstance(value, str):
            value = [value]
        if value is None or not all(isinstance(p, str) for p in value):
            raise WorkspaceConfigError(
                f"The skills path resolver must return a list of strings, got {value!r}"
            )
        return tuple(value)

    def _ensure_open(self) -> None:
        if self._closed:
            raise WorkspaceNotReadyError("destroyed")

    def _catalog(self, request_context: RequestContext | None, *, check: bool = True) -> _Catalog:
        self._ensure_open()
        ctx = self._context(request_context)
        source = self._resolve_source(ctx)
        paths = self._resolve_paths(ctx)
        key = (id(source), paths)
        evicted: builtins.list[_Catalog] = []
        with self._lock:
            catalog = self._catalogs.get(key)
            if catalog is None or catalog.source is not source:
                catalog = _Catalog(source, paths, self._max_depth)
                self._catalogs[key] = catalog
                while len(self._catalogs) > self._max_catalogs:
                    evicted.append(self._catalogs.popitem(last=False)[1])
            else:
                self._catalogs.move_to_end(key)
        for old in evicted:
            self._close_engine(old)
        if not catalog.loaded_once or (
            check
            and self._refresh_interval is not None
            and time.monotonic() - catalog.last_check >= self._refresh_interval
        ):
            self._run_refresh(catalog, raise_strict=False)
        return catalog

    # -- refresh -------------------------------------------------------------------------------------

    def _run_refresh(self, catalog: _Catalog, *, raise_strict: bool) -> SkillChanges:
        changes, fresh = catalog.refresh()
        for issue in fresh:
            log = logger.info if issue.kind == "missing" else logger.warning
            log("%s", issue.message)
            warnings.warn(issue.message, SkillWarning, stacklevel=4)
        if raise_strict and self._strict:
            for issue in catalog.view.issues:
                if issue.kind == "duplicate" and issue.name is not None:
                    raise catalog.view.duplicates[issue.name]
                if issue.kind == "invalid":
                    err = SkillValidationError(issue.message, path=issue.path)
                    err.reasons = issue.reasons  # type: ignore[attr-defined]
                    raise err
                if issue.kind == "unreadable":
                    raise SkillError(issue.message, path=issue.path)
        return changes

    def refresh(self, request_context: RequestContext | None = None) -> SkillChanges:
        """Pick up added, changed and removed skills now; returns what changed (by name).

        Costs ``stat`` calls only when nothing changed. New problems are reported once as
        ``SkillWarning``; with ``strict=True`` the first problem is raised instead.
        """
        catalog = self._catalog(request_context, check=False)
        return self._run_refresh(catalog, raise_strict=True)

    def issues(self, request_context: RequestContext | None = None) -> builtins.list[SkillIssue]:
        """Problems of the current catalogue: invalid SKILL.md files, duplicates, missing paths."""
        return builtins.list(self._catalog(request_context).view.issues)

    # -- lookup --------------------------------------------------------------------------------------

    def list(self, request_context: RequestContext | None = None) -> builtins.list[Skill]:
        """Every valid skill, sorted by name (same-named skills from several places all appear,
        best first)."""
        return builtins.list(self._catalog(request_context).view.skills)

    def names(self, request_context: RequestContext | None = None) -> builtins.list[str]:
        """Distinct skill names, sorted."""
        return builtins.list(self._catalog(request_context).view.by_name)

    def _lookup(self, catalog: _Catalog, name_or_path: str | Skill) -> Skill | None:
        view = catalog.view
        if isinstance(name_or_path, Skill):
            return view.by_path.get(name_or_path.real_path)
        if not isinstance(name_or_path, str):
            raise SkillNotFoundError(
                f"A skill name or path must be a string, got {type(name_or_path).__name__}"
            )
        key = name_or_path.strip()
        candidates = view.by_name.get(key)
        if candidates:
            duplicate = view.duplicates.get(key)
            if duplicate is not None:
                raise duplicate
            return candidates[0]
        path = normalize_source_path(key.rstrip("/") or key)
        if posixpath.basename(path) == "SKILL.md":
            path = posixpath.dirname(path) or "."
        skill = view.by_path.get(path)
        if skill is None and path:
            skill = view.by_path.get(source_realpath(catalog.source, path))
        return skill

    def get(self, name_or_path: str | Skill, request_context: RequestContext | None = None) -> Skill | None:
        """The skill with this name (tie-break: local > managed > external) or at this path
        (``skills/pdf``, ``skills/pdf/SKILL.md``, or any path that leads to it); None if unknown.

        Raises ``DuplicateSkillError`` when the name is shared by two skills of one source kind
        (the message names both paths; pass a path to choose).
        """
        return self._lookup(self._catalog(request_context), name_or_path)

    def require(self, name_or_path: str | Skill, request_context: RequestContext | None = None) -> Skill:
        """Like :meth:`get`, but an unknown skill raises ``SkillNotFoundError`` naming the available
        ones (the text an agent sees from the ``skill`` tool)."""
        return self._require(self._catalog(request_context), name_or_path)

    def has(self, name_or_path: str, request_context: RequestContext | None = None) -> bool:
        """Whether a skill with this name or path exists (ambiguous names count as existing)."""
        catalog = self._catalog(request_context)
        if isinstance(name_or_path, str) and name_or_path.strip() in catalog.view.by_name:
            return True
        try:
            return self._lookup(catalog, name_or_path) is not None
        except SkillError:
            return False

    def __contains__(self, name_or_path: object) -> bool:
        return isinstance(name_or_path, str) and self.has(name_or_path)

    def __iter__(self) -> Iterator[Skill]:
        return iter(self.list())

    def __len__(self) -> int:
        return len(self.list())

    def _require(self, catalog: _Catalog, skill: str | Skill) -> Skill:
        found = self._lookup(catalog, skill)
        if found is None:
            available = ", ".join(f"{s.name} ({s.path})" for s in catalog.view.skills) or "none"
            label = skill.name if isinstance(skill, Skill) else skill
            raise SkillNotFoundError(f'Skill "{label}" not found. Available skills: {available}')
        return found

    # -- files -----------------------------------------------------------------------------------------

    def _relative(self, catalog: _Catalog, skill: Skill, path: str, subdir: str | None, label: str) -> str:
        """Validate an agent-supplied path and return it relative to the skill folder."""
        if not isinstance(path, str) or not path.strip():
            raise SkillPathError(f"Invalid {label} path: {path!r} (empty)")
        raw = path
        if "\x00" in path:
            raise SkillPathError(f"Invalid {label} path: {raw!r} (NUL byte)", path=raw)
        path = path.strip()
        if path.startswith(("/", "~", "\\")) or re.match(r"^[A-Za-z]:[\\/]", path):
            raise SkillPathError(
                f"Invalid {label} path: {raw} (use a path relative to the skill folder, e.g. references/x.md)",
                path=raw,
            )
        segments = [s for s in re.split(r"[/\\]", path) if s not in ("", ".")]
        if ".." in segments:
            raise SkillPathError(f"Invalid {label} path: {raw} ('..' is not allowed)", path=raw)
        if not segments:
            raise SkillPathError(f"Invalid {label} path: {raw!r} (names no file)", path=raw)
        rel = "/".join(segments)
        if subdir is not None and segments[0] != subdir:
            rel = f"{subdir}/{rel}"
        full = join_path(skill.path, rel)
        if not is_within(source_realpath(catalog.source, full), skill.real_path):
            raise SkillPathError(f"Invalid {label} path: {raw} (leads outside the skill folder)", path=raw)
        return rel

    def _read_bytes(self, catalog: _Catalog, skill: Skill, rel: str) -> bytes | None:
        full = join_path(skill.path, rel)
        try:
            st = catalog.source.stat(full)
            if st.type == "directory":
                return None
            data = catalog.source.read_file(full)
        except FileTooLargeError:
            raise
        except (OSError, ValueError):
            return None
        return data.encode("utf-8") if isinstance(data, str) else bytes(data)

    def _get_sub(
        self, skill: str | Skill, path: str, subdir: str, label: str, request_context: RequestContext | None
    ) -> bytes | None:
        catalog = self._catalog(request_context)
        found = self._require(catalog, skill)
        rel = self._relative(catalog, found, path, subdir, label)
        return self._read_bytes(catalog, found, rel)

    def get_reference(
        self, skill: str | Skill, path: str, request_context: RequestContext | None = None
    ) -> str | None:
        """Text of ``references/<path>`` (``path`` may include the ``references/`` prefix);
        None when missing. ``..``, absolute paths and symlinks out of the skill raise
        ``SkillPathError``."""
        data = self._get_sub(skill, path, "references", "reference", request_context)
        return None if data is None else data.decode("utf-8", errors="replace")

    def get_script(
        self, skill: str | Skill, path: str, request_context: RequestContext | None = None
    ) -> str | None:
        """Text of ``scripts/<path>``; None when missing (same path rules as ``get_reference``)."""
        data = self._get_sub(skill, path, "scripts", "script", request_context)
        return None if data is None else data.decode("utf-8", errors="replace")

    def get_asset(
        self, skill: str | Skill, path: str, request_context: RequestContext | None = None
    ) -> bytes | None:
        """Bytes of ``assets/<path>``; None when missing (same path rules as ``get_reference``)."""
        return self._get_sub(skill, path, "assets", "asset", request_context)

    def list_files(
        self, skill: str | Skill, request_context: RequestContext | None = None
    ) -> builtins.list[str]:
        """Every file of a skill, relative to its folder, ``SKILL.md`` first."""
        catalog = self._catalog(request_context)
        return builtins.list(self._require(catalog, skill).files)

    def read_file(
        self,
        skill: str | Skill,
        path: str,
        start_line: int | None = None,
        end_line: int | None = None,
        request_context: RequestContext | None = None,
    ) -> SkillFile:
        """Read any file of a skill, optionally a 1-based inclusive line range.

        ``path`` is relative to the skill folder; a bare name is also looked up in
        ``references/``, ``scripts/`` and ``assets/``. A missing file raises ``FileNotFound``
        whose message lists the skill's files; a range past the end raises ``SkillError``
        (code ``LINE_OUT_OF_RANGE``) saying the file was fully read.
        """
        catalog = self._catalog(request_context)
        found = self._require(catalog, skill)
        if isinstance(path, str) and found.path not in (".", "") and path.startswith(found.path + "/"):
            path = path[len(found.path) + 1 :]
        rel = self._relative(catalog, found, path, None, "file")
        candidates = [rel]
        if rel.split("/", 1)[0] not in SKILL_SUBDIRS:
            candidates += [f"{sub}/{rel}" for sub in SKILL_SUBDIRS]
        data: bytes | None = None
        for candidate in candidates:
            if candidate != rel:
                self._relative(catalog, found, candidate, None, "file")
            data = self._read_bytes(catalog, found, candidate)
            if data is not None:
                rel = candidate
                break
        if data is None:
            raise FileNotFound(
                path,
                f'File "{path}" not found in skill "{found.name}".\nAvailable files: {", ".join(found.files)}',
            )
        text = _as_text(data)
        if text is None:
            return SkillFile(found.name, found.path, rel, len(data), data, None, 0)
        lines = text.splitlines()
        total = len(lines)
        if start_line is None and end_line is None:
            return SkillFile(found.name, found.path, rel, len(data), data, text, total)
        start = 1 if start_line is None else int(start_line)
        end = total if end_line is None else int(end_line)
        if start < 1 or (end_line is not None and end < start):
            raise SkillError(
                f"Invalid line range {start}-{end} for {rel}: lines are 1-based and end must be >= start",
                code="INVALID_LINE_RANGE",
                path=rel,
            )
        if start > total:
            raise SkillError(
                f'File "{rel}" has {total} lines (valid range 1-{max(total, 1)}). Requested start_line {start} '
                "is past the end of the file. The file has been fully read; stop paginating.",
                code="LINE_OUT_OF_RANGE",
                path=rel,
            )
        end = min(end, total)
        return SkillFile(
            found.name,
            found.path,
            rel,
            len(data),
            data,
            "\n".join(lines[start - 1 : end]),
            total,
            (start, end),
        )

    # -- search ----------------------------------------------------------------------------------------

    def _indexable(self, skill: Skill, include_references: bool) -> builtins.list[str]:
        files = ["SKILL.md"]
        if include_references:
            files += builtins.list(skill.references)
            files += [f for f in skill.other_files if f.lower().endswith(_TEXT_DOC_SUFFIXES)]
        return files

    def _text(self, catalog: _Catalog, skill: Skill, rel: str) -> str | None:
        full = join_path(skill.path, rel)
        fp = catalog.file_fingerprint(skill, full)
        key = (skill.real_path, rel)
        cached = catalog.texts.get(key)
        if cached is not None and fp is not None and cached[0] == fp:
            return cached[1]
        try:
            data = self._read_bytes(catalog, skill, rel)
        except FileTooLargeError:
            data = None
        text = None if data is None or len(data) > MAX_INDEXED_BYTES else _as_text(data)
        if fp is not None:
            catalog.texts[key] = (fp, text)
        return text

    def search(
        self,
        query: str,
        top_k: int = 5,
        skill_names: Sequence[str] | None = None,
        *,
        include_references: bool = True,
        min_score: float | None = None,
        mode: str | None = None,
        request_context: RequestContext | None = None,
    ) -> builtins.list[SkillSearchResult]:
        """Search skill instructions and references; best first, one hit per skill file.

        Uses the skills search engine when one is configured (BM25/vector/hybrid, ``mode`` as
        for ``workspace.search``), else — or when the engine finds no evidence (BM25 scores of
        zero) — a case-insensitive phrase/term match (``score_details["mode"] == "substring"``:
        1.0 for the phrase in SKILL.md, 0.8 in a reference, half that scaled by the share of
        query terms present otherwise).
        """
        if not isinstance(query, str) or not query.strip():
            return []
        if top_k <= 0:
            return []
        catalog = self._catalog(request_context)
        wanted = set(skill_names) if skill_names else None
        skills = [s for s in catalog.view.skills if wanted is None or s.name in wanted]
        if not skills:
            return []
        engine = self._engine(catalog)
        if engine is not None:
            results = self._engine_search(
                catalog, engine, skills, query, top_k, include_references, min_score, mode
            )
            if (mode or getattr(engine, "default_mode", "bm25")) == "bm25":
                # On a corpus as small as a few skills, BM25 gives terms found in half the files
                # an IDF of zero: such hits carry no evidence, and the ranking is arbitrary.
                results = [r for r in results if r.score > 0]
            if results:
                return results
        return self._substring_search(catalog, skills, query, top_k, include_references, min_score)

    def _substring_search(
        self,
        catalog: _Catalog,
        skills: builtins.list[Skill],
        query: str,
        top_k: int,
        include_references: bool,
        min_score: float | None,
    ) -> builtins.list[SkillSearchResult]:
        phrase = query.strip().lower()
        terms = sorted({t for t in _WORD.findall(phrase) if len(t) > 1}) or [phrase]
        results: builtins.list[SkillSearchResult] = []
        for skill in skills:
            for rel in self._indexable(skill, include_references):
                text = self._text(catalog, skill, rel)
                if not text:
                    continue
                lowered = text.lower()
                weight = 1.0 if rel == "SKILL.md" else 0.8
                position = lowered.find(phrase)
                has_phrase = position >= 0
                if has_phrase:
                    score = weight
                else:
                    present = [t for t in terms if t in lowered]
                    if not present:
                        continue
                    score = weight * 0.5 * len(present) / len(terms)
                    position = min(lowered.find(t) for t in present)
                if min_score is not None and score < min_score:
                    continue
                lines = text.splitlines()
                first = lowered.count("\n", 0, position) + 1
                last = min(len(lines), first + _PREVIEW_LINES - 1)
                results.append(
                    SkillSearchResult(
                        skill_name=skill.name,
                        skill_path=skill.path,
                        source=rel,
                        content="\n".join(lines[first - 1 : last]),
                        score=round(score, 6),
                        line_range=(first, last),
                        score_details={"mode": "substring", "phrase": has_phrase},
                    )
                )
        results.sort(key=lambda r: (-r.score, r.skill_name, r.source))
        return results[:top_k]

    # engine-backed search -------------------------------------------------------------------------

    def _engine(self, catalog: _Catalog) -> Any:
        if self._engine_factory is None:
            return None
        with catalog.lock:
            if not catalog.engine_made:
                engine = self._engine_factory()
                if engine is not None:
                    # A persistent engine may hold documents of an earlier session: start clean
                    # so it holds exactly the skills indexed below.
                    engine.clear()
                catalog.engine = engine
                catalog.engine_made = True
            return catalog.engine

    @staticmethod
    def _doc_id(skill: Skill, rel: str) -> str:
        return f"skill:{skill.path}:{rel}"

    def _sync_index(self, catalog: _Catalog, engine: Any) -> None:
        """Make the engine hold exactly the current skills' documents (changed skills only)."""
        with catalog.lock:
            current = {s.real_path: s for s in catalog.view.skills}
            for real_path in builtins.list(catalog.indexed):
                if real_path not in current:
                    for doc_id in catalog.indexed.pop(real_path)[1]:
                        engine.remove_source(doc_id)
            for real_path, skill in current.items():
                entry = catalog.loaded.get(real_path)
                fingerprint: Hashable = entry.fingerprint if entry is not None else None
                known = catalog.indexed.get(real_path)
                if known is not None and known[0] == fingerprint:
                    continue
                if known is not None:
                    for doc_id in known[1]:
                        engine.remove_source(doc_id)
                doc_ids: builtins.list[str] = []
                for rel in self._indexable(skill, True):
                    text = self._text(catalog, skill, rel)
                    if not text or not text.strip():
                        continue
                    doc_id = self._doc_id(skill, rel)
                    engine.index_document(
                        doc_id,
                        text,
                        metadata={"skill_name": skill.name, "skill_path": skill.path, "skill_file": rel},
                    )
                    doc_ids.append(doc_id)
                catalog.indexed[real_path] = (fingerprint, tuple(doc_ids))

    def _engine_search(
        self,
        catalog: _Catalog,
        engine: Any,
        skills: builtins.list[Skill],
        query: str,
        top_k: int,
        include_references: bool,
        min_score: float | None,
        mode: str | None,
    ) -> builtins.list[SkillSearchResult]:
        self._sync_index(catalog, engine)
        by_path = {s.path: s for s in skills}
        clauses: builtins.list[dict[str, Any]] = [{"skill_path": {"$in": sorted(by_path)}}]
        if not include_references:
            clauses.append({"skill_file": "SKILL.md"})
        where = clauses[0] if len(clauses) == 1 else {"$and": clauses}
        results: builtins.list[SkillSearchResult] = []
        seen: set[tuple[str, str]] = set()
        fetch = top_k * 3
        while True:
            hits = engine.search(query, top_k=fetch, mode=mode, min_score=min_score, filter=where)
            for hit in hits:
                meta = hit.metadata or {}
                skill = by_path.get(meta.get("skill_path", ""))
                rel = meta.get("skill_file", "")
                if skill is None or not rel or (skill.path, rel) in seen:
                    continue  # one hit per file: its best chunk
                seen.add((skill.path, rel))
                line_range = (int(hit.line_range[0]), int(hit.line_range[1])) if hit.line_range else None
                content = hit.content
                text = self._text(catalog, skill, rel)
                if line_range is not None and text is not None:
                    lines = text.splitlines()
                    content = "\n".join(lines[line_range[0] - 1 : line_range[1]])
                results.append(
                    SkillSearchResult(
                        skill_name=skill.name,
                        skill_path=skill.path,
                        source=rel,
                        content=content,
                        score=float(hit.score),
                        line_range=line_range,
                        score_details=dict(hit.score_details or {}),
                    )
                )
                if len(results) >= top_k:
                    return results
            if len(hits) < fetch:
                return results
            fetch *= 4

    # -- lifecycle ---------------------------------------------------------------------------------------

    @staticmethod
    def _close_engine(catalog: _Catalog) -> None:
        engine, catalog.engine = catalog.engine, None
        close = getattr(engine, "close", None)
        if close is not None:
            try:
                close()
            except Exception as exc:  # closing must not mask the caller's own work
                logger.warning("closing the skills search engine failed: %s", exc)

    def close(self) -> None:
        """Drop catalogues and close skill search engines; later calls raise ``WorkspaceNotReadyError``."""
        with self._lock:
            self._closed = True
            catalogs = builtins.list(self._catalogs.values())
            self._catalogs.clear()
        for catalog in catalogs:
            self._close_engine(catalog)

    @property
    def closed(self) -> bool:
        return self._closed
