"""The live link to this notebook's page: its state, and the settings only you can change.

With the ws-jupyter JupyterLab extension (it comes with `pip install ws-jupyter`), the agent tools
`open_notebook_read`, `open_notebook_edit` and `open_notebook_run` reach this notebook as you see
it — also while a cell runs an agent loop. The agent proposes edits; you see each as a diff in the
notebook and press Accept or Reject.

  --mode review   every proposal waits for your Accept / Reject (the default)
  --mode accept   proposals apply at once, marked in the notebook (Undo reverts them)
  --user-runs ask the agent may ask to run cells in this kernel; you approve each request
  --user-runs off it may not (it can still run them in the workspace sandbox)

No agent tool can change these; the notebook's toolbar has the same switch.

Examples:
  %ws live
  %ws live --mode accept
  %ws live --user-runs off
"""

from __future__ import annotations

from typing import Any

from ..live import link_of_session
from ..parsing import WsArgumentParser
from ..views.live import LiveStatusView
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]

#: Seconds `%ws live` waits for the page to answer when it is not connected yet.
CONNECT_TIMEOUT = 3.0


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("--mode", choices=["review", "accept"], help="how agent proposals are applied")
    parser.add_argument("--user-runs", choices=["ask", "off"], help="may the agent ask to run cells here")


def run(inv: Invocation) -> Any:
    link = link_of_session(inv.session)
    if link is None:
        raise inv.usage_error("the live link needs a Jupyter kernel (this IPython has none)")
    status = link.connect(CONNECT_TIMEOUT)
    if inv.args.mode is not None or inv.args.user_runs is not None:
        if not status.connected:
            raise inv.usage_error(f"not connected to the notebook page: {status.problem}")
        status = link.set_settings(mode=inv.args.mode, user_runs=inv.args.user_runs)
    return LiveStatusView(status)


COMMAND = Subcommand(
    name="live",
    summary="the live link to this notebook's page: `%ws live [--mode review|accept] [--user-runs ask|off]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
