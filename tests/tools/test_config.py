"""ToolsConfig: validation, precedence, dynamic rules, renaming, and which tools exist."""

from __future__ import annotations

import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem, LocalSandbox, RequestContext, Workspace
from ws_jupyter.errors import ToolConfigError
from ws_jupyter.tools.config import ToolsConfig
from ws_jupyter.tools.names import FILESYSTEM_TOOLS, NOTEBOOK_RUN_TOOLS, SANDBOX_TOOLS, SEARCH_TOOLS

from .conftest import box


def names(ws, rc=None):
    return [t.name for t in ws.tools(rc)]


# --- validation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"workspace_red_file": {}},
            'Unknown tools config key "workspace_red_file" (did you mean "workspace_read_file"?)',
        ),
        (
            {T.FILESYSTEM.READ_FILE: {"max_media_byte": 1}},
            'Unknown option "max_media_byte" for workspace_read_file (did you mean "max_media_bytes"?)',
        ),
        ({"aprover": print}, 'Unknown tools config key "aprover" (did you mean "approver"?)'),
        (
            {T.FILESYSTEM.READ_FILE: {"name": "has space"}},
            "workspace_read_file: name must be 1-64 characters",
        ),
        (
            {T.FILESYSTEM.READ_FILE: {"require_read_before_write": True}},
            "require_read_before_write applies to",
        ),
        ({"enabled": "yes"}, "enabled must be True/False or a function"),
        ({"write_lock_timeout": 0}, "write_lock_timeout must be a positive number of seconds"),
        ({T.FILESYSTEM.GREP: {"max_output_tokens": -1}}, "max_output_tokens must be a non-negative integer"),
        ({"hooks": {"before": print}}, 'Unknown hook "before"'),
        (
            {T.SANDBOX.EXECUTE_COMMAND: {"background_processes": {"on_start": print}}},
            'Unknown background_processes callback "on_start"',
        ),
        ([1], "tools config must be a dict or a ToolsConfig"),
    ],
)
def test_bad_config_is_rejected_with_a_clear_message(config, message):
    with pytest.raises(ToolConfigError) as info:
        ToolsConfig.coerce(config)
    assert message in str(info.value)


def test_workspace_validates_config_at_construction_and_on_set(workdir):
    with pytest.raises(ToolConfigError):
        Workspace(filesystem=LocalFilesystem(workdir), tools={"nope": 1})
    ws = Workspace(filesystem=LocalFilesystem(workdir))
    try:
        assert ws.get_tools_config() == ToolsConfig()
        with pytest.raises(ToolConfigError):
            ws.set_tools_config({"enabled": 3})
        ws.set_tools_config({T.FILESYSTEM.GREP: {"enabled": False}})
        assert isinstance(ws.get_tools_config(), ToolsConfig)
        assert "workspace_grep" not in names(ws)
        ws.set_tools_config(None)
        assert "workspace_grep" in names(ws)
    finally:
        ws.destroy()


def test_repr_shows_only_what_differs_from_defaults():
    def log(ctx):
        return None

    cfg = ToolsConfig.coerce(
        {
            "require_approval": True,
            "hooks": {"before_tool_call": log},
            T.FILESYSTEM.WRITE_FILE: {"name": "write"},
        }
    )
    assert repr(cfg) == (
        "ToolsConfig(require_approval=True, hooks=hooks(before_tool_call), workspace_write_file={name='write'})"
    )
    assert repr(ToolsConfig()) == "ToolsConfig()"


def test_config_is_immutable():
    cfg = ToolsConfig()
    with pytest.raises(AttributeError):
        cfg.enabled = False  # type: ignore[misc]


# --- precedence -----------------------------------------------------------------------------------


def test_precedence_defaults_then_top_level_then_per_tool():
    cfg = ToolsConfig.coerce(
        {
            "require_approval": True,
            "max_output_tokens": 500,
            "write_lock_timeout": 5,
            T.FILESYSTEM.READ_FILE: {"require_approval": False, "max_output_tokens": 900},
        }
    )
    read = cfg.resolve(T.FILESYSTEM.READ_FILE)
    grep = cfg.resolve(T.FILESYSTEM.GREP)
    assert (read.require_approval, read.max_output_tokens) == (False, 900)
    assert (grep.require_approval, grep.max_output_tokens, grep.write_lock_timeout) == (True, 500, 5.0)
    defaults = ToolsConfig().resolve(T.FILESYSTEM.LIST_FILES)
    assert (defaults.enabled, defaults.require_approval, defaults.max_output_tokens) == (True, None, 1000)
    assert ToolsConfig().resolve(T.FILESYSTEM.GREP).max_output_tokens == 2000
    assert ToolsConfig().resolve(T.FILESYSTEM.WRITE_FILE).write_lock_timeout == 30.0
    assert (
        ToolsConfig.coerce({T.FILESYSTEM.GREP: {"max_output_tokens": 0}})
        .resolve(T.FILESYSTEM.GREP)
        .max_output_tokens
        is None
    )


def test_top_level_enabled_false_and_per_tool_reenable(make_ws):
    ws = make_ws(tools={"enabled": False, T.FILESYSTEM.READ_FILE: {"enabled": True}})
    assert names(ws) == ["workspace_read_file"]


def test_require_approval_flags_on_tools(make_ws):
    ws = make_ws(tools={"require_approval": True, T.FILESYSTEM.READ_FILE: {"require_approval": False}})
    tools = box(ws)
    assert tools["workspace_read_file"].require_approval is False
    assert tools["workspace_grep"].require_approval is True


# --- dynamic rules --------------------------------------------------------------------------------


def test_dynamic_enabled_sees_the_request_context(make_ws):
    def only_admins(ctx):
        return ctx.request_context is not None and ctx.request_context.get("role") == "admin"

    ws = make_ws(tools={T.FILESYSTEM.DELETE: {"enabled": only_admins}})
    assert "workspace_delete" not in names(ws)
    assert "workspace_delete" not in names(ws, RequestContext({"role": "guest"}))
    assert "workspace_delete" in names(ws, RequestContext({"role": "admin"}))
    assert "workspace_delete" in names(ws, {"role": "admin"})


def test_raising_enabled_function_hides_the_tool(make_ws, caplog):
    def broken(ctx):
        raise RuntimeError("boom")

    ws = make_ws(tools={T.FILESYSTEM.DELETE: {"enabled": broken}})
    assert "workspace_delete" not in names(ws)
    assert "workspace_read_file" in names(ws)
    assert "enabled function of workspace_delete raised" in caplog.text


def test_dynamic_require_approval_is_evaluated_per_call(make_ws, workdir):
    seen = []

    def risky(args, ctx):
        seen.append((dict(args), ctx.tool_name))
        return args["path"].startswith("secret")

    ws = make_ws(tools={T.FILESYSTEM.WRITE_FILE: {"require_approval": risky}, "approver": lambda *a: False})
    write = box(ws)["workspace_write_file"]
    assert write.require_approval is True
    assert write.needs_approval({"path": "notes.txt"}) is False
    assert write.run({"path": "notes.txt", "content": "x"}) == "Wrote 1 bytes to notes.txt"
    assert write.run({"path": "secret.txt", "content": "x"}) == "Tool call refused by user."
    assert not (workdir / "secret.txt").exists()
    assert seen[-1][1] == "workspace_write_file"


def test_raising_require_approval_function_means_ask(make_ws, workdir):
    def broken(args, ctx):
        raise ValueError("nope")

    ws = make_ws(tools={T.FILESYSTEM.WRITE_FILE: {"require_approval": broken}, "approver": lambda *a: False})
    write = box(ws)["workspace_write_file"]
    assert write.needs_approval({"path": "a"}) is True
    assert write.run({"path": "a.txt", "content": "x"}) == "Tool call refused by user."
    assert not (workdir / "a.txt").exists()


# --- names ----------------------------------------------------------------------------------------


def test_renaming_changes_the_exposed_name_only(make_ws, workdir):
    ws = make_ws(tools={T.FILESYSTEM.READ_FILE: {"name": "cat"}})
    tools = box(ws)
    assert "workspace_read_file" not in tools
    cat = tools["cat"]
    assert cat.workspace_tool_name == "workspace_read_file"
    (workdir / "a.txt").write_text("hi\n")
    assert cat.run({"path": "a.txt"}) == "a.txt (3 bytes)\n     1→hi"
    assert repr(cat) == "Tool('cat', workspace_tool_name='workspace_read_file')"


def test_duplicate_names_raise_when_listing(make_ws):
    ws = make_ws(tools={T.FILESYSTEM.READ_FILE: {"name": "io"}, T.FILESYSTEM.WRITE_FILE: {"name": "io"}})
    with pytest.raises(ToolConfigError) as info:
        ws.tools()
    assert (
        'Duplicate workspace tool name "io": tool "workspace_write_file" conflicts with "workspace_read_file"'
        in str(info.value)
    )


def test_renaming_onto_a_default_name_is_a_duplicate(make_ws):
    ws = make_ws(tools={T.FILESYSTEM.GREP: {"name": "workspace_read_file"}})
    with pytest.raises(ToolConfigError):
        ws.tools()
    ws.set_tools_config(
        {T.FILESYSTEM.GREP: {"name": "workspace_read_file"}, T.FILESYSTEM.READ_FILE: {"enabled": False}}
    )
    assert box(ws)["workspace_read_file"].workspace_tool_name == "workspace_grep"


# --- availability ---------------------------------------------------------------------------------


def test_filesystem_only(make_ws):
    ws = make_ws(bm25=False)
    assert names(ws) == list(FILESYSTEM_TOOLS)


def test_filesystem_with_search(make_ws):
    assert names(make_ws()) == [*FILESYSTEM_TOOLS, *SEARCH_TOOLS]


def test_read_only_filesystem_hides_write_tools_and_index(workdir):
    ws = Workspace(filesystem=LocalFilesystem(workdir, read_only=True))
    try:
        assert names(ws) == [
            "workspace_read_file",
            "workspace_list_files",
            "workspace_file_stat",
            "workspace_grep",
            "workspace_search",
        ]
    finally:
        ws.destroy()


def test_sandbox_only_with_processes(workdir):
    ws = Workspace(sandbox=LocalSandbox(working_directory=workdir), bm25=False)
    try:
        # workspace_run_notebook also needs a filesystem (it writes the outputs back)
        assert names(ws) == [n for n in SANDBOX_TOOLS if n not in NOTEBOOK_RUN_TOOLS]
    finally:
        ws.destroy()


def test_resolver_providers_list_all_tools_and_check_read_only_at_run_time(workdir):
    (workdir / "a.txt").write_text("hello\n")
    read_only = LocalFilesystem(workdir, read_only=True)
    writable = LocalFilesystem(workdir)

    def pick(rc):
        return read_only if rc and rc.get("mode") == "ro" else writable

    ws = Workspace(filesystem=pick, sandbox=lambda rc: LocalSandbox(working_directory=workdir), bm25=False)
    try:
        assert names(ws) == [*FILESYSTEM_TOOLS, *SANDBOX_TOOLS]
        ro = box(ws, {"mode": "ro"})
        assert ro["workspace_read_file"].run({"path": "a.txt"}) == "a.txt (6 bytes)\n     1→hello"
        out = ro["workspace_write_file"].run({"path": "a.txt", "content": "x"})
        assert out == "Error: Filesystem is read-only. Cannot perform: write_file on a.txt"
        rw = box(ws, {"mode": "rw"})
        assert rw["workspace_write_file"].run({"path": "b.txt", "content": "x"}) == "Wrote 1 bytes to b.txt"
        # the request context given at call time wins over the tool set's
        assert (
            ro["workspace_write_file"].run({"path": "c.txt", "content": "y"}, {"mode": "rw"})
            == "Wrote 1 bytes to c.txt"
        )
    finally:
        ws.destroy()


def test_skills_only_workspace(workdir):
    (workdir / "skills" / "demo").mkdir(parents=True)
    (workdir / "skills" / "demo" / "SKILL.md").write_text(
        "---\nname: demo\ndescription: Demo.\n---\nSteps.\n"
    )
    import os

    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        ws = Workspace(skills=["skills"], bm25=False)
        try:
            assert names(ws) == ["skill", "skill_search", "skill_read"]
        finally:
            ws.destroy()
    finally:
        os.chdir(cwd)
