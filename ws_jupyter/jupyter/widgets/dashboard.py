"""``Dashboard`` (``%ws ui``): every workspace widget in tabs, wired together.

Files (FileBrowser), Run (CommandRunner), Processes (ProcessMonitor), Search (SearchPanel — a
clicked hit opens in the Files tab), Skills (SkillsBrowser), Agent tools (ToolActivity),
Kernels (KernelActivity: the code the agent runs, as live cells), Network (NetworkLog: every
connection attempt of a sandbox in network allow mode) and Shared (SharedVariables: the variables
shared with the agent, once something is), each present when the workspace has what
it needs, under a one-line summary of the workspace.

State for code and tests: ``tab_names``, and the parts as attributes (``files``, ``runner``,
``processes``, ``search``, ``skills``, ``activity``, ``kernels``, ``network``, ``shared``; None when absent); ``show(name)`` selects a
tab.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w
from traitlets import List, Unicode

from ...sandbox.capabilities import sandbox_egress, sandbox_kernels, sandbox_processes
from ..views.common import MUTED
from .controls import stylesheet
from .live import Throttle
from .snapshot import Snapshotting

__all__ = ["Dashboard"]


class Dashboard(Snapshotting, w.VBox):
    """The workspace in one widget. See the module docstring."""

    tab_names = List(Unicode())
    snapshot_label = "dashboard"

    def __init__(self, workspace: Any, *, interval: float = 0.2) -> None:
        from ... import tool_activity
        from .changes import ChangesPanel
        from .command_runner import CommandRunner
        from .file_browser import FileBrowser
        from .kernel_activity import KernelActivity
        from .network_log import NetworkLog
        from .process_monitor import ProcessMonitor
        from .search_panel import SearchPanel
        from .shared_variables import SharedVariables
        from .skills_browser import SkillsBrowser
        from .tool_activity import ToolActivity

        self.workspace = workspace
        self._unfollow: Any = None
        self.files: FileBrowser | None = None
        self.runner: CommandRunner | None = None
        self.processes: ProcessMonitor | None = None
        self.search: SearchPanel | None = None
        self.skills: SkillsBrowser | None = None
        self.activity: ToolActivity | None = None
        self.kernels: KernelActivity | None = None
        self.network: NetworkLog | None = None
        self.shared: SharedVariables | None = None
        tabs: list[tuple[str, w.Widget]] = []
        if workspace.has_filesystem_config():
            self.files = FileBrowser(workspace)
            tabs.append(("Files", self.files))
        # both run commands as the sandbox's processes (Stop and Kill need them)
        if (
            workspace.has_sandbox_config()
            and sandbox_processes(workspace.resolve_sandbox(None)) is not None
        ):
            self.runner = CommandRunner(workspace, interval=interval)
            tabs.append(("Run", self.runner))
            self.processes = ProcessMonitor(workspace, interval=interval)
            tabs.append(("Processes", self.processes))
        if getattr(workspace, "can_search", False):
            self.search = SearchPanel(workspace, file_browser=self.files, on_open=self._opened)
            tabs.append(("Search", self.search))
        if workspace.skills is not None:
            self.skills = SkillsBrowser(workspace)
            tabs.append(("Skills", self.skills))
        self.changes: ChangesPanel | None = None
        if workspace.filesystem is not None and not getattr(workspace.filesystem, "read_only", False):
            self.changes = ChangesPanel(workspace)
        self.activity = ToolActivity(
            workspace, interval=interval, on_changes=self._show_call if self.changes is not None else None
        )
        if self.changes is not None:
            tabs.append(("Changes", self.changes))
            self.changes.observe(lambda _: self._link_changes(), names="rows")
            self._link_changes()
            self._follow = Throttle(self._refresh_changes, 1.0)
            self._unfollow = tool_activity(workspace).subscribe(self._on_tool_event)
        tabs.append(("Agent tools", self.activity))
        if workspace.has_sandbox_config():
            kernels = sandbox_kernels(workspace.resolve_sandbox(None))
            if kernels is not None and kernels.available:
                self.kernels = KernelActivity(workspace, interval=interval)
                tabs.append(("Kernels", self.kernels))
            if sandbox_egress(workspace.resolve_sandbox(None)) is not None:
                self.network = NetworkLog(workspace, interval=interval)
                tabs.append(("Network", self.network))
        from ...userdata import shared_namespace

        if shared_namespace(workspace) is not None:
            self.shared = SharedVariables(workspace)
            tabs.append(("Shared", self.shared))
        self.tab = w.Tab(children=[t for _, t in tabs])
        for i, (name, _) in enumerate(tabs):
            self.tab.set_title(i, name)
        self.tab_names = [name for name, _ in tabs]
        info = workspace.get_info()
        sandbox = info.sandbox
        isolation = sandbox.isolation if sandbox not in (None, "dynamic") else None  # a SandboxInfo
        base = getattr(info.filesystem, "base_path", "") if info.filesystem not in (None, "dynamic") else ""
        self.title = w.HTML(
            f"<strong>{html.escape(workspace.name)}</strong> <span style='{MUTED}'>"
            f"{html.escape(str(base or ''))}"
            + (f" · isolation: {html.escape(str(isolation))}" if isolation else "")
            + "</span>"
        )
        # Tabs keep their whole title (ipywidgets shrinks them to a cut word in a narrow notebook):
        # the tab bar wraps instead.
        self.style = stylesheet(
            ".ws-dashboard > .widget-tab > .lm-TabBar .lm-TabBar-content { flex-wrap: wrap; }"
            ".ws-dashboard > .widget-tab > .lm-TabBar .lm-TabBar-tab { flex: 0 0 auto; }"
        )
        super().__init__([self.title, self.tab, self.style], layout=w.Layout(width="100%"))
        self.add_class("ws-dashboard")
        self._tabs = tabs
        for _, part in tabs:
            if isinstance(part, Snapshotting):
                part.snapshot_into(self)
        self.tab.observe(lambda _: self.snapshot_changed(), names="selected_index")

    def snapshot(self) -> tuple[str, str]:
        """The summary line, then each tab's snapshot (the selected one unfolded)."""
        body, text = [f"<div>{self.title.value}</div>"], [self.workspace.name]
        for i, (name, part) in enumerate(self._tabs):
            if not isinstance(part, Snapshotting):
                continue
            part_html, part_text = part.snapshot()
            unfold = " open" if i == self.tab.selected_index else ""
            body.append(
                f"<details{unfold} style='margin: 2px 0'><summary style='cursor: pointer'><strong>"
                f"{html.escape(name)}</strong></summary><div style='margin-left: 1em'>{part_html}</div></details>"
            )
            text.append(f"[{name}]\n{part_text}")
        return "".join(body), "\n".join(text)

    # --- the Changes tab and the tool feed ----------------------------------------------------

    def _link_changes(self) -> None:
        if self.changes is None or self.activity is None:
            return
        counts: dict[str, int] = {}
        for row in self.changes.rows:
            if row["call_id"]:
                counts[row["call_id"]] = counts.get(row["call_id"], 0) + 1
        self.activity.link_changes(counts)

    def _on_tool_event(self, event: Any) -> None:
        """A call that may have changed files finished: look at the files again (throttled)."""
        if event.kind == "finished" and self.changes is not None:
            self._follow.request()

    def _refresh_changes(self) -> None:
        if self.changes is not None:
            self.changes.refresh()

    def _show_call(self, call_id: str) -> None:
        """From the tool feed: the Changes tab, with the changes of one call and its first diff."""
        if self.changes is None:
            return
        self.show("Changes")
        self.changes.show_call(call_id)

    def _opened(self, path: str, line: int | None) -> None:
        if self.files is not None:
            self.show("Files")

    def show(self, name: str) -> None:
        """Selects the tab called ``name``."""
        self.tab.selected_index = self.tab_names.index(name)

    def close(self) -> None:
        self.close_snapshot()
        unfollow, self._unfollow = self._unfollow, None
        if unfollow is not None:
            unfollow()
            self._follow.close()
        for part in (
            self.files,
            self.runner,
            self.processes,
            self.search,
            self.skills,
            self.activity,
            self.kernels,
            self.network,
            self.shared,
        ):
            if part is not None:
                part.close()
        self.tab.close()
        self.title.close()
        self.style.close()
        super().close()
