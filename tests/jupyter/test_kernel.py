"""The kernelspec, `ws-jupyter install-kernel`, and the extension inside a real ws-jupyter kernel.

Kernels are real ipykernel processes started by jupyter_client from the installed spec, so these
tests also prove that the spec preloads the extension, that `%ws run` streams and is killed by
the kernel's interrupt, and that widgets updated from background threads reach the front-end.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from ws_jupyter.cli import CliCommand, main, register_command, registered_commands
from ws_jupyter.install.kernel import DISPLAY_NAME, LOGO_FILES, kernel_spec_dict

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _jupyter_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env.update(extra)
    return env


# --- kernelspec files ---------------------------------------------------------------------------


def test_repo_kernelspec_matches_the_generated_one() -> None:
    spec_dir = REPO / "kernelspec" / "ws-jupyter"
    assert json.loads((spec_dir / "kernel.json").read_text()) == kernel_spec_dict("python")
    package_logos = REPO / "ws_jupyter" / "install" / "kernelspec"
    for name in LOGO_FILES:
        assert (spec_dir / name).read_bytes() == (package_logos / name).read_bytes()
    for size in (32, 64):
        data = (spec_dir / f"logo-{size}x{size}.png").read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(data[16:20], "big") == size and int.from_bytes(data[20:24], "big") == size


def test_kernel_spec_preloads_the_extension() -> None:
    spec = kernel_spec_dict()
    assert spec["argv"][0] == sys.executable and "--ext=ws_jupyter" in spec["argv"]
    assert spec["display_name"] == DISPLAY_NAME == "Python 3 (ws-jupyter)"
    assert spec["interrupt_mode"] == "signal"


# --- ws-jupyter install-kernel --------------------------------------------------------------------


def test_install_kernel_prefix_is_listed_by_jupyter(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(BIN / "ws-jupyter"), "install-kernel", "--prefix", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        env=_jupyter_env(),
    ).stdout
    kernel_dir = tmp_path / "share" / "jupyter" / "kernels" / "ws-jupyter"
    assert str(kernel_dir) in out
    listing = subprocess.run(
        [str(BIN / "jupyter"), "kernelspec", "list", "--json"],
        capture_output=True,
        text=True,
        check=True,
        env=_jupyter_env(JUPYTER_PATH=str(tmp_path / "share" / "jupyter")),
    ).stdout
    spec = json.loads(listing)["kernelspecs"]["ws-jupyter"]
    assert spec["resource_dir"] == str(kernel_dir)
    assert spec["spec"]["argv"][0] == sys.executable  # this Python, by absolute path
    assert spec["spec"]["display_name"] == "Python 3 (ws-jupyter)"
    assert sorted(p.name for p in kernel_dir.iterdir()) == sorted(["kernel.json", *LOGO_FILES])


def test_install_kernel_user_and_name(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    env = _jupyter_env(JUPYTER_DATA_DIR=str(data_dir))
    subprocess.run(
        [
            str(BIN / "ws-jupyter"),
            "install-kernel",
            "--user",
            "--name",
            "ws-test",
            "--display-name",
            "WS test",
        ],
        check=True,
        capture_output=True,
        env=env,
    )
    spec = json.loads((data_dir / "kernels" / "ws-test" / "kernel.json").read_text())
    assert spec["display_name"] == "WS test"
    listing = json.loads(
        subprocess.run(
            [str(BIN / "jupyter"), "kernelspec", "list", "--json"],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout
    )
    assert "ws-test" in listing["kernelspecs"]
    removed = subprocess.run(
        [str(BIN / "ws-jupyter"), "uninstall-kernel", "--name", "ws-test"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert removed.returncode == 0 and not (data_dir / "kernels" / "ws-test").exists()
    again = subprocess.run(
        [str(BIN / "ws-jupyter"), "uninstall-kernel", "--name", "ws-test"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert again.returncode == 1 and "No kernelspec named 'ws-test'" in again.stderr


def test_uninstall_refuses_other_kernels(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    other = data_dir / "kernels" / "someone-else"
    other.mkdir(parents=True)
    (other / "kernel.json").write_text(
        json.dumps(
            {
                "argv": ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "x",
                "language": "python",
            }
        )
    )
    result = subprocess.run(
        [str(BIN / "ws-jupyter"), "uninstall-kernel", "--name", "someone-else"],
        capture_output=True,
        text=True,
        env=_jupyter_env(JUPYTER_DATA_DIR=str(data_dir)),
    )
    assert result.returncode == 2 and "not a ws-jupyter kernel" in result.stderr and other.exists()


def test_install_kernel_bad_usage() -> None:
    both = subprocess.run(
        [str(BIN / "ws-jupyter"), "install-kernel", "--user", "--prefix", "/tmp/x"],
        capture_output=True,
        text=True,
    )
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
    bad = subprocess.run(
        [str(BIN / "ws-jupyter"), "install-kernel", "--prefix", "/tmp/x", "--name", "Bad Name"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "Invalid kernel name" in bad.stderr and "Traceback" not in bad.stderr


def test_cli_registry(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[str] = []

    def configure(parser: Any) -> None:
        parser.add_argument("word")

    command = CliCommand(
        "echo-word", "print a word (test)", configure, lambda args: seen.append(args.word) or 0
    )
    register_command(command)
    try:
        assert "echo-word" in registered_commands() and "install-kernel" in registered_commands()
        assert main(["echo-word", "hello"]) == 0 and seen == ["hello"]
        with pytest.raises(ValueError, match="already registered"):
            register_command(CliCommand("echo-word", "dup", configure, lambda a: 0))
        assert main([]) == 2
        assert "install-kernel" in capsys.readouterr().out
    finally:
        from ws_jupyter import cli

        cli._REGISTRY.pop("echo-word", None)


# --- a real ws-jupyter kernel ---------------------------------------------------------------------


# (the ``kernel`` fixture, a real ws-jupyter kernel: conftest.py)


def execute(
    kc: Any, code: str, timeout: float = 60, on_message: Any = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Runs ``code``; returns the reply and the IOPub messages of this request (with arrival times)."""
    msg_id = kc.execute(code)
    messages: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    idle = False
    while not idle:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"no idle status for {code!r}")
        try:
            msg = kc.get_iopub_msg(timeout=remaining)
        except queue.Empty:
            continue
        msg["_arrived"] = time.monotonic()
        if on_message is not None:
            on_message(msg)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            idle = True
    return shell_reply(kc, msg_id, timeout), messages


def shell_reply(kc: Any, msg_id: str, timeout: float = 60) -> dict[str, Any]:
    """The shell reply to ``msg_id``. Replies to other requests are skipped: on a loaded machine
    ``wait_for_ready`` may have sent several ``kernel_info`` requests whose replies arrive late."""
    deadline = time.monotonic() + timeout
    while True:
        reply = kc.get_shell_msg(timeout=max(0.0, deadline - time.monotonic()))
        if reply["parent_header"].get("msg_id") == msg_id:
            return dict(reply)


def streamed(messages: list[dict[str, Any]], name: str = "stdout") -> str:
    return "".join(
        m["content"]["text"] for m in messages if m["msg_type"] == "stream" and m["content"]["name"] == name
    )


def test_kernel_has_the_extension_loaded(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    reply, messages = execute(kc, "%ws --help")
    assert reply["content"]["status"] == "ok"
    assert "Subcommands" in streamed(messages)
    reply, messages = execute(
        kc, "import sys; print('chromadb' in sys.modules, 'onnxruntime' in sys.modules)"
    )
    assert streamed(messages).strip() == "False False"  # loading the extension stays light


def test_kernel_usage_error_is_one_line(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    reply, messages = execute(kc, "%ws ls --depth nope")
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "UsageError"
    # IPython shows a UsageError as one line on stderr, without a traceback
    assert [m for m in messages if m["msg_type"] == "error"] == []
    text = streamed(messages, "stderr")
    assert text.startswith("UsageError: %ws ls: argument --depth") and text.count("\n") == 1


def test_kernel_workspace_errors_are_one_line(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    """IPython shortens only UsageError itself: a workspace error must still be one line."""
    _, kc = kernel
    execute(kc, f"%ws init {tmp_path / 'ws'}")
    for line, words in (
        ("%ws cat data/nope.csv", "File not found: data/nope.csv"),
        ("%ws cat /etc/passwd", "outside the workspace"),
        ("%ws ls ..", "outside the workspace"),
    ):
        reply, messages = execute(kc, line)
        assert reply["content"]["status"] == "error", line  # Run All still stops here
        errors = [m["content"] for m in messages if m["msg_type"] == "error"]
        assert len(errors) == 1 and len(errors[0]["traceback"]) == 1, line
        shown = errors[0]["traceback"][0]
        assert words in shown and "\n" not in shown and "Traceback" not in shown and ".py" not in shown
    reply, messages = execute(kc, "import sys; print(type(sys.last_value.error).__name__)")
    assert streamed(messages).strip() == "PathEscapeError"  # the original error stays reachable


def test_kernel_run_shows_a_head_and_a_live_tail(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _, kc = kernel
    execute(kc, f"%ws init {tmp_path / 'ws'}")
    reply, messages = execute(kc, "%ws run seq 1 300000")
    assert reply["content"]["status"] == "ok"
    assert streamed(messages).splitlines() == [str(i) for i in range(1, 101)]
    shown = [m for m in messages if m["msg_type"] in ("display_data", "update_display_data")]
    assert shown[0]["msg_type"] == "display_data"
    assert len({m["content"]["transient"]["display_id"] for m in shown}) == 1  # one display, updated
    final = shown[-1]["content"]["data"]["text/plain"].splitlines()
    assert final[0] == "… 299,870 lines not shown (all of it is in the result: r = _; r.stdout, r.stderr) …"
    assert final[1:] == [str(i) for i in range(299971, 300001)]
    assert sum(len(json.dumps(m["content"])) for m in messages) < 300_000  # 2 MB of output, bounded cell
    result = [m for m in messages if m["msg_type"] == "execute_result"]
    assert "exit 0" in result[0]["content"]["data"]["text/plain"]
    reply, messages = execute(kc, "print(len(_.stdout.splitlines()))")
    assert streamed(messages).strip() == "300000"  # the result keeps all of it


def test_kernel_widgets_leave_a_snapshot_that_follows_their_state(
    kernel: tuple[Any, Any], tmp_path: Path
) -> None:
    """After a restart or a reopen the widget's model is gone: the notebook keeps its snapshot."""
    _, kc = kernel
    execute(kc, f"%ws init {tmp_path / 'ws'}")
    _, messages = execute(kc, "p = %ws bg sh -c 'echo one; sleep 1; echo two'")
    shown = [m for m in messages if m["msg_type"] == "display_data"]
    assert "application/vnd.jupyter.widget-view+json" in shown[0]["content"]["data"]
    snapshot = shown[1]["content"]
    assert "ws-snapshot" in snapshot["data"]["text/html"] and "Saved view" in snapshot["data"]["text/html"]
    display_id = snapshot["transient"]["display_id"]
    updates: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    while not any("exited (0)" in u["data"]["text/plain"] for u in updates):
        assert time.monotonic() < deadline, "the snapshot never showed the exit"
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["msg_type"] == "update_display_data" and msg["content"]["transient"]["display_id"] == display_id:
            updates.append(msg["content"])
    final = updates[-1]["data"]["text/plain"].splitlines()
    assert final[1:] == ["one", "two"] and "exited (0)" in updates[-1]["data"]["text/html"]


def test_kernel_reports_a_skill_problem_once(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _, kc = kernel
    bad = tmp_path / "ws" / "skills" / "bad-skill"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("---\nname: Bad_Name\ndescription: Invalid name.\n---\n\nDo it.\n")
    reply, messages = execute(kc, f"%ws init {tmp_path / 'ws'}")
    assert reply["content"]["status"] == "ok"
    assert streamed(messages, "stderr") == ""  # no log line, no warning from inside IPython
    shown = [m["content"]["data"]["text/plain"] for m in messages if m["msg_type"] == "execute_result"]
    assert len(shown) == 1 and shown[0].count("Invalid skill") == 1


def test_kernel_run_streams_live(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _, kc = kernel
    execute(kc, f"%ws init {tmp_path / 'ws'}")
    reply, messages = execute(kc, "%ws run for i in 1 2 3 4; do echo step $i; sleep 0.4; done")
    assert reply["content"]["status"] == "ok"
    chunks = [m for m in messages if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"]
    assert "".join(c["content"]["text"] for c in chunks) == "step 1\nstep 2\nstep 3\nstep 4\n"
    # the first line reached the front-end well before the command ended
    assert chunks[-1]["_arrived"] - chunks[0]["_arrived"] > 0.8
    result = [m for m in messages if m["msg_type"] == "execute_result"]
    assert "exit 0" in result[0]["content"]["data"]["text/plain"]


def test_kernel_interrupt_kills_the_process_tree(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    km, kc = kernel
    workdir = tmp_path / "ws"
    execute(kc, f"%ws init {workdir} --isolation none")  # PIDs the host sees (bwrap has its own)
    pidfile = workdir / "pids.txt"
    # `$$$$` is the shell's `$$` (a %ws line turns `$$` into `$`, as IPython does)
    msg_id = kc.execute("%ws run sh -c 'sleep 300 & echo $! > pids.txt; echo $$$$ >> pids.txt; wait'")
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and len(pidfile.read_text().split()) == 2):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    pids = [int(p) for p in pidfile.read_text().split()]
    assert all(psutil.pid_exists(p) for p in pids)
    km.interrupt_kernel()
    reply = shell_reply(kc, msg_id, timeout=30)
    assert reply["content"]["status"] == "ok"  # the magic handled the interrupt and reported it
    deadline = time.monotonic() + 10
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids):
        assert time.monotonic() < deadline, "processes survived the interrupt"
        time.sleep(0.05)
    reply, messages = execute(kc, "_")
    assert (
        "interrupted"
        in next(m for m in messages if m["msg_type"] == "execute_result")["content"]["data"]["text/plain"]
    )


def test_kernel_widget_updates_from_threads_reach_the_frontend(
    kernel: tuple[Any, Any], tmp_path: Path
) -> None:
    """`%ws bg` returns at once; the widget keeps updating from the I/O thread while the kernel idles."""
    _, kc = kernel
    execute(kc, f"%ws init {tmp_path / 'ws'}")
    updates: list[dict[str, Any]] = []

    def collect(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "comm_msg" and msg["content"]["data"].get("method") == "update":
            updates.append(msg)

    t0 = time.monotonic()
    _reply, messages = execute(
        kc, "p = %ws bg for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.3; done", on_message=collect
    )
    assert time.monotonic() - t0 < 1.5  # returned long before the process ended
    assert any(
        m["msg_type"] == "display_data" and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
        for m in messages
    )
    deadline = time.monotonic() + 15
    seen = ""
    while "tick 6" not in seen:
        assert time.monotonic() < deadline, f"no live update with the last line; got {seen[-200:]!r}"
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        msg["_arrived"] = time.monotonic()
        collect(msg)
        for u in updates:
            value = u["content"]["data"]["state"].get("value", "")
            if "tick" in value:
                seen = value
    assert "tick 1" in seen
    # updates are throttled: one render changes several models at once (a burst of comm messages);
    # bursts come at most ~10 a second
    times = sorted(u["_arrived"] for u in updates)
    bursts = [t for i, t in enumerate(times) if i == 0 or t - times[i - 1] > 0.05]
    assert len(bursts) >= 3  # it did update live, several times
    gaps = [b - a for a, b in itertools.pairwise(bursts)]
    assert min(gaps) > 0.08


@pytest.mark.slow
def test_demo_script_headless(tmp_path: Path) -> None:
    """`scripts/demo.sh --headless` (the README's demo without a browser) writes an executed HTML copy."""
    result = subprocess.run(
        [str(REPO / "scripts" / "demo.sh"), "--headless", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
        env={**_jupyter_env(), "WS_JUPYTER_SKIP_SETUP": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"wrote {tmp_path}/quickstart.html" in result.stdout
    page = (tmp_path / "quickstart.html").read_text()
    assert "5 cities; the largest is Osaka" in page  # executed, outputs included
    assert "Workspace quickstart" in page and (tmp_path / "workspace" / "analysis" / "summary.py").exists()


def test_kernel_stays_responsive_while_a_process_floods(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    """QUALITY: widgets stay responsive while a background process streams 10k+ lines/s."""
    _, kc = kernel
    execute(kc, f"%ws init {tmp_path / 'ws'}")
    execute(kc, "flood = %ws bg seq 1 1000000000")
    time.sleep(1.0)
    latencies = []
    for _ in range(5):
        t0 = time.monotonic()
        reply, _messages = execute(kc, "1 + 1")  # a click is a message of the same kind
        latencies.append(time.monotonic() - t0)
        assert reply["content"]["status"] == "ok"
    # seq prints 1, 2, 3...: the last complete line is the number of lines so far
    _, messages = execute(
        kc, "print(int(flood.stdout.rsplit(chr(10), 2)[-2]) / (flood.execution_time_ms / 1000))"
    )
    lines_per_second = float(streamed(messages))
    execute(kc, "flood.kill()")
    assert lines_per_second > 10_000
    assert sorted(latencies)[len(latencies) // 2] < 0.5, latencies
