"""Import paths kept for one release after a move: they give the same objects and say where
the names went (``DeprecationWarning``, attributed to the importing code), nothing in ws_jupyter
itself uses them (no warning in ordinary use), and the "Deprecated import paths" table of the API
reference (docs/reference/index.md) lists the moved modules."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from ws_jupyter import _moved

KERNEL_MODULES = ("activity", "config", "gateway", "kernel", "launch", "manager", "messages", "result")


def _run(code: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_old_kernels_path_is_the_new_module_and_warns_once_at_the_importer() -> None:
    out = _run(
        f"""
        import importlib, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import ws_jupyter.kernels as old
            from ws_jupyter.kernels import GatewayKernelManager, MimeBundle, ExecutionResult
            for name in {KERNEL_MODULES!r}:
                assert importlib.import_module("ws_jupyter.kernels." + name) is importlib.import_module(
                    "ws_jupyter.sandbox.kernels." + name
                ), name
        import ws_jupyter
        from ws_jupyter.sandbox.kernels import gateway
        from ws_jupyter.kernels.result import FRAME_THEME_CSS  # a name outside __all__ too
        assert GatewayKernelManager is gateway.GatewayKernelManager
        assert MimeBundle is ws_jupyter.MimeBundle and ExecutionResult is ws_jupyter.ExecutionResult
        assert set(old.__all__) <= set(dir(old))
        deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
        assert len(deprecations) == 1, [str(w.message) for w in caught]
        print(deprecations[0].filename, "|", deprecations[0].message)
        """
    )
    assert out.returncode == 0, out.stderr
    where, message = out.stdout.strip().split(" | ")
    assert where == "<string>"  # attributed to the importing code, not to the import machinery
    assert "ws_jupyter.sandbox.kernels" in message


def test_ordinary_use_never_touches_the_old_path() -> None:
    out = _run(
        """
        import sys, pkgutil, importlib
        import ws_jupyter, ws_jupyter.sandbox
        for name in ws_jupyter.__all__:
            if name not in ("load_ipython_extension", "unload_ipython_extension"):
                getattr(ws_jupyter, name)
        for info in pkgutil.walk_packages(ws_jupyter.sandbox.__path__, "ws_jupyter.sandbox."):
            importlib.import_module(info.name)
        import tempfile
        sb = ws_jupyter.LocalSandbox(tempfile.gettempdir())
        sb.kernels.availability()
        assert not [m for m in sys.modules if m == "ws_jupyter.kernels" or m.startswith("ws_jupyter.kernels.")]
        """,
        "-W",
        "error::DeprecationWarning:ws_jupyter",
    )
    assert out.returncode == 0, out.stderr


#: old path -> the new module, and names that must be the very same objects through the old path
MOVED = {
    "ws_jupyter.tools.tokens": ("ws_jupyter.text.tokens", ["count_tokens", "tokenizer_name", "_get"]),
    "ws_jupyter.tools.output": ("ws_jupyter.text.shaping", ["apply_tail", "truncate_head", "truncate_head_tail"]),
    "ws_jupyter.tools.globs": ("ws_jupyter.filesystem.globs", ["compile_globs", "expand_braces", "has_glob"]),
    "ws_jupyter.tools.adapters": ("ws_jupyter.adapters.chat", ["to_openai", "run_tool_call"]),
    "ws_jupyter.tools.adapters_langchain": ("ws_jupyter.adapters.langchain", ["to_langchain"]),
    "ws_jupyter.tools.adapters_openai_agents": ("ws_jupyter.adapters.openai_agents", ["to_openai_agents"]),
    "ws_jupyter.tools.adapters_pydantic_ai": ("ws_jupyter.adapters.pydantic_ai", ["to_pydantic_ai"]),
    "ws_jupyter.tools.adapters_smolagents": ("ws_jupyter.adapters.smolagents", ["to_smolagents"]),
    "ws_jupyter.tools.mcp_server": ("ws_jupyter.adapters.mcp_server", ["build_mcp_server", "serve_mcp"]),
    "ws_jupyter.model_install": ("ws_jupyter.install.model", ["install_model", "model_status", "ModelStatus"]),
    "ws_jupyter.jupyter.kernel_install": ("ws_jupyter.install.kernel", ["install_kernel", "KERNEL_NAME"]),
    # the tools' modules, now in the wings of ws_jupyter.tools
    "ws_jupyter.tools.checkpoint": ("ws_jupyter.tools.files.checkpoint", ["SPEC", "checkpoint"]),
    "ws_jupyter.tools.delete": ("ws_jupyter.tools.files.delete", ["SPEC"]),
    "ws_jupyter.tools.edit_file": ("ws_jupyter.tools.files.edit_file", ["SPEC"]),
    "ws_jupyter.tools.file_stat": ("ws_jupyter.tools.files.file_stat", ["SPEC"]),
    "ws_jupyter.tools.list_files": ("ws_jupyter.tools.files.list_files", ["SPEC"]),
    "ws_jupyter.tools.mkdir": ("ws_jupyter.tools.files.mkdir", ["SPEC"]),
    "ws_jupyter.tools.notebook_edit": ("ws_jupyter.tools.files.notebook_edit", ["SPEC"]),
    "ws_jupyter.tools.notebook_files": ("ws_jupyter.tools.files.notebook_files", ["edit_notebook", "read_notebook"]),
    "ws_jupyter.tools.read_file": ("ws_jupyter.tools.files.read_file", ["SPEC", "read_file"]),
    "ws_jupyter.tools.write_file": ("ws_jupyter.tools.files.write_file", ["SPEC"]),
    "ws_jupyter.tools.execute_command": ("ws_jupyter.tools.sandbox.execute_command", ["SPEC", "format_streams"]),
    "ws_jupyter.tools.kernels": ("ws_jupyter.tools.sandbox.kernels", ["EXECUTE_CODE_SPEC", "format_execution"]),
    "ws_jupyter.tools.processes": ("ws_jupyter.tools.sandbox.processes", ["GET_OUTPUT_SPEC", "KILL_SPEC", "LIST_SPEC"]),
    "ws_jupyter.tools.run_notebook": ("ws_jupyter.tools.sandbox.run_notebook", ["RUN_NOTEBOOK_SPEC"]),
    "ws_jupyter.tools.shell_tail": ("ws_jupyter.tools.sandbox.shell_tail", ["split_tail_pipe"]),
    "ws_jupyter.tools.grep_confine": ("ws_jupyter.tools.grep.confine", ["Confined", "mode", "usable"]),
    "ws_jupyter.tools.grep_notebooks": ("ws_jupyter.tools.grep.notebooks", ["CellMatches", "search_notebook"]),
    "ws_jupyter.tools.regex": ("ws_jupyter.tools.grep.regex", ["GrepPattern", "PatternError", "compile_pattern"]),
    "ws_jupyter.tools.rules_scan": ("ws_jupyter.tools.grep.rules_scan", ["TreeScan", "check_tree", "start_scan"]),
}

_PROBE = """
import importlib, json, sys, warnings
moved = json.loads(sys.argv[1])
out = {}
for old, (new, names) in moved.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    target = importlib.import_module(new)
    out[old] = {
        "warned": [(w.filename, str(w.message)) for w in caught if issubclass(w.category, DeprecationWarning)],
        "same": [n for n in names if getattr(module, n) is getattr(target, n)],
    }
print(json.dumps(out))
"""


def test_old_import_paths_warn_and_give_the_new_names() -> None:
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(MOVED)], capture_output=True, text=True, check=True
    )
    found = json.loads(run.stdout)
    for old, (new, names) in MOVED.items():
        assert found[old]["same"] == names, old
        # one warning, naming both paths, attributed to the importing code (not the import machinery)
        [(where, message)] = found[old]["warned"]
        assert old in message and new in message and where == "<string>", (old, where, message)


def test_an_old_path_is_the_new_module_and_has_no_file() -> None:
    """One table gives every old path (so none can drift from its new home): the old module is
    the new module object; a module whose names went to two places forwards each name."""
    package = Path(__file__).parents[2]
    assert set(_moved.MOVED) == {*MOVED, "ws_jupyter.kernels"}
    for old in _moved.MOVED:
        relative = Path(*old.split("."))
        assert not (package / relative).with_suffix(".py").exists() and not (package / relative).exists(), old
    out = _run(
        """
        import importlib, warnings
        warnings.simplefilter("ignore")
        import ws_jupyter.text.tokens, ws_jupyter.text.ansi, ws_jupyter.text.shaping
        import ws_jupyter.tools.tokens, ws_jupyter.tools.output
        assert ws_jupyter.tools.tokens is ws_jupyter.text.tokens
        from ws_jupyter.tools.output import cut_line, strip_ansi
        assert strip_ansi is ws_jupyter.text.ansi.strip_ansi and cut_line is ws_jupyter.text.shaping.cut_line
        # the names the old module had, no more
        assert ws_jupyter.tools.output.__all__ == [
            "apply_tail", "cut_line", "number_line", "take_lines", "truncate_head", "truncate_head_tail",
            "strip_ansi",
        ], ws_jupyter.tools.output.__all__
        try:
            from ws_jupyter.tools.output import no_such_name
        except ImportError as exc:
            print("ImportError:", exc)
        """
    )
    assert out.returncode == 0, out.stderr
    assert "ImportError: cannot import name 'no_such_name' from 'ws_jupyter.tools.output'" in out.stdout


def test_a_package_that_replaced_a_module_keeps_its_names_without_a_warning() -> None:
    out = _run(
        """
        from ws_jupyter.tools.search import INDEX_SPEC, SEARCH_SPEC, available_modes
        from ws_jupyter.tools.skills import SKILL_READ_SPEC, SKILL_SEARCH_SPEC, SKILL_SPEC
        from ws_jupyter.tools.grep import MAX_MATCHES, SPEC, GrepResult, find_ripgrep, grep, search
        from ws_jupyter.tools.registry import tool_spec
        assert SEARCH_SPEC is tool_spec("workspace_search") and SKILL_SPEC is tool_spec("skill")
        assert SPEC is tool_spec("workspace_grep")
        """,
        "-W",
        "error::DeprecationWarning",
    )
    assert out.returncode == 0, out.stderr


def test_the_reference_lists_every_old_path() -> None:
    page = (Path(__file__).parents[2] / "docs" / "reference" / "index.md").read_text()
    table = page.split("## Deprecated import paths", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].split()[0].strip("`") for line in table.splitlines() if line.startswith("| `")}
    assert rows == set(_moved.MOVED)
    for old, (new, _) in MOVED.items():
        assert f"| `{old}` | `{new}`" in table


def test_ordinary_use_never_imports_a_moved_module() -> None:
    """Every module of the package that is not itself an old path loads without importing one."""
    out = _run(
        f"""
        import importlib, pkgutil, sys
        import ws_jupyter
        old = {sorted(MOVED)!r}
        for info in pkgutil.walk_packages(ws_jupyter.__path__, "ws_jupyter."):
            name = info.name
            if name in old or name.startswith(("ws_jupyter.jupyter", "ws_jupyter.kernels")):
                continue
            importlib.import_module(name)
        print([m for m in old if m in sys.modules])
        """,
        "-W",
        "error::DeprecationWarning:ws_jupyter",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
