"""``create_workspace_tools``: the one place where tool policy is applied.

Which tools exist follows from the workspace's providers and each tool's ``needs`` (its spec;
see the table in docs/tools.md): a filesystem gives the file tools (minus the writing ones and
``workspace_index`` when it is read-only); a sandbox gives ``workspace_execute_command`` (plus the
process tools when it has a process manager, and the kernel tools when it can run Jupyter kernels —
with a writable filesystem and kernels on this machine also ``workspace_run_notebook``); BM25 or
vector search gives ``workspace_search`` and ``workspace_index``; skills give ``skill``,
``skill_search`` and ``skill_read``; variables the notebook user shares (see
:mod:`ws_jupyter.userdata`) give ``user_variables_list`` and ``user_variable_inspect`` (and
``user_variable_request`` with a sandbox that runs kernels); a connected open notebook (see :mod:`ws_jupyter.live`) gives
``open_notebook_read`` and ``open_notebook_edit`` (and ``open_notebook_run`` with a sandbox); a
writable filesystem given up front gives ``workspace_checkpoint`` (off unless enabled). With
resolver-based providers every tool of that provider is listed and the read-only check happens
when a tool runs.

Then the config decides: ``enabled`` (a function is evaluated now, with the request context; one
that raises hides the tool), the exposed ``name`` (duplicates raise ``ToolConfigError``), and
``require_approval``. Every tool is wrapped by :class:`~ws_jupyter.tools.wrappers.ToolRunner`.

Read records are kept per workspace and conversation (``tracking.read_trackers``), so tool sets
made per request share them. Write locks are process-wide (and cross-process for local files).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ToolConfigError
from ..request_context import RequestContext
from ..sandbox.capabilities import sandbox_kernels, sandbox_processes
from .activity import tool_activity
from .base import Need, ToolSpec
from .config import DynamicFlag, ToolsConfig
from .registry import tool_specs
from .schema import build_schema
from .tracking import read_trackers
from .types import Tool, ToolCallContext
from .wrappers import ToolRunner

if TYPE_CHECKING:
    from ..workspace import Workspace

__all__ = ["available_specs", "create_workspace_tools", "provided_needs"]

log = logging.getLogger("ws_jupyter.tools")


def provided_needs(workspace: Workspace) -> frozenset[Need]:
    """What the workspace's providers offer, in the vocabulary of ``ToolSpec.needs``."""
    out: set[Need] = set()
    static_fs = workspace.filesystem
    if not (static_fs is not None and getattr(static_fs, "read_only", False)):
        out.add("writable")
    if static_fs is not None:
        out.add("static_filesystem")
    if workspace.has_filesystem_config():
        out.add("filesystem")
    if workspace.has_sandbox_config():
        out.add("sandbox")
        sandbox = workspace.sandbox
        if sandbox is None:  # resolver: everything, checked per call
            out |= {"processes", "kernels", "local_kernels"}
        else:
            if sandbox_processes(sandbox) is not None:
                out.add("processes")
            manager = sandbox_kernels(sandbox)
            if manager is not None and bool(manager.available):
                out.add("kernels")
                # nbclient needs a kernel on this machine, not a gateway's
                if not manager.remote:
                    out.add("local_kernels")
    if workspace.can_search:
        out.add("search")
    if workspace.skills is not None:
        out.add("skills")
    if _open_notebook_connected(workspace):
        out.add("open_notebook")
    if _shares_variables(workspace):
        out.add("user_data")
    return frozenset(out)


def _open_notebook_connected(workspace: Workspace) -> bool:
    """A notebook page is connected to the workspace (an unconnected link is probed briefly, at
    most every 30 s)."""
    from ..live.registry import live_notebook

    link = live_notebook(workspace)
    if link is None:
        return False
    available = getattr(link, "available", None)  # a FrontEndLink announces itself and waits briefly
    return bool(available(probe=1.0)) if available is not None else link.status().connected


def _shares_variables(workspace: Workspace) -> bool:
    """The notebook user shares a namespace with the workspace (``%ws share``, ``Workspace.share``)."""
    from ..userdata import shared_namespace

    return shared_namespace(workspace) is not None


def available_specs(workspace: Workspace) -> list[ToolSpec]:
    """The tools the workspace's providers make possible, before the config is applied: every
    registered tool whose needs the workspace meets, in the registry's order."""
    present = provided_needs(workspace)
    return [spec for spec in tool_specs() if spec.needs <= present]


def _enabled(rule: DynamicFlag, ctx: ToolCallContext) -> bool:
    if isinstance(rule, bool):
        return rule
    try:
        return bool(rule(ctx))
    except Exception:
        log.warning("enabled function of %s raised; hiding the tool", ctx.workspace_tool_name, exc_info=True)
        return False


def _request_context(value: RequestContext | Mapping[str, Any] | None) -> RequestContext | None:
    if value is None or isinstance(value, RequestContext):
        return value
    if isinstance(value, Mapping):
        return RequestContext(value)
    raise ToolConfigError(
        f"request_context must be a RequestContext or a mapping, not {type(value).__name__}"
    )


def exposed_names(config: ToolsConfig, specs: list[ToolSpec]) -> dict[str, str]:
    """Constant -> exposed name of every renamed tool."""
    out = {}
    for spec in specs:
        name = config.resolve(spec.name).name
        if name != spec.name:
            out[spec.name] = name
    return out


def rename_tools_in(text: str, names: Mapping[str, str]) -> str:
    """``text`` (a description) with every renamed tool called by its exposed name."""
    if not names:
        return text
    pattern = re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?!\w)")
    return pattern.sub(lambda m: names[m.group(1)], text)


def create_workspace_tools(
    workspace: Workspace, request_context: RequestContext | Mapping[str, Any] | None = None
) -> list[Tool]:
    """The tools of ``workspace`` for one request (see the module docstring)."""
    config = ToolsConfig.coerce(workspace.get_tools_config())
    rc = _request_context(request_context)
    trackers = read_trackers(workspace)
    activity = tool_activity(workspace)
    tools: list[Tool] = []
    taken: dict[str, str] = {}
    specs = available_specs(workspace)
    names = exposed_names(config, specs)
    for spec in specs:
        resolved = config.resolve(spec.name)
        ctx = ToolCallContext(
            request_context=rc, workspace=workspace, tool_name=resolved.name, workspace_tool_name=spec.name
        )
        if not _enabled(resolved.enabled, ctx):
            continue
        if resolved.name in taken:
            raise ToolConfigError(
                f'Duplicate workspace tool name "{resolved.name}": tool "{spec.name}" conflicts with '
                f'"{taken[resolved.name]}". Check your tools config for duplicate "name" values.'
            )
        taken[resolved.name] = spec.name
        params = list(spec.params_for(workspace))
        runner = ToolRunner(
            spec,
            resolved,
            config,
            workspace,
            params,
            request_context=rc,
            trackers=trackers,
            activity=activity,
            names=names,
        )
        rule = resolved.require_approval
        if rule is None:
            static = spec.static_default_approval
            flag = bool(static(workspace)) if static is not None else False
        else:
            flag = rule if isinstance(rule, bool) else True
        tools.append(
            Tool(
                name=resolved.name,
                workspace_tool_name=spec.name,
                description=rename_tools_in(spec.description, names),
                input_schema=build_schema(params),
                non_strict_schema=build_schema(params, strict=False),
                runner=runner,
                require_approval=flag,
                needs_approval=runner.needs_approval,
            )
        )
    return tools
