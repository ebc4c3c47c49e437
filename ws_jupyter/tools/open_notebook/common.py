"""What the open-notebook tools share: finding the link, naming cells, showing sources."""

from __future__ import annotations

from ...errors import LiveNotebookError
from ...live.model import CellView, NotebookView
from ...live.protocol import LiveNotebook
from ...live.registry import live_notebook
from ...text.shaping import truncate_head_tail
from ..base import ToolCall

__all__ = ["DEFAULT_MAX_WAIT", "cell_note", "describe", "link_of", "notebook_head", "show_source", "wait_of"]

#: Longest an agent's call waits for the user (seconds) unless the config's ``max_wait`` says more.
DEFAULT_MAX_WAIT = 600.0


def link_of(call: ToolCall) -> LiveNotebook:
    """The open notebook linked to the call's workspace (a clear error when there is none)."""
    link = live_notebook(call.workspace)
    if link is None:
        raise LiveNotebookError(
            "No open notebook is linked to this workspace: the open_notebook tools work from a notebook "
            "whose kernel ran `%load_ext ws_jupyter` and `%ws init` (or `%ws use`)",
            code="LIVE_NOT_CONNECTED",
        )
    return link


def wait_of(call: ToolCall, default: float) -> float:
    """The seconds to wait for the user: the agent's ``wait``, capped by the ``max_wait`` option."""
    wait = call.args.get("wait")
    cap = float(call.option("max_wait", DEFAULT_MAX_WAIT))
    return max(0.0, min(float(default if wait is None else wait), cap))


def cell_note(view: NotebookView, cell: CellView) -> str:
    """``v=1a2b3c4d (unsaved, running)``: what goes after a cell's header."""
    flags = []
    if cell.id in view.unsaved:
        flags.append("unsaved")
    if cell.id == view.active:
        flags.append("active, the user is typing in it" if view.editing else "active")
    if cell.id == view.running:
        flags.append("running")
    elif cell.id in view.queued:
        flags.append("queued")
    return f"v={cell.version}" + (f" ({', '.join(flags)})" if flags else "")


def _line(text: str) -> str:
    """A value from the page shown in a state line: as it is when printable, else quoted."""
    return text if text.isprintable() else repr(text)


def _ids(ids: tuple[str, ...], total: int, limit: int = 8) -> str:
    shown = ", ".join(_line(i) for i in ids[:limit])
    return shown + (f" and {total - limit} more" if total > limit else "")


def notebook_head(view: NotebookView, what: str = "") -> list[str]:
    """The lines above the cells: the notebook, and its state right now."""
    facts = [f"{view.total} {'cell' if view.total == 1 else 'cells'}"]
    if view.language:
        facts.append(_line(view.language))
    head = [f"{_line(view.path)} — open in the user's notebook, as the user sees it now ({', '.join(facts)}){what}"]
    state = [f"kernel {_line(view.kernel)}"]
    if view.running:
        state.append(f"running: {_line(view.running)}")
    if view.queued:
        state.append(f"queued: {_ids(view.queued, len(view.queued))}")
    if view.active:
        state.append(f"active cell: {_line(view.active)}" + (" (the user is typing in it)" if view.editing else ""))
    if view.unsaved_total:
        state.append(f"unsaved changes in {view.unsaved_total} cells ({_ids(view.unsaved, view.unsaved_total)})")
    if view.deleted_since_save:
        state.append(f"{view.deleted_since_save} cells deleted since the last save")
    if not view.unsaved_total and not view.deleted_since_save:
        state.append("saved")
    state.append("agent edits: " + ("applied at once (the user's accept mode)" if view.mode == "accept"
                                    else "reviewed by the user"))
    head.append("state: " + "; ".join(state))
    if not view.has_ids:
        head.append("[this notebook's format (nbformat < 4.5) has no cell ids: the ids shown exist only "
                    "while it is open]")
    return head


def show_source(source: str, max_tokens: int | None) -> str:
    """A cell's current source, cut (head and tail) to ``max_tokens``."""
    return truncate_head_tail(source, max_tokens, head_ratio=0.5) if max_tokens else source


def describe(cell: CellView) -> str:
    return f"[{cell.index}] {cell.cell_type} {cell.id}"
