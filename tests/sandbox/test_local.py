"""LocalSandbox without isolation: the conformance suite plus what is specific to the host mode."""

from __future__ import annotations

import dataclasses
import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

import ws_jupyter
from ws_jupyter.errors import (
    IsolationUnavailableError,
    SandboxError,
    SandboxStateError,
    WorkspaceConfigError,
)
from ws_jupyter.sandbox import LocalSandbox, NativeSandboxConfig
from ws_jupyter.sandbox.types import WorkspaceSandbox

from ..helpers import wait_for
from .conformance import SandboxConformance
from .conftest import BWRAP, marker, processes_with
from .local_checks import LocalSandboxChecks


class TestUnisolated(LocalSandboxChecks, SandboxConformance):
    isolation = "none"


def test_public_names_are_exported():
    for name in (
        "LocalSandbox",
        "NativeSandboxConfig",
        "IsolationDetection",
        "ProcessManager",
        "ProcessHandle",
    ):
        assert name in ws_jupyter.__all__
        assert getattr(ws_jupyter, name).__name__ == name


def test_the_vocabulary_is_light_and_every_name_resolves():
    # The workspace imports sandbox.types: that must not load the process manager, psutil or
    # the isolation builders (the sandbox package resolves its names lazily).
    code = (
        "import sys, ws_jupyter.sandbox.types\n"
        "print([m for m in ('psutil', 'ws_jupyter.sandbox.processes', 'ws_jupyter.sandbox.local',"
        " 'ws_jupyter.sandbox.isolation') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    import ws_jupyter.sandbox as package

    for name in package.__all__:
        assert getattr(package, name).__name__ == name
    assert set(dir(package)) >= set(package.__all__)


def test_is_a_workspace_sandbox(make_sandbox):
    assert isinstance(make_sandbox(), WorkspaceSandbox)


def test_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sb = LocalSandbox()
    try:
        assert sb.working_directory == os.path.join(os.path.realpath(tmp_path), ".sandbox")
        assert sb.status == "pending" and sb.timeout == 30.0 and sb.isolation == "none"
        assert sb.id.startswith("local-sandbox-") and sb.name == "LocalSandbox" and sb.provider == "local"
        assert LocalSandbox(id="fixed").id == "fixed"
    finally:
        sb.destroy()


def test_unisolated_instructions_say_so(make_sandbox):
    text = make_sandbox().get_instructions()
    assert "without isolation" in text and "host" in text and "30 s" in text


def test_lifecycle_statuses(make_sandbox):
    sb = make_sandbox()
    sb.stop()  # stopping a pending sandbox is a no-op
    assert sb.status == "pending"
    sb.start()
    sb.start()  # idempotent
    assert sb.status == "running"
    sb.stop()
    assert sb.status == "stopped"
    home = sb.home_directory
    sb.destroy()
    assert sb.status == "destroyed" and not os.path.exists(os.path.dirname(home))
    assert os.path.isdir(sb.working_directory)  # user files are never deleted
    with pytest.raises(SandboxStateError):
        sb.start()


def test_context_manager(tmp_path):
    with LocalSandbox(working_directory=str(tmp_path / "w")) as sb:
        assert sb.status == "running"
        h = sb.processes.spawn("sleep 30")
    assert sb.status == "destroyed" and h.exit_code is not None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"isolation": "docker"},
        {"timeout": -5},
        {"timeout": "30"},
        {"env": ["A=1"]},
        {"native_sandbox": {"allow_net": True}},
        {"native_sandbox": {"allow_network": "yes"}},
        {"native_sandbox": {"bwrap_args": "--share-net"}},
        {"native_sandbox": {"bwrap_args": ["--", "sh"]}},
        {"native_sandbox": 42},
        {"instructions": 3},
        {"id": ""},
        {"max_output_bytes": -1},
    ],
)
def test_bad_configuration_is_rejected_at_construction(tmp_path, kwargs):
    with pytest.raises(WorkspaceConfigError):
        LocalSandbox(working_directory=str(tmp_path), **kwargs)


@pytest.mark.skipif(sys.platform == "darwin", reason="seatbelt is available on macOS")
def test_seatbelt_unavailable_here_is_a_clear_error(tmp_path):
    with pytest.raises(IsolationUnavailableError) as info:
        LocalSandbox(working_directory=str(tmp_path), isolation="seatbelt")
    assert info.value.code == "ISOLATION_UNAVAILABLE" and "macOS" in str(info.value)


def test_auto_picks_the_probed_backend(make_sandbox):
    sb = make_sandbox("auto")
    expected = "bwrap" if BWRAP.available else "none"
    assert sb.isolation == expected
    info = sb.get_info()
    assert info.metadata["isolation_requested"] == "auto"
    if not BWRAP.available:
        assert "warning" in info.metadata and "Warning" in sb.get_instructions()


def test_detect_isolation_probes_and_caches():
    first = LocalSandbox.detect_isolation()
    assert first.backend == ("bwrap" if sys.platform.startswith("linux") else first.backend)
    assert first is LocalSandbox.detect_isolation()  # cached per process
    assert isinstance(first.message, str) and first.message


def test_mount_is_recorded_without_isolation(make_sandbox, tmp_path):
    sb = make_sandbox()
    data = tmp_path / "data"
    data.mkdir()
    m = sb.mount(str(data), read_only=True)
    assert m.path == os.path.realpath(data) and m.read_only
    assert sb.get_info().metadata["mounts"] == [{"path": m.path, "read_only": True}]
    assert sb.unmount(str(data)) is True and sb.mounts == ()


def test_native_sandbox_config_value_object():
    cfg = NativeSandboxConfig.coerce({"allow_network": True, "read_write_paths": ["~/x"]})
    assert cfg.allow_network and cfg.read_write_paths == (os.path.expanduser("~/x"),)
    assert NativeSandboxConfig.coerce(cfg) is cfg
    assert "allow_network=True" in repr(cfg)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.allow_network = False  # type: ignore[misc]


def test_start_failure_sets_error_status(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    sb = LocalSandbox(working_directory=str(blocker / "wd"))
    with pytest.raises(SandboxError) as info:
        sb.execute_command("true")
    assert info.value.code == "START_FAILED" and sb.status == "error"
    blocker.unlink()
    sb.start()  # recovers once the cause is gone
    assert sb.execute_command("echo ok").stdout == "ok\n"
    sb.destroy()


def test_wait_from_own_callback_is_refused(make_sandbox):
    sb = make_sandbox()
    errors: list[BaseException] = []
    box: dict[str, object] = {}

    def on_out(_text: str) -> None:
        try:
            box["h"].wait()  # type: ignore[attr-defined]
        except SandboxStateError as exc:
            errors.append(exc)

    h = sb.processes.spawn("sleep 0.2; echo x", on_stdout=on_out)
    box["h"] = h
    h.wait(timeout=10)
    assert errors and "callback" in str(errors[0])


class TestSeatbeltWiring:
    """sandbox-exec cannot run on Linux: the probe is replaced by a stub saying it is available,
    and only what LocalSandbox builds (profile file, argv) is checked — no command is executed."""

    @pytest.fixture
    def seatbelt(self, monkeypatch, tmp_path):
        from ws_jupyter.sandbox import local as local_mod
        from ws_jupyter.sandbox.types import IsolationDetection

        monkeypatch.setattr(
            local_mod,
            "probe_backend",
            lambda backend: IsolationDetection(backend, True, "stubbed for the test"),
        )

        def make(**native):
            return LocalSandbox(
                working_directory=str(tmp_path / "wd"), isolation="seatbelt", native_sandbox=native
            )

        return make

    def test_generated_profile_and_argv(self, seatbelt):
        from ws_jupyter.sandbox.isolation import SEATBELT_MARKER

        sb = seatbelt()
        sb.start()
        info = sb.get_info()
        profile = info.metadata["seatbelt_profile"]
        text = Path(profile).read_text()
        assert text.startswith(SEATBELT_MARKER) and f'(subpath "{sb.working_directory}")' in text
        assert not profile.startswith(sb.working_directory)  # commands cannot rewrite their policy
        spec = sb.prepare_launch("echo hi", None, None)
        assert spec.argv == ["/usr/bin/sandbox-exec", "-f", profile, "/bin/sh", "-c", "echo hi"]
        assert "seatbelt" in sb.get_instructions()
        sb.destroy()
        assert not os.path.exists(profile)

    def test_user_profile_is_used_as_written(self, seatbelt, tmp_path):
        mine = tmp_path / "mine.sb"
        mine.write_text("(version 1)\n(allow default)\n")
        sb = seatbelt(seatbelt_profile_path=str(mine))
        sb.start()
        assert sb.prepare_launch("true", None, None).argv[2] == str(mine)
        sb.destroy()
        assert mine.read_text() == "(version 1)\n(allow default)\n"  # neither rewritten nor deleted

    def test_generated_profile_at_configured_path_is_regenerated(self, seatbelt, tmp_path):
        from ws_jupyter.sandbox.isolation import SEATBELT_MARKER

        path = tmp_path / "profiles" / "gen.sb"
        sb = seatbelt(seatbelt_profile_path=str(path))
        sb.start()
        assert path.read_text().startswith(SEATBELT_MARKER)
        extra = tmp_path / "extra"
        extra.mkdir()
        sb.mount(str(extra), read_only=True)  # mounts are added to generated profiles
        assert f'(subpath "{extra}")' in path.read_text()
        sb.destroy()


def test_released_process_is_freed_while_its_timeout_is_pending(make_sandbox):
    # The cancelled timeout timer stays queued for an hour; it must not keep the handle (and up
    # to 2 MiB of retained output) alive after release().
    sb = make_sandbox()
    h = sb.processes.spawn("head -c 100000 /dev/zero", timeout=3600)
    assert h.wait(timeout=10).exit_code == 0
    assert sb.processes.release(h.pid)
    ref = weakref.ref(h)
    del h
    # (the I/O thread may still be finishing its bookkeeping of the exit for a moment)
    assert wait_for(lambda: gc.collect() >= 0 and ref() is None, 2)


def test_kill_all_leaves_alone_a_process_that_exited_while_its_output_drains(make_sandbox, monkeypatch):
    # Its escaped child holds the pipes open, so it is still "running" for a moment after its
    # exit; it was reaped already: kill_all() (stop, destroy) must neither signal its pid nor
    # report it killed.
    from ws_jupyter.sandbox import processes

    monkeypatch.setattr(processes, "_DRAIN_AFTER_EXIT", 1.0)
    sb = make_sandbox()
    m = marker()
    h = sb.processes.spawn(f"setsid sleep {m} & sleep 0.2; echo started")
    try:
        assert wait_for(lambda: h._exited.is_set(), 5) and h.running
        assert sb.processes.kill_all() == 1
        assert h.exit_code == 0 and not h.killed and not h.result().killed
    finally:
        for proc in processes_with(m):
            proc.kill()


def test_a_closed_reader_stops_collecting_output(make_sandbox):
    sb = make_sandbox()
    h = sb.processes.spawn("sleep 0.2; head -c 5000000 /dev/zero")
    h.reader.close()
    assert h.wait(timeout=10).exit_code == 0 and h.stdout_bytes == 5_000_000
    assert h._stdout.reader is not None and h._stdout.reader._chunks == []


@pytest.mark.parametrize("foreground", [False, True], ids=["spawn", "execute_command"])
def test_a_command_starting_while_the_sandbox_is_destroyed_does_not_outlive_it(make_sandbox, foreground):
    sb = make_sandbox()
    sb.start()
    m = marker()
    prepare = sb.prepare_launch

    def prepare_then_destroy(command, cwd, env):
        spec = prepare(command, cwd, env)
        sb.destroy()  # as if on another thread, after the checks and before the process starts
        return spec

    sb.prepare_launch = prepare_then_destroy
    with pytest.raises(SandboxStateError):
        if foreground:
            sb.execute_command(f"sleep {m}", timeout=5)
        else:
            sb.processes.spawn(f"sleep {m}")
    assert wait_for(lambda: not processes_with(m), 3), processes_with(m)
