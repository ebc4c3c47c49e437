"""The ``ws-jupyter`` console script's own subcommands are written in ``cli.py``: ``mcp`` needs no
entry point (the ``ws_jupyter.commands`` group is for other packages)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ws_jupyter import cli

REPO = Path(__file__).parents[2]
tomllib = pytest.importorskip("tomllib")  # Python >= 3.11 (the test environment's)


def test_mcp_is_built_in() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert "ws_jupyter.commands" not in project.get("entry-points", {})
    assert cli._REGISTRY["mcp"].run.__module__ == "ws_jupyter.cli"  # registered when cli.py loads
    assert set(cli.registered_commands()) >= {"doctor", "install-kernel", "install-model", "mcp", "uninstall-kernel"}


def test_mcp_refuses_a_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["mcp", "--dir", str(tmp_path / "nowhere")]) == 2
    assert "ws-jupyter mcp: not a directory:" in capsys.readouterr().err


def test_cli_does_not_load_the_mcp_server_or_the_jupyter_layer() -> None:
    """``ws-jupyter --help`` lists every subcommand without importing what they run."""
    code = (
        "import sys, contextlib, io\n"
        "from ws_jupyter.cli import build_parser\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    build_parser().print_help()\n"
        "assert 'mcp' in out.getvalue() and 'install-kernel' in out.getvalue()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('ws_jupyter.adapters', 'ws_jupyter.jupyter', 'mcp'))))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"
