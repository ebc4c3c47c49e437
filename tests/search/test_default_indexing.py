"""Indexing by default: a workspace over a directory searches its files with no index call
(gitignore-aware; hidden, binary, .ws/ and notebook outputs left out), through Python, the agent
tools and the MCP server; workspace_index indexes a path from disk; the search output says when
the index is empty or still being built."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import nbformat
import pytest

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.search.embedder import default_embedder_available

from ..helpers import wait_for, write
from ..tools.conftest import box


def _project(root: Path) -> None:
    write(root, "README.md", "# Shop\n\nThe basket service computes totals.\n")
    write(root, "src/shop/basket.py", "def checkout(basket):\n    return sum(i.price for i in basket)\n")
    write(root, ".gitignore", "build/\n")
    write(root, "build/out.txt", "checkout artefact\n")
    write(root, ".env", "SECRET_TOKEN=checkout\n")
    write(root, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00checkout")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Analysis\nWe study the flamingo population."),
        nbformat.v4.new_code_cell("count = load('birds.csv')\nprint(count)"),
    ]
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="pelicanoutput 42\n")]
    write(root, "analysis.ipynb", nbformat.writes(nb))


def _sources(hits) -> set[str]:
    return {h.source for h in hits}


def test_from_directory_searches_files_without_an_index_call(workdir):
    _project(workdir)
    ws = Workspace.from_directory(workdir)
    try:
        ws.init()
        assert ws.auto_index_paths == (".",)
        assert _sources(ws.search("checkout", mode="bm25", top_k=20)) == {"src/shop/basket.py"}
        assert _sources(ws.search("basket totals", mode="bm25")) >= {"README.md"}
        # the default mode is hybrid when the default model is installed (setup installs it)
        assert ws.can_hybrid == default_embedder_available()
        hits = ws.search("basket service")  # default mode: works while vectors are computed
        assert "README.md" in _sources(hits)
        assert ws.wait_for_index(300)
        status = ws.index_status()
        assert status.ready and status.documents == 4 and status.coverage == 1.0  # 2 notebook cells
    finally:
        ws.destroy()
    ignore = workdir / ".ws" / ".gitignore"
    assert ignore.read_text().splitlines()[-1] == "*"


def test_notebooks_are_indexed_by_cell_without_outputs(workdir):
    _project(workdir)
    ws = Workspace(id="nbx", filesystem=LocalFilesystem(workdir))
    try:
        ws.init()
        [hit] = ws.search("flamingo population", mode="bm25")
        assert hit.source == "analysis.ipynb"
        assert hit.metadata["cell"] == 0 and hit.metadata["cell_type"] == "markdown" and hit.metadata["cell_id"]
        assert hit.line_range == (2, 2)  # lines count within the cell
        assert ws.search("pelicanoutput", mode="bm25") == []  # outputs are not indexed
        assert ws.search("nbformat metadata kernelspec", mode="bm25") == []  # nor the JSON
        out = box(ws).run("workspace_search", query="flamingo")
        assert out.startswith("analysis.ipynb [cell 0]:2-2\n1→# Analysis\n2→We study the flamingo population.")
    finally:
        ws.destroy()


@pytest.mark.skipif(not os.path.exists("/usr/bin/git"), reason="git is not installed")
def test_the_index_stays_out_of_git_status(workdir):
    subprocess.run(["git", "init", "-q", str(workdir)], check=True)
    write(workdir, "notes.md", "some notes\n")
    ws = Workspace(id="gitws", filesystem=LocalFilesystem(workdir))
    ws.init()
    ws.destroy()
    assert (workdir / ".ws" / "index").is_dir()
    status = subprocess.run(["git", "-C", str(workdir), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout
    assert status.splitlines() == ["?? notes.md"]


def test_workspace_index_tool_indexes_a_path_from_disk(workdir):
    _project(workdir)
    ws = Workspace(id="tooli", filesystem=LocalFilesystem(workdir), auto_index_paths=())
    ws.init()
    try:
        tools = box(ws)
        empty = tools.run("workspace_search", query="checkout")
        assert empty.startswith("0 results (bm25 search) — index is empty: no files are set to be indexed")
        assert 'workspace_index {"path": "."}' in empty
        out = tools.run("workspace_index", path="src")
        assert out == "Indexed src from disk: 1 file indexed (1 chunks), 0 unchanged"
        found = tools.run("workspace_search", query="checkout basket")
        assert found.startswith("src/shop/basket.py:1-2\n")
        again = tools.run("workspace_index", path="src/shop/basket.py")
        assert again == "Indexed src/shop/basket.py from disk: 0 files indexed (0 chunks), 1 unchanged"
        missing = tools.run("workspace_index", path="nope/none")
        assert missing.startswith("Error: No file or folder 'nope/none'")
        assert tools.run("workspace_index", path="../outside").startswith("Error: Invalid path")
        out = tools.run("workspace_index", path=".")
        assert out == ("Indexed . from disk: 2 files indexed (3 chunks), 1 unchanged, "
                       "1 skipped (binary, too large or unreadable)")  # README, notebook; logo.png
    finally:
        ws.destroy()


class _GatedFilesystem(LocalFilesystem):
    """A LocalFilesystem whose reads of files under docs/ wait for ``gate``: holds a pass mid-way,
    so the test sees the index while it is being built."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.gate = threading.Event()

    def _wait(self, path) -> None:  # type: ignore[no-untyped-def]
        if str(path).startswith("docs/"):
            self.gate.wait(60)

    def read_file(self, path, *args, **kwargs):  # type: ignore[no-untyped-def]
        self._wait(path)
        return super().read_file(path, *args, **kwargs)

    def open_read(self, path, *args, **kwargs):  # type: ignore[no-untyped-def]
        self._wait(path)
        return super().open_read(path, *args, **kwargs)


def test_search_output_says_the_index_is_being_built(workdir):
    for i in range(6):
        write(workdir, f"docs/p{i}.md", f"page {i} about gardening\n")
    fs = _GatedFilesystem(workdir)
    ws = Workspace(id="gated", filesystem=fs, background_indexing=True)
    try:
        ws.init()  # returns at once: the pass waits on the gate
        assert wait_for(lambda: ws.index_status().files_total == 6, timeout=30)
        out = box(ws).run("workspace_search", query="gardening")
        assert out == "0 results (bm25 search) — indexing 0 of 6 files; results may be incomplete"
        fs.gate.set()
        assert ws.wait_for_index(60)
        out = box(ws).run("workspace_search", query="gardening")
        assert out.endswith("---\n5 results (bm25 search)")
    finally:
        fs.gate.set()
        ws.destroy()


CLI = Path(sys.executable).with_name("ws-jupyter")


@pytest.mark.slow
def test_mcp_server_searches_the_directory_without_index_options(workdir):
    from mcp import Client, StdioServerParameters

    _project(workdir)
    params = StdioServerParameters(
        command=str(CLI),
        args=["mcp", "--dir", str(workdir), "--isolation", "none", "--no-approval", "--no-vector"],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workdir.parent)},
        cwd=str(workdir),
    )

    async def session() -> list[str]:
        seen = []
        with anyio.fail_after(120):
            async with Client(params) as client:
                for _ in range(200):  # the first pass runs while the server already answers
                    result = await client.call_tool("workspace_search", {"query": "basket checkout"})
                    text = "".join(c.text for c in result.content if c.type == "text")
                    seen.append(text)
                    if "results may be incomplete" not in text and "index is empty" not in text:
                        break
                    await anyio.sleep(0.1)
        return seen

    seen = anyio.run(session)
    assert seen[-1].startswith("src/shop/basket.py:1-2\n"), seen[-1]
    assert "1 result" in seen[-1] or "2 results" in seen[-1]
