"""``Notebook``: one ``.ipynb`` document, read, changed and written with nbformat.

Everything in the package that looks inside a notebook — the read, write, edit and notebook-edit
tools, the search indexer, grep, ``%ws cat`` and the file browser, notebook execution — goes
through this class, so there is one answer to "what are this notebook's cells":

* **reading** parses with nbformat's reader and converts to nbformat 4 (``as_version=4``); a
  file that is not a notebook at all (not JSON, no ``nbformat`` field, an unsupported version,
  cells that are not objects) raises :class:`~ws_jupyter.errors.NotebookError`. A notebook that
  reads but does not pass ``nbformat.validate`` is kept, with the reason in :attr:`problem`, so it
  can still be shown;
* **nbformat 3 code cells name their language**, nbformat 4 has no such field (nbformat's upgrade
  drops it): one language for every cell becomes the notebook's ``language_info``; cells in
  several languages are kept in :attr:`cell_languages` and the notebook is not written (an edit
  would lose them: :meth:`dumps` says so);
* **cell ids** (nbformat 4.5+) that are missing or repeated are filled in *deterministically*
  (``cell-<index>``, made unique), where nbformat would invent random ones: two reads of the same
  file show the same ids, so an id read by an agent still names the cell when it edits. Notebooks
  older than 4.5 have no ids, and new cells in them get none (their schema forbids the field);
* **changes** (:meth:`replace_cell`, :meth:`insert_cell`, :meth:`delete_cell`) follow Jupyter's
  rules: new cells are made with ``nbformat.v4.new_*_cell``, replacing a code cell's source clears
  its outputs and execution count (they described the old code), every other cell is left as it
  was — source, metadata, outputs and attachments;
* **writing** validates first (``nbformat.validate``; a notebook it rejects is never written and
  the error says why) and saves nbformat's own serialisation through the filesystem's atomic
  write, so a crash leaves the old file or the new one. A notebook saved by Jupyter and written
  back unchanged is byte-identical.

>>> nb = Notebook.new([("markdown", "# Title"), ("code", "1 + 1")])
>>> nb.cell_sources()
['# Title', '1 + 1']
>>> nb.replace_cell(1, "2 + 2").source
'2 + 2'
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import CellNotFoundError, IsADirectory, NotebookError
from .normalise import normalise

__all__ = [
    "CELL_TYPES",
    "MAX_NOTEBOOK_BYTES",
    "CellRef",
    "CellType",
    "Notebook",
    "cell_source",
    "is_notebook_path",
]

CellType = Literal["code", "markdown", "raw"]
CELL_TYPES: tuple[str, ...] = ("code", "markdown", "raw")
#: Larger files are not parsed (a notebook is held in memory whole, images included).
MAX_NOTEBOOK_BYTES = 64 << 20
#: A notebook's shape is bounded too, since nbformat's work grows with it, not with its size:
#: JSON nested deeper than this is refused (nbformat's conversion recurses: Python's recursion
#: limit would end it with a RecursionError), and so are more cells and outputs, or JSON values
#: (objects, arrays and their members), than these — nbformat validates and copies each one, so
#: a 2 MB file of 50,000 one-letter outputs held a tool for half a minute per read and edit.
MAX_JSON_DEPTH = 100
MAX_NOTEBOOK_PARTS = 10_000
MAX_JSON_VALUES = 1_000_000
_ID_OK = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def is_notebook_path(path: str) -> bool:
    """True for ``*.ipynb`` paths (any case): the files handled as notebooks."""
    return str(path).lower().endswith(".ipynb")


def cell_source(cell: Any) -> str:
    """A cell's source as one string (nbformat joins the list form on read; this also copes with
    a malformed cell)."""
    src = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(src, str):
        return src
    if isinstance(src, list):
        return "".join(s for s in src if isinstance(s, str))
    return ""


@dataclass(frozen=True)
class CellRef:
    """Where a cell is: its ``index`` (0-based), ``id`` (None before nbformat 4.5) and type."""

    index: int
    id: str | None
    cell_type: str

    @property
    def label(self) -> str:
        """``cell 4``: how locations in a notebook are written (``nb.ipynb [cell 4]:2``)."""
        return f"cell {self.index}"


def _shape_problem(raw: Any) -> str | None:
    """Why parsed JSON is too deep or too large to handle as a notebook (None: it is not)."""
    stack: list[tuple[Any, int]] = [(raw, 1)]
    values = parts = 0
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        if isinstance(node, dict):
            if "cell_type" in node or "output_type" in node:
                parts += 1
                if parts > MAX_NOTEBOOK_PARTS:
                    return f"more than {MAX_NOTEBOOK_PARTS:,} cells and outputs"
            children: Any = node.values()
        else:
            children = node
        values += len(children)
        if values > MAX_JSON_VALUES:
            return f"more than {MAX_JSON_VALUES:,} JSON values"
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return None


def _v3_languages(raw: dict[str, Any]) -> dict[int, str]:
    """Index (in the converted notebook: worksheets flattened) -> language of each nbformat 3 code
    cell that names one."""
    out: dict[int, str] = {}
    index = 0
    worksheets = raw.get("worksheets")
    for ws in worksheets if isinstance(worksheets, list) else ():
        cells = ws.get("cells") if isinstance(ws, dict) else None
        for cell in cells if isinstance(cells, list) else ():
            code = isinstance(cell, dict) and cell.get("cell_type") == "code"
            language = cell.get("language") if code else None
            if isinstance(language, str) and language.strip():
                out[index] = language.strip()[:100]
            index += 1
    return out


def _nbformat() -> Any:
    import nbformat

    return nbformat


def _short(exc: BaseException) -> str:
    """The first line of a (jsonschema) validation error: what is wrong, without the schema dump."""
    text = str(getattr(exc, "message", None) or exc).strip()
    first = text.split("\n", 1)[0]
    return first if len(first) <= 300 else first[:297] + "..."


def _where(path: Sequence[Any]) -> str:
    """``['cells', 3, 'outputs', 0]`` -> ``cell 3, output 0``."""
    parts, items = [], list(path)
    i = 0
    while i < len(items):
        key = items[i]
        if key in ("cells", "outputs") and i + 1 < len(items) and isinstance(items[i + 1], int):
            parts.append(f"{key[:-1]} {items[i + 1]}")
            i += 2
            continue
        parts.append(str(key))
        i += 1
    return ", ".join(parts)


def _explain(exc: Any) -> str:
    """The most useful line of a jsonschema error: for a cell or output that matches none of the
    schema's kinds, the error of the kind it claims to be (or that the kind is unknown)."""
    inst = getattr(exc, "instance", None)
    context = list(getattr(exc, "context", None) or ())
    if context and isinstance(inst, dict):
        key = "cell_type" if "cell_type" in inst else "output_type" if "output_type" in inst else None
        if key is not None:
            branches: dict[Any, list[Any]] = {}
            for sub in context:
                branches.setdefault(sub.schema_path[0] if sub.schema_path else None, []).append(sub)
            for errors in branches.values():
                if not any(list(e.absolute_path)[-1:] == [key] for e in errors):
                    return _explain(errors[0])
            return f"unknown {key} {inst.get(key)!r}"
        from jsonschema.exceptions import best_match

        best = best_match(context)
        if best is not None:
            return _explain(best)
    where = _where(getattr(exc, "absolute_path", ()) or ())
    return _short(exc) + (f" (at {where})" if where else "")


def _validation_problem(node: Any) -> str | None:
    """Why nbformat rejects ``node`` (None when it is valid). ``node`` is not changed: ids are
    repaired before, so nbformat's validator finds nothing to "fix" in place."""
    nbformat = _nbformat()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            nbformat.validate(node)
        except nbformat.ValidationError as exc:
            return _explain(exc)
        except (KeyError, TypeError, AttributeError, RecursionError) as exc:
            return f"malformed notebook ({type(exc).__name__}: {exc})"
    return None


class Notebook:
    """An nbformat 4 notebook in memory (see the module docstring).

    ``node`` is the ``nbformat.NotebookNode``; ``path`` the workspace path it was read from (or
    None); ``source_version`` the ``(major, minor)`` found in the file; ``problem`` why the file
    as read does not validate (None when it does); ``ids_filled`` whether missing or repeated ids
    were filled in on read; ``stat`` the file's ``FileStat`` and ``digest`` the SHA-256 of its bytes
    when it was loaded from a filesystem.
    """

    def __init__(
        self,
        node: Any,
        *,
        path: str | None = None,
        source_version: tuple[int, int] | None = None,
        stat: Any = None,
        cell_languages: dict[int, str] | None = None,
        text: str | None = None,
    ) -> None:
        self.node = node
        self.path = path
        self.source_version = source_version or (int(node.nbformat), int(node.nbformat_minor))
        self.stat = stat
        #: nbformat 3 code cells in several languages, by cell index as read (empty otherwise)
        self.cell_languages: dict[int, str] = dict(cell_languages or {})
        self.digest: str | None = None
        #: what was changed on read to make the notebook valid, as Jupyter does when it saves
        #: (empty: nothing); the changes are written at the next save
        self.normalised: tuple[str, ...] = normalise(node) if text is not None else ()
        self.ids_filled = self._fill_ids()
        self.problem = _validation_problem(node)
        # the file's text and which cell object came from which of its cells: a save keeps the
        # bytes of every cell that did not change (``layout.write_preserving``)
        self._text = text
        self._origin = {id(cell): i for i, cell in enumerate(self.cells)} if text is not None else {}

    # ------------------------------------------------------------------ construction
    @classmethod
    def parse(cls, text: str | bytes, path: str | None = None, *, stat: Any = None) -> Notebook:
        """Parse notebook JSON (any nbformat version nbformat converts; held as nbformat 4)."""
        nbformat = _nbformat()
        from nbformat import reader

        label = path or "the notebook"
        if isinstance(text, (bytes, bytearray)):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise NotebookError(
                    f"{label} is not a notebook: not UTF-8 text (byte 0x{text[exc.start]:02x} at offset "
                    f"{exc.start})",
                    path=path,
                ) from None
        try:
            raw = reader.parse_json(text)
        except reader.NotJSONError as exc:
            cause = exc.__cause__
            detail = "not JSON"
            if isinstance(cause, ValueError) and hasattr(cause, "lineno"):
                detail = f"{getattr(cause, 'msg', cause)} at line {cause.lineno} column {getattr(cause, 'colno', '?')}"
            raise NotebookError(f"{label} is not a notebook: invalid JSON ({detail})", path=path) from None
        except RecursionError:
            raise NotebookError(f"{label} is not a notebook: JSON nested too deeply", path=path) from None
        if not isinstance(raw, dict) or "nbformat" not in raw:
            raise NotebookError(
                f"{label} is not a notebook: JSON without an 'nbformat' field", path=path
            )
        major, minor = raw.get("nbformat"), raw.get("nbformat_minor", 0)
        if (
            not isinstance(major, int)
            or isinstance(major, bool)
            or major not in (3, 4)
            or not isinstance(minor, int)
            or isinstance(minor, bool)
        ):
            raise NotebookError(
                f"{label}: unsupported notebook format {major!r}.{minor!r} (nbformat 3 and 4 are read)",
                path=path,
            )
        if major == 4 and not isinstance(raw.get("cells"), list):
            raise NotebookError(f"{label} is not a readable notebook: no 'cells' list", path=path)
        too_large = _shape_problem(raw)
        if too_large is not None:
            raise NotebookError(f"{label} is not handled as a notebook: {too_large}", path=path)
        languages = _v3_languages(raw) if major == 3 else {}
        try:
            node = nbformat.versions[major].to_notebook_json(raw, minor=minor)
            if major != 4:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    node = nbformat.convert(node, 4)
                for cell in node.get("cells", ()):
                    cell.pop("id", None)  # the upgrade invents random ids: filled in stably below
        except KeyError as exc:
            raise NotebookError(f"{label} is not a readable notebook: missing {exc}", path=path) from None
        except (AttributeError, TypeError, ValueError, nbformat.ValidationError) as exc:
            raise NotebookError(f"{label} is not a readable notebook: {_short(exc)}", path=path) from None
        except RecursionError:  # the stack was already deep (the shape check allows 100 levels)
            raise NotebookError(f"{label} is not a readable notebook: JSON nested too deeply", path=path) from None
        cells = node.get("cells")
        if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
            raise NotebookError(f"{label} is not a readable notebook: 'cells' is not a list of cells", path=path)
        if not isinstance(node.get("metadata", {}), dict):
            raise NotebookError(f"{label} is not a readable notebook: 'metadata' is not an object", path=path)
        nb = cls(node, path=path, source_version=(major, minor), stat=stat, text=text if major == 4 else None)
        if languages:
            kinds = set(languages.values()) | ({nb.language} if nb.language else set())
            if len(kinds) == 1 and nb.language is None:
                nb.metadata["language_info"] = {"name": next(iter(kinds))}
            elif len(kinds) > 1:
                nb.cell_languages = languages
        return nb

    @classmethod
    def load(cls, fs: Any, path: str, *, max_bytes: int = MAX_NOTEBOOK_BYTES) -> Notebook:
        """Read and parse ``path`` from a workspace filesystem, through the bounded reader: a
        regular file only, at most ``max_bytes`` (``FileTooLargeError`` past it). ``digest`` is the
        SHA-256 of the bytes read (what read tracking compares)."""
        from ..filesystem.reading import read_limited

        st = fs.stat(path)
        rel = st.path
        if st.type == "directory":
            raise IsADirectory(rel)
        data = read_limited(fs, rel, max_bytes, size=st.size)
        nb = cls.parse(data, rel, stat=st)
        nb.digest = hashlib.sha256(data).hexdigest()
        return nb

    @classmethod
    def new(
        cls,
        cells: Iterable[tuple[str, str]] = (),
        *,
        path: str | None = None,
        language: str | None = "python",
    ) -> Notebook:
        """A new nbformat 4.5 notebook with ``(cell_type, source)`` cells; ``language="python"``
        gives it the standard Python 3 kernelspec (what Jupyter writes for a new notebook)."""
        nbformat = _nbformat()
        metadata: dict[str, Any] = {}
        if language == "python":
            metadata = {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            }
        node = nbformat.v4.new_notebook(metadata=metadata)
        nb = cls(node, path=path)
        for cell_type, source in cells:
            nb.insert_cell(len(nb), source, cell_type)
        return nb

    # ------------------------------------------------------------------ ids
    @property
    def has_cell_ids(self) -> bool:
        """Whether this notebook's format has cell ids (nbformat 4.5 and later)."""
        return (int(self.node.nbformat), int(self.node.nbformat_minor)) >= (4, 5)

    def _fill_ids(self) -> bool:
        if not self.has_cell_ids:
            return False
        seen: set[str] = set()
        missing: list[int] = []
        for i, cell in enumerate(self.cells):
            cid = cell.get("id")
            if isinstance(cid, str) and _ID_OK.match(cid) and cid not in seen:
                seen.add(cid)
            else:
                missing.append(i)
        for i in missing:
            base = f"cell-{i}"
            cid, n = base, 1
            while cid in seen:
                cid, n = f"{base}-{n}", n + 1
            self.cells[i]["id"] = cid
            seen.add(cid)
        return bool(missing)

    def _new_id(self) -> str:
        nbformat = _nbformat()
        taken = {c.get("id") for c in self.cells}
        while True:
            cid = nbformat.v4.new_code_cell().id
            if cid not in taken:
                return str(cid)

    def languages_summary(self) -> str:
        """``python: cells 0, 2; r: cell 1`` — the per-cell languages of an nbformat 3 notebook."""
        by: dict[str, list[int]] = {}
        for index, language in sorted(self.cell_languages.items()):
            by.setdefault(language, []).append(index)
        parts = []
        for language, indexes in by.items():
            shown = ", ".join(map(str, indexes[:10])) + (", ..." if len(indexes) > 10 else "")
            parts.append(f"{language}: {'cells' if len(indexes) > 1 else 'cell'} {shown}")
        return "; ".join(parts)

    # ------------------------------------------------------------------ cells
    @property
    def cells(self) -> list[Any]:
        return self.node.cells

    @property
    def metadata(self) -> dict[str, Any]:
        return self.node.setdefault("metadata", {})

    @property
    def nbformat_version(self) -> str:
        """``"4.5"``: the format version as written."""
        return f"{self.node.nbformat}.{self.node.nbformat_minor}"

    @property
    def language(self) -> str | None:
        """The kernel's language (``"python"``), from the notebook metadata, when it says."""
        meta = self.metadata
        for key in ("language_info", "kernelspec"):
            section = meta.get(key)
            if isinstance(section, dict):
                name = section.get("name") if key == "language_info" else section.get("language")
                if isinstance(name, str) and name:
                    return name
        return None

    def __len__(self) -> int:
        return len(self.cells)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.cells)

    def __repr__(self) -> str:
        where = f"{self.path!r}, " if self.path else ""
        bad = ", invalid" if self.problem else ""
        return f"Notebook({where}{len(self)} cells, nbformat {self.nbformat_version}{bad})"

    def ref(self, index: int) -> CellRef:
        cell = self.cell(index)
        cid = cell.get("id")
        return CellRef(index, cid if isinstance(cid, str) else None, str(cell.get("cell_type", "?")))

    def refs(self) -> list[CellRef]:
        return [self.ref(i) for i in range(len(self))]

    def cell(self, index: int) -> Any:
        """The cell at ``index`` (0-based; negative counts from the end as in Python)."""
        if not isinstance(index, int) or isinstance(index, bool):
            raise CellNotFoundError(f"cell index must be an integer, got {index!r}", path=self.path)
        n = len(self)
        if not -n <= index < n:
            raise CellNotFoundError(self._no_index(index), path=self.path, index=index)
        return self.cells[index]

    def cell_sources(self) -> list[str]:
        return [cell_source(c) for c in self.cells]

    def index_of(self, cell_id: str) -> int:
        """The index of the cell with id ``cell_id``; ``CellNotFoundError`` naming the ids there are."""
        for i, cell in enumerate(self.cells):
            if cell.get("id") == cell_id:
                return i
        raise CellNotFoundError(self._no_id(cell_id), path=self.path, cell_id=cell_id)

    def locate(self, cell_id: str | None = None, cell_index: int | None = None) -> int:
        """The index of the cell named by ``cell_id`` or ``cell_index`` (both: they must agree)."""
        if cell_id is None and cell_index is None:
            raise CellNotFoundError("give cell_id or cell_index", path=self.path)
        if cell_id is not None:
            index = self.index_of(cell_id)
            if cell_index is not None and cell_index != index:
                raise CellNotFoundError(
                    f"cell_id {cell_id!r} is cell {index}, not cell {cell_index}: give one of them",
                    path=self.path,
                )
            return index
        assert cell_index is not None
        if cell_index < 0:
            raise CellNotFoundError(self._no_index(cell_index), path=self.path, index=cell_index)
        self.cell(cell_index)
        return cell_index

    def _where(self) -> str:
        return f"{self.path} " if self.path else "the notebook "

    def _no_index(self, index: int) -> str:
        n = len(self)
        has = f"cells 0-{n - 1}" if n else "no cells"
        return f"No cell {index}: {self._where()}has {has}"

    def _no_id(self, cell_id: str) -> str:
        if not self.has_cell_ids:
            return (
                f"No cell with id {cell_id!r}: {self._where()}is nbformat {self.nbformat_version}, "
                "whose cells have no ids; use cell_index"
            )
        ids = [str(c.get("id")) for c in self.cells]
        shown = ", ".join(ids[:20]) + (", ..." if len(ids) > 20 else "")
        return f"No cell with id {cell_id!r} in {self._where().strip()} (ids: {shown or 'none'})"

    # ------------------------------------------------------------------ changes
    def _make_cell(self, cell_type: str, source: str) -> Any:
        nbformat = _nbformat()
        if cell_type not in CELL_TYPES:
            raise NotebookError(
                f"unknown cell type {cell_type!r}: use one of {', '.join(CELL_TYPES)}", path=self.path
            )
        if not isinstance(source, str):
            raise NotebookError(f"cell source must be a string, got {type(source).__name__}", path=self.path)
        maker = {
            "code": nbformat.v4.new_code_cell,
            "markdown": nbformat.v4.new_markdown_cell,
            "raw": nbformat.v4.new_raw_cell,
        }[cell_type]
        cell = maker(source)
        if self.has_cell_ids:
            cell["id"] = self._new_id()
        else:
            cell.pop("id", None)
        return cell

    def replace_cell(self, index: int, source: str, cell_type: str | None = None) -> Any:
        """Give the cell at ``index`` a new source (and type). It keeps its id and metadata; a code
        cell's outputs and execution count are cleared. A change of type rebuilds the cell's fields
        for the new type (id, metadata and — between markdown and raw — attachments kept)."""
        cell = self.cell(index)
        if not isinstance(source, str):
            raise NotebookError(f"cell source must be a string, got {type(source).__name__}", path=self.path)
        new_type = cell_type or str(cell.get("cell_type"))
        if new_type not in CELL_TYPES:
            raise NotebookError(
                f"unknown cell type {new_type!r}: use one of {', '.join(CELL_TYPES)}", path=self.path
            )
        if new_type != cell.get("cell_type"):
            fresh = self._make_cell(new_type, source)
            if "id" in cell:
                fresh["id"] = cell["id"]
            fresh["metadata"] = cell.get("metadata", {})
            if new_type != "code" and "attachments" in cell:
                fresh["attachments"] = cell["attachments"]
            self.cells[index] = fresh
            return fresh
        cell["source"] = source
        if new_type == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        return cell

    def insert_cell(self, position: int, source: str, cell_type: str) -> Any:
        """Insert a new cell so that it becomes cell ``position`` (0 = first, ``len(nb)`` = last)."""
        if not isinstance(position, int) or not 0 <= position <= len(self):
            raise CellNotFoundError(
                f"cannot insert at position {position}: {self._where()}has {len(self)} cells", path=self.path
            )
        cell = self._make_cell(cell_type, source)
        self.cells.insert(position, cell)
        return cell

    def delete_cell(self, index: int) -> Any:
        """Remove the cell at ``index`` and return it."""
        self.cell(index)
        return self.cells.pop(index)

    def clear_outputs(self, index: int) -> None:
        cell = self.cell(index)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None

    # ------------------------------------------------------------------ writing
    def validate(self) -> None:
        """Raise ``NotebookError`` when nbformat rejects the notebook as it is now."""
        problem = _validation_problem(self.node)
        if problem is not None:
            raise NotebookError(f"{self._where()}is not a valid notebook: {problem}", path=self.path)

    def dumps(self) -> str:
        """nbformat's JSON serialisation (validated first), ending with a newline like Jupyter's."""
        if self.cell_languages:
            raise NotebookError(
                f"{self._where()}is an nbformat 3 notebook whose code cells are in several languages "
                f"({self.languages_summary()}); it is written as nbformat 4, which has no per-cell "
                "language, so they would be lost: nothing was written (convert it in Jupyter first, "
                "e.g. with cell magics such as %%R)",
                path=self.path,
            )
        self.validate()
        kept = self._dumps_preserving()
        if kept is not None:
            return kept
        nbformat = _nbformat()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                # from_dict: cells or outputs added as plain dicts become NotebookNodes, which
                # nbformat's writer needs (it reads attributes)
                # allow_nan=False: NaN or an overflowing number (1e400 reads as inf) would be written
                # as NaN/Infinity, which is not JSON: JupyterLab could no longer open the notebook
                text = nbformat.writes(
                    nbformat.from_dict(self.node), version=nbformat.NO_CONVERT, allow_nan=False
                )
            except ValueError as exc:
                if "JSON compliant" not in str(exc):
                    raise NotebookError(f"{self._where()}could not be serialised: {exc}", path=self.path) from None
                raise NotebookError(
                    f"{self._where()}holds a number JSON cannot represent (NaN or Infinity, or one too "
                    "large for a double): it is not written, since no JSON reader could open the result",
                    path=self.path,
                ) from None
            except (AttributeError, KeyError, TypeError) as exc:
                raise NotebookError(f"{self._where()}could not be serialised: {exc}", path=self.path) from None
        return text if text.endswith("\n") else text + "\n"

    def _dumps_preserving(self) -> str | None:
        """The file as read with only what changed rewritten (in the file's style), when it can
        be done and reads back as this notebook; None otherwise."""
        if self._text is None:
            return None
        from .layout import rejoined, scan, write_preserving

        layout = scan(self._text)
        if layout is None:
            return None
        try:
            text = write_preserving(layout, self.node, self._origin)
            if text is None:
                return None
            back = json.loads(text)
        except (ValueError, TypeError, RecursionError):
            return None
        cells = back.get("cells") if isinstance(back, dict) else None
        if not isinstance(cells, list) or [rejoined(c) for c in cells] != self.cells:
            return None
        if {k: v for k, v in back.items() if k != "cells"} != {k: v for k, v in self.node.items() if k != "cells"}:
            return None
        return text

    def saved(self, text: str) -> None:
        """After ``text`` was written: it is the file as read from now on (the next save keeps
        its bytes where cells do not change)."""
        if self._text is not None or self.path is not None:
            self._text = text
            self._origin = {id(cell): i for i, cell in enumerate(self.cells)}
            self.digest = hashlib.sha256(text.encode("utf-8")).hexdigest()

    def save(
        self,
        fs: Any,
        path: str | None = None,
        *,
        expected_mtime: float | None = None,
        overwrite: bool = True,
    ) -> str:
        """Validate and write atomically to ``path`` (default: where it was read); returns the
        text written. ``expected_mtime`` refuses the write if the file changed meanwhile."""
        target = path or self.path
        if not target:
            raise NotebookError("save() needs a path for a notebook that was not read from a file")
        text = self.dumps()
        fs.write_file(target, text, recursive=True, overwrite=overwrite, expected_mtime=expected_mtime)
        self.path = target
        self.saved(text)
        return text
