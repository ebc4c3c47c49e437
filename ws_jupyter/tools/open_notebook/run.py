"""``open_notebook_run``: run cells of the notebook the user has open.

``where="sandbox"`` (the default): each cell's current source runs in the workspace sandbox's
kernel (``kernel``, like ``workspace_execute_code``), one after the other, stopping at the first
error; the outputs are shown in the cell, made inert and marked as coming from the sandbox (the
user's kernel and its variables are untouched). A cell that changed while it ran keeps its outputs
(the new code was not run): the answer says so.

``where="user"``: the cells run in the user's own kernel — unsandboxed code on the host — so the
notebook asks the user first (Approve / Deny, with the code shown) and nothing runs without it;
the config option ``user_kernel=False``, or the user's own setting in the notebook, turns this
off entirely. The call waits up to ``wait`` seconds; a pending request answers with a ``run_id``
to ask again.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ...errors import KernelError
from ...live.outputs import notebook_outputs
from ...notebooks.render import render_cell
from ...sandbox.capabilities import sandbox_kernels, sandbox_timeout
from ...sandbox.kernels.provider import KernelProvider
from ...text.shaping import truncate_head_tail
from ..base import ToolCall, ToolSpec
from ..facts import DEFAULT_MAX_MEDIA_BYTES, WORKSPACE_TOOLS, ToolHints
from ..sandbox.kernels import format_execution
from ..schema import Param
from ..types import MediaPart, ToolErrorText, ToolOutput, ToolResult
from .common import describe, link_of, wait_of

__all__ = ["SPEC"]

DEFAULT_WAIT = 120.0
MAX_CELLS = 50

DESCRIPTION = (
    "Run cells of the notebook the user has open, by id. where='sandbox' (default): the code runs in "
    "the workspace sandbox's kernel (kernel, default 'default'; state kept between calls), outputs are "
    "shown in the cells marked as from the sandbox, and the user's kernel is untouched; cells run in "
    "the order given and stop at the first error. where='user': runs them in the user's own kernel "
    "after the user approves (they see the code); waits up to wait seconds, else answers pending with "
    "a run_id to ask again."
)

PARAMS = (
    Param("cell_ids", "string_list", "Ids of the cells to run, in order.", accept_single=True,
          max_items=MAX_CELLS),
    Param("where", "string", "sandbox (the workspace kernel) or user (the user's kernel, after approval).",
          default="sandbox", enum=("sandbox", "user")),
    Param("kernel", "string", "Sandbox kernel name (where='sandbox').", default="default"),
    Param("timeout", "number", "Time limit per cell in seconds (where='sandbox'). Default: the sandbox's "
          "command limit.", minimum=0.001),
    Param("wait", "number", "Seconds to wait for the user's approval and the run (where='user').",
          default=DEFAULT_WAIT, minimum=0),
    Param("run_id", "string", "Ask about an earlier where='user' request instead (no cell_ids then)."),
)


def run(call: ToolCall) -> ToolOutput:
    ids, run_id = call.args["cell_ids"], call.args["run_id"]
    if (ids is None) == (run_id is None):
        return ToolErrorText("Error: give either cell_ids (cells to run) or run_id (an earlier request)")
    if ids is not None and len(set(ids)) != len(ids):
        return ToolErrorText("Error: a cell id is given twice in cell_ids")
    if run_id is not None or call.args["where"] == "user":
        return _in_user_kernel(call, ids, run_id)
    return _in_sandbox(call, ids)


def _kernels(call: ToolCall) -> KernelProvider:
    kernels = sandbox_kernels(call.sandbox())
    if kernels is None or not kernels.availability()[0]:
        why = kernels.availability()[1] if kernels is not None else "it has no kernels"
        raise KernelError(f"This workspace's sandbox cannot run kernels: {why}", code="KERNELS_UNAVAILABLE")
    return kernels


def _in_sandbox(call: ToolCall, ids: list[str]) -> ToolOutput:
    link = link_of(call)
    kernels = _kernels(call)
    view = link.read(cell_ids=ids)
    if view.missing:
        return ToolErrorText(f"Error: no cell with id {', '.join(view.missing)} in the open notebook; nothing ran")
    cells = {c.id: c for c in view.cells}
    timeout = call.args["timeout"]
    if timeout is None:
        timeout = sandbox_timeout(call.sandbox())
    name = call.args["kernel"]
    budget = call.max_tokens
    share = max(200, budget // len(ids)) if budget else None
    texts: list[str] = []
    media: list[MediaPart] = []
    max_media = int(call.option("max_media_bytes", DEFAULT_MAX_MEDIA_BYTES))
    for n, cid in enumerate(ids):
        cell = cells[cid]
        if cell.cell_type != "code":
            texts.append(f"{describe(cell)}: not run (a {cell.cell_type} cell)")
            continue
        if not cell.source.strip():
            texts.append(f"{describe(cell)}: not run (empty)")
            continue
        result = kernels.execute(
            cell.source,
            kernel=name,
            timeout=timeout,
            origin="agent",
            abort=call.context.abort,
            tool_call_id=call.context.tool_call_id,
        )
        origin = {
            "where": "sandbox",
            "kernel": name,
            "status": result.status,
            "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        shown = link.show_outputs(cid, cell.version, notebook_outputs(result), origin=origin)
        where = (
            "outputs shown in the cell"
            if shown == "shown"
            else "the cell changed while it ran: its outputs were not replaced"
        )
        out = format_execution(result, max_tokens=share, max_media_bytes=max_media)
        if isinstance(out, ToolResult):
            media.extend(out.media)
            out = out.text
        texts.append(f"{describe(cell)} ran in the sandbox kernel {name!r}: {result.status}; {where}\n{out}")
        if not result.ok:
            rest = ids[n + 1 :]
            if rest:
                texts.append(f"[stopped at the first error: {', '.join(rest)} not run]")
            break
    text = "\n\n".join(texts)
    return ToolResult(text=text, media=tuple(media)) if media else text


def _in_user_kernel(call: ToolCall, ids: list[str] | None, run_id: str | None) -> ToolOutput:
    if not call.option("user_kernel", True):
        return ToolErrorText(
            "Error: running cells in the user's kernel is turned off for this agent; use where='sandbox'"
        )
    link = link_of(call)
    wait = wait_of(call, DEFAULT_WAIT)
    if run_id is not None:
        outcome = link.user_run(run_id, wait=wait, abort=call.context.abort)
    else:
        assert ids is not None
        view = link.read(cell_ids=ids)
        if view.missing:
            return ToolErrorText(f"Error: no cell with id {', '.join(view.missing)} in the open notebook")
        versions = {c.id: c.version for c in view.cells}
        outcome = link.run_in_user_kernel(ids, versions, wait=wait, abort=call.context.abort)
    rid = outcome.run_id
    if outcome.status == "pending":
        return (
            f"Run {rid} is waiting for the user's approval (or still running). Call open_notebook_run "
            f'with run_id="{rid}" to wait for it.'
        )
    if outcome.status == "denied":
        return ToolErrorText(f"The user denied run {rid}: nothing ran in the user's kernel.")
    if outcome.status == "off":
        return ToolErrorText(
            "Error: the user turned off running the agent's cells in their kernel; use where='sandbox'"
        )
    if outcome.status != "done":
        return ToolErrorText(f"Error: run {rid} {outcome.status}: {outcome.message or ''}".rstrip(": "))
    budget = call.max_tokens
    share = max(200, budget // max(1, len(outcome.cells))) if budget else None
    blocks = []
    for cell in outcome.cells:
        block = render_cell(int(cell["index"]), cell, note=f"v={cell['version']} ({cell['status']})")
        if share:
            block = truncate_head_tail(block, share, head_ratio=0.3)
        blocks.append(block)
    return f"Run {rid} ran in the user's kernel after the user approved it:\n" + "\n".join(blocks)


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.OPEN_NOTEBOOK.RUN,
    description=DESCRIPTION,
    params=PARAMS,
    run=run,
    title="Run cells of the open notebook",
    # where="user" runs unsandboxed code on the host (after the user approves it)
    hints=ToolHints(destructive=True, idempotent=False, open_world=True),
    needs={"open_notebook", "sandbox"},
    writes=False,
    options=("max_wait", "max_media_bytes", "user_kernel"),
)
