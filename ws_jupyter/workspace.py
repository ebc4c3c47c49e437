"""``Workspace``: one object that ties a filesystem, a sandbox, search, skills and agent tools together.

Providers may be given as instances or as *resolvers* — functions of the request context that
return a provider per request (per user, per thread). Resolved providers are memoised per request
(and, for sandboxes, by ``sandbox_cache_key``), so the tools of one request always see the same
sandbox and background processes survive between requests that share a key.

>>> from ws_jupyter import Workspace, LocalFilesystem, LocalSandbox
>>> with Workspace(filesystem=LocalFilesystem("./workspace"),
...                sandbox=LocalSandbox(working_directory="./workspace")) as ws:
...     ws.filesystem.write_file("hello.txt", "hi")
...     print(ws.sandbox.execute_command("cat hello.txt").stdout)
hi
"""

from __future__ import annotations

import os
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .checkpoints.config import CheckpointsConfig
from .errors import (
    FilesystemNotAvailableError,
    InvalidArgumentError,
    OperationTimeoutError,
    SandboxNotAvailableError,
    WorkspaceConfigError,
    WorkspaceError,
    WorkspaceNotReadyError,
)
from .filesystem.types import FilesystemInfo, WorkspaceFilesystem
from .lifecycle import Lifecycle
from .sandbox.capabilities import sandbox_action, sandbox_info, sandbox_mounting
from .sandbox.types import SandboxInfo, WorkspaceSandbox

if TYPE_CHECKING:  # pragma: no cover
    from .checkpoints.manager import Changes, Checkpoint, Checkpoints, RestoreReport
    from .request_context import RequestContext
    from .search.config import BM25Config
    from .search.engine import SearchEngine
    from .search.results import SearchResult
    from .search.status import IndexStatus
    from .skills.workspace_skills import WorkspaceSkills
    from .tools.config import ToolsConfig
    from .tools.types import Tool

__all__ = ["Workspace", "WorkspaceInfo", "WorkspaceStatus"]

WorkspaceStatus = Literal["pending", "initializing", "ready", "paused", "error", "destroying", "destroyed"]

FilesystemResolver = Callable[[Any], WorkspaceFilesystem]
SandboxResolver = Callable[[Any], WorkspaceSandbox]
_INDEX_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESOLVED_MEMO_SIZE = 256
_T = TypeVar("_T")

#: What a resolver-based sandbox contributes to the instructions unless told to resolve.
SANDBOX_PLACEHOLDER_INSTRUCTIONS = (
    "A command sandbox is available for this request. Its working directory and isolation are "
    "chosen per request; run commands with the execute_command tool."
)


@dataclass(frozen=True)
class WorkspaceInfo:
    """A snapshot of a workspace for display and for agents.

    ``filesystem`` / ``sandbox`` are the providers' own info, ``"dynamic"`` for a resolver that
    was not resolved, or None when not configured. ``errors`` names providers whose resolver failed.
    """

    id: str
    name: str
    status: str
    created_at: datetime
    last_accessed_at: datetime
    filesystem: FilesystemInfo | Literal["dynamic"] | None = None
    sandbox: SandboxInfo | Literal["dynamic"] | None = None
    search: dict[str, Any] | None = None
    skills: dict[str, Any] | None = None
    errors: dict[str, str] = field(default_factory=dict)


def _is_resolver(value: Any, required: str) -> bool:
    """A resolver is a plain callable; a provider instance has the protocol's methods."""
    if isinstance(value, type):
        raise WorkspaceConfigError(
            f"Pass a provider instance or a resolver function, not the class {value.__name__}",
            code="INVALID_CONFIG",
        )
    return callable(value) and not hasattr(value, required)


def default_index_name(workspace_id: str) -> str:
    """The vector collection/index name derived from the workspace id (SQL-identifier safe)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", f"{workspace_id}_search")
    if not re.match(r"[A-Za-z_]", name):
        name = "_" + name
    return name[:63]


class Workspace:
    """A filesystem, a sandbox, search, skills and agent tools behind one object.

    At least one of ``filesystem``, ``sandbox`` or ``skills`` is required. docs/workspace.md
    has every option; the ones that need a word here:

    * ``filesystem`` / ``sandbox``: an instance, or ``fn(request_context) -> instance``;
    * ``sandbox_cache_key``: ``fn(request_context) -> str | None``; equal keys share one resolved
      sandbox across requests (background processes stay reachable);
    * ``dynamic_sandbox_instructions``: what a resolver sandbox adds to :meth:`get_instructions`:
      ``"placeholder"`` (stable text, no resolution), ``"resolve"``, or ``fn(request_context)``;
    * ``bm25`` / ``embedder`` / ``vector_store``: search (BM25 on by default; vector search when an
      embedder is given — ``"default"`` is all-MiniLM-L6-v2, run offline; ``"auto"`` is that
      model when its files are installed, else none);
    * ``auto_index_paths``: what ``init()`` indexes (incrementally); by default the whole
      workspace when it has a filesystem and search (``()`` indexes nothing). Vectors are
      computed in the background; ``background_indexing=True`` runs the file pass there too;
    * ``index_notebook_outputs``: index the text outputs of notebook code cells as well as the
      cells' sources (off: outputs such as earlier search results would crowd the hits);
    * ``embed_policy``: which files get vectors — by default all but lock files, data dumps,
      minified and generated code, which BM25 alone searches (an ``EmbedPolicy``, a dict of its
      fields, or False to embed every file);
    * ``on_mount``: ``fn(filesystem, sandbox)`` called before the filesystem is made visible in the
      sandbox; return False to skip, or a dict with ``"success": True`` if it did the mounting;
    * ``operation_timeout``: seconds allowed for provider lifecycle calls and resolvers;
    * ``checkpoints``: a :class:`~ws_jupyter.checkpoints.CheckpointsConfig` or a dict (``False``: no
      automatic checkpoints): when checkpoints are taken on their own, what they record, where
      they are kept and how much they may keep (see :meth:`checkpoint`).
    """

    def __init__(
        self,
        id: str | None = None,
        name: str | None = None,
        filesystem: WorkspaceFilesystem | FilesystemResolver | None = None,
        sandbox: WorkspaceSandbox | SandboxResolver | None = None,
        sandbox_cache_key: Callable[[Any], str | None] | None = None,
        dynamic_sandbox_instructions: str | Callable[[Any], str] = "placeholder",
        bm25: bool | BM25Config | None = True,
        vector_store: Any = None,
        embedder: Any = None,
        search_index_name: str | None = None,
        auto_index_paths: Sequence[str] | str | None = None,
        background_indexing: bool = False,
        index_notebook_outputs: bool = False,
        embed_policy: Any = None,
        skills: Sequence[str] | str | Callable[[Any], Iterable[str]] = (),
        skill_source: Any = None,
        on_mount: Callable[[Any, Any], Any] | None = None,
        tools: Any = None,
        operation_timeout: float | None = None,
        checkpoints: Any = None,
    ) -> None:
        if id is not None and (not isinstance(id, str) or not id.strip()):
            raise WorkspaceConfigError("id must be a non-empty string", code="INVALID_CONFIG")
        self._id = id or f"ws-{secrets.token_hex(4)}"
        self._name = name if name is not None else f"workspace-{self._id[:8]}"

        self._fs_static: WorkspaceFilesystem | None = None
        self._fs_resolver: FilesystemResolver | None = None
        if filesystem is not None:
            if _is_resolver(filesystem, "read_file"):
                self._fs_resolver = filesystem  # type: ignore[assignment]
            else:
                self._fs_static = filesystem  # type: ignore[assignment]
        self._sb_static: WorkspaceSandbox | None = None
        self._sb_resolver: SandboxResolver | None = None
        if sandbox is not None:
            if _is_resolver(sandbox, "execute_command"):
                self._sb_resolver = sandbox  # type: ignore[assignment]
            else:
                self._sb_static = sandbox  # type: ignore[assignment]
        if sandbox_cache_key is not None and not callable(sandbox_cache_key):
            raise WorkspaceConfigError("sandbox_cache_key must be a function of the request context")
        self._sandbox_cache_key = sandbox_cache_key
        if not (
            callable(dynamic_sandbox_instructions)
            or dynamic_sandbox_instructions in ("placeholder", "resolve")
        ):
            raise WorkspaceConfigError(
                'dynamic_sandbox_instructions must be "placeholder", "resolve" or a function',
                code="INVALID_CONFIG",
            )
        self._dynamic_sandbox_instructions = dynamic_sandbox_instructions

        self._skills_paths = (skills,) if isinstance(skills, str) else skills
        self._skill_source = skill_source
        has_skills = bool(self._skills_paths) or callable(self._skills_paths) or skill_source is not None
        if filesystem is None and sandbox is None and not has_skills:
            raise WorkspaceConfigError(
                "Workspace requires at least a filesystem, a sandbox or skills", code="NO_PROVIDERS"
            )
        self._has_skills = has_skills

        # search configuration (the engine itself is created on first use: heavy imports stay lazy)
        if vector_store is not None and embedder is None:
            raise WorkspaceConfigError("vector_store requires an embedder", code="INVALID_SEARCH_CONFIG")
        if search_index_name is not None and (
            not isinstance(search_index_name, str)
            or not _INDEX_NAME.match(search_index_name)
            or len(search_index_name) > 63
        ):
            raise WorkspaceConfigError(
                f"Invalid search_index_name {search_index_name!r}: it must start with a letter or underscore, "
                "contain only letters, digits and underscores, and be at most 63 characters",
                code="INVALID_SEARCH_CONFIG",
            )
        self._bm25 = None if bm25 is False else bm25
        self._vector_store = vector_store
        if isinstance(embedder, str) and embedder == "auto":
            from .search.embedder import default_embedder_available

            embedder = "default" if default_embedder_available() else None
        self._embedder = embedder
        self._index_notebook_outputs = bool(index_notebook_outputs)
        from .search.embed_policy import coerce_embed_policy  # (light: no model, no Chroma)

        self._embed_policy = coerce_embed_policy(embed_policy)
        self._search_index_name = search_index_name or default_index_name(self._id)
        # The on-disk index must outlive a kernel restart even when the id is generated afresh.
        self._stable_index_name = search_index_name is not None or id is not None
        if auto_index_paths is None:
            # index by default: the whole workspace (gitignore-aware, hidden and binary files
            # skipped); only a filesystem known up front (a resolver's is per request)
            auto_index_paths = (".",) if self._fs_static is not None else ()
        self._auto_index_paths: tuple[str, ...] = (
            (auto_index_paths,) if isinstance(auto_index_paths, str) else tuple(auto_index_paths)
        )
        self._background_indexing = bool(background_indexing)
        self._index_thread: threading.Thread | None = None
        self._index_error: BaseException | None = None
        self._search_engine: SearchEngine | None = None
        self._watchers: list[Any] = []
        self._skills_obj: WorkspaceSkills | None = None

        if on_mount is not None and not callable(on_mount):
            raise WorkspaceConfigError("on_mount must be a function (filesystem, sandbox) -> result")
        self._on_mount = on_mount
        if operation_timeout is not None and (
            not isinstance(operation_timeout, (int, float)) or operation_timeout <= 0
        ):
            raise WorkspaceConfigError("operation_timeout must be a positive number of seconds")
        self._operation_timeout = float(operation_timeout) if operation_timeout is not None else None
        from .tools.config import ToolsConfig

        self._tools_config: ToolsConfig = ToolsConfig.coerce(tools)
        self._checkpoints_config = CheckpointsConfig.coerce(checkpoints)
        self._checkpoints: Checkpoints | None = None

        self._lifecycle = Lifecycle("pending")
        self._lock = threading.RLock()
        self._memo_fs: OrderedDict[int, tuple[Any, WorkspaceFilesystem]] = OrderedDict()
        self._memo_sb: OrderedDict[int, tuple[Any, WorkspaceSandbox]] = OrderedDict()
        self._sandbox_by_key: dict[str, WorkspaceSandbox] = {}
        self._created_at = datetime.now(timezone.utc)
        self._last_accessed_at = self._created_at

    # --- identity and providers -------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self._id

    @property
    def name(self) -> str:
        return self._name

    @property
    def status(self) -> str:
        return self._lifecycle.status

    @property
    def created_at(self) -> datetime:
        return self._created_at

    @property
    def last_accessed_at(self) -> datetime:
        return self._last_accessed_at

    def _touch(self) -> None:
        self._last_accessed_at = datetime.now(timezone.utc)

    @property
    def filesystem(self) -> WorkspaceFilesystem | None:
        """The filesystem instance (None when configured by a resolver: use :meth:`resolve_filesystem`)."""
        return self._fs_static

    @property
    def sandbox(self) -> WorkspaceSandbox | None:
        """The sandbox instance (None when configured by a resolver: use :meth:`resolve_sandbox`)."""
        return self._sb_static

    def has_filesystem_config(self) -> bool:
        return self._fs_static is not None or self._fs_resolver is not None

    def has_sandbox_config(self) -> bool:
        return self._sb_static is not None or self._sb_resolver is not None

    def resolve_filesystem(self, request_context: Any = None) -> WorkspaceFilesystem:
        """The filesystem for this request (memoised per request context)."""
        if self._fs_static is not None:
            return self._fs_static
        if self._fs_resolver is None:
            raise FilesystemNotAvailableError(workspace_id=self._id)
        resolver = self._fs_resolver
        return self._memoised(
            self._memo_fs,
            request_context,
            lambda: self._checked(resolver, request_context, "read_file", "filesystem"),
        )

    def resolve_sandbox(self, request_context: Any = None) -> WorkspaceSandbox:
        """The sandbox for this request: memoised by ``sandbox_cache_key`` when it gives a key,
        else per request context."""
        if self._sb_static is not None:
            return self._sb_static
        if self._sb_resolver is None:
            raise SandboxNotAvailableError(workspace_id=self._id)
        resolver = self._sb_resolver

        def make() -> WorkspaceSandbox:
            return self._checked(resolver, request_context, "execute_command", "sandbox")

        key = self._sandbox_cache_key(request_context) if self._sandbox_cache_key is not None else None
        if key is None:
            return self._memoised(self._memo_sb, request_context, make)
        with self._lock:
            found = self._sandbox_by_key.get(key)
            if found is None:
                found = make()
                self._sandbox_by_key[key] = found
            return found

    def clear_sandbox_cache(self, key: str | None = None) -> None:
        """Forget resolved sandboxes (one cache key, or all). The sandboxes themselves are not
        stopped: the workspace does not own what resolvers create."""
        with self._lock:
            if key is None:
                self._sandbox_by_key.clear()
                self._memo_sb.clear()
            else:
                self._sandbox_by_key.pop(key, None)

    def _memoised(self, memo: OrderedDict[int, tuple[Any, _T]], ctx: Any, make: Callable[[], _T]) -> _T:
        # Keyed by identity; the context is held alongside so its id cannot be reused while memoised.
        with self._lock:
            hit = memo.get(id(ctx))
            if hit is not None and hit[0] is ctx:
                memo.move_to_end(id(ctx))
                return hit[1]
            value = make()
            memo[id(ctx)] = (ctx, value)
            while len(memo) > _RESOLVED_MEMO_SIZE:
                memo.popitem(last=False)
            return value

    def _checked(self, resolver: Callable[[Any], _T], ctx: Any, required: str, what: str) -> _T:
        value = self._with_timeout(lambda: resolver(ctx), f"resolving the {what}")
        if value is None or not hasattr(value, required):
            raise WorkspaceConfigError(
                f"The {what} resolver returned {type(value).__name__}, not a {what} provider",
                code="INVALID_CONFIG",
                workspace_id=self._id,
            )
        return value

    # --- lifecycle -------------------------------------------------------------------------------

    def init(self) -> None:
        """Initialise providers, mount the filesystem into the sandbox, build the search index.

        Idempotent; concurrent calls coalesce into one. A failure leaves status ``error`` and
        re-raises; calling ``init()`` again retries.
        """
        self._lifecycle.transition(
            "ready",
            "initializing",
            self._do_init,
            allowed_from=("pending", "error", "paused"),
            refuse=lambda s: WorkspaceNotReadyError(s, workspace_id=self._id),
        )

    def _do_init(self) -> None:
        fs, sb = self._fs_static, self._sb_static
        if fs is not None and hasattr(fs, "init"):
            self._with_timeout(fs.init, "initialising the filesystem")
        start = sandbox_action(sb, "start") if sb is not None else None
        if start is not None:
            self._with_timeout(start, "starting the sandbox")
        if fs is not None and sb is not None:
            self._mount(fs, sb)
        if self.can_search and self._auto_index_paths:
            if self._background_indexing:
                self._start_background_pass()
            else:
                self.rebuild_search_index()
        if self._has_skills:
            skills = self._skills_or_none()
            if skills is not None:
                skills.refresh()
        self._touch()

    def _start_background_pass(self) -> None:
        """``init()`` with ``background_indexing``: the pass over ``auto_index_paths`` runs on a
        thread; searches meanwhile say how far it got."""
        self._engine()  # opened now: a damaged index is reported by init(), not by the thread

        def run() -> None:
            try:
                self.rebuild_search_index()
            except Exception as exc:  # kept for index_status()/wait_for_index()
                self._index_error = exc
                import logging

                logging.getLogger("ws_jupyter.search").warning("background indexing failed: %s", exc)

        self._index_error = None
        self._index_thread = threading.Thread(target=run, name="ws-index-pass", daemon=True)
        self._index_thread.start()

    def _mount(self, fs: WorkspaceFilesystem, sb: WorkspaceSandbox) -> None:
        """Make the filesystem visible inside the sandbox (a bind mount under isolation)."""
        if self._on_mount is not None:
            outcome = self._on_mount(fs, sb)
            if outcome is False or (isinstance(outcome, Mapping) and outcome.get("success")):
                return
        mounting = sandbox_mounting(sb)
        base = getattr(fs, "base_path", None)
        if mounting is not None and base:
            mounting.mount(base, read_only=bool(getattr(fs, "read_only", False)))

    def pause(self) -> None:
        """Stop the sandbox (its processes end); files, index and skills stay. ``init()`` resumes."""

        def action() -> None:
            stop = sandbox_action(self._sb_static, "stop") if self._sb_static is not None else None
            if stop is not None:
                self._with_timeout(stop, "stopping the sandbox")

        self._lifecycle.transition(
            "paused",
            "paused",
            action,
            allowed_from=("ready",),
            refuse=lambda s: WorkspaceNotReadyError(s, workspace_id=self._id),
        )

    def destroy(self) -> None:
        """Kill processes, close the index and stores, release providers. Never deletes user files.

        Idempotent and coalesced. Afterwards search, indexing and skills raise
        ``WorkspaceNotReadyError``. Resolver-made sandboxes are not destroyed (not owned).
        """
        self._lifecycle.transition(
            "destroyed",
            "destroying",
            self._do_destroy,
            allowed_from=("pending", "initializing", "ready", "paused", "error"),
            refuse=lambda s: WorkspaceNotReadyError(s, workspace_id=self._id),
        )

    def _do_destroy(self) -> None:
        errors: list[BaseException] = []

        def attempt(fn: Callable[[], Any], what: str) -> None:
            try:
                self._with_timeout(fn, what)
            except Exception as exc:  # keep tearing down the rest, report the first failure
                errors.append(exc)

        sb = self._sb_static
        if sb is not None:
            stop = sandbox_action(sb, "destroy") or sandbox_action(sb, "stop")
            if stop is not None:
                attempt(stop, "destroying the sandbox")
        if self._skills_obj is not None and hasattr(self._skills_obj, "close"):
            attempt(self._skills_obj.close, "closing skills")
        if self._checkpoints is not None:
            self._checkpoints.close()
        for watcher in self._watchers:
            attempt(watcher.stop, "stopping the index watcher")
        self._watchers = []
        thread = self._index_thread
        if thread is not None and self._search_engine is not None:
            self._search_engine.stop_passes()  # a background pass ends at its next file
            thread.join(30.0)
        if self._search_engine is not None:
            attempt(self._search_engine.close, "closing the search index")
        fs = self._fs_static
        if fs is not None and hasattr(fs, "destroy"):
            attempt(fs.destroy, "releasing the filesystem")
        with self._lock:
            self._sandbox_by_key.clear()
            self._memo_sb.clear()
            self._memo_fs.clear()
        if errors:
            raise errors[0]

    def __enter__(self) -> Workspace:
        self.init()
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    def _require_usable(self) -> None:
        status = self._lifecycle.status
        if status in ("destroying", "destroyed"):
            raise WorkspaceNotReadyError(status, workspace_id=self._id)

    def _with_timeout(self, fn: Callable[[], _T], what: str) -> _T:
        """Run a provider call, bounded by ``operation_timeout`` when one is set."""
        if self._operation_timeout is None:
            return fn()
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:
                box["error"] = exc

        worker = threading.Thread(target=run, name=f"ws-op-{what}", daemon=True)
        worker.start()
        worker.join(self._operation_timeout)
        if worker.is_alive():
            raise OperationTimeoutError(what, self._operation_timeout, workspace_id=self._id)
        if "error" in box:
            raise box["error"]
        return box.get("value")  # type: ignore[return-value]

    # --- search ------------------------------------------------------------------------------------

    @property
    def can_bm25(self) -> bool:
        return self._bm25 is not None

    @property
    def can_vector(self) -> bool:
        return self._embedder is not None

    @property
    def can_hybrid(self) -> bool:
        return self.can_bm25 and self.can_vector

    @property
    def can_search(self) -> bool:
        return self.can_bm25 or self.can_vector

    @property
    def search_index_name(self) -> str:
        return self._search_index_name

    @property
    def persisted_index_name(self) -> str:
        """The name the on-disk index of files uses: ``search_index_name``, except when neither
        ``id`` nor ``search_index_name`` was given and no vector store either — the generated id
        changes with every new Workspace object, so a fixed name lets the index survive a kernel
        restart."""
        if self._stable_index_name or self._vector_store is not None:
            return self._search_index_name
        return "workspace_search"

    @property
    def auto_index_paths(self) -> tuple[str, ...]:
        return self._auto_index_paths

    def _engine(self) -> SearchEngine:
        from .errors import SearchNotAvailableError

        self._require_usable()
        if not self.can_search:
            raise SearchNotAvailableError(workspace_id=self._id)
        with self._lock:
            if self._search_engine is None:
                from .search.engine import SearchEngine

                self._search_engine = SearchEngine.for_workspace(self)
            return self._search_engine

    def index(
        self,
        path: str,
        content: str,
        metadata: Mapping[str, Any] | None = None,
        start_line_offset: int | None = None,
    ) -> None:
        """Add (or replace) one free-text document in the search index under the id ``path``.

        ``path`` may not be a file of the workspace (a file's entry comes from the file: see
        :meth:`rebuild_search_index`)."""
        if not isinstance(content, str):
            raise InvalidArgumentError("content must be a string")
        engine = self._engine()
        self._refuse_file_name(path)
        engine.index(path, content, metadata=metadata, start_line_offset=start_line_offset)
        self._touch()

    def index_document(self, path: str, content: str, metadata: Mapping[str, Any] | None = None) -> list[str]:
        """Index free text under the document name ``path``, split into chunks like files (ids
        ``path`` or ``path#chunk-N``), replacing what was indexed under that name before.
        ``path`` may not be a file of the workspace."""
        if not isinstance(content, str):
            raise InvalidArgumentError("content must be a string")
        engine = self._engine()
        self._refuse_file_name(path)
        ids = engine.index_document(path, content, metadata=metadata)
        self._touch()
        return ids

    def _refuse_file_name(self, name: str) -> None:
        """Free text never takes a workspace file's name: a search hit under ``README.md`` must
        show what README.md says, not what someone indexed under its name."""
        fs = self._fs_static
        if fs is None or not isinstance(name, str):
            return
        base = name.split("#chunk-", 1)[0]
        try:
            is_file = fs.stat(base).type == "file"
        except Exception:  # not a path of the workspace at all: any name will do
            return
        if is_file:
            raise InvalidArgumentError(
                f"{base!r} is a file of the workspace: its search entry comes from the file itself. "
                f"Re-index it from disk with rebuild_search_index({base!r}) (the workspace_index tool "
                "with only a path), or index the text under another name."
            )

    def index_status(self) -> IndexStatus:
        """What the index holds and is doing: documents, the file pass under way, vectors
        embedded so far (see :class:`~ws_jupyter.search.status.IndexStatus`)."""
        from .search.status import IndexStatus

        self._require_usable()
        engine = self._search_engine
        running = self._index_thread is not None and self._index_thread.is_alive()
        if engine is None:
            return IndexStatus(documents=0, indexing=running, vectors=self.can_vector)
        status = engine.status()
        if running and not status.indexing:  # the thread is still opening or listing
            status = replace(status, indexing=True)
        if self._index_error is not None and status.error is None:
            status = replace(status, error=f"{type(self._index_error).__name__}: {self._index_error}")
        return status

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Wait until the index is complete: the file pass done and every document embedded.
        True when it is, False when ``timeout`` seconds passed first; an indexing or embedding
        failure is raised. For scripts and tests (``init()`` does not wait for vectors)."""
        import time

        if not self.can_search:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        thread = self._index_thread
        if thread is not None:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return False
            if self._index_error is not None:
                raise self._index_error
        engine = self._engine()
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        return engine.wait_for_vectors(remaining)

    def search(
        self,
        query: str,
        top_k: int = 10,
        mode: str | None = None,
        min_score: float | None = None,
        vector_weight: float | None = None,
        filter: Mapping[str, Any] | None = None,
    ) -> list[SearchResult]:
        """Search the indexed files. ``mode``: ``"bm25"``, ``"vector"`` or ``"hybrid"`` (default:
        hybrid when both are configured, else whichever is)."""
        results = self._engine().search(
            query, top_k=top_k, mode=mode, min_score=min_score, vector_weight=vector_weight, filter=filter
        )
        self._touch()
        return results

    def rebuild_search_index(
        self,
        paths: Sequence[str] | str | None = None,
        progress: Callable[..., None] | None = None,
    ) -> Any:
        """(Re)index ``paths`` (default: ``auto_index_paths``) incrementally: unchanged files are
        neither re-read nor re-embedded; deleted files leave the index. ``progress`` receives
        :class:`~ws_jupyter.search.indexer.IndexProgress` updates (``done``, ``total``, ``path``,
        ``phase``). Returns an :class:`~ws_jupyter.search.indexer.IndexReport` once BM25 has the
        changes; their vectors are computed in the background (:meth:`index_status`,
        :meth:`wait_for_index`)."""
        engine = self._engine()
        from .search.indexer import AutoIndexer

        fs = self.resolve_filesystem(None)
        wanted = self._index_paths(paths)
        # A full pass over auto_index_paths also drops files indexed under paths no longer configured.
        result = AutoIndexer(fs, engine).rebuild(wanted, progress=progress, prune_outside=paths is None)
        self._touch()
        return result

    def _index_paths(self, paths: Sequence[str] | str | None) -> tuple[str, ...]:
        """The paths an indexing call covers: the given ones, or ``auto_index_paths``."""
        if paths is None:
            return self._auto_index_paths
        return (paths,) if isinstance(paths, str) else tuple(paths)

    def watch(
        self,
        paths: Sequence[str] | str | None = None,
        on_update: Callable[..., None] | None = None,
        debounce: float = 0.3,
    ) -> Any:
        """Keep the index current while files change: returns a running
        :class:`~ws_jupyter.search.indexer.Watcher` (``stop()`` it, or ``destroy()`` stops it).

        Each burst of changes under the workspace runs one incremental pass over ``paths``
        (default: ``auto_index_paths``); ``on_update`` receives its ``IndexReport``.
        """
        engine = self._engine()
        from .search.indexer import AutoIndexer, Watcher

        fs = self.resolve_filesystem(None)
        root = getattr(fs, "base_path", None)
        if not root:
            raise WorkspaceConfigError(
                "watch() needs a local filesystem (a base_path to watch)", code="INVALID_CONFIG",
                workspace_id=self._id)
        wanted = self._index_paths(paths)
        watcher = Watcher(AutoIndexer(fs, engine), wanted, os.path.realpath(root), debounce=debounce,
                          on_update=on_update, prune_outside=paths is None)
        with self._lock:
            self._watchers = [w for w in self._watchers if w.running]
            self._watchers.append(watcher)
        return watcher

    # --- skills ---------------------------------------------------------------------------------------

    @property
    def skills(self) -> WorkspaceSkills | None:
        """The skills of this workspace (None when no skills are configured)."""
        if not self._has_skills:
            return None
        self._require_usable()
        return self._skills_or_none()

    def _skills_or_none(self) -> WorkspaceSkills | None:
        with self._lock:
            if self._skills_obj is None:
                from .skills.workspace_skills import WorkspaceSkills

                self._skills_obj = WorkspaceSkills.for_workspace(self)
            return self._skills_obj

    # --- tools ------------------------------------------------------------------------------------------

    def get_tools_config(self) -> ToolsConfig:
        """The tools configuration in effect (see docs/tools.md)."""
        return self._tools_config

    def set_tools_config(self, config: Any) -> None:
        """Replace the whole tools configuration (a ``ToolsConfig`` or a dict; None restores the
        defaults). Validated now; takes effect at the next :meth:`tools` call."""
        from .tools.config import ToolsConfig

        self._tools_config = ToolsConfig.coerce(config)

    def tools(self, request_context: RequestContext | Mapping[str, Any] | None = None) -> list[Tool]:
        """The agent tools for this request: only those whose provider is configured and enabled."""
        from .tools.factory import create_workspace_tools

        self._require_usable()
        fs = self._fs_static
        if self._checkpoints_config.auto != "off" and fs is not None and not getattr(fs, "read_only", False):
            _ = self.checkpoints  # follows the activity feed from now on: automatic checkpoints
        return create_workspace_tools(self, request_context)

    # --- checkpoints ------------------------------------------------------------------------------

    @property
    def checkpoints(self) -> Checkpoints:
        """The workspace's checkpoints (list, get, usage, notes); see :meth:`checkpoint`."""
        self._require_usable()
        with self._lock:
            if self._checkpoints is None:
                from .checkpoints.manager import Checkpoints
                from .tools.activity import tool_activity

                manager = Checkpoints(self, self._checkpoints_config)
                manager.follow(tool_activity(self))
                self._checkpoints = manager
            return self._checkpoints

    def checkpoint(self, label: str | None = None) -> Checkpoint:
        """Record the state of the workspace's files (to compare with and restore later).

        Copies are content-addressed and shared between checkpoints: after the first, only what
        changed is stored. What is recorded, where and for how long is the ``checkpoints=``
        configuration (README, "Checkpoints"). Without a label, an unchanged workspace returns the
        latest checkpoint. Automatic checkpoints are taken before each agent turn's first change.

        >>> cp = ws.checkpoint("before the cleanup")  # doctest: +SKIP
        """
        return self.checkpoints.take(label)

    def changes(self, since: Checkpoint | str | int | None = None) -> Changes:
        """The files added, modified and deleted since a checkpoint (default: the latest), each with
        who changed it when known: the agent tool call, the command or kernel run, or "outside"."""
        return self.checkpoints.changes(since)

    def diff(self, since: Checkpoint | str | int | None = None, path: str | None = None) -> str:
        """A unified diff from a checkpoint to now (notebooks cell by cell; binary files by size and
        hash): of ``path``, or of every changed file."""
        return self.checkpoints.diff(since, path)

    def restore(
        self,
        checkpoint: Checkpoint | str | int,
        paths: Sequence[str] | str | None = None,
        *,
        remove_new: bool = False,
    ) -> RestoreReport:
        """Bring back a checkpoint's version of ``paths`` (files or folders; None: all), each file
        atomically and under its write lock. A checkpoint of the state it replaces is taken first
        (``report.undo``: restoring it undoes this restore). Files created since the checkpoint are
        removed only with ``remove_new=True``."""
        return self.checkpoints.restore(checkpoint, paths, remove_new=remove_new)

    # --- the user's data -------------------------------------------------------------------------------

    def share(self, value: Any, *, name: str, allow_copy: bool = False) -> None:
        """Shares ``value`` with the agent under ``name``: the ``user_variable_*`` tools then list
        and inspect it (read-only, never running its code) and may request a copy into the
        sandbox, which waits for your approval unless ``allow_copy``. In a notebook,
        ``%ws share NAME`` shares variables by name or pattern instead.

        >>> ws.share(sales.head(1000), name="sales_sample")       # doctest: +SKIP
        """
        from .userdata import shared_namespace

        shared = shared_namespace(self, create=True)
        assert shared is not None
        shared.share_object(value, name, allow_copy=allow_copy)

    def unshare(self, *names: str) -> list[str]:
        """Stops sharing names or patterns (none: everything); returns what is no longer shared."""
        from .userdata import shared_namespace

        shared = shared_namespace(self)
        if shared is None:
            return []
        return shared.unshare(*names) if names else shared.unshare_all()

    def shared(self) -> list[str]:
        """The names the agent sees now."""
        from .userdata import shared_namespace

        shared = shared_namespace(self)
        return shared.names() if shared is not None else []

    def fetch(self, name: str, *, kernel: str = "default", max_bytes: int | None = None) -> Any:
        """The sandbox kernel's variable ``name``, copied out in a safe format and returned.

        Only Arrow IPC (DataFrames, Series), ``.npy`` without pickle (arrays) and JSON (plain
        data) are accepted, and checked as hostile input: nothing the sandbox sends is
        unpickled, evaluated or imported. Raises ``UnsafeTransferError``,
        ``TransferTooLargeError`` (over ``max_bytes``, by default the shared namespace's limit:
        256 MB) or ``UserDataError``.

        >>> summary = ws.fetch("summary")                        # doctest: +SKIP
        """
        from .sandbox.capabilities import sandbox_kernels
        from .userdata import DEFAULT_MAX_BYTES, fetch_from_kernel, shared_namespace

        kernels = sandbox_kernels(self.resolve_sandbox(None))
        if kernels is None:
            raise SandboxNotAvailableError("This workspace's sandbox cannot run kernels: there is nothing to fetch")
        if max_bytes is None:
            shared = shared_namespace(self)
            max_bytes = shared.max_copy_bytes if shared is not None else DEFAULT_MAX_BYTES
        return fetch_from_kernel(name, kernels=kernels, kernel_name=kernel, max_bytes=max_bytes).value

    # --- description ----------------------------------------------------------------------------------

    def get_info(
        self,
        include_file_count: bool = False,
        request_context: Any = None,
        resolve_dynamic_providers: bool = True,
    ) -> WorkspaceInfo:
        """Describe the workspace. ``include_file_count`` walks the filesystem (gitignore-aware,
        hidden files excluded) to count files."""
        errors: dict[str, str] = {}
        fs_info: FilesystemInfo | Literal["dynamic"] | None = None
        fs_obj: WorkspaceFilesystem | None = None
        if self._fs_static is not None or (self._fs_resolver is not None and resolve_dynamic_providers):
            try:
                fs_obj = self.resolve_filesystem(request_context)
                fs_info = fs_obj.get_info() if hasattr(fs_obj, "get_info") else None
            except WorkspaceError as exc:
                errors["filesystem"] = str(exc)
                fs_info = "dynamic"
            except Exception as exc:
                errors["filesystem"] = f"{type(exc).__name__}: {exc}"
                fs_info = "dynamic"
        elif self._fs_resolver is not None:
            fs_info = "dynamic"
        if include_file_count and fs_obj is not None and isinstance(fs_info, FilesystemInfo):
            from .filesystem.walk import walk

            count = sum(1 for e in walk(fs_obj) if not e.is_dir)
            fs_info = replace(fs_info, total_files=count)

        sb_info: SandboxInfo | Literal["dynamic"] | None = None
        if self._sb_static is not None or (self._sb_resolver is not None and resolve_dynamic_providers):
            try:
                sb = self.resolve_sandbox(request_context)
                sb_info = sandbox_info(sb)
            except Exception as exc:
                errors["sandbox"] = (
                    str(exc) if isinstance(exc, WorkspaceError) else f"{type(exc).__name__}: {exc}"
                )
                sb_info = "dynamic"
        elif self._sb_resolver is not None:
            sb_info = "dynamic"

        search: dict[str, Any] | None = None
        if self.can_search:
            modes = [
                m
                for m, ok in (
                    ("bm25", self.can_bm25),
                    ("vector", self.can_vector),
                    ("hybrid", self.can_hybrid),
                )
                if ok
            ]
            search = {
                "modes": modes,
                "index_name": self.persisted_index_name,
                "auto_index_paths": list(self._auto_index_paths),
            }
            if self._search_engine is not None and self.status not in ("destroying", "destroyed"):
                status = self.index_status()
                search["documents"] = status.documents
                search["status"] = status
            elif self._search_engine is not None:
                search["documents"] = len(self._search_engine)
        skills: dict[str, Any] | None = None
        if (
            self._has_skills
            and self._skills_obj is not None
            and self.status not in ("destroying", "destroyed")
        ):
            try:
                skills = {"count": len(self._skills_obj.list())}
            except Exception as exc:
                errors["skills"] = str(exc)
        return WorkspaceInfo(
            id=self._id,
            name=self._name,
            status=self.status,
            created_at=self._created_at,
            last_accessed_at=self._last_accessed_at,
            filesystem=fs_info,
            sandbox=sb_info,
            search=search,
            skills=skills,
            errors=errors,
        )

    def get_instructions(self, request_context: Any = None) -> str:
        """Instructions for a model's system prompt: the sandbox's and the filesystem's, joined.

        A resolver filesystem is resolved for the request; a resolver sandbox contributes a stable
        placeholder unless ``dynamic_sandbox_instructions`` says otherwise.
        """
        parts: list[str] = []
        if self._sb_static is not None:
            parts.append(_instructions_of(self._sb_static, request_context))
        elif self._sb_resolver is not None:
            mode = self._dynamic_sandbox_instructions
            if callable(mode):
                parts.append(str(mode(request_context)))
            elif mode == "resolve":
                parts.append(_instructions_of(self.resolve_sandbox(request_context), request_context))
            else:
                parts.append(SANDBOX_PLACEHOLDER_INSTRUCTIONS)
        if self.has_filesystem_config():
            parts.append(_instructions_of(self.resolve_filesystem(request_context), request_context))
        return "\n\n".join(p for p in parts if p)

    def __repr__(self) -> str:
        return f"<Workspace id={self._id!r} name={self._name!r} status={self.status!r}>"

    # --- convenience ---------------------------------------------------------------------------------

    @classmethod
    def from_directory(
        cls,
        path: str | os.PathLike[str] = "./workspace",
        *,
        isolation: str = "none",
        skills: Sequence[str] | str | None = None,
        **options: Any,
    ) -> Workspace:
        """A workspace over one directory: files, a sandbox working there, search over every file
        of it (hybrid when the default embedding model is installed, else BM25; vectors computed
        in the background), and the directory's ``skills/`` folder when it has one.

        >>> ws = Workspace.from_directory("./project")  # doctest: +SKIP
        """
        from .filesystem.local import LocalFilesystem
        from .sandbox.local import LocalSandbox

        root = os.path.abspath(os.path.expanduser(os.fspath(path)))
        if skills is None:
            skills = ("skills",) if os.path.isdir(os.path.join(root, "skills")) else ()
        options.setdefault("embedder", "auto")
        return cls(
            filesystem=LocalFilesystem(root),
            sandbox=LocalSandbox(working_directory=root, isolation=isolation),
            skills=skills,
            **options,
        )


def _instructions_of(provider: Any, request_context: Any) -> str:
    getter = getattr(provider, "get_instructions", None)
    if getter is None:
        return ""
    return str(getter(request_context))
