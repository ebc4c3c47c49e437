"""The sandbox contract's optional members: what ``sandbox.capabilities`` finds on a full
``LocalSandbox`` and on a provider with the core only, what the workspace and its tools then do,
and that no module outside ``capabilities.py`` probes a sandbox member itself.

``CoreOnly`` stands for a remote or container provider that offers ``WorkspaceSandbox`` and
nothing else: it runs the conformance suite (whose capability tests then skip) and backs a
workspace whose agent tools are exactly those the core allows.
"""

from __future__ import annotations

import ast
import os
import re
import threading
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import ws_jupyter
from ws_jupyter import WORKSPACE_TOOLS, LocalSandbox, Workspace
from ws_jupyter.sandbox import capabilities as caps
from ws_jupyter.sandbox.types import CommandResult, OutputCallback, WorkspaceSandbox
from ws_jupyter.tools.types import ToolCallContext

from .conformance import SandboxConformance


class CoreOnly:
    """The core of the contract and nothing more (commands run by a hidden LocalSandbox)."""

    name = "CoreOnly"
    provider = "core-only"

    def __init__(self, inner: LocalSandbox) -> None:
        self._inner = inner
        self.id = f"core-{inner.id}"

    @property
    def status(self) -> str:
        return self._inner.status

    def execute_command(
        self,
        command: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
    ) -> CommandResult:
        return self._inner.execute_command(command, args, cwd, env, timeout, on_stdout, on_stderr)

    def get_instructions(self, request_context: Any = None) -> str:
        return "Commands run somewhere else."


@pytest.fixture
def core_only(make_sandbox: Any) -> CoreOnly:
    return CoreOnly(make_sandbox("none", timeout=20))


class TestCoreOnlyProvider(SandboxConformance):
    @pytest.fixture
    def sandbox_factory(self, make_sandbox: Any) -> Any:
        return lambda timeout=None: CoreOnly(make_sandbox("none", timeout=timeout))


def test_a_full_local_sandbox_has_every_capability(make_sandbox: Any) -> None:
    sb = make_sandbox("none", timeout=7)
    assert caps.sandbox_processes(sb) is sb.processes and isinstance(sb.processes, caps.ProcessProvider)
    assert caps.sandbox_kernels(sb) is sb.kernels
    assert caps.sandbox_wrapping(sb) is sb and caps.sandbox_mounting(sb) is sb
    assert caps.sandbox_isolation(sb) == "none" and caps.sandbox_runs_on_host(sb)
    assert caps.sandbox_timeout(sb) == 7.0
    assert caps.sandbox_native_config(sb) is sb.native_sandbox and not caps.sandbox_allows_network(sb)
    assert caps.sandbox_cancels_commands(sb)
    assert caps.sandbox_isolation_detection(sb) == LocalSandbox.detect_isolation()
    for step in ("start", "stop", "destroy", "ensure_running"):
        assert caps.sandbox_action(sb, step) == getattr(sb, step)  # type: ignore[arg-type]
    assert caps.sandbox_home(sb) is None  # not started yet
    caps.ensure_running(sb)
    assert sb.status == "running" and caps.sandbox_home(sb) == sb.home_directory
    info = caps.sandbox_info(sb)
    assert info is not None and info.id == sb.id


def test_what_is_assumed_when_a_provider_has_the_core_only(core_only: CoreOnly) -> None:
    assert isinstance(core_only, WorkspaceSandbox)
    for ask in (
        caps.sandbox_processes,
        caps.sandbox_kernels,
        caps.sandbox_wrapping,
        caps.sandbox_mounting,
        caps.sandbox_isolation,
        caps.sandbox_timeout,
        caps.sandbox_home,
        caps.sandbox_info,
        caps.sandbox_native_config,
        caps.sandbox_isolation_detection,
    ):
        assert ask(core_only) is None, ask.__name__
    assert not caps.sandbox_runs_on_host(core_only)  # isolation not declared: not "on the host"
    assert not caps.sandbox_allows_network(core_only) and not caps.sandbox_cancels_commands(core_only)
    assert caps.sandbox_egress(core_only) is None
    since = datetime.now(timezone.utc)
    assert caps.sandbox_network_note(core_only, 1, since) == ""
    result = core_only.execute_command("true")
    assert caps.sandbox_with_network_note(core_only, result, since) is result
    for step in ("start", "stop", "destroy", "ensure_running"):
        assert caps.sandbox_action(core_only, step) is None  # type: ignore[arg-type]
    caps.ensure_running(core_only)  # nothing to do, no error


def test_a_workspace_over_a_core_only_provider_offers_what_the_core_allows(core_only: CoreOnly) -> None:
    t = WORKSPACE_TOOLS.SANDBOX
    ws = Workspace(sandbox=core_only, tools={t.EXECUTE_COMMAND: {"require_approval": False}})
    ws.init()
    try:
        names = {tool.workspace_tool_name for tool in ws.tools()}
        assert t.EXECUTE_COMMAND in names
        assert not names & {t.GET_PROCESS_OUTPUT, t.KILL_PROCESS, t.LIST_PROCESSES, t.EXECUTE_CODE, t.RUN_NOTEBOOK}
        (run,) = [tool for tool in ws.tools() if tool.workspace_tool_name == t.EXECUTE_COMMAND]
        assert run.run({"command": "echo from-core"}).strip() == "from-core"
        timed_out = run.run({"command": "sleep 5", "timeout": 0.3})
        assert "Exit code: 124 (timed out after 0.3s)" in timed_out
        assert run.run({"command": "sleep 5", "background": True}).startswith("Error:")
        assert ws.get_info().sandbox is None  # it describes nothing
    finally:
        ws.destroy()  # no destroy() or stop() to call: nothing fails
    assert core_only.status == "running"


@pytest.mark.parametrize("core", [False, True])
def test_a_cancelled_tool_call_stops_the_command_where_the_sandbox_takes_abort(make_sandbox: Any, core: bool) -> None:
    local = make_sandbox("none", timeout=1)
    sandbox = CoreOnly(local) if core else local
    t = WORKSPACE_TOOLS.SANDBOX
    ws = Workspace(sandbox=sandbox, tools={t.EXECUTE_COMMAND: {"require_approval": False}})
    (run,) = [tool for tool in ws.tools() if tool.workspace_tool_name == t.EXECUTE_COMMAND]
    abort = threading.Event()
    threading.Timer(0.3, abort.set).start()
    out = run.run({"command": "sleep 10"}, ToolCallContext(abort=abort))
    # a sandbox without abort= is not handed one (no TypeError): the command runs to its limit
    assert ("timed out" in out) is core, out
    ws.destroy()


# --- one place asks ---------------------------------------------------------------------------------

#: The optional members of the contract (``sandbox.capabilities``) and the kernel provider's.
_MEMBERS = {
    "processes", "kernels", "isolation", "timeout", "wrap_argv", "is_visible", "ensure_running",
    "home_directory", "native_sandbox", "mount", "start", "stop", "destroy", "get_info",
    "detect_isolation", "remote", "status", "egress", "network_note", "with_network_note",
}  # fmt: skip


def _probes(path: Path) -> list[str]:
    text = path.read_text()
    if not re.search(r"(get|has)attr\(", text):
        return []
    tree = ast.parse(text)
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in _MEMBERS
        ):
            subject = ast.unparse(node.args[0])
            if any(word in subject for word in ("sandbox", "sb", "kernels", "manager")):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_only_the_capabilities_module_probes_sandbox_members() -> None:
    root = Path(ws_jupyter.__file__).parent
    offenders = {}
    for path in sorted(root.rglob("*.py")):
        if path == root / "sandbox" / "capabilities.py":
            continue
        probes = _probes(path)
        if probes:
            offenders[str(path.relative_to(root))] = probes
    assert offenders == {}


def test_the_probe_finder_finds_probes(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "limit = getattr(sandbox, 'timeout', None)\nok = hasattr(self.sb, 'mount')\n"
        "x = getattr(workspace, 'name', None)\n"
    )
    assert [p.split(": ", 1)[0] for p in _probes(sample)] == ["1", "2"]
    assert os.path.basename(caps.__file__) == "capabilities.py"
