"""Fixtures of the search tests: SciFact slices (read from ../shared, never copied) and a small
deterministic embedder for tests that are not about the real model."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "scifact"


def _scifact_dir() -> Path:
    for cand in (SCIFACT, Path("/work/shared/data/scifact")):
        if (cand / "corpus.jsonl").exists():
            return cand
    pytest.skip("SciFact data not found next to the repository (../shared/data/scifact)")


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    return _scifact_dir()


def read_jsonl(path: Path, limit: int | None = None) -> Iterator[dict]:
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if limit is not None and i >= limit:
                break
            yield json.loads(line)


class HashEmbedder:
    """Deterministic bag-of-words embedder (feature hashing, 64 dims, L2-normalised).

    Stands in for a neural model where the test is about plumbing, not semantics; similar
    texts share words and therefore directions. Counts its calls and texts so tests can assert
    that unchanged files are not re-embedded.
    """

    batch = True

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.calls = 0
        self.texts = 0

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.texts += len(texts)
        out = []
        for text in texts:
            v = [0.0] * self.dim
            for w in re.findall(r"[a-z0-9]+", text.lower()):
                h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=4).digest(), "little")
                v[h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
            n = math.sqrt(sum(x * x for x in v)) or 1.0
            out.append([x / n for x in v])
        return out


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """A real Chroma server (``chroma run`` from the chromadb package) on a free local port."""
    import os
    import shutil
    import subprocess
    import sys
    import time
    import urllib.request

    exe = Path(sys.executable).with_name("chroma")
    if not exe.exists():
        found = shutil.which("chroma")
        if not found:
            pytest.skip("the chroma CLI (from the chromadb package) is not installed")
        exe = Path(found)
    data = tmp_path_factory.mktemp("chroma-server")
    port = _free_port()
    log = open(data / "server.log", "wb")  # noqa: SIM115 - the server writes to it until teardown
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen([str(exe), "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            log.close()
            pytest.fail("chroma server did not start:\n" + (data / "server.log").read_text()[-2000:])
        time.sleep(0.2)
    yield ("127.0.0.1", port)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
    log.close()
