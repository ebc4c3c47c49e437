"""``workspace_search`` and ``workspace_index``: the workspace's BM25 / vector / hybrid search.

Results are printed as ``<path>:<start>-<end>: <snippet>`` — the lines of the hit that match the
query, cut to a share of the output budget — so a model can go straight to
``workspace_read_file(path, offset=start)``; a hit in a notebook reads
``nb.ipynb [cell 4]:2-5: <lines of the cell>`` (lines within the cell; read it with
``workspace_read_file(path, offset=4, limit=1)``). The schema lists only the modes this workspace has;
a mode that is not available falls back (hybrid -> vector -> bm25) and the output says so.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from ..errors import InvalidArgumentError
from .base import ToolCall, ToolSpec
from .names import WORKSPACE_TOOLS
from .output import cut_line
from .schema import Param
from .tokens import count_tokens

__all__ = ["INDEX_SPEC", "SEARCH_SPEC", "available_modes"]

_WORD = re.compile(r"\w+", re.UNICODE)
_SNIPPET_LINES = 12


def available_modes(workspace: Any) -> list[str]:
    modes = []
    if getattr(workspace, "can_hybrid", False):
        modes.append("hybrid")
    if getattr(workspace, "can_vector", False):
        modes.append("vector")
    if getattr(workspace, "can_bm25", False):
        modes.append("bm25")
    return modes


def _search_params(workspace: Any) -> tuple[Param, ...]:
    modes = available_modes(workspace) or ["bm25"]
    default = modes[0]
    return (
        Param(
            "query",
            "string",
            "What to look for, in words (keywords or a question).",
            required=True,
            allow_empty=False,
        ),
        Param("top_k", "integer", "How many results to return.", default=5, minimum=1, maximum=50),
        Param(
            "mode",
            "string",
            f"Search mode: {', '.join(modes)}. Default: {default}.",
            enum=tuple(modes),
            also_accept=("hybrid", "vector", "bm25"),
        ),
        Param("min_score", "number", "Leave out results scoring below this. Default: none."),
    )


def _snippet(content: str, query: str, budget: int) -> str:
    """The lines of ``content`` around the first line that contains a query word."""
    lines = content.split("\n")
    words = {w.lower() for w in _WORD.findall(query) if len(w) > 2} or {
        w.lower() for w in _WORD.findall(query)
    }
    start = 0
    for i, line in enumerate(lines):
        lowered = line.lower()
        if any(w in lowered for w in words):
            start = i
            break
    picked = [ln for ln in lines[start : start + _SNIPPET_LINES]]
    while picked and not picked[-1].strip():
        picked.pop()
    out: list[str] = []
    used = 0
    for line in picked:
        n = count_tokens(line) + 1
        if used + n > budget:
            if not out:
                out.append(cut_line(line, budget) + " …")
            else:
                out.append("…")
            break
        out.append(line)
        used += n
    return "\n".join(out).strip("\n")


def search(call: ToolCall) -> str:
    ws = call.workspace
    args = call.args
    modes = available_modes(ws)
    asked = args["mode"]
    note = ""
    mode = asked
    if asked is not None and asked not in modes:
        mode = next((m for m in ("hybrid", "vector", "bm25") if m in modes), None)
        note = f" ({asked} search is not available here; used {mode})"
    shown_mode = mode or (modes[0] if modes else "bm25")
    results = ws.search(args["query"], top_k=args["top_k"], mode=mode, min_score=args["min_score"])
    n = len(results)
    summary = f"{n} {'result' if n == 1 else 'results'} ({shown_mode} search){note}"
    if not results:
        return summary
    budget = call.max_tokens or 2000
    per = max(40, (budget - 30) // max(1, n))
    blocks = []
    for r in results:
        blocks.append(f"{r.location}: {_snippet(r.content, args['query'], per)}")
    return "\n\n".join(blocks) + f"\n---\n{summary}"


def index(call: ToolCall) -> str:
    path = call.args["path"].strip().replace("\\", "/")
    norm = posixpath.normpath(path).lstrip("/")
    if norm in ("", ".") or norm.startswith("../"):
        raise InvalidArgumentError(
            f"Invalid document path {path!r}: give a workspace-relative path like 'notes/a.md'"
        )
    ids = call.workspace.index_document(norm, call.args["content"])
    return f"Indexed {norm}" + (f" ({len(ids)} chunks)" if len(ids) > 1 else "")


SEARCH_SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.SEARCH.SEARCH,
    description=(
        "Search the indexed workspace files by meaning and keywords, and get the best passages as "
        "'path:first-last: matching lines' (in a notebook 'nb.ipynb [cell 4]:2-5: ...', lines counted "
        "within the cell). Use it to find where something is discussed or "
        "implemented when you do not know the exact words (for exact text or regexes use "
        "workspace_grep). Then read the file around those lines with workspace_read_file."
    ),
    params=_search_params,
    run=search,
)

INDEX_SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.SEARCH.INDEX,
    description=(
        "Add a document to the search index under a path (long content is split into chunks like "
        "files are), so later workspace_search calls can find it. Indexing the same path again "
        "replaces the earlier content. It does not write any file."
    ),
    params=(
        Param(
            "path",
            "string",
            "Document path used as its id in results, e.g. 'notes/meeting.md'.",
            required=True,
            allow_empty=False,
        ),
        Param("content", "string", "The text to index.", required=True),
    ),
    run=index,
)
