"""The kernel tools on a real sandbox kernel: what the model sees, images through every adapter,
budgets, time limits, approval defaults, and when the tools exist at all."""

from __future__ import annotations

import base64

import anyio
import pytest
from mcp import Client

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem, LocalSandbox, ToolResult, Workspace
from ws_jupyter.adapters.chat import anthropic_tool_result, openai_tool_output
from ws_jupyter.adapters.mcp_server import build_mcp_server
from ws_jupyter.sandbox.isolation.detect import probe_backend
from ws_jupyter.text.tokens import count_tokens

from ..kernels.conftest import PNG_CODE
from .conftest import box

pytestmark = pytest.mark.slow
BWRAP = probe_backend("bwrap")
ALLOW = {T.SANDBOX.EXECUTE_CODE: {"require_approval": False}}


@pytest.fixture(scope="module")
def kernel_ws(tmp_path_factory: pytest.TempPathFactory):
    """One workspace whose sandbox kernel serves the module (state is shared on purpose)."""
    import os

    root = os.path.realpath(tmp_path_factory.mktemp("kernel-tools"))
    ws = Workspace(
        filesystem=LocalFilesystem(root),
        sandbox=LocalSandbox(working_directory=root, timeout=30),
        bm25=False,
        tools={**ALLOW, T.SANDBOX.EXECUTE_CODE: {"require_approval": False, "max_output_tokens": 400}},
    )
    ws.init()
    yield ws
    ws.destroy()


def run(ws: Workspace, name: str, **args):
    return box(ws)[name].run(args)


def test_state_persists_and_results_read_like_a_notebook(kernel_ws: Workspace) -> None:
    first = run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code="rows = [3, 1, 2]\nprint('loaded', len(rows))")
    assert first == "loaded 3"
    second = run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code="sorted(rows)")
    assert second.startswith("Out[") and second.endswith("]: [1, 2, 3]")
    quiet = run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code="unused = 1")
    assert quiet == "(no output)"


def test_errors_come_with_a_trimmed_ansi_free_traceback(kernel_ws: Workspace) -> None:
    out = run(
        kernel_ws, T.SANDBOX.EXECUTE_CODE, code="def f():\n    return missing_thing\n\nprint('before')\nf()"
    )
    assert out.startswith("before\n")
    assert "NameError: name 'missing_thing' is not defined" in out
    assert "return missing_thing" in out
    assert "\x1b[" not in out and "-" * 20 not in out
    assert not getattr(out, "is_error", False)  # the code failed, not the tool


def test_a_timeout_interrupts_says_so_and_keeps_state(kernel_ws: Workspace) -> None:
    run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code="kept_value = 'kept'")
    out = run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code="import time\ntime.sleep(60)", timeout=1)
    assert "[timed out after 1 s: the kernel was interrupted (its state is kept)]" in out
    assert "KeyboardInterrupt" in out
    assert run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code="kept_value").endswith("'kept'")


def test_huge_output_stays_within_the_token_budget(kernel_ws: Workspace) -> None:
    out = run(
        kernel_ws, T.SANDBOX.EXECUTE_CODE, code="for i in range(200_000):\n    print('line', i)\n'done'"
    )
    assert count_tokens(out) <= 400 + 40
    assert "line 0" in out and "line 199999" in out and "output truncated" in out
    assert "'done'" in out


def test_images_arrive_as_image_parts_through_every_adapter(kernel_ws: Workspace) -> None:
    out = run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code=PNG_CODE + "\nprint('drawn')")
    assert isinstance(out, ToolResult)
    assert out.text.startswith("drawn") and "[image 1: image/png" in out.text
    (part,) = out.media
    assert part.mime_type == "image/png" and part.to_bytes().startswith(b"\x89PNG")

    block = anthropic_tool_result("toolu_1", out)
    assert [c["type"] for c in block["content"]] == ["text", "image"]
    assert block["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": part.data}

    responses = openai_tool_output(out, api="responses")
    assert responses[1] == {"type": "input_image", "image_url": f"data:image/png;base64,{part.data}"}
    chat = openai_tool_output(out)
    assert isinstance(chat, str) and "1 media part(s) (image/png) not shown" in chat

    server = build_mcp_server(kernel_ws)

    async def session():
        async with Client(server) as client:
            return await client.call_tool(T.SANDBOX.EXECUTE_CODE, {"code": PNG_CODE})

    mcp_result = anyio.run(session)
    assert [c.type for c in mcp_result.content] == ["text", "image"]
    assert base64.b64decode(mcp_result.content[1].data).startswith(b"\x89PNG")


def test_svg_comes_as_text_and_html_as_readable_text(kernel_ws: Workspace) -> None:
    out = run(
        kernel_ws,
        T.SANDBOX.EXECUTE_CODE,
        code="from IPython.display import SVG, HTML, display\n"
        'display(SVG(\'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><circle r="2"/></svg>\'))\n'
        "display(HTML('<table><tr><td>cell &amp; value</td></tr></table>'))",
    )
    assert isinstance(out, str)
    assert "[SVG image]" in out and "<circle" in out
    assert "cell & value" in out and "<td>" not in out


def test_two_kernels_restart_and_list(kernel_ws: Workspace) -> None:
    run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code="side = 'b'", kernel="side")
    assert run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code="side", kernel="side").endswith("'b'")
    listing = run(kernel_ws, T.SANDBOX.LIST_KERNELS)
    names = [line.split("\t")[0] for line in listing.splitlines()]
    assert names == ["default", "side"] and "idle" in listing
    assert run(kernel_ws, T.SANDBOX.RESTART_KERNEL, kernel="side") == (
        'Kernel "side" restarted: its variables and imports are gone.'
    )
    assert "NameError" in run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code="side", kernel="side")
    unknown = run(kernel_ws, T.SANDBOX.RESTART_KERNEL, kernel="ghost")
    assert unknown.startswith("Error: No kernel named 'ghost'")
    bad = run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code="1", kernel="../etc")
    assert bad.startswith("Error: invalid kernel name '../etc'")
    empty = run(kernel_ws, T.SANDBOX.EXECUTE_CODE, code="")
    assert empty.startswith("Error: Invalid arguments")


def test_approval_default_follows_execute_command(workdir) -> None:
    ws = Workspace(filesystem=LocalFilesystem(workdir), sandbox=LocalSandbox(working_directory=workdir))
    try:
        tools = box(ws)
        assert tools[T.SANDBOX.EXECUTE_CODE].require_approval
        assert not tools[T.SANDBOX.LIST_KERNELS].require_approval
        refused = tools[T.SANDBOX.EXECUTE_CODE].run({"code": "1"})
        assert "requires approval because the sandbox runs commands on the host" in refused
        assert ws.sandbox.kernels.list() == []  # nothing ran
    finally:
        ws.destroy()


def test_mcp_hints_say_code_runs_like_a_command(workdir) -> None:
    """Code in a kernel reaches out exactly when commands do; listing kernels only looks."""
    from ws_jupyter.tools.hints import hints_for, title_for

    host = Workspace(filesystem=LocalFilesystem(workdir), sandbox=LocalSandbox(working_directory=workdir))
    try:
        execute = hints_for(T.SANDBOX.EXECUTE_CODE, host)
        assert (execute.read_only, execute.destructive, execute.open_world) == (False, True, True)
        listing = hints_for(T.SANDBOX.LIST_KERNELS, host)
        assert listing.read_only and not listing.destructive and listing.idempotent
        assert not hints_for(T.SANDBOX.RESTART_KERNEL, host).read_only
        assert title_for(T.SANDBOX.EXECUTE_CODE) == "Run Python code (kernel)"
    finally:
        host.destroy()
    if BWRAP.available:
        isolated = Workspace(sandbox=LocalSandbox(working_directory=workdir, isolation="bwrap"))
        try:
            assert hints_for(T.SANDBOX.EXECUTE_CODE, isolated).open_world is False
            assert hints_for(T.SANDBOX.RUN_NOTEBOOK, isolated).open_world is False
        finally:
            isolated.destroy()


@pytest.mark.skipif(not BWRAP.available, reason="bubblewrap cannot run here")
def test_isolated_sandbox_needs_no_approval_and_hidden_python_means_no_kernel_tools(workdir) -> None:
    isolated = Workspace(
        filesystem=LocalFilesystem(workdir),
        sandbox=LocalSandbox(working_directory=workdir, isolation="bwrap"),
    )
    hidden = Workspace(
        sandbox=LocalSandbox(
            working_directory=workdir, isolation="bwrap", native_sandbox={"allow_system_binaries": False}
        )
    )
    try:
        isolated.init()
        hidden.init()
        assert not box(isolated)[T.SANDBOX.EXECUTE_CODE].require_approval
        import sys

        if not sys.executable.startswith(("/usr/", "/bin/")):  # this Python lives outside /usr
            assert T.SANDBOX.EXECUTE_CODE not in box(hidden)
            assert T.SANDBOX.EXECUTE_COMMAND in box(hidden)
    finally:
        isolated.destroy()
        hidden.destroy()


def test_no_kernel_tools_when_the_kernelspec_is_missing(workdir) -> None:
    ws = Workspace(sandbox=LocalSandbox(working_directory=workdir, kernels={"kernel_spec": "no-such-spec"}))
    try:
        names = set(box(ws))
        assert T.SANDBOX.EXECUTE_COMMAND in names
        assert not names & {
            T.SANDBOX.EXECUTE_CODE,
            T.SANDBOX.RESTART_KERNEL,
            T.SANDBOX.LIST_KERNELS,
            T.SANDBOX.RUN_NOTEBOOK,
        }
        assert "No kernelspec named 'no-such-spec'" in ws.sandbox.kernels.availability()[1]
    finally:
        ws.destroy()
