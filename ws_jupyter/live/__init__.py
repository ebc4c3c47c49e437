"""A live link to the notebook the user has open: read it (unsaved edits included), propose
reviewed edits, show runs — the protocol the ``open_notebook_*`` tools call, and its values.

``protocol`` (:class:`LiveNotebook`), ``model`` (edits, proposals, outcomes, the view of the
notebook), ``link`` (:class:`FrontEndLink`: the protocol over a message channel to the front end)
and ``registry`` (which workspace reaches which notebook). The channel itself — a comm between the
``%ws`` extension in the notebook's kernel and the ws-jupyter JupyterLab extension — lives in
``ws_jupyter.jupyter``; nothing here imports IPython.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_EXPORTS = {
    "LiveNotebook": "ws_jupyter.live.protocol",
    "FrontEndLink": "ws_jupyter.live.link",
    "Transport": "ws_jupyter.live.link",
    "CellEdit": "ws_jupyter.live.model",
    "CellOutcome": "ws_jupyter.live.model",
    "CellView": "ws_jupyter.live.model",
    "LiveStatus": "ws_jupyter.live.model",
    "NotebookView": "ws_jupyter.live.model",
    "Proposal": "ws_jupyter.live.model",
    "ProposalOutcome": "ws_jupyter.live.model",
    "UserRunOutcome": "ws_jupyter.live.model",
    "attach": "ws_jupyter.live.registry",
    "detach": "ws_jupyter.live.registry",
    "live_notebook": "ws_jupyter.live.registry",
}

__all__ = [
    "CellEdit",
    "CellOutcome",
    "CellView",
    "FrontEndLink",
    "LiveNotebook",
    "LiveStatus",
    "NotebookView",
    "Proposal",
    "ProposalOutcome",
    "Transport",
    "UserRunOutcome",
    "attach",
    "detach",
    "live_notebook",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

if TYPE_CHECKING:  # pragma: no cover
    from .link import FrontEndLink, Transport
    from .model import (
        CellEdit,
        CellOutcome,
        CellView,
        LiveStatus,
        NotebookView,
        Proposal,
        ProposalOutcome,
        UserRunOutcome,
    )
    from .protocol import LiveNotebook
    from .registry import attach, detach, live_notebook
