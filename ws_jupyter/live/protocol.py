"""``LiveNotebook``: what the agent tools may do with the notebook the user has open.

The tools (``open_notebook_read``, ``open_notebook_edit``, ``open_notebook_run``) depend on this
protocol only; :class:`~ws_jupyter.live.link.FrontEndLink` implements it over a message channel
to the front end (the ws-jupyter JupyterLab extension), and a test or another front end can
implement it otherwise. What the protocol leaves out is as deliberate as what it has: nothing here
changes how proposals are reviewed (the user's mode) or whether the user's kernel may run the
agent's cells — those are the user's settings, changed from the notebook only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from threading import Event
from typing import Any, Protocol, runtime_checkable

from .model import LiveStatus, NotebookView, Proposal, ProposalOutcome, UserRunOutcome

__all__ = ["LiveNotebook"]


@runtime_checkable
class LiveNotebook(Protocol):
    """A notebook open in a front end, reachable while cells run (see the module docstring).

    Every method may raise :class:`~ws_jupyter.errors.LiveNotebookError` (not connected, a
    timeout, a refusal); waits end early when ``abort`` is set.
    """

    def status(self) -> LiveStatus:
        """Whether a front end is connected now (never blocks)."""
        ...

    def connect(self, timeout: float) -> LiveStatus:
        """Connects when not connected yet, waiting at most ``timeout`` seconds."""
        ...

    def read(
        self, *, cell_ids: Sequence[str] | None = None, offset: int = 0, limit: int | None = None
    ) -> NotebookView:
        """The notebook as the user sees it now: ``cell_ids`` (in notebook order), or the cells
        from ``offset`` (at most ``limit``)."""
        ...

    def propose(self, proposal: Proposal, *, wait: float, abort: Event | None = None) -> ProposalOutcome:
        """Shows ``proposal`` for review (or applies it, in the user's accept mode) and waits up to
        ``wait`` seconds for the user's decision."""
        ...

    def proposal(self, proposal_id: str, *, wait: float, abort: Event | None = None) -> ProposalOutcome:
        """The state of an earlier proposal, waiting up to ``wait`` seconds while it is pending."""
        ...

    def show_outputs(
        self, cell_id: str, version: str, outputs: Sequence[Mapping[str, Any]], *, origin: Mapping[str, Any]
    ) -> str:
        """Shows ``outputs`` (nbformat outputs, already made inert) in cell ``cell_id`` if it still
        has ``version``, marked with ``origin``; returns ``"shown"`` or ``"stale"``."""
        ...

    def run_in_user_kernel(
        self, cell_ids: Sequence[str], versions: Mapping[str, str], *, wait: float, abort: Event | None = None
    ) -> UserRunOutcome:
        """Asks the user to run cells in the user's own kernel; waits up to ``wait`` seconds."""
        ...

    def user_run(self, run_id: str, *, wait: float, abort: Event | None = None) -> UserRunOutcome:
        """The state of an earlier request to run cells in the user's kernel."""
        ...
