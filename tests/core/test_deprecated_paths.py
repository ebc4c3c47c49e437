"""Modules that moved keep their old import path for one release: importing it warns
(``DeprecationWarning``, naming the new path) and gives the new module's names — and the README's
"Deprecated import paths" table lists every one of them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
        "warned": [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)],
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
        assert any(old in m and new in m for m in found[old]["warned"]), (old, found[old]["warned"])
    # strip_ansi kept its old home too, now the one implementation in text.ansi
    from ws_jupyter.text.ansi import strip_ansi

    probe = "import warnings; warnings.simplefilter('ignore'); from ws_jupyter.tools.output import strip_ansi; print(strip_ansi.__module__)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == strip_ansi.__module__


def test_the_readme_lists_every_old_path() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    table = readme.split("## Deprecated import paths", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip().strip("`") for line in table.splitlines() if line.startswith("| `")}
    assert rows == set(MOVED)
    for old, (new, _) in MOVED.items():
        assert f"| `{old}` | `{new}`" in table
