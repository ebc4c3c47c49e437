"""Every fact about a tool lives on its spec, and every reader takes it from there: a tool that
lacks one cannot be built, and a new tool is one module plus one registry line."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from ws_jupyter import LocalFilesystem, ToolsConfig, Workspace
from ws_jupyter.errors import ToolConfigError
from ws_jupyter.tools import names, registry
from ws_jupyter.tools.base import NEEDS, ToolSpec
from ws_jupyter.tools.config import TOOL_SETTINGS
from ws_jupyter.tools.hints import LOOKS, ToolHints, hints_for, title_for

#: A valid value for each tool-specific setting.
SETTING_VALUES: dict[str, Any] = {
    "media_types": ["image/png"],
    "max_media_bytes": 1000,
    "background_processes": {},
    "max_wait": 2.5,
    "require_read_before_write": True,
    "user_kernel": False,
    "allow_restore": True,
    "max_bytes": 1 << 20,
}

#: The public name groups, exactly as they were before they were derived from the specs.
GROUPS = {
    "FILESYSTEM_TOOLS": (
        "workspace_read_file", "workspace_write_file", "workspace_edit_file", "workspace_notebook_edit",
        "workspace_list_files", "workspace_delete", "workspace_file_stat", "workspace_mkdir", "workspace_grep",
    ),
    "WRITE_TOOLS": (
        "workspace_write_file", "workspace_edit_file", "workspace_notebook_edit", "workspace_delete",
        "workspace_mkdir",
    ),
    "PROCESS_TOOLS": ("workspace_get_process_output", "workspace_kill_process", "workspace_list_processes"),
    "KERNEL_TOOLS": ("workspace_execute_code", "workspace_restart_kernel", "workspace_list_kernels"),
    "NOTEBOOK_RUN_TOOLS": ("workspace_run_notebook",),
    "SANDBOX_TOOLS": (
        "workspace_execute_command", "workspace_get_process_output", "workspace_kill_process",
        "workspace_list_processes", "workspace_execute_code", "workspace_restart_kernel",
        "workspace_list_kernels", "workspace_run_notebook",
    ),
    "SEARCH_TOOLS": ("workspace_search", "workspace_index"),
    "SKILL_TOOLS": ("skill", "skill_search", "skill_read"),
    "USER_DATA_TOOLS": ("user_variables_list", "user_variable_inspect", "user_variable_request"),
    "OPEN_NOTEBOOK_TOOLS": ("open_notebook_read", "open_notebook_edit", "open_notebook_run"),
    "CHECKPOINT_TOOLS": ("workspace_checkpoint",),
}  # fmt: skip


def test_every_tool_states_every_fact() -> None:
    specs = registry.tool_specs()
    assert len(specs) == len(registry.TOOLS) == 29
    assert set(SETTING_VALUES) == set(TOOL_SETTINGS)
    for spec in specs:
        assert isinstance(spec.title, str) and spec.title.strip() and spec.title != spec.name, spec.name
        assert isinstance(spec.hints, ToolHints), spec.name
        assert spec.needs and spec.needs <= NEEDS, spec.name
        assert isinstance(spec.writes, bool), spec.name
        assert isinstance(spec.options, tuple) and set(spec.options) <= set(TOOL_SETTINGS), spec.name
        assert spec.max_output_tokens is None or spec.max_output_tokens > 0, spec.name
        # the facts agree with each other
        if spec.writes:
            assert "writable" in spec.needs and not spec.hints.read_only, spec.name
        if spec.hints.read_only:
            assert not spec.hints.destructive and not spec.writes, spec.name
        if "require_read_before_write" in spec.options:
            assert spec.check_reads and spec.writes, spec.name
        if "local_kernels" in spec.needs:
            assert "kernels" in spec.needs, spec.name


def _defined_specs() -> dict[str, str]:
    """Every ToolSpec a module of ws_jupyter.tools defines: tool name -> module."""
    import ws_jupyter.tools

    found: dict[str, str] = {}
    for info in pkgutil.walk_packages(ws_jupyter.tools.__path__, "ws_jupyter.tools."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, ToolSpec) and value.__class__ is ToolSpec:
                found.setdefault(value.name, value.run.__module__)
    return found


def test_every_tool_the_package_defines_is_registered() -> None:
    """A tool module without its registry line would never be listed, configured or hinted."""
    defined = _defined_specs()
    assert set(defined) == set(registry.tool_names()), set(defined) ^ set(registry.tool_names())
    # the open notebook's tools and the checkpoint tool among them, with their facts
    for name in (*names.OPEN_NOTEBOOK_TOOLS, *names.CHECKPOINT_TOOLS):
        spec = registry.tool_spec(name)
        assert spec is not None and spec.title and spec.needs, name
    assert registry.tool_spec("open_notebook_run").needs == {"open_notebook", "sandbox"}  # type: ignore[union-attr]
    assert registry.tool_spec("workspace_checkpoint").off_by_default  # type: ignore[union-attr]


def test_what_a_tool_uses_is_among_its_needs() -> None:
    """A tool whose module reaches the filesystem or the sandbox of the call needs it: otherwise
    it would be listed for a workspace without one and fail on every call."""
    for spec in registry.tool_specs():
        source = inspect.getsource(sys.modules[spec.run.__module__])
        if "call.filesystem()" in source:
            assert "filesystem" in spec.needs, spec.name
        if "call.sandbox()" in source:
            assert "sandbox" in spec.needs, spec.name
        if "call.workspace.skills" in source:
            assert "skills" in spec.needs, spec.name


@pytest.mark.parametrize(
    ("change", "missing"),
    [
        ({"title": ""}, "a title"),
        ({"hints": {"read_only": True}}, "its hints"),
        ({"needs": set()}, "its needs"),
        ({"needs": {"filesystem", "gpu"}}, "its needs"),
        ({"writes": True}, "whether it writes"),
        ({"options": ("colour",)}, "the options it accepts"),
    ],
)
def test_a_spec_that_lacks_a_fact_cannot_be_built(change: dict[str, Any], missing: str) -> None:
    facts: dict[str, Any] = {
        "name": "workspace_x", "description": "x", "params": (), "run": lambda call: "",
        "title": "X", "hints": LOOKS, "needs": {"filesystem"}, "writes": False, "options": (),
    }  # fmt: skip
    ToolSpec(**facts)
    with pytest.raises(TypeError, match=missing):
        ToolSpec(**{**facts, **change})
    for fact in ("title", "hints", "needs", "writes", "options"):
        with pytest.raises(TypeError):
            ToolSpec(**{k: v for k, v in facts.items() if k != fact})


def test_the_public_names_keep_their_values_and_order() -> None:
    for group, expected in GROUPS.items():
        assert getattr(names, group) == expected, group
    assert (
        *GROUPS["FILESYSTEM_TOOLS"], *GROUPS["SANDBOX_TOOLS"], *GROUPS["SEARCH_TOOLS"], *GROUPS["SKILL_TOOLS"],
        *GROUPS["USER_DATA_TOOLS"], *GROUPS["OPEN_NOTEBOOK_TOOLS"], *GROUPS["CHECKPOINT_TOOLS"],
    ) == names.ALL_TOOL_NAMES  # fmt: skip
    constants = [
        value
        for group in (names.WORKSPACE_TOOLS.FILESYSTEM, names.WORKSPACE_TOOLS.SANDBOX,
                      names.WORKSPACE_TOOLS.SEARCH, names.WORKSPACE_TOOLS.SKILLS, names.WORKSPACE_TOOLS.USER_DATA,
                      names.WORKSPACE_TOOLS.OPEN_NOTEBOOK, names.WORKSPACE_TOOLS.CHECKPOINTS)
        for key, value in vars(group).items()
        if key.isupper()
    ]  # fmt: skip
    assert constants == list(names.ALL_TOOL_NAMES)


def test_the_readers_take_the_facts_from_the_spec() -> None:
    for spec in registry.tool_specs():
        assert title_for(spec.name) == spec.title
        assert hints_for(spec.name) == spec.hints
        resolved = ToolsConfig().resolve(spec.name)
        assert resolved.max_output_tokens == spec.max_output_tokens
        assert resolved.enabled is (not spec.off_by_default), spec.name
        for setting in TOOL_SETTINGS:
            config = {"tools": {spec.name: {setting: SETTING_VALUES[setting]}}}
            if setting in spec.options:
                ToolsConfig.coerce(config)
            else:
                with pytest.raises(ToolConfigError):
                    ToolsConfig.coerce(config)


@pytest.fixture
def with_word_count() -> Iterator[None]:
    """The registry with one more line: the tool of ``word_count_tool.py``."""
    before = registry.TOOLS
    registry.TOOLS = (*before, "tests.tools.word_count_tool:SPEC")
    registry.tool_specs.cache_clear()
    try:
        yield
    finally:
        registry.TOOLS = before
        registry.tool_specs.cache_clear()


def test_a_new_tool_is_one_module_and_one_registry_line(with_word_count: None, tmp_path: Path) -> None:
    from ws_jupyter.adapters import build_mcp_server
    from ws_jupyter.tools.names import ALL_TOOL_NAMES, FILESYSTEM_TOOLS

    (tmp_path / "a.txt").write_text("one two three\n")
    assert ALL_TOOL_NAMES[-1] == "workspace_word_count" and "workspace_word_count" in FILESYSTEM_TOOLS
    ws = Workspace(
        filesystem=LocalFilesystem(tmp_path),
        bm25=False,
        tools={"workspace_word_count": {"max_wait": 1.5, "name": "wc"}},  # its own setting, and a name
    )
    read_only = Workspace(filesystem=LocalFilesystem(tmp_path, read_only=True), bm25=False)
    try:
        tools = {t.name: t for t in ws.tools()}
        assert tools["wc"].run({"path": "a.txt"}) == "3 words (waited up to 1.5s)"
        assert "workspace_word_count" in [t.name for t in read_only.tools()]  # it does not write
        with pytest.raises(ToolConfigError, match='Unknown option "max_media_bytes" for workspace_word_count'):
            ws.set_tools_config({"workspace_word_count": {"max_media_bytes": 1}})

        async def listed() -> Any:
            from mcp import Client

            async with Client(build_mcp_server(ws)) as client:
                return {t.name: t for t in (await client.list_tools()).tools}

        mcp_tool = anyio.run(listed)["wc"]
        assert mcp_tool.title == "Count words"
        assert (mcp_tool.annotations.read_only_hint, mcp_tool.annotations.destructive_hint) == (True, False)
    finally:
        ws.destroy()
        read_only.destroy()
