"""Open the workspace dashboard: files, a command runner, processes, search, skills, the agent's
tool activity (with Approve/Deny) and its code executions in the sandbox's kernels, in tabs. The value is the Dashboard widget (`d = _`).

Example:
  %ws ui
"""

from __future__ import annotations

from typing import Any

from ..parsing import WsArgumentParser
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument(
        "--tab", help="tab to show first (Files, Run, Processes, Search, Skills, Agent tools, Kernels)"
    )


def run(inv: Invocation) -> Any:
    from ..widgets.dashboard import Dashboard

    dashboard = Dashboard(inv.workspace, interval=inv.magics.update_interval)
    if inv.args.tab:
        names = {n.lower(): n for n in dashboard.tab_names}
        if inv.args.tab.lower() not in names:
            dashboard.close()
            raise inv.usage_error(f"no tab {inv.args.tab!r}; tabs: {', '.join(dashboard.tab_names)}")
        dashboard.show(names[inv.args.tab.lower()])
    inv.session.track(dashboard.close)
    return dashboard


COMMAND = Subcommand(
    name="ui",
    summary="the dashboard: files, run, processes, search, skills, agent tools",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
