"""Attack: plant code in the workspace that the notebook's own Python then runs on the host.

Two routes: a ``.venv`` inside the workspace (the sandbox's read-write workspace bind covered
the read-only bind of the environment, so a command could drop a ``.pth`` file that every
later Python start executes), and the kernel's working directory on ``sys.path`` (an
agent-written ``pathspec.py`` was imported by the package's own lazy import). Both are closed;
the running environment inside the workspace is also reported as a warning.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ..sandbox.conftest import BWRAP

REPO = Path(__file__).resolve().parents[2]


def test_planted_dependency_modules_are_not_imported(workdir):
    marker = workdir.parent / "PLANTED-RAN"
    for name in ("pathspec", "yaml", "psutil"):
        (workdir / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    (workdir / ".gitignore").write_text("*.log\n")
    (workdir / "a.txt").write_text("a\n")
    code = """
        import sys
        assert sys.path[0] == ""  # like a kernel: the working directory comes first
        from ws_jupyter import LocalFilesystem, LocalSandbox
        fs = LocalFilesystem(".")
        print(sorted(e.name for e in fs.readdir(".")))
        from ws_jupyter.filesystem.walk import walk
        print(sum(1 for _ in walk(fs)))
        import ws_jupyter.skills.parsing, pathspec, yaml, psutil
        print(pathspec.__file__, yaml.__file__)
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), f"the kernel ran planted modules: {marker.read_text()}"
    assert str(workdir) not in proc.stdout.splitlines()[-1]


#: Standard-library modules the tools import lazily, and a library's optional dependency.
LAZY_NAMES = ("csv", "zipfile", "queue", "platform", "sqlite3", "uuid", "resource", "orjson")


def test_planted_standard_library_modules_are_not_imported_by_the_tools(workdir):
    # The agent writes the modules through the tools themselves; the tools' next calls import
    # those names lazily (read_file: csv/zipfile, grep's child: resource, search: platform/sqlite3).
    marker = workdir.parent / "PLANTED-RAN"
    code = f"""
        import sys
        assert sys.path[0] == ""
        from ws_jupyter import LocalFilesystem, Workspace
        ws = Workspace(filesystem=LocalFilesystem("."))
        tools = {{t.name: t for t in ws.tools()}}
        for name in {LAZY_NAMES!r}:
            body = f"open({str(marker)!r}, 'a').write({{name!r}} + ' ')"
            tools["workspace_write_file"].run({{"path": name + ".py", "content": body}})
        (open("mine.py", "w").write("VALUE = 42"))
        tools["workspace_write_file"].run({{"path": "a.txt", "content": "hello"}})
        for name, args in (("workspace_read_file", {{"path": "a.txt"}}),
                           ("workspace_grep", {{"pattern": "(?=h)ello"}}),
                           ("workspace_search", {{"query": "hello"}})):
            print(name, str(tools[name].run(args))[:60].replace("\\n", " "))
        import mine  # the user's own modules next to the notebook still import
        print(mine.VALUE)
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=workdir, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), f"the tools ran planted modules: {marker.read_text()}"
    assert "Error" not in proc.stdout, proc.stdout
    assert proc.stdout.splitlines()[-1] == "42"


def test_a_module_found_nowhere_is_none_for_find_spec_probes(workdir):
    # IPython probes importlib.util.find_spec("argcomplete") at import: when the package's code
    # imports IPython (the magics) that probe must say None, not raise; a copy that only the
    # working directory has is still refused.
    (workdir / "argcomplete_planted.py").write_text("raise SystemExit('planted module ran')\n")
    code = """
        import importlib.util, sys
        assert sys.path[0] == ""
        import ws_jupyter.jupyter.magics  # imports IPython, which probes for argcomplete
        from ws_jupyter import _trusted_imports
        _trusted_imports.DEPENDENCIES |= {"no_such_module_anywhere", "argcomplete_planted"}
        print(_trusted_imports._finder.find_spec("no_such_module_anywhere", None))
        try:
            _trusted_imports._finder.find_spec("argcomplete_planted", None)
        except ModuleNotFoundError:
            print("refused")
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=workdir, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["None", "refused"]


@pytest.mark.skipif(not BWRAP.available, reason=BWRAP.message)
def test_a_venv_inside_the_workspace_is_read_only_in_the_sandbox(workdir):
    venv = workdir / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site_packages = next(venv.glob("lib/python*/site-packages"))
    code = """
        import json, sys
        from ws_jupyter import LocalSandbox
        sb = LocalSandbox(working_directory=sys.argv[1], isolation="bwrap")
        try:
            r = sb.execute_command(f"echo 'import os' > {sys.argv[2]}/evil.pth; echo ok > made.txt")
            print(json.dumps([r.stderr, sb.get_info().metadata.get("warning", ""), sys.prefix]))
        finally:
            sb.destroy()
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), *site.getsitepackages()]))
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-c", textwrap.dedent(code), str(workdir), str(site_packages)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    stderr, warning, prefix = json.loads(proc.stdout.strip().splitlines()[-1])
    assert prefix == str(venv)
    assert not (site_packages / "evil.pth").exists(), "a .pth file was planted in the running environment"
    assert "Read-only file system" in stderr
    assert (workdir / "made.txt").read_text() == "ok\n"  # the rest of the workspace stays writable
    assert "contains the notebook's Python environment" in warning and str(venv) in warning


def test_no_warning_when_the_environment_is_elsewhere(workdir):
    from ws_jupyter import LocalSandbox

    sb = LocalSandbox(working_directory=str(workdir))
    try:
        assert sb.environment_warning() is None
        assert "warning" not in sb.get_info().metadata
    finally:
        sb.destroy()


def test_the_info_view_shows_the_warning():
    from ws_jupyter import LocalSandbox, Workspace
    from ws_jupyter.jupyter.views.workspace import info_rows

    # A workspace over the directory that holds this very environment (nothing is written).
    ws = Workspace(sandbox=LocalSandbox(working_directory=os.path.dirname(sys.prefix)))
    try:
        rows = dict(info_rows(ws.get_info()))
        assert "contains the notebook's Python environment" in rows["warning"]
    finally:
        ws.destroy()
