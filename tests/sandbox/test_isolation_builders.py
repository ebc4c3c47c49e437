"""The bubblewrap command line and the seatbelt profile, checked as text.

Seatbelt cannot run on Linux, so its profile is verified here structurally (last-match-wins
order, denied home, quoting); bubblewrap's behaviour is tested for real in test_bwrap.py.
"""

from __future__ import annotations

import os

import pytest

from ws_jupyter.sandbox.isolation import (
    SEATBELT_MARKER,
    BwrapPlan,
    Mount,
    NativeSandboxConfig,
    build_seatbelt_profile,
    is_generated_profile,
    seatbelt_argv,
)
from ws_jupyter.sandbox.isolation.seatbelt import profile_file_name


def _index(argv: list[str], *seq: str) -> int:
    for i in range(len(argv) - len(seq) + 1):
        if tuple(argv[i : i + len(seq)]) == seq:
            return i
    raise AssertionError(f"{seq} not in {argv}")


def test_bwrap_argv_structure(tmp_path):
    wd, state, ro, rw = (str(tmp_path / n) for n in ("wd", "state", "ro", "rw"))
    cfg = NativeSandboxConfig(read_only_paths=(ro,), read_write_paths=(rw,))
    argv = BwrapPlan(working_directory=wd, state_dir=state, config=cfg).argv("echo hi", cwd=wd, seccomp_fd=7)
    assert argv[0] == "bwrap" and argv[-3:] == ["/bin/sh", "-c", "echo hi"]
    assert argv[_index(argv, "--seccomp") + 1] == "7"
    for flag in ("--unshare-all", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert "--share-net" not in argv
    assert argv[_index(argv, "--cap-drop") + 1] == "ALL"
    dev = _index(argv, "--dev", "/dev")
    first_bind = _index(argv, "--ro-bind", "/usr", "/usr")  # the first bind of a host directory
    assert dev < first_bind and _index(argv, "--proc", "/proc") < first_bind
    assert _index(argv, "--tmpfs", "/tmp") < first_bind
    assert _index(argv, "--ro-bind", "/usr", "/usr") >= 0
    assert _index(argv, "--bind", wd, wd) and _index(argv, "--bind", state, state)
    assert _index(argv, "--ro-bind-try", ro, ro) and _index(argv, "--bind-try", rw, rw)
    assert argv[_index(argv, "--chdir") + 1] == wd
    assert _index(argv, "--remount-ro", "/") == argv.index("--") - 2


def test_bwrap_network_and_custom_args(tmp_path):
    wd = str(tmp_path)
    plan = BwrapPlan(
        working_directory=wd,
        config=NativeSandboxConfig(allow_network=True, bwrap_args=("--ro-bind", "/data", "/data")),
    )
    argv = plan.argv("ls", cwd=wd)
    assert "--share-net" in argv
    custom = _index(argv, "--ro-bind", "/data", "/data")
    assert custom > _index(argv, "--chdir")  # after our defaults: a later bind wins
    assert custom < _index(argv, "--remount-ro", "/") < argv.index("--")


def test_bwrap_argv_never_contains_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("WS_TEST_SECRET_TOKEN", "hunter2")
    argv = BwrapPlan(working_directory=str(tmp_path)).argv("env", cwd=str(tmp_path))
    assert "--setenv" not in argv and not any("hunter2" in a for a in argv)


def test_bwrap_nested_binds_are_ordered_shallow_first(tmp_path):
    outer, inner = str(tmp_path / "data"), str(tmp_path / "data" / "inner")
    plan = BwrapPlan(
        working_directory=str(tmp_path / "wd"),
        config=NativeSandboxConfig(read_write_paths=(inner,)),
        mounts=[Mount(outer, read_only=True)],
    )
    argv = plan.argv("true", cwd=str(tmp_path / "wd"))
    assert _index(argv, "--ro-bind-try", outer, outer) < _index(argv, "--bind-try", inner, inner)


def test_bwrap_visibility_for_path_filtering(tmp_path):
    plan = BwrapPlan(working_directory=str(tmp_path))
    assert plan.is_visible("/usr/bin") and plan.is_visible(str(tmp_path))
    assert not plan.is_visible("/definitely/not/here") and not plan.is_visible("relative/bin")
    assert plan.on_path("/usr/bin") and plan.on_path("/usr/bin")  # remembered the second time
    assert not plan.on_path("/definitely/not/here") and plan._path_dirs["/definitely/not/here"] is False


def test_seatbelt_profile_denies_home_and_limits_writes(tmp_path):
    home = "/Users/alice"
    cfg = NativeSandboxConfig(read_only_paths=("/data/ro",), read_write_paths=("/data/rw",))
    text = build_seatbelt_profile(
        working_directory="/Users/alice/project",
        config=cfg,
        state_dir="/private/var/folders/xy/state",
        mounts=[Mount("/Volumes/ext", read_only=True)],
        home=home,
    )
    lines = text.splitlines()
    assert lines[0] == SEATBELT_MARKER and is_generated_profile(text)
    assert "(deny default)" in lines
    allow_all = lines.index("(allow file-read*)")
    deny_home = next(i for i, line in enumerate(lines) if line.startswith("(deny file-read*"))
    reallow = next(i for i, line in enumerate(lines) if line.startswith("(allow file-read* (subpath"))
    assert allow_all < deny_home < reallow  # last match wins: the grants come after the denial
    assert '(subpath "/Users")' in lines[deny_home] and f'(subpath "{home}")' in lines[deny_home]
    for granted in (
        "/Users/alice/project",
        "/data/ro",
        "/data/rw",
        "/Volumes/ext",
        "/private/var/folders/xy/state",
    ):
        assert f'(subpath "{granted}")' in lines[reallow]
    writes = next(line for line in lines if line.startswith("(allow file-write* (subpath"))
    assert '"/Users/alice/project"' in writes and '"/data/rw"' in writes
    assert '"/data/ro"' not in writes and '"/Volumes/ext"' not in writes
    assert (
        "(allow network*)" not in lines
        and "(allow network* (remote unix-socket) (local unix-socket))" in lines
    )


def test_seatbelt_network_allowed_and_quoting():
    text = build_seatbelt_profile(
        working_directory='/Users/bob/we"ird\\dir',
        config=NativeSandboxConfig(allow_network=True),
        home="/Users/bob",
    )
    assert "(allow network*)" in text.splitlines()
    assert '(subpath "/Users/bob/we\\"ird\\\\dir")' in text
    with pytest.raises(ValueError):
        build_seatbelt_profile(working_directory="/x\n(allow default)", home="/Users/bob")


def test_seatbelt_argv_and_profile_names():
    assert seatbelt_argv("/p/s.sb", "echo hi") == [
        "/usr/bin/sandbox-exec",
        "-f",
        "/p/s.sb",
        "/bin/sh",
        "-c",
        "echo hi",
    ]
    cfg = NativeSandboxConfig()
    a = profile_file_name("/w", cfg)
    assert a == profile_file_name("/w", cfg) != profile_file_name("/w2", cfg)
    assert a != profile_file_name("/w", NativeSandboxConfig(allow_network=True))
    assert a.startswith("seatbelt-") and a.endswith(".sb")
    assert not is_generated_profile("(version 1)\n(allow default)\n")


def test_seatbelt_profile_includes_python_when_binaries_allowed():
    import sys

    with_py = build_seatbelt_profile(working_directory="/w", home="/Users/x")
    without = build_seatbelt_profile(
        working_directory="/w", config=NativeSandboxConfig(allow_system_binaries=False), home="/Users/x"
    )
    assert (
        f'"{sys.base_prefix}"' in with_py and f'"{sys.base_prefix}"' not in without.split(";; ...except")[1]
    )
    assert os.path.isabs(sys.base_prefix)


def test_read_only_mount_of_the_working_directory_in_both_builders(tmp_path):
    wd = str(tmp_path / "wd")
    ro = [Mount(wd, read_only=True)]
    plan = BwrapPlan(working_directory=wd, config=NativeSandboxConfig(seccomp=False), mounts=ro)
    argv = plan.argv("true", cwd=wd)
    assert not plan.working_directory_writable
    assert _index(argv, "--ro-bind", wd, wd) and ("--bind", wd, wd) not in zip(argv, argv[1:], argv[2:])
    # a read-only parent counts too; an explicit writable mount of the directory itself wins
    assert not BwrapPlan(
        working_directory=wd, config=NativeSandboxConfig(seccomp=False), mounts=[Mount(str(tmp_path), True)]
    ).working_directory_writable
    assert BwrapPlan(
        working_directory=wd,
        config=NativeSandboxConfig(seccomp=False),
        mounts=[Mount(str(tmp_path), True), Mount(wd, False)],
    ).working_directory_writable
    text = build_seatbelt_profile(
        working_directory=wd, config=NativeSandboxConfig(), mounts=ro, home="/Users/a"
    )
    writes = [line for line in text.splitlines() if line.startswith("(allow file-write*")]
    assert all((f'"{wd}"' not in line and "(subpath" in line) or "literal" in line for line in writes), writes
    assert "(allow file-write* )" not in text  # an empty filter would allow every write
