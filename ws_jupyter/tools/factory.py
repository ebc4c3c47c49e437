"""``create_workspace_tools``: the one place where tool policy is applied.

Which tools exist follows from the workspace's providers (see the table in docs/tools.md):
a filesystem gives the file tools (minus the writing ones and ``workspace_index`` when it is
read-only); a sandbox gives ``workspace_execute_command`` (plus the process tools when it has a
process manager, and the kernel tools when it can run Jupyter kernels — with a writable filesystem
also ``workspace_run_notebook``); BM25 or vector search gives ``workspace_search`` and ``workspace_index``;
skills give ``skill``, ``skill_search`` and ``skill_read``; variables the notebook user shares (see
:mod:`ws_jupyter.userdata`) give ``user_variables_list`` and ``user_variable_inspect`` (and
``user_variable_request`` with a sandbox that runs kernels); a connected open notebook (see
:mod:`ws_jupyter.live`) gives ``open_notebook_read`` and ``open_notebook_edit`` (and
``open_notebook_run`` with a sandbox); a writable filesystem given up front gives
``workspace_checkpoint`` (off unless enabled). With resolver-based providers every
tool of that provider is listed and the read-only check happens when a tool runs.

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
from typing import Any

from ..errors import ToolConfigError
from ..request_context import RequestContext
from ..sandbox.capabilities import sandbox_kernels, sandbox_processes
from .activity import tool_activity
from .base import ToolSpec
from .config import ToolsConfig
from .names import WORKSPACE_TOOLS, WRITE_TOOLS
from .schema import build_schema
from .tracking import read_trackers
from .types import Tool, ToolCallContext
from .wrappers import ToolRunner

__all__ = ["available_specs", "create_workspace_tools"]

log = logging.getLogger("ws_jupyter.tools")
T = WORKSPACE_TOOLS


def _filesystem_specs() -> list[ToolSpec]:
    from . import delete, edit_file, file_stat, grep, list_files, mkdir, notebook_edit, read_file, write_file

    return [
        read_file.SPEC,
        write_file.SPEC,
        edit_file.SPEC,
        notebook_edit.SPEC,
        list_files.SPEC,
        delete.SPEC,
        file_stat.SPEC,
        mkdir.SPEC,
        grep.SPEC,
    ]


def _sandbox_specs(with_processes: bool, with_kernels: bool) -> list[ToolSpec]:
    from . import execute_command, kernels, processes

    specs = [execute_command.SPEC]
    if with_processes:
        specs += [processes.GET_OUTPUT_SPEC, processes.KILL_SPEC, processes.LIST_SPEC]
    if with_kernels:
        specs += [kernels.EXECUTE_CODE_SPEC, kernels.RESTART_KERNEL_SPEC, kernels.LIST_KERNELS_SPEC]
    return specs


def _can_run_kernels(sandbox: Any) -> bool:
    manager = sandbox_kernels(sandbox)
    return manager is not None and bool(manager.available)


def _search_specs(with_index: bool) -> list[ToolSpec]:
    from .search import INDEX_SPEC, SEARCH_SPEC

    return [SEARCH_SPEC, *([INDEX_SPEC] if with_index else [])]


def _skill_specs() -> list[ToolSpec]:
    from .skills import SKILL_READ_SPEC, SKILL_SEARCH_SPEC, SKILL_SPEC

    return [SKILL_SPEC, SKILL_SEARCH_SPEC, SKILL_READ_SPEC]


def _user_data_specs(workspace: Any) -> list[ToolSpec]:
    """The user-data tools, while the user shares a namespace with the workspace."""
    from ..userdata import shared_namespace

    if shared_namespace(workspace) is None:
        return []
    from .user_data import INSPECT_SPEC, LIST_SPEC, REQUEST_SPEC

    specs = [LIST_SPEC, INSPECT_SPEC]
    if workspace.has_sandbox_config() and (workspace.sandbox is None or _can_run_kernels(workspace.sandbox)):
        specs.append(REQUEST_SPEC)
    return specs


def _open_notebook_specs(workspace: Any) -> list[ToolSpec]:
    """The open-notebook tools, while a notebook page is connected to the workspace (an
    unconnected link is probed briefly, at most every 30 s)."""
    from ..live.registry import live_notebook

    link = live_notebook(workspace)
    available = getattr(link, "available", None)
    if link is None or not (available(probe=1.0) if available is not None else link.status().connected):
        return []
    from .open_notebook import edit, read, run

    return [read.SPEC, edit.SPEC, *([run.SPEC] if workspace.has_sandbox_config() else [])]


def available_specs(workspace: Any) -> list[ToolSpec]:
    """The tools the workspace's providers make possible, before the config is applied."""
    specs: list[ToolSpec] = []
    static_fs = workspace.filesystem
    read_only = bool(static_fs is not None and getattr(static_fs, "read_only", False))
    if workspace.has_filesystem_config():
        specs += [s for s in _filesystem_specs() if not (read_only and s.name in WRITE_TOOLS)]
    if workspace.has_sandbox_config():
        sandbox = workspace.sandbox
        if sandbox is None:  # resolver: everything, checked per call
            specs += _sandbox_specs(True, True)
        else:
            specs += _sandbox_specs(sandbox_processes(sandbox) is not None, _can_run_kernels(sandbox))
        # runs a workspace notebook on a sandbox kernel and writes its outputs back
        # (not on a gateway's kernels: nbclient needs a local one)
        kernels = sandbox_kernels(sandbox) if sandbox is not None else None
        local_kernels = sandbox is None or (
            kernels is not None and _can_run_kernels(sandbox) and not kernels.remote
        )
        if workspace.has_filesystem_config() and not read_only and local_kernels:
            from .run_notebook import RUN_NOTEBOOK_SPEC

            specs.append(RUN_NOTEBOOK_SPEC)
    if getattr(workspace, "can_search", False):
        specs += _search_specs(not read_only)
    if workspace.skills is not None:
        specs += _skill_specs()
    specs += _user_data_specs(workspace)
    specs += _open_notebook_specs(workspace)
    if static_fs is not None and not read_only:
        from .checkpoint import SPEC as CHECKPOINT_SPEC

        specs.append(CHECKPOINT_SPEC)
    return specs


def _enabled(rule: Any, ctx: ToolCallContext) -> bool:
    if isinstance(rule, bool):
        return rule
    try:
        return bool(rule(ctx))
    except Exception:
        log.warning("enabled function of %s raised; hiding the tool", ctx.workspace_tool_name, exc_info=True)
        return False


def _request_context(value: Any) -> RequestContext | None:
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
    pattern = re.compile(
        r"(?<![\w.])(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?!\w)"
    )
    return pattern.sub(lambda m: names[m.group(1)], text)


def create_workspace_tools(workspace: Any, request_context: Any = None) -> list[Tool]:
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
