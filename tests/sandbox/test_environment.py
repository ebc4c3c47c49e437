"""The curated environment: what commands see by default, and how env= layers apply."""

from __future__ import annotations

import pytest

from ws_jupyter.errors import InvalidArgumentError
from ws_jupyter.sandbox.environment import build_environment, filter_path, validate_env


def test_default_environment_is_minimal(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "nope")
    env = build_environment(home="/h", tmpdir="/t", host_path="/usr/bin:/bin")
    assert env == {
        "PATH": "/usr/bin:/bin",
        "HOME": "/h",
        "TMPDIR": "/t",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "PYTHONUNBUFFERED": "1",
    }


def test_layers_override_in_order_and_none_unsets():
    env = build_environment(
        home="/h",
        tmpdir="/t",
        host_path="/bin",
        layers=[{"A": "1", "TERM": "xterm"}, {"A": "2", "LANG": None}],
    )
    assert env["A"] == "2" and env["TERM"] == "xterm" and "LANG" not in env


def test_path_filter_applies_to_host_path_only():
    keep = {"/usr/bin"}.__contains__
    assert (
        build_environment(home="/h", tmpdir="/t", host_path="/x:/usr/bin", path_filter=keep)["PATH"]
        == "/usr/bin"
    )
    user = build_environment(
        home="/h", tmpdir="/t", host_path="/x", path_filter=keep, layers=[{"PATH": "/x"}]
    )
    assert user["PATH"] == "/x"
    assert filter_path("/a::/b:/a", lambda p: True) == "/a:/b:/a"


@pytest.mark.parametrize("bad", [["A=1"], {"": "x"}, {"A=B": "x"}, {"A": 3}, {"A": "nul\0"}, {1: "x"}])
def test_validate_env_rejects_bad_input(bad):
    with pytest.raises(InvalidArgumentError):
        validate_env(bad)


def test_validate_env_copies():
    src = {"A": "1", "B": None}
    out = validate_env(src)
    assert out == src and out is not src and validate_env(None) == {}
