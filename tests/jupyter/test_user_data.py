"""Sharing the notebook's variables with the agent, from the notebook's side: ``%ws share``,
``%ws unshare``, ``%ws fetch``, the SharedVariables widget and the approval panel's details —
then the whole flow in a real ws-jupyter kernel with a bubblewrap sandbox kernel: share -> list
-> inspect -> request (denied, then approved, through the ToolActivity widget's API) -> code in
the sandbox -> fetch back, with exact round trips."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from ..sandbox.conftest import requires_bwrap
from .test_kernel import execute, streamed
from .test_magics import html_of, ws


def test_share_and_unshare_messages(ws_ip: Any) -> None:
    ws_ip.run_cell("import os\nsales_eu = [1, 2]\nsales_us = [3]\nsales_token = 'x'\nsales_env = os.environ")
    out = ws(ws_ip, "share sales_*")
    assert out.level == "warn"
    assert out.message.startswith("Shared with the agent: sales_eu, sales_us")
    assert "not shared: sales_token (the name looks like a secret)" in out.message
    assert "not shared: sales_env (a process environment (os.environ))" in out.message
    listing = ws(ws_ip, "share")  # no kernel here: a table
    assert (
        "sales_eu" in listing.text() and "sales_us" in listing.text() and "sales_token" not in listing.text()
    )
    assert "<table" in html_of(ws_ip, listing)
    assert ws(ws_ip, "unshare sales_us").message == "No longer shared with the agent: sales_us"
    assert ws_ip.user_ns["ws"].shared() == ["sales_eu"]
    assert ws(ws_ip, "share later --allow-copy").message.endswith(
        "no variable matches later yet (shared when one appears)"
    )
    ws_ip.run_cell("later = {'a': 1}")
    assert ws_ip.user_ns["ws"].shared() == ["later", "sales_eu"]
    assert "No longer shared" in ws(ws_ip, "unshare --all").message
    with pytest.raises(UsageError, match="give NAMEs or --all"):
        ws(ws_ip, "unshare")
    with pytest.raises(UsageError, match="not a variable name"):
        ws(ws_ip, "share 1abc")
    assert ws(ws_ip, "share --limit 64").message == "Copy limit: 64 MB."
    assert ws_ip.user_ns["ws"].fetch.__doc__  # the Python twin of %ws fetch


def test_unload_stops_sharing_the_notebooks_variables(ip: Any, ws_dir: Path) -> None:
    ip.run_line_magic("ws", f"init {ws_dir}")
    workspace = ip.user_ns["ws"]
    ip.run_cell("frame_a = [1, 2]")
    ws(ip, "share frame_a")
    workspace.share({"k": 1}, name="given")
    assert workspace.shared() == ["frame_a", "given"]
    ip.run_line_magic("unload_ext", "ws_jupyter")
    assert workspace.shared() == ["given"]  # the namespace is no longer followed; values shared stay
    ip.run_line_magic("load_ext", "ws_jupyter")


def test_fetch_usage(ws_ip: Any) -> None:
    ws_ip.run_cell("existing = 1")
    with pytest.raises(UsageError, match="existing already exists in the notebook; add --force"):
        ws(ws_ip, "fetch existing")
    with pytest.raises(UsageError, match="NAME must be a Python identifier"):
        ws(ws_ip, "fetch 'x; import os'")
    ws_ip.user_ns["ws"].sandbox.kernels.execute("result = {'auc': 0.9, 'labels': ['a', 'b']}")
    out = ws(ws_ip, "fetch result --as from_sandbox")
    assert out.message.startswith(
        "Fetched result from the sandbox kernel 'default' as from_sandbox: dict, 2 items, "
    )
    assert ws_ip.user_ns["from_sandbox"] == {"auc": 0.9, "labels": ["a", "b"]}
    failed = ws(ws_ip, "fetch missing_one")
    assert failed.level == "error" and "has no variable missing_one" in failed.message
    assert "missing_one" not in ws_ip.user_ns


def test_shared_variables_widget_follows_shares_and_revokes(ws_ip: Any) -> None:
    from ws_jupyter.jupyter.widgets import Dashboard, SharedVariables

    ws_ip.run_cell("import numpy as np\nframe = np.zeros((4, 2))\nnotes = 'hello'")
    workspace = ws_ip.user_ns["ws"]
    ws(ws_ip, "share frame notes")
    panel = SharedVariables(workspace)
    try:
        assert [r["name"] for r in panel.rows] == ["frame", "notes"]
        assert panel.rows[0]["shape"] == "4x2" and panel.rows[0]["copy"] == "asks"
        assert panel.revoke("frame") and [r["name"] for r in panel.rows] == ["notes"]
        workspace.share([1], name="extra", allow_copy=True)
        assert [(r["name"], r["copy"]) for r in panel.rows] == [("extra", "allowed"), ("notes", "asks")]
        html, text = panel.snapshot()
        assert "extra" in text and "<table" in html
    finally:
        panel.close()
    dashboard = Dashboard(workspace)
    try:
        assert "Shared" in dashboard.tab_names
    finally:
        dashboard.close()


def test_approval_panel_shows_the_details(workspace: Any) -> None:
    from ws_jupyter.jupyter.widgets import ToolActivity

    feed_panel = ToolActivity(workspace)
    try:
        feed = feed_panel.feed
        import threading

        done = threading.Event()
        threading.Thread(
            target=lambda: (feed.request_approval("call-x", "user_variable_request", "user_variable_request",
                                                  {"name": "df"}, details="Copy df (<b>x</b>) into ..."), done.set()),
        ).start()  # fmt: skip
        for _ in range(200):
            feed_panel.refresh()
            if feed_panel.pending:
                break
            done.wait(0.02)
        assert feed_panel.calls[-1]["details"] == "Copy df (<b>x</b>) into ..."
        label = feed_panel.pending_box.children[0].children[0].value
        assert "Copy df (&lt;b&gt;x&lt;/b&gt;) into ..." in label  # text, never markup
        assert feed_panel.deny()
        assert done.wait(10)
    finally:
        feed_panel.close()


# --- the whole flow in a real kernel ------------------------------------------------------------

FLOW = r"""
import threading, time, pathlib
import numpy as np, pandas as pd
from ws_jupyter.jupyter.widgets import ToolActivity

df = pd.DataFrame({
    "city": pd.Categorical(["Paris", "Tokyo", "Paris", "Lima"] * 25),
    "temp": np.where(np.arange(100) % 7 == 0, np.nan, np.linspace(-5, 30, 100)),
    "when": pd.date_range("2024-03-30", periods=100, freq="h", tz="Europe/Paris"),
    "count": pd.array([None, 1, 2, 3] * 25, dtype="Int64"),
    "label": [f"r{i}" for i in range(100)],
})
class Hostile:
    def __repr__(self): time.sleep(60)
    def __len__(self): raise RuntimeError("len")
    def __getattr__(self, name): pathlib.Path(VICTIM).unlink(); return 1
model = Hostile()
"""


def cell_output(kc: Any, code: str, timeout: float = 120) -> str:
    reply, messages = execute(kc, code, timeout=timeout)
    errors = [m["content"] for m in messages if m["msg_type"] == "error"]
    assert reply["content"]["status"] == "ok" and not errors, (errors, streamed(messages, "stderr"))
    return streamed(messages)


@requires_bwrap
@pytest.mark.bwrap
def test_share_inspect_request_run_fetch_in_real_kernels(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _km, kc = kernel
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    cell_output(kc, f"%ws init {tmp_path / 'ws'} --isolation bwrap")
    cell_output(kc, FLOW.replace("VICTIM", repr(str(victim))))
    assert "Shared with the agent: df, model" in cell_output(kc, "shared = %ws share df model\nprint(shared)")
    cell_output(kc, "tools = {t.name: t for t in ws.tools()}\npanel = ToolActivity(ws)")
    listing = cell_output(kc, "print(tools['user_variables_list'].run({}))")
    assert "df     pandas.DataFrame" in listing and "model  __main__.Hostile" in listing
    timing = cell_output(
        kc,
        "t = time.perf_counter(); text = tools['user_variable_inspect'].run({'name': 'model'}); "
        "print(round(time.perf_counter() - t, 3)); print(text)",
    )
    seconds, text = timing.split("\n", 1)
    assert float(seconds) < 1.0 and "none of its code was run" in text and victim.exists()
    inspected = cell_output(kc, "print(tools['user_variable_inspect'].run({'name': 'df', 'rows': 2}))")
    assert "Europe/Paris" in inspected and "category" in inspected and "numeric summary" in inspected

    start = textwrap.dedent(
        """
        outputs = []
        def agent():
            outputs.append(tools['user_variable_request'].run(
                {'name': 'df', 'reason': 'mean temperature per city', 'as': 'weather'}))
        worker = threading.Thread(target=agent); worker.start()
        """
    )
    decide = textwrap.dedent(
        """
        deadline = time.monotonic() + 60
        while not panel.feed.pending() and time.monotonic() < deadline:
            time.sleep(0.02)
        print(panel.feed.pending()[0].details)
        panel.{decision}()
        worker.join(120)
        print(outputs[-1])
        """
    )
    cell_output(kc, start)
    denied = cell_output(kc, decide.replace("{decision}", "deny"))
    assert denied.startswith("Copy df (pandas.DataFrame, 100 rows x 5 columns, ")
    assert "The agent's reason: mean temperature per city" in denied
    assert denied.rstrip().endswith("Tool call refused by user.")
    cell_output(kc, start)
    approved = cell_output(kc, decide.replace("{decision}", "approve"))
    assert "Copied into the sandbox kernel 'default' as weather (pandas.DataFrame" in approved

    analysis = cell_output(
        kc,
        "print(tools['workspace_execute_code'].run({'code': "
        '\'summary = weather.groupby("city", observed=True)["temp"].mean().to_frame()\\nprint(summary.shape)\'}))',
    )
    assert "(3, 1)" in analysis
    fetched = cell_output(kc, "a = %ws fetch summary\nb = %ws fetch weather --as df_back\nprint(a)\nprint(b)")
    assert (
        "Fetched summary from the sandbox kernel 'default' as summary: pandas.DataFrame, 3 rows x 1 columns"
        in fetched
    )
    check = cell_output(
        kc,
        "pd.testing.assert_frame_equal(df_back, df)\n"
        "pd.testing.assert_frame_equal(summary, df.groupby('city', observed=True)['temp'].mean().to_frame())\n"
        "print(json.dumps({'ok': True, 'model_untouched': isinstance(model, Hostile)}))".replace(
            "print(json", "import json; print(json"
        ),
    )
    assert json.loads(check.strip().splitlines()[-1]) == {"ok": True, "model_untouched": True}
    assert victim.read_text() == "keep me"
    assert "already exists" in cell_output(
        kc, "try:\n    %ws fetch summary\nexcept Exception as e:\n    print(e)"
    )
    cell_output(kc, "panel.close()")
