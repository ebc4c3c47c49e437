"""The hostile-path suite (>= 500 generated paths) against FsspecFilesystem on memory:// and S3.

The same generator as for the local filesystem (tests/filesystem/hostile_paths.py), on a store
laid out the same way: ``<top>/ws`` is the workspace, ``<top>/outside`` its sibling holding the
secret. Added for a store: URLs of other protocols, of the same store outside the root, and chained
URLs (``simplecache::file:///...``). Object stores have no symlinks, so the generator's paths
through planted symlinks name ordinary (missing) entries here: they are checked like any other
path that may be legal — nothing outside may change or leak — not required to be refused.
"""

from __future__ import annotations

import hashlib
import posixpath
import secrets
from pathlib import PurePosixPath

import pytest

from ws_jupyter.errors import InvalidPathError, PathEscapeError, WorkspaceError

from .hostile_paths import OUTSIDE_ONLY, SECRET, HostilePath, hostile_paths, leaks
from .test_hostile_paths import METHODS as LOCAL_METHODS

pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'ws-jupyter[s3]')")

from ws_jupyter.filesystem.fsspec_fs import FsspecFilesystem

METHODS = {k: v for k, v in LOCAL_METHODS.items() if k != "host_path"}  # no host paths on a store
SYMLINK_HEADS = ("link_file", "link_dir", "dangling", "dangling_abs", "sub/up")


def _bare(path: str) -> str:
    p = path
    while p.startswith("./"):
        p = p[2:]
    return posixpath.normpath(p) if p else p


def store_cases(top: str, url: str, protocol: str, secret_file: str) -> list[HostilePath]:
    """The generator's cases for a store rooted at ``top``/ws, plus URL and protocol cases."""
    cases = []
    for c in hostile_paths(PurePosixPath(top)):  # type: ignore[arg-type]
        bare = _bare(c.path)
        if c.kind == "escape" and any(bare == h or bare.startswith(h + "/") for h in SYMLINK_HEADS):
            cases.append(HostilePath(c.path, "other"))  # no symlinks in a store: a plain name
        else:
            cases.append(c)
    outside = url.rsplit("/", 1)[0] + "/outside"
    extra = [
        "file:///etc/passwd",
        f"file://{secret_file}",
        "file://" + secret_file.rsplit("/", 1)[0],
        f"simplecache::file://{secret_file}",
        f"{protocol}://{outside.split('://', 1)[1]}/secret.txt",
        f"{outside}/secret.txt",
        f"{outside}/dir/inner.txt",
        f"{outside}/new.txt",
        f"{url}/../outside/secret.txt",
        f"{url}/../outside/new.txt",
        f"{url}/../../x",
        f"{url}-other/x",
        f"{url}/sub/../../outside/secret.txt",
        f"blockcache::{url}/safe.txt",
        f"simplecache::{outside}/secret.txt",
        "s3://another-bucket/secret.txt",
        "gcs://bucket/secret.txt",
        "http://127.0.0.1:9/secret.txt",
        "memory:///outside/secret.txt",
        "zip://secret.txt::" + f"file://{secret_file}",
        f"{protocol.upper()}://{outside.split('://', 1)[1]}/secret.txt",
    ]
    cases += [HostilePath(p, "escape") for p in extra]
    return cases


def _layout(raw, top: str) -> None:
    raw.pipe_file(f"{top}/outside/secret.txt", SECRET.encode())
    raw.pipe_file(f"{top}/outside/dir/inner.txt", (SECRET + " inner").encode())
    raw.pipe_file(f"{top}/outside/dir/{OUTSIDE_ONLY}/deep.txt", (SECRET + " deep").encode())
    _reset(raw, top)


def _reset(raw, top: str) -> None:
    if raw.exists(f"{top}/ws"):
        for key in raw.find(f"{top}/ws", withdirs=False):
            raw.rm_file(key)
    raw.pipe_file(f"{top}/ws/safe.txt", b"safe")
    raw.pipe_file(f"{top}/ws/sub/", b"") if _markers(raw) else raw.makedirs(f"{top}/ws/sub", exist_ok=True)
    raw.invalidate_cache()


def _markers(raw) -> bool:
    return "s3" in (raw.protocol if isinstance(raw.protocol, tuple) else (raw.protocol,))


def _snapshot(raw, top: str, part: str) -> dict[str, tuple]:
    """Keys with sizes and content digests (one listing; contents read where there is no ETag)."""
    raw.invalidate_cache()
    try:
        found = raw.find(f"{top}/{part}", detail=True, withdirs=False)
    except FileNotFoundError:
        return {}
    state = {}
    for name, info in found.items():
        tag = info.get("ETag") or hashlib.sha256(raw.cat_file(name)).hexdigest()
        state[name] = (info.get("size"), tag)
    return state


def _echo_removed(text: str, path: str) -> str:
    """``text`` without the caller's own path (as given or normalised): a name the caller typed
    is no leak."""
    text = text.replace(path, "")
    return text.replace(OUTSIDE_ONLY, "") if OUTSIDE_ONLY in path else text


@pytest.fixture(params=["memory", "s3"])
def store(request, tmp_path):
    secret_file = tmp_path / "local-secret.txt"
    secret_file.write_text(SECRET)
    if request.param == "memory":
        top = f"/hp-{secrets.token_hex(4)}"
        fs = FsspecFilesystem(f"memory://{top}/ws")
    else:
        s3 = request.getfixturevalue("s3")
        top = f"{s3.new_bucket()}/hp"
        fs = FsspecFilesystem(f"s3://{top}/ws", storage_options=s3.storage_options())
    raw = fs.fs
    _layout(raw, top)
    yield fs, raw, top, str(secret_file), request.param == "memory"
    if raw.exists(top):
        raw.rm(top, recursive=True)


def test_generator_for_stores_covers_urls(tmp_path):
    cases = store_cases("/hp/x", "memory:///hp/x/ws", "memory", str(tmp_path / "s"))
    assert len(cases) >= 500
    assert any(c.path.startswith("file://") for c in cases)
    assert any("::" in c.path for c in cases)


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(METHODS))
def test_no_access_outside(store, method):
    fs, raw, top, secret_file, thorough = store
    call = METHODS[method]
    before = _snapshot(raw, top, "outside")
    pristine = _snapshot(raw, top, "ws")
    failures: list[str] = []
    # the generator's absolute paths are host-style ("/top/outside/..."), as S3 paths have no "/"
    cases = store_cases("/" + top.lstrip("/"), fs.url, sorted(fs._protocols)[0], secret_file)
    if not thorough:
        # S3 (a real server, ~10-100 ms a request here): every escape and invalid path, but the
        # paths that may be legal in one spelling each; the store is compared after each call
        # that was not refused (a refused call sent nothing), and once more at the end
        seen_other: set[str] = set()
        kept = []
        for c in cases:
            if c.kind == "other":
                key = _bare(c.path.replace("//", "/").rstrip("/"))
                if key in seen_other:
                    continue
                seen_other.add(key)
            kept.append(c)
        cases = kept
    for case in cases:
        refused = False
        try:
            result = call(fs, case.path)
        except WorkspaceError as exc:
            result = None
            refused = isinstance(exc, (PathEscapeError, InvalidPathError))
            if case.kind == "invalid" and not isinstance(exc, InvalidPathError):
                failures.append(f"{case.path!r}: expected InvalidPathError, got {exc!r}")
            if case.kind == "escape" and not refused:
                failures.append(f"{case.path!r}: expected PathEscapeError, got {exc!r}")
            if leaks(_echo_removed(str(exc), case.path)):
                failures.append(f"{case.path!r}: error message leaks outside content: {exc}")
        except Exception as exc:  # a bare error from deep inside is a defect
            failures.append(f"{case.path!r}: untyped {type(exc).__name__}: {exc}")
            continue
        else:
            if case.kind == "escape" and method == "exists" and result is not False:
                failures.append(f"{case.path!r}: exists() should be False, got {result!r}")
            elif case.kind in ("escape", "invalid") and method != "exists":
                failures.append(f"{case.path!r}: {method} succeeded on an escaping path -> {result!r}")
        if leaks(_echo_removed(repr(result).replace(repr(case.path)[1:-1], ""), case.path)):
            failures.append(f"{case.path!r}: result leaks outside content")
        if not thorough and refused:
            continue
        after = _snapshot(raw, top, "outside")
        if after != before:
            changed = sorted(set(after.items()) ^ set(before.items()))
            failures.append(f"{case.path!r}: outside changed: {changed[:3]}")
            before = after
        now = _snapshot(raw, top, "ws")
        if now != pristine:
            changed = [k for k, v in now.items() if pristine.get(k) != v]
            failures += [
                f"{case.path!r}: outside content copied into {k}"
                for k in changed
                if SECRET.encode() in raw.cat_file(k)
            ]
            if thorough or any(k not in now or now[k] != v for k, v in pristine.items()):
                _reset(raw, top)  # the layout itself changed (or memory: always start clean)
                now = _snapshot(raw, top, "ws")
            pristine = now
    if _snapshot(raw, top, "outside") != before:
        failures.append("outside changed during the run")
    assert len(cases) >= 500
    shown = [f[:300] for f in failures[:15]]
    assert failures == [], f"{len(failures)} problems, first ones:\n" + "\n".join(shown)
