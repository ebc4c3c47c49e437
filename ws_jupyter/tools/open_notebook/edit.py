"""``open_notebook_edit``: propose changes to the notebook the user has open — one reviewed
proposal per call.

Edits name cells by id and quote the version ``open_notebook_read`` showed (``v=``); inserts and
moves name the cell to come after (``""``: first). The proposal appears in the notebook as an
inline diff with Accept and Reject; the call waits for the user's decision up to ``wait``
seconds, and otherwise answers that the proposal is pending, with its id to ask again
(``proposal_id``). An edit of a cell that changed since it was read — or that the user is typing
in, or that is running — is never applied: it comes back ``stale`` with the cell's current
source. In the user's accept mode proposals apply at once (the notebook marks them).
"""

from __future__ import annotations

from ...errors import InvalidArgumentError
from ...live.model import EDIT_OPS, MAX_EDITS, CellOutcome, Proposal, ProposalOutcome
from ...notebooks.document import CELL_TYPES
from ..base import ToolCall, ToolSpec
from ..facts import WORKSPACE_TOOLS, ToolHints
from ..schema import Param
from ..types import ToolErrorText, ToolOutput
from .common import link_of, show_source, wait_of

__all__ = ["SPEC"]

DEFAULT_WAIT = 120.0

DESCRIPTION = (
    "Propose changes to the notebook the user has open; the user reviews them as an inline diff and "
    "accepts or rejects (in the user's accept mode they apply at once). Each edit: "
    "{op: 'replace', cell_id, version, source, cell_type?} | {op: 'insert', after, cell_type, source} | "
    "{op: 'delete', cell_id, version} | {op: 'move', cell_id, version, after}. version is the cell's v= "
    "from open_notebook_read; after is the id of the cell to place it after ('' = first). One call is "
    "one proposal. The call waits up to wait seconds for the decision, else answers pending with a "
    "proposal_id to ask again (call with proposal_id and no edits). A cell changed since you read it, "
    "being edited or running is not changed: the answer is stale, with its current source."
)

EDIT_FIELDS = (
    Param("op", "string", "replace, insert, delete or move.", required=True, enum=EDIT_OPS),
    Param("cell_id", "string", "The cell to replace, delete or move (not for insert)."),
    Param("version", "string", "The cell's version (v=) as open_notebook_read showed it (replace, delete, move)."),
    Param("source", "string", "The new source (replace, insert)."),
    Param("cell_type", "string", "Type of an inserted cell (required for insert), or a replaced cell's new type.",
          enum=CELL_TYPES),
    Param("after", "string", "Insert or move: id of the cell to place it after; '' places it first."),
)

PARAMS = (
    Param("edits", "object_list", "The edits of this proposal (at most 200).", items=EDIT_FIELDS,
          max_items=MAX_EDITS),
    Param("wait", "number", "Seconds to wait for the user's decision (0: answer at once).",
          default=DEFAULT_WAIT, minimum=0),
    Param("proposal_id", "string", "Ask about an earlier proposal instead of proposing (no edits then)."),
)


def _cell(outcome: CellOutcome, max_tokens: int | None) -> str:
    what = f"{outcome.op} {outcome.cell_id}" if outcome.cell_id else outcome.op
    if outcome.status == "applied":
        return f"- {what}: applied" + (f" (now v={outcome.version})" if outcome.version and outcome.op != "delete" else "")
    if outcome.status == "stale":
        why = outcome.reason or "the cell changed since you read it"
        line = f"- {what}: not applied, stale: {why}"
        if outcome.source is not None:
            line += f". Its current source (v={outcome.version}):\n" + show_source(outcome.source, max_tokens)
        return line
    return f"- {what}: {outcome.status}" + (f": {outcome.reason}" if outcome.reason else "")


def describe_outcome(outcome: ProposalOutcome, max_tokens: int | None = None) -> str:
    """The text the agent reads for one proposal's state."""
    pid = outcome.proposal_id
    per_cell = max(200, (max_tokens or 4000) // max(1, len(outcome.cells))) if max_tokens else None
    cells = "\n".join(_cell(c, per_cell) for c in outcome.cells)
    if outcome.status == "pending":
        return (
            f"Proposal {pid} is waiting for the user's review ({len(outcome.cells)} edits). Call "
            f'open_notebook_edit with proposal_id="{pid}" to wait for the decision.'
        )
    if outcome.status == "applied":
        how = " at once (the user's accept mode)" if outcome.auto else " after the user accepted it"
        return f"Proposal {pid} was applied{how}:\n{cells}"
    if outcome.status == "rejected":
        return f"The user rejected proposal {pid}; the notebook was not changed."
    if outcome.status == "partial":
        return f"The user decided proposal {pid} cell by cell:\n{cells}"
    if outcome.status == "stale":
        return (
            f"Proposal {pid} was not applied: a cell it changes is not as you read it.\n{cells}\n"
            "Read the notebook again (open_notebook_read) and propose against the current versions."
        )
    return f"Proposal {pid} was {outcome.status}: {outcome.message or ''}".rstrip(": ") + (f"\n{cells}" if cells else "")


def edit(call: ToolCall) -> ToolOutput:
    link = link_of(call)
    edits, pid = call.args["edits"], call.args["proposal_id"]
    if (edits is None) == (pid is None):
        return ToolErrorText("Error: give either edits (a new proposal) or proposal_id (an earlier one), not both")
    wait = wait_of(call, DEFAULT_WAIT)
    abort = call.context.abort
    if pid is not None:
        outcome = link.proposal(pid, wait=wait, abort=abort)
    else:
        try:
            proposal = Proposal.from_args(edits)
        except InvalidArgumentError as exc:
            return ToolErrorText(f"Error: {exc}. Nothing was proposed.")
        outcome = link.propose(proposal, wait=wait, abort=abort)
    text = describe_outcome(outcome, call.max_tokens)
    if outcome.status in ("invalid", "withdrawn"):
        return ToolErrorText(f"Error: {text}")
    return text


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.OPEN_NOTEBOOK.EDIT,
    description=DESCRIPTION,
    params=PARAMS,
    run=edit,
    title="Propose edits to the open notebook",
    # a proposal changes the user's notebook once accepted (or at once, in the user's accept mode)
    hints=ToolHints(destructive=True, idempotent=False),
    needs={"open_notebook"},
    writes=False,  # the user's notebook in the front end, not a workspace file
    options=("max_wait",),
)
