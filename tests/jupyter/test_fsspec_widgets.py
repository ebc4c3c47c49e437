"""The FileBrowser on an object-storage workspace (FsspecFilesystem on a moto S3 server): the
same tree, previews and hidden-file toggle as on a local directory, with paths shown as text
(there is no host file for a notebook link)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ws_jupyter.jupyter.widgets.file_browser import FileBrowser

pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'ws-jupyter[s3]')")


@pytest.fixture
def s3_workspace(s3: Any, ws_dir: Path) -> Any:
    from ws_jupyter import Workspace
    from ws_jupyter.filesystem.fsspec_fs import FsspecFilesystem

    fs = FsspecFilesystem(f"s3://{s3.new_bucket()}/ws", storage_options=s3.storage_options())
    fs.sync_from(ws_dir)  # the conftest's small project, uploaded
    ws = Workspace(filesystem=fs)
    ws.init()
    yield ws
    ws.destroy()


def test_file_browser_on_s3(s3_workspace: Any) -> None:
    fb = FileBrowser(s3_workspace)
    assert fb.rows == ["docs", "src", "blob.bin", "notes.txt", "pixel.png"]
    fb.tree.value = "src"
    assert fb.rows == ["docs", "src", "src/pkg", "src/app.py", "blob.bin", "notes.txt", "pixel.png"]
    fb.tree.value = "notes.txt"
    assert fb.selected == "notes.txt" and "beta" in fb.preview.value and "17 B" in fb.preview.value
    assert "<a href" not in fb.preview.value.split("beta")[0]  # no link to a host file
    fb.select("src/pkg/util.py", line=2)
    assert "TODO later" in fb.preview.value
    fb.select("pixel.png")
    assert "data:image/png;base64," in fb.preview.value
    fb.hidden_toggle.value = True
    assert {".secret", "build", "debug.log", ".gitignore"} <= set(fb.rows)
