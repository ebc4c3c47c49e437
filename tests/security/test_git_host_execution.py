"""Attack: make git on the host run code by changing repository config from inside the sandbox.

A sandboxed command set ``core.fsmonitor`` in the workspace's ``.git/config``; the next
``git status`` on the host (JupyterLab's git panel runs it on its own) ran the command as the
notebook user. Host-trusted files (``ws_jupyter.filesystem.host_trusted``) are now read-only to
bubblewrap commands, a workspace root cannot become a repository, submodule folders that are
not checked out cannot gain a ``.git``, and the agent's file tools ask before writing them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace

from ..sandbox.conftest import requires_bwrap


def git(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture
def host_env(tmp_path: Path) -> dict[str, str]:
    """The host's git: no system or user config of this machine, a committer identity."""
    home = tmp_path / "host-home"
    home.mkdir()
    return {
        **os.environ,
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "n",
        "GIT_AUTHOR_EMAIL": "n@example.com",
        "GIT_COMMITTER_NAME": "n",
        "GIT_COMMITTER_EMAIL": "n@example.com",
    }


def make_repository(root: Path, env: dict[str, str]) -> None:
    """A repository with a commit, a nested repository, and a submodule that is not checked out."""
    library = root.parent / "library"
    library.mkdir()
    git(library, "init", "-q", env=env)
    git(library, "commit", "-q", "--allow-empty", "-m", "lib", env=env)
    origin = root.parent / "origin"
    origin.mkdir()
    git(origin, "init", "-q", env=env)
    (origin / "a.txt").write_text("a\n")
    (origin / ".gitattributes").write_text("*.txt text\n")
    git(origin, "add", "-A", env=env)
    git(origin, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib", env=env)
    git(origin, "commit", "-q", "-m", "first", env=env)
    cloned = git(root.parent, "clone", "-q", str(origin), str(root), env=env)  # lib/ stays empty
    assert cloned.returncode == 0, cloned.stderr
    nested = root / "nested"
    nested.mkdir()
    git(nested, "init", "-q", env=env)
    assert (root / "lib").is_dir() and not os.listdir(root / "lib")


@requires_bwrap
def test_sandboxed_commands_cannot_make_host_git_run_code(tmp_path, host_env):
    root = Path(os.path.realpath(tmp_path)) / "ws"
    make_repository(root, host_env)
    markers = tmp_path / "markers"  # outside the workspace: invisible to the sandbox
    markers.mkdir()

    def payload(name: str) -> str:
        return f"touch {markers / name}; false"

    attacks = {
        "fsmonitor": f"git config core.fsmonitor '{payload('fsmonitor')}'",
        "hooks-path": f"mkdir -p h && printf '#!/bin/sh\\n{payload('hooks-path')}\\n' > h/post-index-change "
        '&& chmod +x h/post-index-change && git config core.hooksPath "$PWD/h"',
        "hook": f"printf '#!/bin/sh\\n{payload('hook')}\\n' > .git/hooks/post-index-change && "
        "chmod +x .git/hooks/post-index-change",
        "filter": f"echo '* filter=evil' > .gitattributes && git config filter.evil.clean '{payload('filter')}'",
        "info-attributes": f"echo '* filter=evil' > .git/info/attributes && "
        f"git config filter.evil.clean '{payload('info-attributes')}'",
        "nested": f"git -C nested config core.fsmonitor '{payload('nested')}'",
        "submodule": f"git init -q lib && git -C lib config core.fsmonitor '{payload('submodule')}'",
        # Allowed (a new repository in a new folder): reported, and not used by git at the root.
        "new-repository": f"git init -q newrepo && git -C newrepo config core.fsmonitor '{payload('new')}'",
        # Run after the host's git: they would take the repositories away from it.
        "gitdir-file": "rm -rf nested/.git; echo 'gitdir: ../evil' > nested/.git",
        "replace": "mv .git old-git",
    }
    sb = LocalSandbox(working_directory=str(root), isolation="bwrap")
    try:
        late = ("gitdir-file", "replace")
        results = {name: sb.execute_command(command) for name, command in attacks.items() if name not in late}
        # The host's git, the way JupyterLab's git panel runs it, with the sandbox still alive.
        (root / "a.txt").write_text("changed\n")  # so that status and add run the clean filter
        for cwd, args in (
            (root, ("status", "--porcelain=v2")),
            (root, ("add", "a.txt")),
            (root, ("diff", "--cached", "--stat")),
            (root / "nested", ("status",)),
        ):
            git(cwd, *args, env=host_env)
        ran = sorted(os.listdir(markers))
        assert ran == [], f"git on the host ran sandbox code: {ran}"
        results.update({name: sb.execute_command(attacks[name]) for name in late})
        assert git(root, "status", env=host_env).returncode == 0

        for name in attacks:
            if name != "new-repository":
                assert not results[name].success, (name, results[name])
                assert "Read-only file system" in results[name].stderr or "busy" in results[name].stderr, (
                    name,
                    results[name].stderr,
                )
        # Commands can still read the repository.
        inside = sb.execute_command("git status --short && git log --oneline")
        assert inside.success and "first" in inside.stdout, inside

        info = sb.get_info().metadata
        trusted = info["host_trusted"]
        assert {".git/", ".gitattributes", ".gitmodules", "nested/.git/"} <= set(trusted["read_only"])
        assert trusted["writable"] == ["newrepo/.git/"]
        assert "newrepo/.git/" in info["warning"]
        assert "core.fsmonitor" not in (root / ".git" / "config").read_text()
    finally:
        sb.destroy()
    assert not (root / "lib" / ".git").exists()


@requires_bwrap
def test_a_workspace_that_is_not_a_repository_cannot_become_one(tmp_path, host_env):
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    marker = tmp_path / "ran"
    sb = LocalSandbox(working_directory=str(root), isolation="bwrap")
    try:
        r = sb.execute_command(f"git init -q . && git config core.fsmonitor 'touch {marker}; false'")
        assert not r.success and "Read-only file system" in r.stderr, r
        r = sb.execute_command("rmdir .git || rm -rf .git; echo 'gitdir: /elsewhere' > .git")
        assert not r.success
        assert (root / ".git").is_dir() and not os.listdir(root / ".git")  # the placeholder, on the host
        done = git(root, "status", env={**host_env, "GIT_CEILING_DIRECTORIES": str(root.parent)})
        assert done.returncode != 0 and "not a git repository" in done.stderr  # git ignores it
        assert not marker.exists()
        assert "cannot become a git repository" in sb.get_instructions()
    finally:
        sb.destroy()
    assert (root / ".git").is_dir() and not os.listdir(root / ".git")  # stays, see BwrapPlan


@requires_bwrap
def test_git_made_writable_by_the_configuration_lets_commands_commit(tmp_path, host_env):
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    git(root, "init", "-q", env=host_env)
    sb = LocalSandbox(
        working_directory=str(root), isolation="bwrap", native_sandbox={"read_write_paths": [".git"]}
    )
    try:
        r = sb.execute_command(
            "echo x > f && git add f && git -c user.name=a -c user.email=a@example.com commit -qm agent"
        )
        assert r.success, r
        assert sb.get_info().metadata["host_trusted"]["writable"] == [".git/"]
    finally:
        sb.destroy()
    assert "agent" in git(root, "log", "--oneline", env=host_env).stdout


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("workspace_write_file", {"path": ".git/config", "content": "[core]\n\tfsmonitor = touch ran\n"}),
        ("workspace_write_file", {"path": "sub/.git", "content": "gitdir: ../elsewhere\n"}),
        ("workspace_write_file", {"path": "link/hooks/post-checkout", "content": "touch ran"}),
        ("workspace_edit_file", {"path": ".git/config", "old_string": "bare", "new_string": "fsmonitor"}),
        ("workspace_write_file", {"path": ".vscode/tasks.json", "content": "{}"}),
        ("workspace_write_file", {"path": ".envrc", "content": "touch ran"}),
        ("workspace_write_file", {"path": ".venv/lib/evil.pth", "content": "import os"}),
        ("workspace_write_file", {"path": "bare/HEAD", "content": "ref: refs/heads/main\n"}),
        ("workspace_delete", {"path": ".git/config"}),
    ],
)
def test_the_file_tools_ask_before_changing_host_trusted_files(workdir, host_env, tool, args):
    git(workdir, "init", "-q", env=host_env)
    (workdir / ".venv" / "lib").mkdir(parents=True)
    (workdir / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    os.symlink(".git", workdir / "link")
    before = (workdir / ".git" / "config").read_text()
    asked: list[str] = []

    def approver(name, arguments, ctx):
        asked.append(name)
        return False

    ws = Workspace(filesystem=LocalFilesystem(str(workdir)))
    tools = {t.name: t for t in ws.tools()}
    tools["workspace_read_file"].run({"path": args["path"]})
    out = str(tools[tool].run(args))
    assert "requires approval" in out and "is host-trusted" in out, out
    ws = Workspace(filesystem=LocalFilesystem(str(workdir)), tools={"approver": approver})
    tools = {t.name: t for t in ws.tools()}
    assert str(tools[tool].run(args)) == "Tool call refused by user."
    assert asked == [tool]
    assert (workdir / ".git" / "config").read_text() == before
    assert not (workdir / ".envrc").exists() and not (workdir / ".vscode").exists()
    # Ordinary files need no approval; the explicit setting for a tool is obeyed.
    assert tools["workspace_write_file"].run({"path": "notes/a.md", "content": "a"}).startswith("Wrote")
    ws = Workspace(
        filesystem=LocalFilesystem(str(workdir)), tools={"workspace_write_file": {"require_approval": False}}
    )
    tools = {t.name: t for t in ws.tools()}
    assert tools["workspace_write_file"].run({"path": ".envrc", "content": "x"}).startswith("Wrote")


@requires_bwrap
def test_info_view_and_doctor_list_host_trusted_files(tmp_path, host_env):
    from ws_jupyter.doctor import check_environment
    from ws_jupyter.jupyter.views.workspace import info_rows

    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    git(root, "init", "-q", env=host_env)
    (root / ".envrc").write_text("export A=1\n")
    ws = Workspace(
        filesystem=LocalFilesystem(str(root)),
        sandbox=LocalSandbox(working_directory=str(root), isolation="bwrap"),
    )
    try:
        ws.sandbox.start()
        rows = dict(info_rows(ws.get_info()))
        assert rows["host-trusted files"].startswith(".envrc, .git/: read-only to the sandbox"), rows
        assert "warning" not in rows
        ws.sandbox.execute_command("mkdir sub && cd sub && git init -q")
        rows = dict(info_rows(ws.get_info()))
        assert "sub/.git/: commands can change them" in rows["host-trusted files"]
        assert "sub/.git/" in rows["warning"]
    finally:
        ws.destroy()
    row = check_environment(isolation="bwrap", workspace=str(root)).get("host-trusted files")
    assert row.found.startswith(".envrc, .git/, sub/.git/: read-only to the sandbox"), row
    row = check_environment(isolation="none", workspace=str(root)).get("host-trusted files")
    assert row.status == "warning" and "commands without isolation can change them" in row.found


@requires_bwrap
def test_kernels_see_host_trusted_files_read_only(tmp_path, host_env):
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    git(root, "init", "-q", env=host_env)
    sb = LocalSandbox(working_directory=str(root), isolation="bwrap")
    try:
        if not sb.kernels.available:
            pytest.skip(sb.kernels.availability()[1])
        r = sb.kernels.execute("open('.git/config', 'a').write('[core]\\n\\tfsmonitor = touch ran\\n')")
        assert r.error is not None and "Read-only file system" in r.error.evalue, r
        assert sb.kernels.execute("open('notes.txt', 'w').write('ok')").error is None
    finally:
        sb.destroy()
    assert "fsmonitor" not in (root / ".git" / "config").read_text()
    assert (root / "notes.txt").read_text() == "ok"
