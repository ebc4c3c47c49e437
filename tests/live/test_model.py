"""The live link's values: what an agent may propose (checked, bounded) and what a page may answer."""

from __future__ import annotations

import re

import pytest

from ws_jupyter.errors import InvalidArgumentError, LiveNotebookError
from ws_jupyter.live import CellEdit, NotebookView, Proposal, ProposalOutcome
from ws_jupyter.live.model import MAX_EDITS, MAX_READ_CELLS, MAX_SOURCE_BYTES, UserRunOutcome


def edit(**kw: object) -> dict[str, object]:
    return {"op": "replace", "cell_id": "c1", "version": "0123456789abcdef", "source": "x = 1", **kw}


def test_each_op_takes_what_it_needs_and_nothing_else() -> None:
    assert CellEdit.from_args(edit()).to_wire() == edit()
    assert CellEdit.from_args({"op": "insert", "after": "", "cell_type": "markdown", "source": "# t"}).after == ""
    assert CellEdit.from_args({"op": "delete", "cell_id": "c1", "version": "v"}).source is None
    assert CellEdit.from_args({"op": "move", "cell_id": "c1", "version": "v", "after": "c2"}).after == "c2"
    cases = {
        "op must be one of": {"op": "rewrite"},
        "version (the version open_notebook_read showed": edit(version=None),
        "an insert makes a new cell": {"op": "insert", "cell_id": "c1", "after": "", "cell_type": "code", "source": ""},
        "cell_type is required for insert": {"op": "insert", "after": "", "source": "x"},
        "after is required for move": {"op": "move", "cell_id": "c1", "version": "v"},
        "delete takes no source": {"op": "delete", "cell_id": "c1", "version": "v", "source": "x"},
        "cell_type must be one of": edit(cell_type="python"),
        "not valid Unicode": edit(source="\ud800"),
    }
    for message, raw in cases.items():
        with pytest.raises(InvalidArgumentError, match=re.escape(message)):
            CellEdit.from_args(raw)


def test_a_10_mb_source_is_refused_with_its_size_and_the_limit() -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        CellEdit.from_args(edit(source="x" * (10 * 1024 * 1024)))
    assert "10,485,760 bytes" in str(caught.value) and f"{MAX_SOURCE_BYTES:,}" in str(caught.value)


def test_a_proposal_is_bounded_and_touches_each_cell_once() -> None:
    assert Proposal.from_args([edit()]).cell_ids == ("c1",)
    with pytest.raises(InvalidArgumentError, match="edits is empty"):
        Proposal.from_args([])
    with pytest.raises(InvalidArgumentError, match=f"10,000 edits in one proposal: at most {MAX_EDITS}"):
        Proposal.from_args([{"op": "insert", "after": "", "cell_type": "code", "source": "x"}] * 10_000)
    with pytest.raises(InvalidArgumentError, match="the proposal's sources total"):
        Proposal.from_args([edit(cell_id=f"c{i}", source="x" * (MAX_SOURCE_BYTES - 10)) for i in range(5)])
    with pytest.raises(InvalidArgumentError, match="cell c1 is changed twice"):
        Proposal.from_args([edit(), {"op": "delete", "cell_id": "c1", "version": "v"}])


def view(**kw: object) -> dict[str, object]:
    cell = {"index": 0, "id": "c1", "cell_type": "code", "source": "x", "version": "v1", "execution_count": 3,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "hi"}]}
    return {"path": "a.ipynb", "total": 1, "cells": [cell], "kernel": "busy", "running": "c1", **kw}


def test_what_the_page_answers_is_parsed_or_refused() -> None:
    parsed = NotebookView.from_wire(view())
    assert parsed.cells[0].cell["outputs"][0]["text"] == "hi" and parsed.running == "c1"
    assert parsed.mode == "review" and parsed.user_runs == "ask"  # a missing setting is the safe one
    for bad in (
        view(path=None),
        view(total=-1),
        view(cells="x"),
        view(cells=[{"index": 0}]),
        view(cells=[{**view()["cells"][0], "cell_type": "python"}]),  # type: ignore[index]
        view(cells=[view()["cells"][0]] * (MAX_READ_CELLS + 1)),  # type: ignore[index]
        view(mode="anything"),
        "not a mapping",
    ):
        with pytest.raises(LiveNotebookError) as caught:
            NotebookView.from_wire(bad)
        assert caught.value.code == "LIVE_PROTOCOL"
    with pytest.raises(LiveNotebookError):
        ProposalOutcome.from_wire({"proposal_id": "P1", "status": "maybe"})
    with pytest.raises(LiveNotebookError):
        UserRunOutcome.from_wire({"run_id": "U1", "status": "done", "cells": [{"index": 0}]})
    outcome = ProposalOutcome.from_wire(
        {"proposal_id": "P1", "status": "stale", "cells": [{"cell_id": "c1", "op": "replace", "status": "stale",
                                                          "source": "user's", "version": "v2"}]}
    )
    assert outcome.cells[0].source == "user's" and not outcome.pending
