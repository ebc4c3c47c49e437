"""``workspace_index``: index a file or folder from disk (``{"path": "docs"}``), or, with
``content``, a free-text document under a name that is not a workspace file."""

from __future__ import annotations

import posixpath

from ...errors import InvalidArgumentError
from ..base import ToolCall, ToolSpec
from ..facts import WORKSPACE_TOOLS, ToolHints
from ..schema import Param

__all__ = ["INDEX_SPEC", "index"]


def index(call: ToolCall) -> str:
    path = call.args["path"].strip().replace("\\", "/")
    norm = posixpath.normpath(path).lstrip("/")
    if norm in ("", "..") or norm.startswith("../"):
        raise InvalidArgumentError(
            f"Invalid path {path!r}: give a workspace-relative path like 'docs' or 'notes/a.md'"
        )
    content = call.args["content"]
    ws = call.workspace
    if content is not None:
        if norm == ".":
            raise InvalidArgumentError("A free-text document needs a name like 'notes/meeting.md'")
        ids = ws.index_document(norm, content)
        return f"Indexed the text as {norm}" + (f" ({len(ids)} chunks)" if len(ids) > 1 else "")
    report = ws.rebuild_search_index([norm])
    if report.missing:
        raise InvalidArgumentError(
            f"No file or folder {norm!r} in the workspace (to index text, give it as content)"
        )
    parts = [f"{len(report.indexed)} {'file' if len(report.indexed) == 1 else 'files'} indexed "
             f"({report.chunks} chunks)", f"{report.unchanged + report.touched} unchanged"]
    if report.removed:
        parts.append(f"{len(report.removed)} removed")
    if report.skipped:
        parts.append(f"{len(report.skipped)} skipped (binary, too large or unreadable)")
    text = f"Indexed {norm} from disk: " + ", ".join(parts)
    status = ws.index_status() if hasattr(ws, "index_status") else None
    if status is not None and status.vectors and status.pending:
        text += (f". Vectors are computed in the background ({status.embedded:,} of "
                 f"{status.documents:,} documents so far); BM25 finds the new text now")
    return text


INDEX_SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.SEARCH.INDEX,
    description=(
        "Update the search index. With only a path, (re)index that file or folder of the "
        "workspace from disk (e.g. after creating files; '.' is everything; .gitignored, hidden "
        "and binary files are skipped; unchanged files cost nothing). With content, add a "
        "free-text document under that name (not the name of a workspace file) so later "
        "workspace_search calls can find it; indexing the same name again replaces it. It never "
        "writes a file."
    ),
    params=(
        Param(
            "path",
            "string",
            "A workspace file or folder to index from disk, e.g. 'docs'; with content, the name "
            "of the free-text document, e.g. 'notes/meeting.md'.",
            required=True,
            allow_empty=False,
        ),
        Param("content", "string", "Text to index as a free-text document. Omit it (null) to index path from disk."),
    ),
    run=index,
    title="Add to the search index",
    hints=ToolHints(destructive=False, idempotent=True),
    needs={"search", "writable"},
    # changes the index, never a file
    writes=False,
    options=(),
    max_output_tokens=None,
)
