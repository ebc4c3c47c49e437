"""The package's metadata as PyPI and pip users see it, checked from the sources (fast; the slow
pip-user test checks the built files): the PyPI description, the extras, the version."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib")  # Python >= 3.11 (the test environment's)


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _pypi_description() -> str:
    """What the build puts into the wheel's METADATA (hatch-fancy-pypi-readme's own renderer)."""
    pytest.importorskip("hatch_fancy_pypi_readme", reason="comes with the dev extras (scripts/setup.sh)")
    done = subprocess.run(
        [sys.executable, "-m", "hatch_fancy_pypi_readme", str(REPO / "pyproject.toml")],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
        timeout=120,
    )
    return done.stdout


def test_pypi_description_is_written_for_pip_users() -> None:
    text = _pypi_description()
    assert text.startswith("# ws-jupyter\n")
    assert "## Install into your own Jupyter" in text
    for command in (
        "pip install ws-jupyter",
        "ws-jupyter install-model",
        "ws-jupyter install-kernel",
        "ws-jupyter doctor",
        "%load_ext ws_jupyter",
    ):
        assert command in text, command
    # nothing that only exists in a clone of the repository, and no link that breaks on PyPI
    for repo_only in ("./scripts/", "scripts/setup.sh", ".venv/bin", "bench/", "tests/"):
        assert repo_only not in text, (
            f"{repo_only!r} is in the PyPI description (above the marker in README.md)"
        )
    links = re.findall(r"\]\(([^)]+)\)", text)
    assert all(link.startswith(("https://", "http://", "#")) for link in links), links
    assert "<!--" not in text


def test_readme_puts_the_install_section_first_then_the_contributors_commands() -> None:
    readme = (REPO / "README.md").read_text()
    headings = re.findall(r"^## (.+)$", readme, re.M)
    assert headings[:2] == ["Install into your own Jupyter", "From a clone of the repository"]
    contributors = readme.split("## From a clone of the repository", 1)[1].split("\n## ", 1)[0]
    assert "./scripts/demo.sh" in contributors and "./scripts/test.sh" in contributors


def test_every_extra_is_documented() -> None:
    extras = _pyproject()["project"]["optional-dependencies"]
    assert {"tokens", "s3", "dev"} <= set(extras)
    install = (REPO / "README.md").read_text().split("<!-- end of the PyPI description -->", 1)[0]
    guide = (REPO / "docs" / "install.md").read_text()
    for name in extras:
        assert f"| `{name}` |" in install, f"extra [{name}] is not in the README's extras table"
        assert f"| `{name}` |" in guide, f"extra [{name}] is not in the extras table of docs/install.md"


def test_version_has_one_source() -> None:
    import ws_jupyter

    project = _pyproject()
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == "ws_jupyter/_version.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]|rc)?\d*", ws_jupyter.__version__)
    # written once, in the module hatch reads; the package face only re-exports it
    from ws_jupyter import _version

    assert ws_jupyter.__version__ is _version.__version__
    assert f'__version__ = "{ws_jupyter.__version__}"' in (REPO / "ws_jupyter/_version.py").read_text()
    assert "__version__ =" not in (REPO / "ws_jupyter/__init__.py").read_text()


def test_license_file_matches_the_declared_license() -> None:
    project = _pyproject()["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License") and "Version 2.0, January 2004" in text
