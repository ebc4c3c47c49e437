"""The values a live link to an open notebook carries, checked and bounded at the edge.

An agent reads the notebook the user has open (:class:`NotebookView`: the cells as the user sees
them, unsaved edits included, each with a ``version`` — a hash of its type and source computed by
the front end), then proposes a change (:class:`Proposal` of :class:`CellEdit` values). Every edit
of an existing cell carries that cell's version as the agent read it: the front end applies an
edit only while the cell still has that version, so a change the user made in between is never
overwritten (the edit comes back ``stale`` with the cell's current source). The answer is a
:class:`ProposalOutcome`; :class:`UserRunOutcome` is the answer to running cells in the user's
own kernel, which the user approves first.

Everything that arrives from the other side (the front end's replies, the agent's arguments) is
parsed here into these values with types checked and sizes bounded, so the rest of the package
never handles a raw message: a 10 MB source is refused with a sentence saying so, a read never
carries more than :data:`MAX_READ_CELLS` cells.

>>> Proposal.from_args([{"op": "replace", "cell_id": "c1", "version": "v1", "source": "x = 1"}]).edits[0].op
'replace'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import InvalidArgumentError, LiveNotebookError
from ..notebooks.document import CELL_TYPES

__all__ = [
    "EDIT_OPS",
    "MAX_EDITS",
    "MAX_PROPOSAL_BYTES",
    "MAX_READ_CELLS",
    "MAX_SOURCE_BYTES",
    "CellEdit",
    "CellOutcome",
    "CellView",
    "LiveStatus",
    "NotebookView",
    "Proposal",
    "ProposalOutcome",
    "UserRunOutcome",
]

EditOp = Literal["replace", "insert", "delete", "move"]
EDIT_OPS: tuple[str, ...] = ("replace", "insert", "delete", "move")
#: The largest new source of one cell (UTF-8 bytes): a bigger one is refused, never sent or drawn.
MAX_SOURCE_BYTES = 1 << 20
#: All new sources of one proposal together.
MAX_PROPOSAL_BYTES = 4 << 20
#: Edits in one proposal (one review for the user: a bigger change is several proposals).
MAX_EDITS = 200
#: Cells one read returns (``limit`` is capped to it; the rest is paged with ``offset``).
MAX_READ_CELLS = 500
#: Ids, versions and proposal ids are short tokens.
_MAX_TOKEN = 128
_MAX_PATH = 4096
#: Outcomes and mode names the front end may answer with.
_PROPOSAL_STATES = ("pending", "applied", "rejected", "stale", "partial", "invalid", "withdrawn")
_CELL_STATES = ("pending", "applied", "rejected", "stale", "invalid")
_RUN_STATES = ("pending", "denied", "done", "stale", "error", "withdrawn", "off")
ReviewMode = Literal["review", "accept"]
UserRuns = Literal["ask", "off"]


def _invalid(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(message)


def _token(value: Any, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value or len(value) > _MAX_TOKEN:
        raise _invalid(f"{what} must be a non-empty string of at most {_MAX_TOKEN} characters")
    return value


def _utf8_size(text: str, what: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise _invalid(f"{what} is not valid Unicode (a lone surrogate)") from None


@dataclass(frozen=True)
class CellEdit:
    """One change to the open notebook, by cell id.

    * ``replace``: cell ``cell_id`` (at ``version``) gets ``source`` (and ``cell_type`` when given);
    * ``insert``: a new ``cell_type`` cell with ``source`` goes after the cell ``after``
      (``""``: first in the notebook);
    * ``delete``: cell ``cell_id`` (at ``version``) is removed;
    * ``move``: cell ``cell_id`` (at ``version``) goes after ``after`` (``""``: first).
    """

    op: EditOp
    cell_id: str | None = None
    version: str | None = None
    source: str | None = None
    cell_type: str | None = None
    after: str | None = None

    @classmethod
    def from_args(cls, raw: Any, index: int = 0) -> CellEdit:
        """An edit from what an agent sent; ``InvalidArgumentError`` names what is wrong."""
        where = f"edits[{index}]"
        if not isinstance(raw, Mapping):
            raise _invalid(f"{where} must be an object with an op")
        op = raw.get("op")
        if op not in EDIT_OPS:
            raise _invalid(f"{where}.op must be one of {', '.join(EDIT_OPS)} (got {str(op)[:40]!r})")
        cell_id = raw.get("cell_id")
        version = raw.get("version")
        source = raw.get("source")
        cell_type = raw.get("cell_type")
        after = raw.get("after")
        if op in ("replace", "delete", "move"):
            _token(cell_id, f"{where}.cell_id ({op})")
            _token(version, f"{where}.version (the version open_notebook_read showed for {cell_id})")
        elif cell_id is not None:
            raise _invalid(f"{where}: an insert makes a new cell; name its place with 'after', not cell_id")
        if op in ("replace", "insert"):
            if not isinstance(source, str):
                raise _invalid(f"{where}.source (a string) is required for {op}")
            size = _utf8_size(source, f"{where}.source")
            if size > MAX_SOURCE_BYTES:
                raise _invalid(
                    f"{where}.source is {size:,} bytes: a cell's source may be at most "
                    f"{MAX_SOURCE_BYTES:,} bytes (split the content over several cells or write a file)"
                )
        elif source is not None:
            raise _invalid(f"{where}: {op} takes no source")
        if cell_type is not None and cell_type not in CELL_TYPES:
            raise _invalid(f"{where}.cell_type must be one of {', '.join(CELL_TYPES)}")
        if op == "insert" and cell_type is None:
            raise _invalid(f"{where}.cell_type is required for insert (code, markdown or raw)")
        if op in ("delete", "move") and cell_type is not None:
            raise _invalid(f"{where}: {op} takes no cell_type")
        if op in ("insert", "move"):
            if not isinstance(after, str) or len(after) > _MAX_TOKEN:
                raise _invalid(
                    f"{where}.after is required for {op}: the id of the cell to place it after, or '' for first"
                )
        elif after is not None:
            raise _invalid(f"{where}: {op} takes no 'after'")
        return cls(op, cell_id, version, source, cell_type, after)

    def to_wire(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @property
    def size(self) -> int:
        return len(self.source.encode("utf-8")) if self.source else 0


@dataclass(frozen=True)
class Proposal:
    """One reviewable change of the open notebook (one Accept/Reject for the user)."""

    edits: tuple[CellEdit, ...]

    @classmethod
    def from_args(cls, raw: Any) -> Proposal:
        """Checks the whole proposal: at most :data:`MAX_EDITS` edits and :data:`MAX_PROPOSAL_BYTES`
        of sources, each existing cell touched once."""
        if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
            raise _invalid("edits must be a list of edits")
        if not raw:
            raise _invalid("edits is empty: give at least one edit")
        if len(raw) > MAX_EDITS:
            raise _invalid(
                f"{len(raw):,} edits in one proposal: at most {MAX_EDITS} (propose the change in parts)"
            )
        edits = tuple(CellEdit.from_args(item, i) for i, item in enumerate(raw))
        total = sum(e.size for e in edits)
        if total > MAX_PROPOSAL_BYTES:
            raise _invalid(
                f"the proposal's sources total {total:,} bytes: at most {MAX_PROPOSAL_BYTES:,} per proposal"
            )
        seen: set[str] = set()
        for i, e in enumerate(edits):
            if e.cell_id is None:
                continue
            if e.cell_id in seen:
                raise _invalid(f"edits[{i}]: cell {e.cell_id} is changed twice in one proposal")
            seen.add(e.cell_id)
        return cls(edits)

    def to_wire(self) -> dict[str, Any]:
        return {"edits": [e.to_wire() for e in self.edits]}

    @property
    def cell_ids(self) -> tuple[str, ...]:
        return tuple(e.cell_id for e in self.edits if e.cell_id is not None)


# --- what the front end answers -------------------------------------------------------------------


def _wire_error(what: str) -> LiveNotebookError:
    return LiveNotebookError(f"the notebook's front end sent a malformed {what}", code="LIVE_PROTOCOL")


def _str(value: Any, what: str, *, limit: int = _MAX_TOKEN, default: str | None = None) -> str:
    if value is None and default is not None:
        return default
    if not isinstance(value, str) or len(value) > limit:
        raise _wire_error(what)
    return value


def _opt_str(value: Any, what: str, limit: int = _MAX_TOKEN) -> str | None:
    return None if value is None else _str(value, what, limit=limit)


def _int(value: Any, what: str, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _wire_error(what)
    return value


def _ids(value: Any, what: str, limit: int = MAX_READ_CELLS) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > limit:
        raise _wire_error(what)
    return tuple(_str(v, what) for v in value)


def _choice(value: Any, choices: Sequence[str], what: str, default: str | None = None) -> str:
    if value is None and default is not None:
        return default
    if value not in choices:
        raise _wire_error(what)
    return str(value)


@dataclass(frozen=True)
class CellView:
    """One cell of the open notebook as the front end showed it: ``cell`` is nbformat-shaped
    (``id``, ``cell_type``, ``source``, ``execution_count``, ``outputs``)."""

    index: int
    id: str
    cell_type: str
    source: str
    version: str
    cell: Mapping[str, Any]

    @classmethod
    def from_wire(cls, raw: Any) -> CellView:
        if not isinstance(raw, Mapping):
            raise _wire_error("cell")
        index = _int(raw.get("index"), "cell index")
        cid = _str(raw.get("id"), "cell id")
        cell_type = _choice(raw.get("cell_type"), CELL_TYPES, "cell type")
        source = _str(raw.get("source"), "cell source", limit=64 << 20)
        version = _str(raw.get("version"), "cell version")
        count = _int(raw.get("execution_count"), "execution count", optional=True)
        outputs = raw.get("outputs", [])
        if not isinstance(outputs, list) or not all(isinstance(o, Mapping) for o in outputs):
            raise _wire_error("cell outputs")
        cell: dict[str, Any] = {"id": cid, "cell_type": cell_type, "source": source, "metadata": {}}
        if cell_type == "code":
            cell["execution_count"] = count
            cell["outputs"] = [dict(o) for o in outputs]
        assert index is not None
        return cls(index, cid, cell_type, source, version, cell)


@dataclass(frozen=True)
class NotebookView:
    """The open notebook now (see the module docstring): a page of cells plus the notebook's
    state — which cell is active (and whether the user is typing in it), which cells differ from
    the last save, which are running or queued, the kernel's state, and the user's settings."""

    path: str
    total: int
    cells: tuple[CellView, ...]
    missing: tuple[str, ...] = ()
    language: str | None = None
    active: str | None = None
    editing: bool = False
    unsaved: tuple[str, ...] = ()
    unsaved_total: int = 0
    deleted_since_save: int = 0
    running: str | None = None
    queued: tuple[str, ...] = ()
    kernel: str = "unknown"
    mode: ReviewMode = "review"
    user_runs: UserRuns = "ask"
    has_ids: bool = True

    @classmethod
    def from_wire(cls, raw: Any) -> NotebookView:
        if not isinstance(raw, Mapping):
            raise _wire_error("notebook view")
        cells = raw.get("cells")
        if not isinstance(cells, list) or len(cells) > MAX_READ_CELLS:
            raise _wire_error("cell list")
        total = _int(raw.get("total"), "cell count")
        assert total is not None
        return cls(
            path=_str(raw.get("path"), "notebook path", limit=_MAX_PATH),
            total=total,
            cells=tuple(CellView.from_wire(c) for c in cells),
            missing=_ids(raw.get("missing"), "missing cell ids"),
            language=_opt_str(raw.get("language"), "language"),
            active=_opt_str(raw.get("active"), "active cell"),
            editing=bool(raw.get("editing")),
            unsaved=_ids(raw.get("unsaved"), "unsaved cells"),
            unsaved_total=_int(raw.get("unsaved_total", 0), "unsaved count") or 0,
            deleted_since_save=_int(raw.get("deleted_since_save", 0), "deleted count") or 0,
            running=_opt_str(raw.get("running"), "running cell"),
            queued=_ids(raw.get("queued"), "queued cells", limit=10_000),
            kernel=_str(raw.get("kernel"), "kernel state", default="unknown"),
            mode=_choice(raw.get("mode"), ("review", "accept"), "mode", "review"),  # type: ignore[arg-type]
            user_runs=_choice(raw.get("user_runs"), ("ask", "off"), "user runs", "ask"),  # type: ignore[arg-type]
            has_ids=bool(raw.get("has_ids", True)),
        )


@dataclass(frozen=True)
class CellOutcome:
    """What became of one edit: ``applied`` (``version`` is the cell's new version), ``rejected``,
    ``stale`` (``source``/``version`` are the cell's current ones), ``invalid`` (``reason``)."""

    cell_id: str | None
    op: str
    status: str
    version: str | None = None
    source: str | None = None
    reason: str | None = None

    @classmethod
    def from_wire(cls, raw: Any) -> CellOutcome:
        if not isinstance(raw, Mapping):
            raise _wire_error("cell outcome")
        return cls(
            cell_id=_opt_str(raw.get("cell_id"), "cell id"),
            op=_choice(raw.get("op"), EDIT_OPS, "edit op"),
            status=_choice(raw.get("status"), _CELL_STATES, "cell status"),
            version=_opt_str(raw.get("version"), "cell version"),
            source=_opt_str(raw.get("source"), "cell source", limit=64 << 20),
            reason=_opt_str(raw.get("reason"), "reason", limit=2000),
        )


@dataclass(frozen=True)
class ProposalOutcome:
    """The state of one proposal: ``pending`` until the user decides (``applied``, ``rejected``,
    ``partial`` when some edits were accepted and others not, ``stale`` when a cell it touches
    changed or is being edited or run), ``invalid`` when it cannot apply at all (``message``), or
    ``withdrawn`` when the notebook page went away before a decision."""

    proposal_id: str
    status: str
    cells: tuple[CellOutcome, ...] = ()
    message: str | None = None
    auto: bool = False  # applied without review (the user's "accept" mode)

    @classmethod
    def from_wire(cls, raw: Any) -> ProposalOutcome:
        if not isinstance(raw, Mapping):
            raise _wire_error("proposal outcome")
        cells = raw.get("cells", [])
        if not isinstance(cells, list) or len(cells) > MAX_EDITS:
            raise _wire_error("proposal cells")
        return cls(
            proposal_id=_str(raw.get("proposal_id"), "proposal id"),
            status=_choice(raw.get("status"), _PROPOSAL_STATES, "proposal status"),
            cells=tuple(CellOutcome.from_wire(c) for c in cells),
            message=_opt_str(raw.get("message"), "message", limit=4000),
            auto=bool(raw.get("auto")),
        )

    @property
    def pending(self) -> bool:
        return self.status == "pending"


@dataclass(frozen=True)
class UserRunOutcome:
    """Cells run in the user's own kernel after the user approved: ``pending`` (waiting for the
    user or still running), ``denied`` (nothing ran), ``done`` (``cells`` hold each cell's
    nbformat outputs), ``stale`` (a cell changed before it could run), ``off`` (the user turned
    such runs off), ``error`` (``message``)."""

    run_id: str
    status: str
    cells: tuple[Mapping[str, Any], ...] = ()
    message: str | None = None

    @classmethod
    def from_wire(cls, raw: Any) -> UserRunOutcome:
        if not isinstance(raw, Mapping):
            raise _wire_error("run outcome")
        cells = raw.get("cells", [])
        if not isinstance(cells, list) or len(cells) > MAX_READ_CELLS:
            raise _wire_error("run cells")
        checked = []
        for c in cells:
            view = CellView.from_wire(c)
            checked.append({**view.cell, "index": view.index, "version": view.version,
                            "status": _choice(c.get("status"), ("ok", "error", "skipped", "stale"), "cell run status", "ok")})
        return cls(
            run_id=_str(raw.get("run_id"), "run id"),
            status=_choice(raw.get("status"), _RUN_STATES, "run status"),
            cells=tuple(checked),
            message=_opt_str(raw.get("message"), "message", limit=4000),
        )


@dataclass(frozen=True)
class LiveStatus:
    """Whether an open notebook is reachable, and how: ``subshells`` is False when its kernel
    cannot take front-end messages while a cell runs (then the link works only between cells)."""

    connected: bool
    path: str | None = None
    frontend: str | None = None
    version: str | None = None
    subshells: bool = False
    mode: ReviewMode = "review"
    user_runs: UserRuns = "ask"
    problem: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
