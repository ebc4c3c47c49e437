"""``workspace_search``: the workspace's BM25 / vector / hybrid search.

Each hit is printed as a ``<path>:<start>-<end>`` line and then exactly those lines of the file
(numbered as ``workspace_read_file`` numbers them, indentation kept, one line of context either
side, cut to a share of the output budget), so a model can go straight to
``workspace_read_file(path, offset=start)``. A hit in a notebook reads ``nb.ipynb [cell 4]:2-5``
(lines within the cell; read it with ``workspace_read_file(path, offset=4, limit=1)``); a
document indexed from given text is labelled ``[indexed text]`` so it is never taken for a file.
The schema lists only the modes this workspace has; a mode that is not available falls back
(hybrid -> vector -> bm25) and the output says so, as it says when the index is empty or still
being built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...search.status import format_duration
from ...text.shaping import cut_line
from ...text.tokens import count_tokens
from ..base import ToolCall, ToolSpec
from ..facts import LOOKS, WORKSPACE_TOOLS
from ..schema import Param

if TYPE_CHECKING:
    from ...search.results import SearchResult
    from ...search.status import IndexStatus
    from ...workspace import Workspace

__all__ = ["SEARCH_SPEC", "available_modes", "index_note"]

_SNIPPET_LINES = 12
_CONTEXT_LINES = 1


def available_modes(workspace: object) -> list[str]:
    modes = []
    if getattr(workspace, "can_hybrid", False):
        modes.append("hybrid")
    if getattr(workspace, "can_vector", False):
        modes.append("vector")
    if getattr(workspace, "can_bm25", False):
        modes.append("bm25")
    return modes


def _search_params(workspace: Workspace) -> tuple[Param, ...]:
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


def _snippet(result: SearchResult, budget: int) -> str:
    """The hit's line range (plus context), numbered, within ``budget`` tokens."""
    snippet = result.snippet(context=_CONTEXT_LINES, max_lines=_SNIPPET_LINES)
    lines = snippet.text().split("\n")
    out: list[str] = []
    used = 0
    for line in lines:
        n = count_tokens(line) + 1
        if used + n > budget:
            out.append(cut_line(line, max(1, budget - used)) + " …" if not out else "…")
            break
        out.append(line)
        used += n
    return "\n".join(out)


def index_note(workspace: Workspace, mode: str | None, found: int) -> str:
    """What the caller must know about the index beside the hits: empty, still indexing files,
    or vectors still being computed (for vector and hybrid searches)."""
    status_of = getattr(workspace, "index_status", None)
    if status_of is None:
        return ""
    try:
        status = status_of()
    except Exception:
        return ""
    state = _state_note(workspace, status, mode)
    too_large = status.too_large_note()
    return "; ".join(p for p in (state, "" if too_large in state else too_large) if p)


def _state_note(workspace: Workspace, status: IndexStatus, mode: str | None) -> str:
    if status.indexing:
        return f"{status.describe()}; results may be incomplete"
    if not status.documents:
        paths = list(getattr(workspace, "auto_index_paths", ()) or ())
        hint = ("no files are set to be indexed" if not paths else "no indexable files found")
        return f'index is empty: {hint}; index files with workspace_index {{"path": "."}}'
    if mode in ("vector", "hybrid") and status.vectors and status.pending and not status.error:
        left = f", about {format_duration(status.eta_seconds)} left" if status.eta_seconds is not None else ""
        return (f"vectors computed so far for {status.embedded:,} of {status.embeddable:,} documents "
                f"({status.coverage:.0%}{left}); the rest "
                f"{'are matched by BM25 only' if mode == 'hybrid' else 'are not searched yet'}")
    if status.error and mode in ("vector", "hybrid"):
        return f"embedding failed ({status.error})"
    return ""


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
    state = index_note(ws, shown_mode, n)
    if state:
        summary += f" — {state}"
    if not results:
        return summary
    budget = call.max_tokens or 2000
    per = max(40, (budget - 30) // max(1, n))
    blocks = [f"{r.location}\n{_snippet(r, per)}" for r in results]
    return "\n\n".join(blocks) + f"\n---\n{summary}"


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
    title="Search the workspace",
    hints=LOOKS,
    needs={"search"},
    writes=False,
    options=(),
)
