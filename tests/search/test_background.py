"""Background embedding: init() returns once BM25 is ready, a worker computes the vectors in
bounded batches and stores each batch as it goes; searches meanwhile use what is embedded and say
how much; a restart (a clean close, or a killed kernel) resumes without re-embedding what was
stored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem, Workspace

from ..helpers import wait_for, write
from ..tools.conftest import box
from .conftest import HashEmbedder

REPO = Path(__file__).resolve().parents[2]


class SlowEmbedder(HashEmbedder):
    """The hashing embedder, ``delay`` seconds per text, remembering every text and batch size:
    a corpus of a few hundred texts takes seconds, like a real model on real files."""

    name = "slow-hash-embedder"

    def __init__(self, delay: float = 0.01) -> None:
        super().__init__()
        self.delay = delay
        self.seen: list[str] = []
        self.batches: list[int] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        time.sleep(self.delay * len(texts))
        self.seen += texts
        self.batches.append(len(texts))
        return super().__call__(texts)


def _corpus(root: Path, n: int) -> None:
    topics = ["gardening tomatoes", "sourdough bread", "bicycle repair", "python generators"]
    for i in range(n):
        write(root, f"docs/s{i // 50}/page{i}.md", f"# Page {i}\n\nNotes on {topics[i % 4]}, item {i}.\n")


def test_init_returns_before_the_vectors_and_hybrid_works_meanwhile(workdir):
    _corpus(workdir, 240)
    emb = SlowEmbedder(delay=0.02)  # ~5 s of embedding
    ws = Workspace(id="bg", filesystem=LocalFilesystem(workdir), embedder=emb)
    try:
        t0 = time.monotonic()
        ws.init()
        counts: set[int] = set()

        def watch() -> None:  # what a progress bar sees while the notebook is idle
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                now = ws.index_status()
                counts.add(now.embedded)
                if now.ready:
                    return
                time.sleep(0.02)

        watcher = threading.Thread(target=watch)
        watcher.start()
        status = ws.index_status()
        assert status.documents == 240 and not status.indexing
        assert status.pending > 0, "init() waited for the vectors"
        # BM25 is complete at once; hybrid works with the vectors there are and says so
        assert len(ws.search("sourdough bread", mode="bm25", top_k=100)) == 60
        hits = ws.search("sourdough bread", mode="hybrid", top_k=5)
        assert hits and all("bread" in h.content for h in hits)
        out = box(ws).run("workspace_search", query="sourdough bread", mode="hybrid")
        if ws.index_status().pending:
            assert "vectors computed so far for" in out and "the rest are matched by BM25 only" in out
        watcher.join(150)  # the worker finishes on its own: counts are what an idle notebook sees
        assert ws.wait_for_index(120)
        # stored batch by batch, as it goes: a partial count was visible (how many of the batches
        # the watcher catches depends on the machine's load), and no batch was the whole backlog
        assert {c for c in counts if 0 < c < 240} and len(emb.batches) >= 4
        assert time.monotonic() - t0 > 2  # it did take seconds
        done = ws.index_status()
        assert done.ready and done.embedded == 240 and not done.embedding
        assert max(emb.batches) <= 64  # bounded batches, never the whole backlog at once
        pages = [t for t in emb.seen if t.startswith("# Page")]  # (the rest are queries)
        assert len(pages) == len(set(pages)) == 240  # each document embedded once
        hits = ws.search("sourdough bread", mode="hybrid", top_k=5)
        assert {"bm25", "vector"} <= set(hits[0].score_details) and all("bread" in h.content for h in hits)
        assert "vectors computed so far" not in box(ws).run("workspace_search", query="bread", mode="hybrid")
    finally:
        ws.destroy()


def test_a_restart_resumes_without_re_embedding_stored_vectors(workdir):
    _corpus(workdir, 300)
    first = SlowEmbedder(delay=0.02)
    ws = Workspace(id="resume", filesystem=LocalFilesystem(workdir), embedder=first)
    ws.init()
    assert wait_for(lambda: ws.index_status().embedded >= 64, timeout=60)
    ws.destroy()  # mid-way: the batch in flight is finished and stored, the rest stays recorded
    stored = len(first.seen)
    assert 64 <= stored < 300
    second = SlowEmbedder(delay=0.0)
    again = Workspace(id="resume", filesystem=LocalFilesystem(workdir), embedder=second)
    try:
        again.init()
        assert again.wait_for_index(120)
        assert len(second.seen) == 300 - stored  # exactly the documents left, nothing twice
        assert not set(second.seen) & set(first.seen)
        assert again._search_engine.vector_store.count() == 300
    finally:
        again.destroy()


_CHILD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {repo!r})
    from tests.search.test_background import SlowEmbedder
    from ws_jupyter import LocalFilesystem, Workspace

    class Logged(SlowEmbedder):
        def __call__(self, texts):
            out = super().__call__(texts)
            with open({log!r}, "a") as fh:
                fh.write(f"{{len(texts)}}\\n")
            return out

    ws = Workspace(id="killed", filesystem=LocalFilesystem({root!r}), embedder=Logged(delay=0.02))
    ws.init()
    print("ready", flush=True)
    time.sleep(600)
""")


@pytest.mark.slow
def test_a_killed_kernel_resumes_without_re_embedding(workdir, tmp_path):
    _corpus(workdir, 300)
    log = tmp_path / "embedded.log"
    script = tmp_path / "child.py"
    script.write_text(_CHILD.format(repo=str(REPO), log=str(log), root=str(workdir)))
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        assert wait_for(lambda: log.exists() and len(log.read_text().split()) >= 2, timeout=120)
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # no clean close: like a kernel that is killed
        child.wait(30)
    embedded_before = sum(int(x) for x in log.read_text().split())
    second = SlowEmbedder(delay=0.0)
    ws = Workspace(id="killed", filesystem=LocalFilesystem(workdir), embedder=second)
    try:
        ws.init()
        assert ws.wait_for_index(120)
        # at most the batch that was being stored when the process died is embedded again
        assert len(set(second.seen)) == len(second.seen)  # the worker and the waiting caller share
        assert 300 - embedded_before <= len(second.seen) <= 300 - embedded_before + 64
        assert len(second.seen) < 300
        assert ws._search_engine.vector_store.count() == 300
        assert ws.search("bicycle repair", mode="vector")[0].content.count("bicycle") == 1
    finally:
        ws.destroy()


def test_embedding_errors_are_reported_and_retried(workdir):
    _corpus(workdir, 10)

    class Flaky(HashEmbedder):
        name = "flaky"
        fail = True

        def __call__(self, texts):  # type: ignore[no-untyped-def]
            if self.fail:
                raise RuntimeError("model server unreachable")
            return super().__call__(texts)

    emb = Flaky()
    ws = Workspace(id="flaky", filesystem=LocalFilesystem(workdir), embedder=emb)
    try:
        ws.init()
        assert wait_for(lambda: ws.index_status().error is not None, timeout=30)
        status = ws.index_status()
        assert "model server unreachable" in status.error and status.embedded == 0
        assert "embedding stopped" in status.describe()
        assert ws.search("bread", mode="bm25")  # keywords keep working
        emb.fail = False
        assert ws.wait_for_index(60)  # retried
        assert ws.index_status().ready
    finally:
        ws.destroy()


def test_wait_for_index_keeps_its_timeout_and_status_never_waits_for_the_model(workdir):
    """The embedding of a long backlog runs in the waiting thread too: its timeout is checked
    before each batch (it returns within one batch of it), and index_status() answers at once
    from another thread all the while."""
    _corpus(workdir, 400)
    emb = SlowEmbedder(delay=0.01)  # 0.64 s per batch of 64: ~4 s for all
    ws = Workspace(id="timeout", filesystem=LocalFilesystem(workdir), embedder=emb)
    try:
        ws.init()
        slowest = 0.0
        stop = threading.Event()

        def poll() -> None:
            nonlocal slowest
            while not stop.is_set():
                t = time.monotonic()
                ws.index_status()
                slowest = max(slowest, time.monotonic() - t)
                time.sleep(0.01)

        poller = threading.Thread(target=poll)
        poller.start()
        t0 = time.monotonic()
        done = ws.wait_for_index(timeout=0.5)
        waited = time.monotonic() - t0
        stop.set()
        poller.join()
        assert not done and ws.index_status().pending > 0
        assert waited < 0.5 + 2 * 64 * 0.01 + 1.0  # the timeout, one batch (two in flight at most), slack
        assert slowest < 0.3, f"index_status() waited {slowest:.2f} s for the embedding"
        assert ws.wait_for_index(timeout=120)
    finally:
        ws.destroy()
