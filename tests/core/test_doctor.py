"""``ws-jupyter doctor``: the table of what this environment has, what is missing costs and fixes,
and the exit status. Components go missing the way they do on a user's machine: a PATH without
bubblewrap, a HOME without a model cache, a kernelspec pointing to a deleted Python."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.search.conftest import chroma_server  # noqa: F401 - the real Chroma server fixture
from ws_jupyter.doctor import Check, DoctorConfig, DoctorReport, check_environment, ws_command
from ws_jupyter.install.kernel import install_kernel, write_kernel_spec
from ws_jupyter.sandbox.local import LocalSandbox
from ws_jupyter.search import embedder as emb_mod

BIN = Path(sys.executable).parent


@pytest.fixture
def jupyter_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Jupyter sees only kernelspecs under ``tmp_path`` (none of the machine's or the user's)."""
    data = tmp_path / "jupyter-data"
    data.mkdir()
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "prefix" / "share" / "jupyter"))
    import site

    import jupyter_core.paths

    # hide the environment's, the system's and the user site's kernels (this venv may hold one)
    monkeypatch.setattr(jupyter_core.paths, "ENV_JUPYTER_PATH", [str(tmp_path / "env")])
    monkeypatch.setattr(jupyter_core.paths, "SYSTEM_JUPYTER_PATH", [str(tmp_path / "system")])
    monkeypatch.setattr(site, "ENABLE_USER_SITE", False)
    return tmp_path


def _doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ws_jupyter", "doctor", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _path_with(tmp_path: Path, *tools: str) -> str:
    """A PATH holding only ``tools`` (symlinks to the real ones), so bwrap is not on it."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for tool in tools:
        real = next(
            (Path(d) / tool for d in os.environ["PATH"].split(os.pathsep) if (Path(d) / tool).exists()), None
        )
        if real is not None:
            (bindir / tool).symlink_to(real)
    return str(bindir)


def test_missing_bubblewrap_fails_when_isolation_is_required(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=_path_with(tmp_path, "apt-get"))
    needed = _doctor("--isolation", "bwrap", env=env)
    assert needed.returncode == 1, needed.stdout + needed.stderr
    out = needed.stdout
    row = next(line for line in out.splitlines() if " isolation " in line)
    assert row.split()[0] == "MISSING" and "bubblewrap (bwrap) not found" in row
    assert "costs: commands and processes run on the host" in out
    has_apt = (Path(tmp_path) / "bin" / "apt-get").exists()
    assert (
        "fix:   " + ("apt-get install -y bubblewrap" if has_apt else "install bubblewrap")
    ) in out.replace("sudo ", "")
    assert out.rstrip().splitlines()[-1].startswith("Missing what this configuration needs: isolation.")

    # the same environment with isolation optional (the default "auto"): reported, exit status 0
    optional = _doctor("--json", env=env)
    assert optional.returncode == 0, optional.stdout + optional.stderr
    report = json.loads(optional.stdout)
    isolation = next(c for c in report["checks"] if c["name"] == "isolation")
    assert isolation["status"] == "missing" and not isolation["required"] and not isolation["failed"]
    assert report["ok"] is True and "Optional, missing: isolation" in report["summary"]


def test_missing_model_fails_when_vector_search_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no Chroma model cache
    monkeypatch.setattr(emb_mod, "packaged_model_dir", lambda: None)  # no weights package
    report = check_environment(vector=True)
    model = report.get("default model")
    assert model.status == "missing" and model.failed
    assert model.fix == ws_command("install-model") and model.fix.endswith("install-model")
    assert "no vector or hybrid search" in model.cost
    assert report.exit_code == 1 and "default model" in report.summary()
    assert "MISSING   default model" in report.text()

    relaxed = check_environment(vector=False)
    assert relaxed.get("default model").status == "missing" and not relaxed.get("default model").failed


def test_present_model_is_reported_with_its_origin() -> None:
    if emb_mod.packaged_model_dir() is None and emb_mod.chroma_model_dir() is None:
        pytest.skip("no default model installed")
    check = check_environment(vector=True).get("default model")
    assert check.status == "ok" and check.required and "all-MiniLM-L6-v2" in check.found


def test_isolation_row_is_the_sandbox_probe() -> None:
    detection = LocalSandbox.detect_isolation()
    check = check_environment().get("isolation")
    assert check.found == detection.message
    assert check.status == ("ok" if detection.available else "missing")


def test_root_row_says_what_the_sandbox_does(tmp_path: Path) -> None:
    check = check_environment().get("user")
    if os.geteuid() != 0:
        assert check.status == "ok" and check.found.startswith("not root")
        return
    assert check.found.startswith("running as root")
    if LocalSandbox.detect_isolation().available:
        # the row reports what a real sandboxed command sees
        with LocalSandbox(working_directory=str(tmp_path), isolation="bwrap") as sandbox:
            uid = sandbox.execute_command("id -u").stdout.strip()
        assert f"commands run as uid {uid}" in check.found
        assert check.status == ("warning" if uid == "0" or "writable" in check.found else "ok")


def test_forced_python_grep_engine_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    env = dict(os.environ, WS_JUPYTER_GREP_ENGINE="python")
    done = _doctor("--strict", "--json", env=env)
    report = json.loads(done.stdout)
    rg = next(c for c in report["checks"] if c["name"] == "ripgrep")
    assert rg["status"] == "missing" and rg["fix"] == "unset WS_JUPYTER_GREP_ENGINE" and rg["failed"]
    assert done.returncode == 1  # --strict: every missing piece counts


def test_kernelspec_states(jupyter_dirs: Path) -> None:
    missing = check_environment().get("kernelspec")
    assert missing.status == "missing" and "install-kernel" in missing.fix and not missing.failed

    install_kernel(prefix=str(jupyter_dirs / "prefix"))
    ok = check_environment().get("kernelspec")
    assert ok.status == "ok" and sys.executable in ok.found

    spec_dir = jupyter_dirs / "prefix" / "share" / "jupyter" / "kernels" / "ws-jupyter"
    write_kernel_spec(spec_dir, python=str(jupyter_dirs / "deleted-venv" / "bin" / "python"))
    broken = check_environment().get("kernelspec")
    assert (
        broken.status == "missing"
        and "does not exist" in broken.found
        and broken.cost == "the kernel cannot start"
    )

    write_kernel_spec(spec_dir, python="python")  # the kernelspec shipped in the wheel
    shipped = check_environment().get("kernelspec")
    assert shipped.status == "ok" and "the Jupyter server's Python" in shipped.found


@pytest.mark.slow
def test_chroma_server_is_probed_when_configured(chroma_server: tuple[str, int]) -> None:  # noqa: F811
    host, port = chroma_server
    assert check_environment().checks and all(c.name != "chroma server" for c in check_environment().checks)
    ok = check_environment(chroma=f"{host}:{port}").get("chroma server")
    assert ok.status == "ok" and ok.required and f"http://{host}:{port} answers" in ok.found

    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    report = check_environment(chroma=f"127.0.0.1:{dead}")
    down = report.get("chroma server")
    assert down.failed and f"chroma run --host 127.0.0.1 --port {dead}" in down.fix
    assert report.exit_code == 1


def test_config_from_a_workspace(tmp_path: Path) -> None:
    from ws_jupyter import ChromaVectorStore, LocalFilesystem, Workspace

    ws = Workspace(
        filesystem=LocalFilesystem(str(tmp_path)),
        sandbox=LocalSandbox(working_directory=str(tmp_path), isolation="none"),
        embedder="default",
        vector_store=ChromaVectorStore(host="127.0.0.1", port=8123),
    )
    config = DoctorConfig.from_workspace(ws)
    assert config == DoctorConfig(
        isolation="none", network="full", vector=True, chroma="http://127.0.0.1:8123", workspace=str(tmp_path)
    )
    assert DoctorConfig.from_workspace(Workspace(filesystem=LocalFilesystem(str(tmp_path)))).vector is False


def test_a_check_that_breaks_becomes_a_warning_row(monkeypatch: pytest.MonkeyPatch) -> None:
    from ws_jupyter import doctor

    def broken(config: DoctorConfig) -> Check:
        raise RuntimeError("boom")

    monkeypatch.setattr(doctor, "CHECKS", (doctor._python, broken))
    report = check_environment()
    assert isinstance(report, DoctorReport) and report.exit_code == 0
    assert report.checks[1] == Check("broken", "warning", "the check failed: RuntimeError: boom")


def test_a_probe_that_raises_is_reported_with_its_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox's probe raises when libseccomp is missing (the filter cannot be built)."""
    from ws_jupyter.errors import IsolationUnavailableError

    def no_libseccomp(refresh: bool = False) -> Any:
        raise IsolationUnavailableError("bwrap", "the seccomp filter needs libseccomp (libseccomp.so.2 not found)")

    monkeypatch.setattr(LocalSandbox, "detect_isolation", staticmethod(no_libseccomp))
    report = check_environment(isolation="bwrap")
    check = report.get("isolation")
    assert check.failed and "libseccomp" in check.found
    if sys.platform.startswith("linux") and os.path.exists("/usr/bin/bwrap"):
        assert "libseccomp2" in check.fix
    assert report.exit_code == 1


def test_the_network_check_probes_the_allow_list_proxy() -> None:
    from ws_jupyter.sandbox.isolation import probe_backend

    report = check_environment(isolation="auto", network="allow")
    check = report.get("sandbox network")
    assert check.required
    if not probe_backend("bwrap").available:
        assert check.failed and "allow-lists need bubblewrap" in check.found
        return
    assert check.status == "ok", check
    assert check.found.startswith("allow-lists work (a probe command was refused by the proxy, as listed)")
    assert not check_environment(network="none").get("sandbox network").required
