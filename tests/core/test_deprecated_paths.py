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
    # strip_ansi kept its old home too, now the one implementation in text.ansi
    from ws_jupyter.text.ansi import strip_ansi

    probe = "import warnings; warnings.simplefilter('ignore'); from ws_jupyter.tools.output import strip_ansi; print(strip_ansi.__module__)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == strip_ansi.__module__


def test_the_reference_lists_every_old_path() -> None:
    page = (Path(__file__).parents[2] / "docs" / "reference" / "index.md").read_text()
    table = page.split("## Deprecated import paths", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].split()[0].strip("`") for line in table.splitlines() if line.startswith("| `")}
    assert rows == {*MOVED, "ws_jupyter.kernels"}
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
