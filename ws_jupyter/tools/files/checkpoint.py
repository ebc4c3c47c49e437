"""``workspace_checkpoint``: an agent marks a point before a risky step, and sees what changed since.

Off unless enabled (``tools={WORKSPACE_TOOLS.CHECKPOINTS.CHECKPOINT: {"enabled": True}}``).
``action="restore"`` is refused unless the tool's config also sets ``allow_restore=True``:
taking changes back stays the user's act (``ws.restore()``, ``%ws restore``, the Changes tab).
The tool works through the workspace's own checkpoint API, so its checkpoints are the user's.
"""

from __future__ import annotations

from ..base import ToolCall, ToolSpec
from ..facts import WORKSPACE_TOOLS, ToolHints
from ..schema import Param

__all__ = ["SPEC", "checkpoint"]

DESCRIPTION = (
    "Workspace checkpoints: record the state of every file before a risky step, then see what "
    "changed since. action=create records one (give it a label); action=list names the checkpoints; "
    "action=changes lists the files added, modified and deleted since a checkpoint (label, #number or "
    "id; default the newest) and who changed them. action=restore brings a checkpoint's files back, "
    "when the user allowed it. A checkpoint is also taken automatically before each turn's first change."
)

PARAMS = (
    Param(
        "action",
        "string",
        "create (default), list, changes or restore.",
        default="create",
        enum=("create", "list", "changes", "restore"),
    ),
    Param(
        "label",
        "string",
        "create: a short name for the new checkpoint. changes/restore: which checkpoint (its label, "
        "#number or id); default the newest.",
    ),
    Param(
        "paths",
        "string_list",
        "restore only: the files or folders to bring back (default: all).",
        accept_single=True,
    ),
    Param(
        "remove_new",
        "boolean",
        "restore only: also delete files created since the checkpoint.",
        default=False,
    ),
)

_MAX_LISTED = 200


def checkpoint(call: ToolCall) -> str:
    ws = call.workspace
    action = call.args.get("action") or "create"
    label = call.args.get("label")
    if action == "create":
        cp = ws.checkpoints.take(label, reason=f"agent ({call.context.tool_name})")
        text = (
            f"Checkpoint {cp.name} ({cp.id}) recorded: {_files(cp.files)}."
            if cp.new
            else f"Nothing changed since checkpoint {cp.name} ({cp.id}): it stands for now too."
        )
        if cp.excluded:
            shown = ", ".join(f"{e.path} ({e.reason})" for e in cp.excluded[:10])
            text += f" Not recorded: {shown}" + (" …" if len(cp.excluded) > 10 else "") + "."
        return text
    if action == "list":
        found = ws.checkpoints.list()
        if not found:
            return "No checkpoints yet."
        lines = [f"{len(found)} checkpoints (oldest first):"]
        for cp in found[-_MAX_LISTED:]:
            when = cp.created_at.strftime("%Y-%m-%d %H:%M:%S UTC")
            lines.append(f"{cp.name}  {cp.id}  {when}  {cp.reason}  {_files(cp.files)}")
        return "\n".join(lines)
    if action == "changes":
        changes = ws.changes(label)
        if not changes:
            return f"No changes since checkpoint {changes.since.name} ({changes.since.id})."
        lines = [f"{len(changes)} changes since checkpoint {changes.since.name} ({changes.since.id}):"]
        for c in list(changes)[:_MAX_LISTED]:
            detail = f" [{c.detail}]" if c.detail and c.detail != "content" else ""
            lines.append(f"{c.change} {c.path}{detail} — {c.by}")
        if len(changes) > _MAX_LISTED:
            lines.append(f"… {len(changes) - _MAX_LISTED} more")
        return "\n".join(lines)
    if not call.option("allow_restore", False):
        return (
            "Error: Restoring is the user's decision: ask the user to restore the checkpoint (ws.restore(), "
            "`%ws restore`, or the Changes tab), or to allow it with allow_restore=True for this tool."
        )
    if label is None:
        return "Error: restore needs the checkpoint's label, #number or id."
    report = ws.restore(label, call.args.get("paths"), remove_new=bool(call.args.get("remove_new")))
    return report.text()


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.CHECKPOINTS.CHECKPOINT,
    description=DESCRIPTION,
    params=PARAMS,
    run=checkpoint,
    title="Workspace checkpoint",
    # records files outside the workspace; a restore (when allowed) overwrites files
    hints=ToolHints(destructive=True, idempotent=False),
    # the checkpoints of a writable filesystem given up front (local or object storage)
    needs={"filesystem", "writable", "static_filesystem"},
    writes=True,
    options=("allow_restore",),
    off_by_default=True,
)
