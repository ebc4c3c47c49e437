"""The user-data tools as an agent calls them: present only while something is shared, read-only
listing and inspection, and copies into a real sandbox kernel that wait for the user's
Approve/Deny (through the activity feed the notebook's panel uses), showing the variable's type,
size and the agent's reason — unless the user allowed copies of it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ws_jupyter import WORKSPACE_TOOLS, LocalFilesystem, LocalSandbox, Workspace, tool_activity
from ws_jupyter.tools.hints import hints_for, title_for
from ws_jupyter.tools.names import USER_DATA_TOOLS

from ..sandbox.conftest import BWRAP

T = WORKSPACE_TOOLS.USER_DATA
REFUSED = "Tool call refused by user."


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    root = tmp_path_factory.mktemp("user-data-tools")
    workspace = Workspace(
        filesystem=LocalFilesystem(root),
        sandbox=LocalSandbox(working_directory=str(root), isolation="bwrap" if BWRAP.available else "none"),
        tools={WORKSPACE_TOOLS.SANDBOX.EXECUTE_CODE: {"require_approval": False}},
        bm25=False,
    )
    workspace.init()
    yield workspace
    workspace.destroy()


@pytest.fixture
def shared(ws: Workspace) -> Iterator[dict[str, Any]]:
    values = {
        "sales": pd.DataFrame({"region": ["north", "south", "east"], "amount": [10.5, np.nan, 7.25]}),
        "weights": np.arange(6, dtype=np.float32),
    }
    ws.share(values["sales"], name="sales")
    ws.share(values["weights"], name="weights", allow_copy=True)
    yield values
    ws.unshare()
    ws.set_tools_config({WORKSPACE_TOOLS.SANDBOX.EXECUTE_CODE: {"require_approval": False}})


def tools(ws: Workspace) -> dict[str, Any]:
    return {t.workspace_tool_name: t for t in ws.tools()}


def sandbox_has(ws: Workspace, name: str) -> bool:
    out = tools(ws)[WORKSPACE_TOOLS.SANDBOX.EXECUTE_CODE].run({"code": f"print({name!r} in globals())"})
    return out.strip().endswith("True")


def test_tools_exist_only_while_something_is_shared(tmp_path: Path) -> None:
    plain = Workspace(filesystem=LocalFilesystem(tmp_path), bm25=False)
    try:
        assert not set(USER_DATA_TOOLS) & set(tools(plain))
        plain.share([1, 2], name="numbers")
        present = set(tools(plain))
        assert {T.LIST, T.INSPECT} <= present and T.REQUEST not in present  # no sandbox: nothing to copy into
    finally:
        plain.destroy()


def test_list_and_inspect(ws: Workspace, shared: dict[str, Any]) -> None:
    listing = tools(ws)[T.LIST].run({})
    lines = listing.splitlines()
    assert lines[0] == "2 shared variables (read-only):"
    assert lines[2].split()[:5] == ["sales", "pandas.DataFrame", "3", "rows", "x"] and lines[
        2
    ].rstrip().endswith("ask")
    assert lines[3].split()[:2] == ["weights", "numpy.ndarray"] and lines[3].rstrip().endswith("yes")
    view = tools(ws)[T.INSPECT].run({"name": "sales", "rows": 1, "columns": ["amount"]})
    assert view.startswith("sales: pandas.DataFrame, 3 rows x 2 columns")
    assert "amount" in view and "north" not in view and "mean" in view
    missing = tools(ws)[T.INSPECT].run({"name": "secret_stuff"})
    assert missing.startswith("Error: No shared variable named 'secret_stuff'")
    ws.unshare()
    assert tools(ws)[T.LIST].run({}).startswith("The user has shared no variables")


def test_inspect_output_respects_the_token_budget(ws: Workspace) -> None:
    ws.share(pd.DataFrame({f"column_{i}": np.arange(50) for i in range(40)}), name="wide")
    ws.set_tools_config({T.INSPECT: {"max_output_tokens": 300}})
    out = tools(ws)[T.INSPECT].run({"name": "wide", "rows": 50})
    assert "[output truncated" in out and len(out) < 3000
    ws.unshare()


def test_request_waits_for_approval_and_deny_copies_nothing(ws: Workspace, shared: dict[str, Any]) -> None:
    request = tools(ws)[T.REQUEST]
    assert request.require_approval
    no_approver = request.run({"name": "sales", "reason": "sum by region"})
    assert "requires approval" in no_approver and not sandbox_has(ws, "sales")
    feed = tool_activity(ws)
    detach = feed.attach_approver()  # what the notebook's ToolActivity panel does while shown
    try:
        outputs: list[str] = []

        def agent(args: dict[str, Any]) -> None:
            outputs.append(request.run(args))

        for decision in ("deny", "approve"):
            thread = threading.Thread(
                target=agent, args=({"name": "sales", "reason": "sum by region", "as": "regions"},)
            )
            thread.start()
            deadline = time.monotonic() + 30
            while not feed.pending() and time.monotonic() < deadline:
                time.sleep(0.02)
            (pending,) = feed.pending()
            assert pending.details is not None
            assert pending.details.startswith("Copy sales (pandas.DataFrame, 3 rows x 2 columns, ")
            assert "into the sandbox kernel 'default' as regions" in pending.details
            assert pending.details.endswith("The agent's reason: sum by region")
            getattr(feed, decision)(pending.call_id)
            thread.join(60)
        denied, approved = outputs
        assert denied == REFUSED
        assert approved.startswith("Copied into the sandbox kernel 'default' as regions (pandas.DataFrame")
        events = [e for e in feed.recent() if e.kind == "approval_requested" and e.details]
        assert events and "sum by region" in events[-1].details
    finally:
        detach()
    total = tools(ws)[WORKSPACE_TOOLS.SANDBOX.EXECUTE_CODE].run({"code": "print(regions['amount'].sum())"})
    assert total.strip() == "17.75"
    assert shared["sales"]["amount"].isna().sum() == 1  # the user's frame is untouched


def test_shared_with_copies_allowed_needs_no_approval(ws: Workspace, shared: dict[str, Any]) -> None:
    out = tools(ws)[T.REQUEST].run({"name": "weights", "reason": "normalise"})
    assert out.startswith("Copied into the sandbox kernel 'default' as weights (numpy.ndarray")
    assert sandbox_has(ws, "weights")


def test_request_limits_and_refusals(ws: Workspace, shared: dict[str, Any]) -> None:
    ws.set_tools_config({"approver": lambda *_: True, T.REQUEST: {"max_bytes": 100}})
    out = tools(ws)[T.REQUEST].run({"name": "sales", "reason": "r"})
    assert out.startswith("Error: The variable sales is about ") and "over the 100 B copy limit" in out
    ws.set_tools_config({"approver": lambda *_: True})

    class Model:
        pass

    ws.share(Model(), name="model")
    out = tools(ws)[T.REQUEST].run({"name": "model", "reason": "r"})
    assert "has no safe format" in out and "What can be copied" in out
    bad = tools(ws)[T.REQUEST].run({"name": "sales", "reason": "r", "as": "import"})
    assert bad.startswith("Error:") and "identifier" in bad
    assert tools(ws)[T.REQUEST].run({"name": "nope", "reason": "r"}).startswith("Error: No shared variable")


def test_hints_and_titles() -> None:
    assert hints_for(T.LIST).read_only and hints_for(T.INSPECT).read_only
    assert not hints_for(T.REQUEST).read_only
    assert title_for(T.REQUEST) == "Request a copy of a shared variable"
