"""FrontEndLink's own rules: which page it talks to, what it does when a page goes away or never
answers, and what the tools say then.

A page written in Python stands in for JupyterLab here (a real page cannot be made to vanish
mid-request or to answer out of turn on cue); the JupyterLab extension itself is exercised in
tests/jupyter/test_live.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.errors import LiveNotebookError
from ws_jupyter.live import FrontEndLink, Proposal, attach, detach, live_notebook


class Page:
    """Answers like the extension: hello to an announcement, a reply per request."""

    def __init__(self, name: str, *, subshells: bool = True, answer: bool = True) -> None:
        self.id = name
        self.subshells = subshells
        self.answer = answer
        self.link: FrontEndLink | None = None
        self.requests: list[Mapping[str, Any]] = []
        self.proposal_status = "pending"

    def hello(self, nonce: Any) -> None:
        assert self.link is not None
        self.link.receive({"hello": {"frontend": self.id, "nonce": nonce, "path": "nb.ipynb",
                                     "subshells": self.subshells, "version": "0.1.0"}})

    def handle(self, message: Mapping[str, Any]) -> None:
        if message.get("to") != self.id:
            return
        self.requests.append(message)
        if not self.answer:
            return
        op = message["op"]
        if op == "read":
            result: dict[str, Any] = {"path": "nb.ipynb", "total": 0, "cells": []}
        elif op == "propose":
            result = {"proposal_id": f"P{len(self.requests)}", "status": self.proposal_status, "cells": []}
        else:
            self.link.receive({"re": message["id"], "from": self.id, "ok": False,  # type: ignore[union-attr]
                               "error": {"message": f"no {op} here"}})
            return
        self.link.receive({"re": message["id"], "from": self.id, "ok": True, "result": result})  # type: ignore[union-attr]

    def decide(self, proposal_id: str, status: str) -> None:
        self.link.receive({"from": self.id, "event": "proposal",  # type: ignore[union-attr]
                           "outcome": {"proposal_id": proposal_id, "status": status, "cells": []}})


class Channel:
    """A transport whose announcements reach the pages listed in ``pages`` (in order)."""

    def __init__(self, *pages: Page, blocked: str | None = None) -> None:
        self.pages = list(pages)
        self.announcements = 0
        self.blocked = blocked

    def announce(self, data: Mapping[str, Any]) -> None:
        self.announcements += 1
        for page in self.pages:
            threading.Thread(target=page.hello, args=(data["nonce"],), daemon=True).start()

    def send(self, message: Mapping[str, Any]) -> None:
        for page in self.pages:
            threading.Thread(target=page.handle, args=(message,), daemon=True).start()

    def close(self) -> None:
        pass

    def replies_blocked(self) -> str | None:
        return self.blocked


def linked(*pages: Page, **kw: Any) -> tuple[FrontEndLink, Channel]:
    channel = Channel(*pages, blocked=kw.pop("blocked", None))
    link = FrontEndLink(channel, **{"reply_timeout": 1.0, "hello_timeout": 1.0, **kw})
    for page in pages:
        page.link = link
    return link, channel


def test_the_first_page_to_answer_is_the_one_talked_to() -> None:
    first, second = Page("first"), Page("second")
    link, _ = linked(first, second)
    assert link.connect(2).connected
    link.read()
    assert len(first.requests) + len(second.requests) == 1  # one page took the request
    talked = first if first.requests else second
    link.receive({"re": "r999", "from": "someone-else", "ok": True, "result": {}})  # ignored
    assert link.status().connected and link.status().path == "nb.ipynb"
    assert talked.requests[0]["to"] == talked.id


def test_a_page_that_stops_answering_is_replaced_by_one_that_answers() -> None:
    gone = Page("gone", answer=False)
    link, channel = linked(gone)
    link.connect(2)
    fresh = Page("fresh")
    fresh.link = link
    channel.pages = [fresh]  # the tab was reloaded: the new page answers the next announcement
    started = time.monotonic()
    view = link.read()
    assert view.path == "nb.ipynb" and fresh.requests and time.monotonic() - started < 5
    assert channel.announcements == 2


def test_no_page_at_all_is_a_clear_error_not_a_hang() -> None:
    link, channel = linked()
    started = time.monotonic()
    with pytest.raises(LiveNotebookError) as caught:
        link.read()
    assert caught.value.code == "LIVE_NOT_CONNECTED" and time.monotonic() - started < 5
    assert "pip install ws-jupyter" in str(caught.value) and "jupyter labextension list" in str(caught.value)
    # asking whether a page is there costs at most the probe, and announces at most once per period
    assert not link.available(probe=0.2, every=60) and not link.available(probe=0.2, every=60)
    assert channel.announcements == 1  # announced by read; the probes within the period announce nothing


def test_without_subshells_a_call_from_a_running_cell_fails_at_once() -> None:
    link, _ = linked(Page("old", subshells=False), blocked="this kernel has no subshells")
    link.connect(2)
    started = time.monotonic()
    with pytest.raises(LiveNotebookError) as caught:
        link.read()
    assert caught.value.code == "LIVE_KERNEL_BUSY" and "no subshells" in str(caught.value)
    assert time.monotonic() - started < 1


def test_a_decision_ends_the_wait_and_a_lost_page_withdraws_what_it_held() -> None:
    page = Page("p")
    link, _ = linked(page)
    link.connect(2)
    proposal = Proposal.from_args([{"op": "insert", "after": "", "cell_type": "code", "source": "x"}])
    pending = link.propose(proposal, wait=0)
    assert pending.pending
    threading.Timer(0.2, page.decide, args=(pending.proposal_id, "applied")).start()
    started = time.monotonic()
    assert link.proposal(pending.proposal_id, wait=10).status == "applied"
    assert time.monotonic() - started < 5  # the event, not the timeout, ended the wait
    again = link.propose(proposal, wait=0)
    link.receive({"from": "p", "event": "bye"})
    withdrawn = link.proposal(again.proposal_id, wait=0)
    assert withdrawn.status == "withdrawn" and "propose again" in (withdrawn.message or "")
    abort = threading.Event()
    abort.set()
    link.connect(2)
    third = link.propose(proposal, wait=30, abort=abort)  # an aborted call returns at once
    assert third.pending


def test_a_refusal_comes_back_as_the_pages_sentence() -> None:
    link, _ = linked(Page("p"))
    link.connect(2)
    with pytest.raises(LiveNotebookError, match="no show_outputs here") as caught:
        link.show_outputs("c1", "v", [], origin={})
    assert caught.value.code == "LIVE_REFUSED"


def test_the_tools_are_listed_only_while_a_page_is_connected(tmp_path: Any) -> None:
    ws = Workspace(filesystem=LocalFilesystem(tmp_path), auto_index_paths=())
    names = lambda: {t.name for t in ws.tools()}  # noqa: E731
    assert not {n for n in names() if n.startswith("open_notebook")}
    link, _ = linked()
    attach(ws, link)
    assert live_notebook(ws) is link and not {n for n in names() if n.startswith("open_notebook")}
    page = Page("p")
    page.link = link
    link._transport.pages = [page]  # type: ignore[attr-defined]
    link.connect(2)
    assert {"open_notebook_read", "open_notebook_edit"} <= names()
    assert "open_notebook_run" not in names()  # no sandbox: nothing to run cells in
    tool = next(t for t in ws.tools() if t.name == "open_notebook_edit")
    said = tool.run({"edits": [{"op": "insert", "after": "", "cell_type": "code", "source": "x" * (10 << 20)}]})
    assert said.startswith("Error:") and "10,485,760 bytes" in said and not page.requests
    said = tool.run({"edits": [{"op": "insert", "after": "", "cell_type": "code", "source": "x"}], "proposal_id": "P1"})
    assert said.startswith("Error: give either edits")
    detach(ws)
    assert live_notebook(ws) is None


def test_runs_in_the_users_kernel_can_be_turned_off_by_the_tools_config(tmp_path: Any) -> None:
    from ws_jupyter import LocalSandbox
    from ws_jupyter.tools.names import WORKSPACE_TOOLS as T

    ws = Workspace(
        filesystem=LocalFilesystem(tmp_path),
        sandbox=LocalSandbox(working_directory=tmp_path, isolation="none"),
        auto_index_paths=(),
        tools={T.OPEN_NOTEBOOK.RUN: {"user_kernel": False}},
    )
    try:
        page = Page("p")
        link, _ = linked(page)
        attach(ws, link)
        link.connect(2)
        run = next(t for t in ws.tools() if t.name == "open_notebook_run")
        said = run.run({"cell_ids": ["c1"], "where": "user"})
        assert said.startswith("Error: running cells in the user's kernel is turned off") and not page.requests
    finally:
        ws.destroy()
