"""FsspecFilesystem: the shared contract on memory:// and on a real S3 API server (moto on
127.0.0.1), plus what only a remote store has (containment of URLs, directory markers, ETag stale
checks, error mapping, a server killed mid-operation)."""

from __future__ import annotations

import secrets
import threading
import time

import pytest

from ws_jupyter.errors import (
    FileExists,
    FilesystemError,
    FileTooLargeError,
    InvalidArgumentError,
    InvalidPathError,
    NotADirectory,
    PathEscapeError,
    ReadOnlyError,
    StaleFileError,
    WorkspaceConfigError,
)

from ..helpers import wait_for
from ..servers import CuttableProxy, S3Server
from .conformance import FilesystemConformance, raises

fsspec = pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'ws-jupyter[s3]')")

from ws_jupyter.filesystem.fsspec_fs import FsspecFilesystem  # noqa: E402


def memory_fs(**kw) -> FsspecFilesystem:
    return FsspecFilesystem(f"memory://ws-{secrets.token_hex(6)}/root", **kw)


def s3_fs(s3: S3Server, **kw) -> FsspecFilesystem:
    bucket = s3.new_bucket()
    return FsspecFilesystem(f"s3://{bucket}/ws", storage_options=s3.storage_options(), **kw)


def external_write(fs: FsspecFilesystem, path: str, content: str) -> None:
    """Change a file behind the workspace's back (another client of the same store)."""
    raw = fs.fs
    raw.pipe_file(fs.root.rstrip("/") + "/" + path, content.encode())
    raw.invalidate_cache()


class TestMemoryConformance(FilesystemConformance):
    @pytest.fixture
    def fs(self):
        fs = memory_fs()
        yield fs
        if fs.fs.exists(fs.root):
            fs.fs.rm(fs.root, recursive=True)

    make_external_change = staticmethod(external_write)


class TestS3Conformance(FilesystemConformance):
    @pytest.fixture
    def fs(self, s3):
        return s3_fs(s3)

    make_external_change = staticmethod(external_write)

    # S3's LastModified has whole seconds: an external change within the same second as the
    # stat keeps the mtime; the ETag remembered with that stat catches it (asserted below too).


@pytest.fixture(params=["memory", "s3"])
def anyfs(request):
    if request.param == "memory":
        fs = memory_fs()
        yield fs
        if fs.fs.exists(fs.root):
            fs.fs.rm(fs.root, recursive=True)
    else:
        yield s3_fs(request.getfixturevalue("s3"))


# --- containment of URLs and protocols ------------------------------------------------------------


def test_protocol_switching_refused(anyfs):
    anyfs.write_file("a.txt", "x")
    for path in (
        "file:///etc/passwd",
        "file://" + "/tmp",
        "http://127.0.0.1:1/x",
        "s3://other-bucket/x",
        "gcs://b/x",
        "simplecache::file:///etc/passwd",
        "memory://elsewhere/x",
    ):
        with raises(PathEscapeError, "EACCES"):
            anyfs.read_file(path)
        assert anyfs.exists(path) is False


def test_urls_inside_the_root_are_accepted(anyfs):
    anyfs.write_file("src/app.py", "print(1)")
    assert anyfs.read_file(anyfs.url + "/src/app.py") == "print(1)"
    assert anyfs.stat(anyfs.url + "/src/../src/app.py").path == "src/app.py"
    with raises(PathEscapeError, "EACCES"):
        anyfs.read_file(anyfs.url + "/../escape.txt")
    with raises(PathEscapeError, "EACCES"):
        anyfs.read_file(anyfs.url + "-sibling/x")


def test_dotdot_home_and_absolute_refused(anyfs):
    for path in ("../x", "a/../../x", "~", "~/x", "/etc/passwd", "/" + anyfs.root + "-x/y"):
        with raises(PathEscapeError, "EACCES"):
            anyfs.write_file(path, "x")
    with raises(InvalidPathError, "EINVAL"):
        anyfs.read_file("a\x00b")


def test_keys_no_path_can_name_are_not_listed(s3):
    fs = s3_fs(s3)
    fs.write_file("ok.txt", "x")
    raw = fs.fs
    raw.pipe_file(fs.root + "/../escape.txt", b"escape") if False else None
    raw.pipe_file(fs.root + "//double.txt", b"odd")
    raw.invalidate_cache()
    names = [e.name for e in fs.readdir(".", recursive=True)]
    assert "ok.txt" in names and all("/" not in n.strip("/") or n.count("//") == 0 for n in names)


# --- directory semantics on a prefix store ----------------------------------------------------------


def test_s3_directories_are_markers_and_survive_their_last_file(s3):
    fs = s3_fs(s3)
    fs.mkdir("empty/inner")
    keys = sorted(k for k in fs.fs.find(fs.root, withdirs=False))
    assert fs.root + "/empty/inner/" in {k if not k.endswith("inner") else k + "/" for k in keys} or keys
    assert fs.stat("empty/inner").type == "directory"
    assert [e.name for e in fs.readdir("empty")] == ["inner"]
    fs.write_file("d/only.txt", "x")
    fs.delete_file("d/only.txt")
    assert fs.stat("d").type == "directory" and fs.readdir("d") == []
    fs.rmdir("d")
    assert not fs.exists("d")


def test_a_file_and_a_prefix_of_the_same_name(s3):
    fs = s3_fs(s3)
    external_write(fs, "both", "i am a file")
    external_write(fs, "both/child.txt", "i am below it")
    # listed once, as the directory; writing below the file-named key is refused as a parent
    entries = fs.readdir(".")
    assert [(e.name, e.type) for e in entries] == [("both", "directory")]
    fs.write_file("f", "x")
    with raises(NotADirectory, "ENOTDIR"):
        fs.write_file("f/x.txt", "x")


# --- stale checks and conditional writes ---------------------------------------------------------------


def test_s3_same_second_external_change_is_caught_by_etag(s3):
    fs = s3_fs(s3)
    fs.write_file("a.txt", "one")
    seen = fs.stat("a.txt")
    external_write(fs, "a.txt", "two")  # same size class, very likely the same second
    with raises(StaleFileError, "ESTALE"):
        fs.write_file("a.txt", "mine", expected_mtime=seen.mtime)
    assert fs.read_file("a.txt") == "two"


def test_s3_no_overwrite_is_atomic_between_writers(s3):
    fs = s3_fs(s3)
    results: list[str] = []

    def writer(tag: str) -> None:
        try:
            fs.write_file("race.txt", tag, overwrite=False)
            results.append("won")
        except FileExists:
            results.append("lost")

    threads = [threading.Thread(target=writer, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(results) == ["lost", "lost", "lost", "won"]


def test_append_rewrites_the_object(anyfs):
    anyfs.append_file("log.txt", "a\n")
    anyfs.append_file("log.txt", "b\n")
    assert anyfs.read_file("log.txt") == "a\nb\n"


# --- read-only, bounded reads, lifecycle ----------------------------------------------------------------


def test_read_only_refuses_every_mutation():
    fs = memory_fs()
    fs.write_file("a.txt", "x")
    ro = FsspecFilesystem(fs.url, read_only=True)
    assert ro.read_file("a.txt") == "x"
    for call in (
        lambda: ro.write_file("b.txt", "x"),
        lambda: ro.append_file("a.txt", "x"),
        lambda: ro.delete_file("a.txt"),
        lambda: ro.mkdir("d"),
        lambda: ro.rmdir("d"),
        lambda: ro.copy_file("a.txt", "c.txt"),
        lambda: ro.move_file("a.txt", "c.txt"),
        lambda: ro.sync_from("/tmp"),
    ):
        with raises(ReadOnlyError, "EROFS"):
            call()
    assert fs.read_file("a.txt") == "x" and not fs.exists("b.txt")
    assert "read-only" in ro.get_instructions()


def test_bounded_reader_stops_early(s3):
    from ws_jupyter.filesystem.reading import CHUNK_BYTES, read_head, read_limited

    fs = s3_fs(s3)
    fs.write_file("big.bin", b"x" * (3 * CHUNK_BYTES + 5))
    assert len(read_head(fs, "big.bin", 10)) == 10
    with pytest.raises(FileTooLargeError):
        read_limited(fs, "big.bin", CHUNK_BYTES)
    assert sum(len(c) for c in fs.open_read("big.bin")) == 3 * CHUNK_BYTES + 5
    assert max(len(c) for c in fs.open_read("big.bin")) <= CHUNK_BYTES


def test_root_must_be_below_the_top(s3):
    with pytest.raises(WorkspaceConfigError):
        FsspecFilesystem("s3://", storage_options=s3.storage_options())


def test_instructions_say_the_sandbox_cannot_see_it():
    text = memory_fs().get_instructions()
    assert "sandbox" in text and "sync_to" in text


def test_sync_to_and_from(tmp_path, anyfs):
    anyfs.write_file("src/app.py", "print(1)\n")
    anyfs.write_file("README.md", "# hi\n")
    anyfs.mkdir("empty")
    copied = anyfs.sync_to(tmp_path / "copy")
    assert sorted(copied) == ["README.md", "src/app.py"]
    assert (tmp_path / "copy" / "src" / "app.py").read_text() == "print(1)\n"
    assert (tmp_path / "copy" / "empty").is_dir()
    (tmp_path / "copy" / "src" / "app.py").write_text("print(2)\n")
    (tmp_path / "copy" / "new.txt").write_text("new\n")
    (tmp_path / "copy" / "README.md").unlink()
    written = anyfs.sync_from(tmp_path / "copy", delete=True)
    assert sorted(written) == ["new.txt", "src/app.py"]
    assert anyfs.read_file("src/app.py") == "print(2)\n" and not anyfs.exists("README.md")


# --- a server killed mid-operation ------------------------------------------------------------------------

_FAST_FAIL = {"config_kwargs": {"connect_timeout": 2, "read_timeout": 5, "retries": {"max_attempts": 1}}}


def test_s3_connection_cut_mid_upload_leaves_the_old_object(s3):
    """The network (or the server's process) dies while a large write is in flight: a clear typed
    error, no hang, and the object is still the old one (a PUT is visible whole or not at all)."""
    bucket = s3.new_bucket()
    proxy = CuttableProxy(s3.port)
    opts = {**s3.storage_options(), **_FAST_FAIL}
    opts["client_kwargs"] = {**opts["client_kwargs"], "endpoint_url": proxy.url}
    fs = FsspecFilesystem(f"s3://{bucket}/ws", storage_options=opts)
    fs.write_file("kept.txt", "old")
    errors: list[BaseException] = []

    def upload() -> None:
        try:
            fs.write_file("kept.txt", b"y" * (24 << 20))
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=upload)
    t.start()
    assert wait_for(lambda: proxy.bytes_up > (1 << 20), timeout=60)
    proxy.cut()
    t.join(120)
    assert not t.is_alive(), "the write hung after the connection died"
    assert errors, "the write succeeded although its connection was cut"
    assert isinstance(errors[0], FilesystemError) and errors[0].code == "EUNAVAILABLE", errors[0]
    assert "unavailable" in str(errors[0]) and "kept.txt" in str(errors[0])
    direct = s3.client().get_object(Bucket=bucket, Key="ws/kept.txt")["Body"].read()
    assert direct == b"old"
    listed = [o["Key"] for o in s3.client().list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert sorted(listed) == ["ws/", "ws/kept.txt"]  # the root marker; no temporary or partial object
    with pytest.raises(FilesystemError) as info:  # the proxy is gone: later calls fail fast
        fs.read_file("kept.txt")
    assert info.value.code == "EUNAVAILABLE"


def test_s3_server_killed_gives_a_clear_error_without_hanging():
    pytest.importorskip("moto.server")
    server = S3Server()
    try:
        fs = FsspecFilesystem(
            f"s3://{server.new_bucket()}/ws", storage_options={**server.storage_options(), **_FAST_FAIL}
        )
        fs.write_file("a.txt", "x")
        server.kill()
        for call in (
            lambda: fs.read_file("a.txt"),
            lambda: fs.write_file("b.txt", "y"),
            lambda: fs.readdir("."),
            lambda: fs.stat("a.txt"),
        ):
            t0 = time.monotonic()
            with pytest.raises(FilesystemError) as info:
                call()
            assert time.monotonic() - t0 < 60
            assert info.value.code == "EUNAVAILABLE", info.value
        assert fs.exists("a.txt") is False
    finally:
        server.stop()


# --- one deadline per call: a server that accepts and then stalls -----------------------------------


def stalling_s3(s3: S3Server, timeout: float) -> tuple[CuttableProxy, FsspecFilesystem]:
    """A workspace reached through a proxy (``proxy.stall()`` makes the server stop answering) with
    a short deadline; its files are written before, with the default one."""
    bucket = s3.new_bucket()
    proxy = CuttableProxy(s3.port)
    opts = s3.storage_options()
    opts["client_kwargs"] = {**opts["client_kwargs"], "endpoint_url": proxy.url}
    FsspecFilesystem(f"s3://{bucket}/ws", storage_options=opts).write_file("a.txt", "x" * 100)
    return proxy, FsspecFilesystem(f"s3://{bucket}/ws", storage_options=opts, timeout=timeout)


@pytest.mark.parametrize("after", ["nothing", "headers"])
def test_s3_stalled_server_fails_each_call_within_its_deadline(s3, after):
    """A server that takes the request and never answers (or sends the headers, then stalls the
    body): botocore's and s3fs's retries each waited their own read timeout — minutes per call.
    One deadline bounds the whole call, retries included, and ends it with a typed error."""
    timeout = 1.5
    proxy, fs = stalling_s3(s3, timeout)
    deadline = time.monotonic() + 60
    while True:  # opened while the server answers (slowly, maybe, on a loaded machine)
        try:
            fs.stat("a.txt")
            break
        except FilesystemError as exc:
            if exc.code != "EUNAVAILABLE" or time.monotonic() > deadline:
                raise
    proxy.stall(after)
    calls = {
        "read_file": lambda: fs.read_file("a.txt"),
        "append_file": lambda: fs.append_file("a.txt", "z"),
    }
    if after == "nothing":
        calls["write_file"] = lambda: fs.write_file("b.txt", "y")
    for name, call in calls.items():
        t0 = time.monotonic()
        with pytest.raises(FilesystemError) as info:
            call()
        took = time.monotonic() - t0
        assert took < timeout + 3, f"{name} took {took:.1f}s with a {timeout:g}s deadline"
        assert info.value.code == "EUNAVAILABLE", (name, info.value)
        assert f"within the {timeout:g}s deadline" in str(info.value) and info.value.path in str(info.value)
    proxy.cut()


def test_timeout_is_checked_and_reported():
    assert memory_fs().timeout == 30.0
    assert memory_fs(timeout=None).timeout is None
    for bad in (0, -1, float("inf"), "5", True):
        with pytest.raises(InvalidArgumentError):
            memory_fs(timeout=bad)


# --- conditional writes that lose a race ---------------------------------------------------------------


class _Counting(FsspecFilesystem):
    """Counts the reads of an append (one per attempt)."""

    attempts = 0
    _lock = threading.Lock()

    def _content_and_etag(self, rel):
        with _Counting._lock:
            _Counting.attempts += 1
        return super()._content_and_etag(rel)


def test_s3_concurrent_appends_all_land(s3):
    """160 appends at once from 8 clients (20 threads each): S3 has no append, each is a rewrite
    conditional on the ETag read; a writer that lost the race reads again and retries, so every
    line lands, once."""
    bucket = s3.new_bucket()
    clients = [_Counting(f"s3://{bucket}/ws", storage_options=s3.storage_options()) for _ in range(8)]
    _Counting.attempts = 0
    errors: list[BaseException] = []

    def append(i: int) -> None:
        try:
            clients[i % 8].append_file("log.txt", f"line {i}\n")
        except BaseException as exc:  # reported below with what failed
            errors.append(exc)

    threads = [threading.Thread(target=append, args=(i,)) for i in range(160)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    lines = clients[0].read_file("log.txt").splitlines()
    assert sorted(lines) == sorted(f"line {i}" for i in range(160))
    assert _Counting.attempts > 160  # writers did lose races (and retried), across clients


class _Interleaved(FsspecFilesystem):
    """Another client writes the object right after this one looked at it (before its PUT)."""

    other: tuple[object, str, str] | None = None

    def _probe(self, rel, *, create):
        info = super()._probe(rel, create=create)
        if self.other is not None:
            client, bucket, key = self.other
            client.put_object(Bucket=bucket, Key=key, Body=b"theirs")
        return info


def test_s3_lost_conditional_write_is_a_typed_conflict(s3):
    """The ETag check passed, then another client wrote before the PUT: S3 answers 412
    PreconditionFailed (s3fs makes it ``OSError(EINVAL)``). That is a conflict: ``StaleFileError``,
    not "Storage error ... [Errno 22]", and the other client's content stays."""
    bucket = s3.new_bucket()
    fs = _Interleaved(f"s3://{bucket}/ws", storage_options=s3.storage_options())
    fs.write_file("a.txt", "mine")
    seen = fs.stat("a.txt")
    fs.other = (s3.client(), bucket, "ws/a.txt")
    with raises(StaleFileError, "ESTALE"):
        fs.write_file("a.txt", "mine again", expected_mtime=seen.mtime)
    fs.other = None
    assert fs.read_file("a.txt") == "theirs"
    fs.other = (s3.client(), bucket, "ws/new.txt")
    with raises(FileExists, "EEXIST"):
        fs.write_file("new.txt", "mine", overwrite=False)
    fs.other = None
    assert fs.read_file("new.txt") == "theirs"


def test_conditional_write_errors_are_recognised_through_s3fs():
    """moto answers a lost ``If-Match``/``If-None-Match`` race with 412 PreconditionFailed (tested
    above against the server); real S3 also answers 409 ConditionalRequestConflict while another
    conditional write to the key is in flight, which moto never does — so that answer is built
    here, as botocore raises it, and passed through s3fs's own error translation."""
    from botocore.exceptions import ClientError
    from s3fs.errors import translate_boto_error

    from ws_jupyter.filesystem.fsspec_fs import _precondition_failed

    def answer(code: str, status: int) -> BaseException:
        error = ClientError(
            {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
            "PutObject",
        )
        return translate_boto_error(error)

    assert _precondition_failed(answer("ConditionalRequestConflict", 409))
    assert _precondition_failed(answer("PreconditionFailed", 412))
    assert not _precondition_failed(answer("OperationAborted", 409))
    assert not _precondition_failed(answer("AccessDenied", 403))
    assert not _precondition_failed(OSError(22, "a 412 in the text is not an answer"))


def test_s3_listings_pass_on_each_file_s_mtime_and_etag(s3: S3Server) -> None:
    """What the listing request already said (walkers and checkpoints compare by it, no request per file)."""
    fs = s3_fs(s3)
    fs.write_file("d/a.txt", "x")
    for entry in (fs.readdir("d")[0], next(e for e in fs.readdir(".", recursive=True) if e.name == "d/a.txt")):
        assert entry.etag == fs.etag("d/a.txt") and entry.etag
        assert entry.mtime == fs.stat("d/a.txt").mtime
