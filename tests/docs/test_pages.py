"""What the documentation promises about the repository, checked against it (fast, no build):
every dependency has its reason on the dependencies page, the README's links lead somewhere, and
the architecture page names the files that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ..helpers import architecture_floors

REPO = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib")  # Python >= 3.11 (the test environment's)


def _requirement_names() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs += extra
    names = {re.match(r"[A-Za-z0-9._-]+", spec).group(0) for spec in specs}  # type: ignore[union-attr]
    return names - {"ws-jupyter"}


def test_every_dependency_has_its_reason_on_the_dependencies_page() -> None:
    page = (REPO / "docs" / "dependencies.md").read_text()
    rows = {line for line in page.splitlines() if line.startswith("|")}
    missing = sorted(
        name
        for name in _requirement_names()
        if not any(re.search(rf"`{re.escape(name)}(\[[\w,]+\])?`", row) for row in rows)
    )
    assert not missing, f"not in a table of docs/dependencies.md with its reason: {missing}"


def _relative_links(markdown: str) -> list[str]:
    links = re.findall(r"\]\(([^)\s]+)\)", markdown)
    return [link for link in links if not link.startswith(("http://", "https://", "#", "mailto:"))]


def test_the_readme_links_lead_to_files_of_the_repository() -> None:
    readme = (REPO / "README.md").read_text()
    links = _relative_links(readme)
    assert "docs/index.md" in links and "ARCHITECTURE.md" in links
    for link in links:
        assert (REPO / link.split("#")[0]).exists(), link
    # the two commands a clone needs, exactly
    assert "./scripts/demo.sh" in readme and "./scripts/test.sh" in readme
    assert "exec ./scripts/test.sh" in (REPO / ".ci" / "run").read_text()


def test_the_readme_is_a_landing_page() -> None:
    readme = (REPO / "README.md").read_text()
    headings = re.findall(r"^## (.+)$", readme, re.M)
    assert headings == [
        "Install into your own Jupyter",
        "From a clone of the repository",
        "A tour",
        "Documentation",
    ]
    assert len(readme.splitlines()) < 150
    tour = re.search(r"## A tour\n.*?```python\n(.*?)```", readme, re.S)
    assert tour and len(tour.group(1).splitlines()) <= 20


def _floors() -> list[list[str]]:
    return architecture_floors(REPO)


def _named_paths() -> list[str]:
    """Every file or folder ARCHITECTURE.md names, as a path from the repository root."""
    rooms = {room.rstrip("/").removesuffix(".py") for floor in _floors() for room in floor}
    paths = set()
    for span in re.findall(r"`([^`\s]+)`", (REPO / "ARCHITECTURE.md").read_text()):
        if "<" in span or not re.fullmatch(r"[\w./-]+", span):
            continue
        if span.startswith(("tests/", "bench/", "docs/", "scripts/", "ws_jupyter/")):
            paths.add(span)
        elif span.split("/")[0].removesuffix(".py") in rooms and ("/" in span or span.endswith(".py")):
            paths.add("ws_jupyter/" + span)
    return sorted(paths)


def test_the_floors_table_reads_from_the_ground_up() -> None:
    floors = _floors()
    assert len(floors) >= 8
    assert "errors.py" in floors[0] and "filesystem/" in floors[1] and "jupyter/" in floors[-1]
    assert any("tools/" in floor for floor in floors)


def test_the_architecture_page_places_every_room_and_names_only_real_paths() -> None:
    placed = {"ws_jupyter/" + room for floor in _floors() for room in floor}
    present = {
        f"ws_jupyter/{p.name}" + ("/" if p.is_dir() else "")
        for p in (REPO / "ws_jupyter").iterdir()
        if p.name != "__pycache__" and p.name != "__init__.py" and (p.is_dir() or p.suffix == ".py")
    }
    assert present <= placed, f"rooms ARCHITECTURE.md does not place on a floor: {sorted(present - placed)}"
    missing = [path for path in _named_paths() if not (REPO / path).exists()]
    assert not missing, f"paths ARCHITECTURE.md names that do not exist: {missing}"
