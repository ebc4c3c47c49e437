"""Workspace: construction checks, identity, lifecycle, info, instructions, resolvers, tools config.

Resolver and lifecycle tests use a small recording sandbox (``RecordingSandbox``) so they can
count starts/stops and tell instances apart; the real ``LocalSandbox`` has its own suite, and
``test_with_real_local_sandbox`` wires the two together.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem, RequestContext, Workspace
from ws_jupyter.errors import (
    FilesystemNotAvailableError,
    OperationTimeoutError,
    SandboxNotAvailableError,
    WorkspaceConfigError,
    WorkspaceNotReadyError,
)
from ws_jupyter.sandbox.types import CommandResult, SandboxInfo, WorkspaceSandbox
from ws_jupyter.workspace import SANDBOX_PLACEHOLDER_INSTRUCTIONS, default_index_name


class RecordingSandbox:
    """Implements the WorkspaceSandbox protocol and records lifecycle calls (a test double)."""

    provider = "recording"
    name = "RecordingSandbox"

    def __init__(self, label: str = "sb", start_delay: float = 0.0) -> None:
        self.id = label
        self.label = label
        self.calls: list[str] = []
        self.mounts: list[tuple[str, bool]] = []
        self._status = "pending"
        self._start_delay = start_delay

    @property
    def status(self) -> str:
        return self._status

    def start(self) -> None:
        time.sleep(self._start_delay)
        self.calls.append("start")
        self._status = "running"

    def stop(self) -> None:
        self.calls.append("stop")
        self._status = "stopped"

    def destroy(self) -> None:
        self.calls.append("destroy")
        self._status = "destroyed"

    def mount(self, host_path: str, read_only: bool = False) -> None:
        self.mounts.append((host_path, read_only))

    def execute_command(
        self, command, args=None, cwd=None, env=None, timeout=None, on_stdout=None, on_stderr=None
    ):
        return CommandResult(True, 0, f"{self.label}: {command}", "", 0.1, command=command)

    def get_instructions(self, request_context=None) -> str:
        return f"Sandbox {self.label}."

    def get_info(self) -> SandboxInfo:
        return SandboxInfo(id=self.id, name=self.name, provider=self.provider, status=self._status)


def test_recording_sandbox_satisfies_protocol():
    assert isinstance(RecordingSandbox(), WorkspaceSandbox)


# --- construction ---------------------------------------------------------------------------------


def test_no_providers():
    with pytest.raises(WorkspaceConfigError) as info:
        Workspace()
    assert info.value.code == "NO_PROVIDERS"
    assert isinstance(info.value, ValueError)


def test_each_provider_alone_is_enough(workdir):
    Workspace(filesystem=LocalFilesystem(workdir))
    Workspace(sandbox=RecordingSandbox())
    Workspace(skills=["skills"])


def test_vector_store_without_embedder():
    with pytest.raises(WorkspaceConfigError) as info:
        Workspace(sandbox=RecordingSandbox(), vector_store=object())
    assert info.value.code == "INVALID_SEARCH_CONFIG"


@pytest.mark.parametrize("bad", ["1abc", "has-hyphen", "with space", "a" * 64, "", "ümlaut"])
def test_bad_index_names(bad):
    with pytest.raises(WorkspaceConfigError) as info:
        Workspace(sandbox=RecordingSandbox(), search_index_name=bad)
    assert info.value.code == "INVALID_SEARCH_CONFIG"


def test_good_index_names_and_default():
    assert Workspace(
        sandbox=RecordingSandbox(), search_index_name="_ok_1" + "a" * 58
    ).search_index_name.startswith("_ok_1")
    ws = Workspace(id="my-workspace.id", sandbox=RecordingSandbox())
    assert ws.search_index_name == "my_workspace_id_search"
    assert default_index_name("123") == "_123_search"
    assert len(default_index_name("x" * 100)) == 63


def test_class_instead_of_instance():
    with pytest.raises(WorkspaceConfigError) as info:
        Workspace(filesystem=LocalFilesystem)  # type: ignore[arg-type]
    assert info.value.code == "INVALID_CONFIG"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dynamic_sandbox_instructions": "sometimes"},
        {"operation_timeout": -1},
        {"operation_timeout": "5"},
        {"on_mount": "yes"},
        {"sandbox_cache_key": "key"},
        {"id": ""},
    ],
)
def test_other_bad_options(kwargs):
    with pytest.raises(WorkspaceConfigError):
        Workspace(sandbox=RecordingSandbox(), **kwargs)


def test_ids_and_names():
    ws = Workspace(sandbox=RecordingSandbox())
    assert ws.id.startswith("ws-") and len(ws.id) == 11
    assert ws.name == f"workspace-{ws.id[:8]}"
    assert Workspace(sandbox=RecordingSandbox()).id != ws.id
    named = Workspace(id="proj", name="Project", sandbox=RecordingSandbox())
    assert (named.id, named.name) == ("proj", "Project")
    assert "proj" in repr(named) and "pending" in repr(named)


def test_search_capabilities(workdir):
    fs = LocalFilesystem(workdir)
    ws = Workspace(filesystem=fs)
    assert (ws.can_bm25, ws.can_vector, ws.can_hybrid) == (True, False, False)
    ws = Workspace(filesystem=fs, bm25=False)
    assert (ws.can_bm25, ws.can_vector, ws.can_hybrid) == (False, False, False)
    ws = Workspace(filesystem=fs, embedder=lambda text: [1.0, 0.0])
    assert (ws.can_bm25, ws.can_vector, ws.can_hybrid) == (True, True, True)


# --- lifecycle -----------------------------------------------------------------------------------


def test_lifecycle_statuses_and_context_manager(workdir):
    sb = RecordingSandbox()
    ws = Workspace(filesystem=LocalFilesystem(workdir / "files"), sandbox=sb, bm25=False)
    assert ws.status == "pending"
    with ws as entered:
        assert entered is ws
        assert ws.status == "ready"
        assert (workdir / "files").is_dir()  # filesystem initialised
        assert sb.calls == ["start"]
        assert sb.mounts == [(str(workdir / "files"), False)]
    assert ws.status == "destroyed"
    assert sb.calls == ["start", "destroy"]
    ws.destroy()  # idempotent
    assert sb.calls == ["start", "destroy"]


def test_concurrent_init_and_destroy_coalesce(workdir):
    sb = RecordingSandbox(start_delay=0.2)
    ws = Workspace(filesystem=LocalFilesystem(workdir), sandbox=sb, bm25=False)
    threads = [threading.Thread(target=ws.init) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    assert ws.status == "initializing"
    for t in threads:
        t.join()
    assert sb.calls == ["start"] and ws.status == "ready"
    threads = [threading.Thread(target=ws.destroy) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sb.calls == ["start", "destroy"] and ws.status == "destroyed"


def test_init_failure_sets_error_and_can_retry(workdir):
    class Flaky(RecordingSandbox):
        fail = True

        def start(self):
            if self.fail:
                self.fail = False
                raise RuntimeError("port in use")
            super().start()

    ws = Workspace(sandbox=Flaky())
    with pytest.raises(RuntimeError, match="port in use"):
        ws.init()
    assert ws.status == "error"
    ws.init()
    assert ws.status == "ready"


@pytest.mark.filterwarnings("ignore:Skills path not found")
def test_after_destroy_search_index_and_skills_refuse(workdir):
    ws = Workspace(filesystem=LocalFilesystem(workdir), skills=["skills"])
    ws.init()
    ws.destroy()
    for call in (
        lambda: ws.search("x"),
        lambda: ws.index("a.md", "text"),
        lambda: ws.rebuild_search_index(),
        lambda: ws.skills,
        lambda: ws.tools(),
    ):
        with pytest.raises(WorkspaceNotReadyError) as info:
            call()
        assert info.value.code == "NOT_READY" and "destroyed" in str(info.value)
    assert (workdir).is_dir()  # user files are never deleted


def test_pause_and_resume():
    sb = RecordingSandbox()
    ws = Workspace(sandbox=sb)
    ws.init()
    ws.pause()
    assert ws.status == "paused" and sb.calls == ["start", "stop"]
    ws.init()
    assert ws.status == "ready" and sb.calls == ["start", "stop", "start"]
    with pytest.raises(WorkspaceNotReadyError):
        Workspace(sandbox=RecordingSandbox()).pause()  # only a ready workspace pauses


def test_operation_timeout():
    ws = Workspace(sandbox=RecordingSandbox(start_delay=2.0), operation_timeout=0.2)
    started = time.monotonic()
    with pytest.raises(OperationTimeoutError) as info:
        ws.init()
    assert time.monotonic() - started < 1.5
    assert info.value.code == "OPERATION_TIMEOUT" and isinstance(info.value, TimeoutError)
    assert "starting the sandbox" in str(info.value)
    assert ws.status == "error"


def test_last_accessed_moves(workdir):
    ws = Workspace(filesystem=LocalFilesystem(workdir))
    created = ws.created_at
    time.sleep(0.01)
    ws.init()
    assert ws.last_accessed_at > created


# --- mounting ----------------------------------------------------------------------------------


def test_on_mount_hook_can_skip_or_take_over(workdir):
    seen = []
    sb = RecordingSandbox()
    fs = LocalFilesystem(workdir, read_only=True)
    Workspace(filesystem=fs, sandbox=sb, on_mount=lambda f, s: seen.append((f, s)) or False).init()
    assert seen == [(fs, sb)] and sb.mounts == []
    sb2 = RecordingSandbox()
    Workspace(filesystem=fs, sandbox=sb2, on_mount=lambda f, s: {"success": True}).init()
    assert sb2.mounts == []
    sb3 = RecordingSandbox()
    Workspace(filesystem=fs, sandbox=sb3, on_mount=lambda f, s: None).init()
    assert sb3.mounts == [(str(workdir), True)]  # default mounting, read-only like the filesystem


def test_with_real_local_sandbox(workdir):
    from ws_jupyter import LocalSandbox

    with Workspace(
        filesystem=LocalFilesystem(workdir), sandbox=LocalSandbox(working_directory=workdir), bm25=False
    ) as ws:
        ws.filesystem.write_file("hello.txt", "hi from the filesystem")
        result = ws.sandbox.execute_command("cat hello.txt")
        assert result.success and result.stdout == "hi from the filesystem"
        info = ws.get_info()
        assert info.sandbox.provider == "local" and info.filesystem.base_path == str(workdir)


# --- info ----------------------------------------------------------------------------------------


def test_info_static(workdir):
    fs = LocalFilesystem(workdir, id="fs-1")
    ws = Workspace(id="w1", name="W", filesystem=fs, sandbox=RecordingSandbox("s1"))
    fs.write_file("a.txt", "a")
    fs.write_file("sub/b.txt", "b")
    fs.write_file(".hidden", "h")
    info = ws.get_info()
    assert (info.id, info.name, info.status) == ("w1", "W", "pending")
    assert info.filesystem.id == "fs-1" and info.filesystem.total_files is None
    assert info.sandbox.id == "s1"
    assert info.search["modes"] == ["bm25"]
    assert info.errors == {}
    assert ws.get_info(include_file_count=True).filesystem.total_files == 2


def test_info_dynamic_providers(workdir):
    ws = Workspace(
        filesystem=lambda ctx: LocalFilesystem(workdir / ctx["user"]),
        sandbox=lambda ctx: RecordingSandbox(ctx["user"]),
    )
    unresolved = ws.get_info(resolve_dynamic_providers=False)
    assert unresolved.filesystem == "dynamic" and unresolved.sandbox == "dynamic"
    resolved = ws.get_info(request_context=RequestContext({"user": "alice"}))
    assert resolved.filesystem.base_path == str(workdir / "alice")
    assert resolved.sandbox.id == "alice"
    failing = ws.get_info(request_context=RequestContext({}))  # resolvers raise KeyError
    assert failing.filesystem == "dynamic" and "filesystem" in failing.errors and "sandbox" in failing.errors


# --- instructions ----------------------------------------------------------------------------------


def test_instructions_static(workdir):
    fs = LocalFilesystem(workdir)
    assert Workspace(filesystem=fs).get_instructions() == fs.get_instructions()
    assert Workspace(sandbox=RecordingSandbox("x")).get_instructions() == "Sandbox x."
    both = Workspace(filesystem=fs, sandbox=RecordingSandbox("x")).get_instructions()
    assert both == "Sandbox x.\n\n" + fs.get_instructions()
    assert Workspace(skills=["s"]).get_instructions() == ""
    quiet = LocalFilesystem(workdir, instructions="")
    assert Workspace(filesystem=quiet, sandbox=RecordingSandbox("x")).get_instructions() == "Sandbox x."


def test_instructions_with_resolvers(workdir):
    made = []

    def sandbox_for(ctx):
        made.append(ctx)
        return RecordingSandbox(ctx["user"])

    fs_for = lambda ctx: LocalFilesystem(workdir / ctx["user"], instructions=f"Files of {ctx['user']}.")  # noqa: E731
    ctx = RequestContext({"user": "bob"})
    placeholder = Workspace(filesystem=fs_for, sandbox=sandbox_for)
    assert placeholder.get_instructions(ctx) == SANDBOX_PLACEHOLDER_INSTRUCTIONS + "\n\nFiles of bob."
    assert made == []  # the placeholder never resolves the sandbox
    resolving = Workspace(filesystem=fs_for, sandbox=sandbox_for, dynamic_sandbox_instructions="resolve")
    assert resolving.get_instructions(ctx) == "Sandbox bob.\n\nFiles of bob."
    custom = Workspace(sandbox=sandbox_for, dynamic_sandbox_instructions=lambda c: f"Custom for {c['user']}.")
    assert custom.get_instructions(ctx) == "Custom for bob."
    assert len(made) == 1


# --- resolvers ----------------------------------------------------------------------------------------


def test_resolvers_memoise_per_request(workdir):
    built = []

    def sandbox_for(ctx):
        sb = RecordingSandbox(ctx["user"])
        built.append(sb)
        return sb

    ws = Workspace(sandbox=sandbox_for)
    assert ws.sandbox is None and ws.has_sandbox_config()
    a, b = RequestContext({"user": "a"}), RequestContext({"user": "a"})
    assert ws.resolve_sandbox(a) is ws.resolve_sandbox(a)
    assert ws.resolve_sandbox(b) is not ws.resolve_sandbox(a)  # equal contents, different request
    assert len(built) == 2


def test_sandbox_cache_key_shares_across_requests():
    built = []

    def sandbox_for(ctx):
        sb = RecordingSandbox(ctx["thread"])
        built.append(sb)
        return sb

    ws = Workspace(sandbox=sandbox_for, sandbox_cache_key=lambda ctx: ctx.get("thread"))
    first = ws.resolve_sandbox(RequestContext({"thread": "t1"}))
    again = ws.resolve_sandbox(RequestContext({"thread": "t1"}))
    other = ws.resolve_sandbox(RequestContext({"thread": "t2"}))
    assert first is again and other is not first and len(built) == 2
    no_key = RequestContext({"thread": None})
    assert ws.resolve_sandbox(no_key) is ws.resolve_sandbox(no_key)  # falls back to per request
    ws.clear_sandbox_cache("t1")
    fresh = ws.resolve_sandbox(RequestContext({"thread": "t1"}))
    assert fresh is not first
    assert first.calls == []  # clearing drops references; the sandbox is not stopped
    assert ws.resolve_sandbox(RequestContext({"thread": "t2"})) is other
    ws.clear_sandbox_cache()
    assert ws.resolve_sandbox(RequestContext({"thread": "t2"})) is not other


def test_resolver_returning_garbage(workdir):
    ws = Workspace(filesystem=lambda ctx: "not a filesystem")
    with pytest.raises(WorkspaceConfigError) as info:
        ws.resolve_filesystem(RequestContext())
    assert "filesystem resolver returned str" in str(info.value)


def test_resolve_without_config(workdir):
    with pytest.raises(FilesystemNotAvailableError):
        Workspace(sandbox=RecordingSandbox()).resolve_filesystem()
    with pytest.raises(SandboxNotAvailableError):
        Workspace(filesystem=LocalFilesystem(workdir)).resolve_sandbox()


def test_static_providers_resolve_to_themselves(workdir):
    fs, sb = LocalFilesystem(workdir), RecordingSandbox()
    ws = Workspace(filesystem=fs, sandbox=sb)
    assert ws.resolve_filesystem(RequestContext()) is fs and ws.resolve_sandbox(RequestContext()) is sb
    assert ws.filesystem is fs and ws.sandbox is sb
    assert ws.has_filesystem_config() and ws.has_sandbox_config()
    assert not Workspace(skills=["x"]).has_filesystem_config()


def test_resolver_memo_is_thread_safe():
    built = []
    lock = threading.Lock()

    def slow(ctx):
        time.sleep(0.05)
        with lock:
            built.append(1)
        return RecordingSandbox()

    ws = Workspace(sandbox=slow, sandbox_cache_key=lambda ctx: "shared")
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(ws.resolve_sandbox(RequestContext())))
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and all(r is results[0] for r in results)


# --- tools config -----------------------------------------------------------------------------------


def test_tools_config_get_set(workdir):
    ws = Workspace(filesystem=LocalFilesystem(workdir))
    default = ws.get_tools_config()
    ws.set_tools_config({"require_approval": True})
    assert ws.get_tools_config() != default
    assert ws.get_tools_config().require_approval is True
    ws.set_tools_config(None)
    assert ws.get_tools_config() == default


def test_from_directory(tmp_path: Path):
    (tmp_path / "skills").mkdir()
    ws = Workspace.from_directory(tmp_path)
    assert ws.filesystem.base_path == str(tmp_path)
    assert ws.sandbox.working_directory == str(tmp_path)
    assert ws.skills is not None and ws.can_bm25


def test_persisted_index_name_survives_new_ids(workdir):
    """Without an id the generated one changes per object; the on-disk index keeps a fixed name."""
    fs = LocalFilesystem(workdir)
    anonymous = Workspace(filesystem=fs)
    assert anonymous.persisted_index_name == "workspace_search"
    assert anonymous.get_info().search["index_name"] == "workspace_search"
    named = Workspace(id="proj", filesystem=fs)
    assert named.persisted_index_name == named.search_index_name == "proj_search"
    explicit = Workspace(filesystem=fs, search_index_name="mine")
    assert explicit.persisted_index_name == "mine"
    anonymous.index("notes.md", "persisted across objects")
    anonymous.destroy()
    again = Workspace(filesystem=LocalFilesystem(workdir))
    assert [r.id for r in again.search("persisted")] == ["notes.md"]
    again.destroy()
