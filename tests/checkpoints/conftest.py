"""One workspace per provider for the checkpoint suite: a local folder, memory:// and S3 (a moto
server on 127.0.0.1). Each test asks for ``ws`` and runs on all three."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import FsspecFilesystem, LocalFilesystem, Workspace

PROVIDERS = ("local", "memory", "s3")


class Files:
    """Writes many files quickly on any provider (bulk PUTs on S3)."""

    def __init__(self, ws: Workspace, provider: str) -> None:
        self.ws = ws
        self.provider = provider
        self.fs: Any = ws.filesystem

    def write_many(self, files: dict[str, bytes]) -> None:
        if self.provider == "local":
            base = Path(self.fs.base_path)
            for rel, data in files.items():
                p = base / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
        elif self.provider == "s3":
            root = self.fs.root.rstrip("/")
            self.fs.fs.pipe({f"{root}/{rel}": data for rel, data in files.items()})
            self.fs.fs.invalidate_cache()
        else:
            for rel, data in files.items():
                self.fs.write_file(rel, data)

    def read(self, rel: str) -> bytes:
        data = self.fs.read_file(rel, encoding="binary")
        assert isinstance(data, bytes)
        return data

    def snapshot(self) -> dict[str, bytes]:
        """Every file outside .ws and its bytes."""
        out = {}
        for e in self.fs.readdir(".", recursive=True, max_depth=1000):
            if e.type == "file" and not e.name.startswith(".ws/") and e.name != ".ws":
                out[e.name] = self.read(e.name)
        return out

    def modes(self) -> dict[str, int]:
        if self.provider != "local":
            return {}
        base = self.fs.base_path
        out = {}
        for dirpath, dirs, names in os.walk(base):
            dirs[:] = [d for d in dirs if d != ".ws"]
            for n in names:
                full = os.path.join(dirpath, n)
                out[os.path.relpath(full, base)] = os.stat(full).st_mode & 0o7777
        return out


def make_workspace(provider: str, tmp_path: Path, s3: Any = None, **checkpoints: Any) -> Workspace:
    checkpoints.setdefault("auto", "off")
    if provider == "local":
        root = Path(os.path.realpath(tmp_path)) / f"ws-{secrets.token_hex(3)}"
        root.mkdir()
        fs: Any = LocalFilesystem(root)
    elif provider == "memory":
        fs = FsspecFilesystem(f"memory://ckpt-{secrets.token_hex(6)}/root")
    else:
        fs = FsspecFilesystem(f"s3://{s3.new_bucket()}/ws", storage_options=s3.storage_options())
    ws = Workspace(filesystem=fs, bm25=False, checkpoints=checkpoints)
    ws.init()
    return ws


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def made(provider: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """``made(**checkpoints)`` -> (workspace, Files) on the test's provider; destroyed after."""
    s3 = request.getfixturevalue("s3") if provider == "s3" else None
    made_ws: list[Workspace] = []

    def make(**checkpoints: Any) -> tuple[Workspace, Files]:
        ws = make_workspace(provider, tmp_path, s3, **checkpoints)
        made_ws.append(ws)
        return ws, Files(ws, provider)

    yield make
    for ws in made_ws:
        ws.destroy()
