"""User-data tools: ``user_variables_list``, ``user_variable_inspect``, ``user_variable_request``.

The agent sees the notebook user's variables only as far as the user shared them
(:class:`~ws_jupyter.userdata.SharedNamespace`, attached to the workspace by ``%ws share`` or
``Workspace.share``), and only read-only: summaries written by the project for known types, type
and size for anything else (none of the user's code runs). A copy into the sandbox's kernel —
where the agent can work on it with ``workspace_execute_code`` — waits for the user's approval
(Approve/Deny in the notebook's tool activity panel, showing the variable's type and size and
the agent's reason) unless the user shared it with copies allowed; it goes through a safe
format only (Arrow IPC, ``.npy`` without pickle, JSON) and is refused past the size limit
(the ``max_bytes`` option, default 256 MB) before anything is written.

The tools exist while a shared namespace is attached to the workspace; the request tool also
needs a sandbox that can run kernels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import VariableNotSharedError
from ..text.shaping import truncate_head
from ..userdata import SharedNamespace, check_name, copy_into_kernel, plan, shared_namespace
from ..userdata.text import shorten, text_table
from .base import ToolCall, ToolSpec
from .facts import LOOKS, WORKSPACE_TOOLS, ToolHints
from .sandbox.kernels import _kernels
from .schema import Param
from .types import ToolCallContext

__all__ = ["INSPECT_SPEC", "LIST_SPEC", "REQUEST_SPEC"]

T = WORKSPACE_TOOLS
_NOTHING = (
    "The user has shared no variables with you. The user shares notebook variables with "
    "`%ws share NAME` (or `ws.share(value, name=...)`); ask them to, if you need their data."
)


def _shared(workspace: Any) -> SharedNamespace:
    shared = shared_namespace(workspace)
    if shared is None:
        raise VariableNotSharedError(_NOTHING)
    return shared


def list_variables(call: ToolCall) -> str:
    variables = _shared(call.workspace).variables()
    if not variables:
        return _NOTHING
    rows = [
        [
            v.name,
            v.summary.type_name,
            v.summary.shape or "",
            v.summary.size_text,
            "yes" if v.allow_copy else "ask",
        ]
        for v in variables
    ]
    lines = [f"{len(variables)} shared variable{'s' if len(variables) != 1 else ''} (read-only):"]
    lines += text_table(["name", "type", "shape", "size", "copy without asking"], rows, max_width=48)
    lines.append(
        f"Inspect one with {call.exposed(T.USER_DATA.INSPECT)}; to work on it, copy it into the sandbox "
        f"with {call.exposed(T.USER_DATA.REQUEST)} (the user approves copies marked 'ask')."
    )
    return truncate_head("\n".join(lines), call.max_tokens, hint="inspect variables by name")


def inspect_variable(call: ToolCall) -> str:
    shared = _shared(call.workspace)
    text = shared.inspect(call.args["name"], rows=call.args["rows"], columns=call.args["columns"])
    return truncate_head(text, call.max_tokens, hint="name fewer columns or fewer rows")


def request_copy(call: ToolCall) -> str:
    shared = _shared(call.workspace)
    name = call.args["name"]
    as_name = check_name(call.args["as"] or name, '"as"')
    value = shared.get(name)
    limit = call.option("max_bytes", None) or shared.max_copy_bytes
    encoding = plan(value, max_bytes=int(limit), what=f"The variable {name}")
    kernels = _kernels(call)
    report = copy_into_kernel(
        value,
        kernels=kernels,
        as_name=as_name,
        kernel_name=call.args["kernel"],
        max_bytes=int(limit),
        what=f"The variable {name}",
        encoding=encoding,
        abort=call.context.abort,
    )
    return (
        f"{report}. It is a copy: changes stay in the sandbox. Work on it with "
        f"{call.exposed(T.SANDBOX.EXECUTE_CODE)} (kernel {report.kernel!r})."
    )


def _approval_needed(args: Mapping[str, Any], ctx: ToolCallContext, workspace: Any) -> bool:
    """Every copy asks, except of variables the user shared with copies allowed."""
    shared = shared_namespace(workspace)
    name = args.get("name")
    return not (shared is not None and type(name) is str and shared.copy_allowed(name))


def _approval_details(args: Mapping[str, Any], ctx: ToolCallContext, workspace: Any) -> str | None:
    """``sales: pandas.DataFrame, 1,000 rows x 5 columns, 39.1 KB -> sandbox kernel 'default' as
    sales. Reason: ...`` (what the user approves)."""
    shared = shared_namespace(workspace)
    name = args.get("name")
    if shared is None or type(name) is not str:
        return None
    try:
        info = shared.info(name)
    except VariableNotSharedError:
        return f"{name}: not shared (the call will fail)"
    target = args.get("as") or name
    reason = shorten(str(args.get("reason") or ""), 400)
    return (
        f"Copy {name} ({info.summary.describe()}) into the sandbox kernel {args.get('kernel') or 'default'!r} "
        f"as {target}. The agent's reason: {reason}"
    )


_NAME = Param(
    "name",
    "string",
    "The shared variable's name, as user_variables_list shows it.",
    required=True,
    allow_empty=False,
)

LIST_SPEC = ToolSpec(
    name=T.USER_DATA.LIST,
    description=(
        "List the variables the notebook user shared with you (name, type, shape, memory size, and whether "
        "copies need the user's approval). Read-only: nothing is changed. Only what the user chose to share is "
        "listed; there is nothing else to find. Use user_variable_inspect to look inside one."
    ),
    params=(),
    run=list_variables,
    title="List the user's shared variables",
    hints=LOOKS,
    needs={"user_data"},
    writes=False,
    options=(),
)

INSPECT_SPEC = ToolSpec(
    name=T.USER_DATA.INSPECT,
    description=(
        "Look at one shared variable of the notebook user, read-only: DataFrames and Series (pandas, polars) "
        "show shape, dtypes, null counts, the first and last rows and a numeric summary; numpy arrays show "
        "shape, dtype, min/max/mean and some values; strings, numbers, lists, dicts, sets, dates and paths "
        "show their values (bounded). Other objects show only their type and size. rows sets how many rows "
        "from the start and the end are shown; columns restricts a DataFrame to the named columns."
    ),
    params=(
        _NAME,
        Param(
            "rows", "integer", "Rows shown from the start and from the end.", default=5, minimum=0, maximum=50
        ),
        Param(
            "columns",
            "string_list",
            "DataFrame columns to show (default: all, up to 10 in the rows table).",
            accept_single=True,
        ),
    ),
    run=inspect_variable,
    title="Inspect a shared variable",
    hints=LOOKS,
    needs={"user_data"},
    writes=False,
    options=(),
)

REQUEST_SPEC = ToolSpec(
    name=T.USER_DATA.REQUEST,
    description=(
        "Ask the notebook user for a copy of one shared variable in the sandbox's Python kernel, then work "
        "on the copy with workspace_execute_code. The user sees the variable's type and size and your reason "
        "and approves or denies (unless they allowed copies of it); a denial returns 'Tool call refused by "
        "user.'. Copies go through safe formats only: DataFrames and Series (Arrow), numpy arrays (.npy), "
        "plain data (JSON); other types are refused, and so is anything over the size limit. The user's "
        "variable is never changed: the copy lives in the sandbox, named `as` (default: the same name)."
    ),
    params=(
        _NAME,
        Param(
            "reason",
            "string",
            "What you need the data for, in one sentence (shown to the user).",
            required=True,
            allow_empty=False,
        ),
        Param(
            "as",
            "string",
            "Variable name in the sandbox kernel (a Python identifier). Default: the same name.",
        ),
        Param("kernel", "string", "The sandbox kernel to copy into.", default="default"),
    ),
    run=request_copy,
    static_default_approval=lambda workspace: True,
    default_approval_for=_approval_needed,
    approval_details=_approval_details,
    title="Request a copy of a shared variable",
    # binds (or rebinds) a variable in the sandbox's kernel, once the user approves
    hints=ToolHints(destructive=True, idempotent=True),
    needs={"user_data", "sandbox", "kernels"},
    writes=False,
    # the copy limit in bytes (default: the shared namespace's, 256 MB)
    options=("max_bytes",),
    max_output_tokens=None,
)
