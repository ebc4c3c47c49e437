"""``ChangesPanel`` (the dashboard's Changes tab): what changed since a checkpoint, and taking it back.

Pick a checkpoint (the newest by default; automatic ones are taken before each agent turn's first
change), and the panel lists the files added, modified and deleted since, each with who changed
it (the agent's tool call, its command or kernel code, or "outside"). **Diff** shows a file's
unified diff (notebooks cell by cell; shown as text, never as HTML), **Restore** brings back the
checkpoint's version of that file, **Restore all** of every file (with "remove files created
since" also deletes new ones). A restore first records the state it replaces: **Undo restore**
puts it back. **Checkpoint now** records the files as they are.

State for code and tests: ``checkpoints`` (dicts: id, name, reason, time), ``since`` (the chosen
checkpoint's id), ``rows`` (dicts: path, change, kind, detail, by, call_id), ``diff_path`` and
``diff_text`` (the diff shown), ``call_filter`` (a tool call whose changes alone are listed:
``show_call()``), ``status``; ``refresh()``, ``select(id)``, ``show_diff(path)``,
``restore(path=None)``, ``undo()``, ``take()``, ``show_call(call_id)``.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w
from traitlets import Dict, List, Unicode

from ...errors import WorkspaceError
from ..views.changes import CHANGE_COLOURS, diff_html
from ..views.common import BAD, MONO, MUTED, badge, esc, one_line, table
from .controls import button, flexible
from .snapshot import Snapshotting

__all__ = ["ChangesPanel"]

MAX_ROWS = 300
_WRAP = "overflow-wrap: anywhere; min-width: 0"


class ChangesPanel(Snapshotting, w.VBox):
    """The Changes tab. See the module docstring."""

    checkpoints = List(Dict())
    since = Unicode("")
    rows = List(Dict())
    diff_path = Unicode("")
    diff_text = Unicode("")
    call_filter = Unicode("")
    status = Unicode("")
    snapshot_label = "workspace changes"

    def __init__(self, workspace: Any) -> None:
        self.workspace = workspace
        self._changes: Any = None
        self._undo: Any = None
        self.header = w.HTML()
        self.picker = w.Dropdown(
            description="Since", options=[], layout=w.Layout(width="auto", min_width="18em")
        )
        self.refresh_button = button("Refresh", icon="refresh", tooltip="Look at the files again")
        self.take_button = button("Checkpoint now", icon="camera", tooltip="Record the files as they are now")
        self.restore_all_button = button(
            "Restore all",
            icon="undo",
            button_style="warning",
            tooltip="Bring back every file of the checkpoint",
        )
        self.remove_new = w.Checkbox(description="remove files created since", indent=False, value=False)
        self.undo_button = button(
            "Undo restore", icon="repeat", tooltip="Put back what the last restore replaced"
        )
        self.undo_button.layout.display = "none"
        self.status_line = w.HTML()
        self.list_box = w.VBox()
        self.diff_view = w.HTML()
        self.show_all_button = button("Show all", tooltip="List the changes of every call again")
        self.show_all_button.layout.display = "none"
        controls = w.HBox(
            [self.picker, self.refresh_button, self.take_button, self.restore_all_button, self.remove_new,
             self.undo_button, self.show_all_button],
            layout=w.Layout(flex_flow="row wrap", align_items="center"),
        )  # fmt: skip
        super().__init__(
            [self.header, controls, self.status_line, self.list_box, self.diff_view],
            layout=w.Layout(width="100%"),
        )
        self.add_class("ws-changes-panel")
        self.refresh_button.on_click(lambda _: self.refresh())
        self.take_button.on_click(lambda _: self.take())
        self.restore_all_button.on_click(lambda _: self.restore())
        self.undo_button.on_click(lambda _: self.undo())
        self.show_all_button.on_click(lambda _: self.show_call(""))
        self.picker.observe(self._picked, names="value")
        self._row_widgets: list[w.Widget] = []
        self.refresh()

    # --- state --------------------------------------------------------------------------------------

    def _manager(self) -> Any:
        return self.workspace.checkpoints

    def refresh(self) -> None:
        """Reads the checkpoints and the changes since the chosen one again."""
        try:
            found = self._manager().list()
        except (WorkspaceError, OSError) as exc:  # a store that cannot be opened: said in the panel
            self._set_status(f"Checkpoints are not available: {exc}", error=True)
            return
        self.checkpoints = [
            {
                "id": c.id,
                "name": c.name,
                "reason": c.reason,
                "time": c.created_at.astimezone().strftime("%H:%M:%S"),
            }
            for c in reversed(found)
        ]
        options = [
            (f"{c['name']} · {c['time']} · {one_line(c['reason'], 40)}", c["id"]) for c in self.checkpoints
        ]
        ids = [c["id"] for c in self.checkpoints]
        wanted = self.since if self.since in ids else (ids[0] if ids else "")
        self.picker.unobserve(self._picked, names="value")
        self.picker.options = options
        self.picker.value = wanted or None
        self.picker.observe(self._picked, names="value")
        self.since = wanted
        self._load()

    def _picked(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self.select(change["new"])

    def select(self, checkpoint_id: str) -> None:
        """Lists the changes since another checkpoint."""
        self.since = checkpoint_id
        if self.picker.value != checkpoint_id:
            self.picker.value = checkpoint_id
        self._load()

    def _load(self) -> None:
        self.diff_path, self.diff_text = "", ""
        if not self.since:
            self._changes = None
            self.rows = []
            self._set_status(
                "No checkpoint yet: one is taken before the agent's first change, or press Checkpoint now."
            )
            self._draw()
            return
        try:
            self._changes = self.workspace.changes(self.since)
        except (WorkspaceError, OSError) as exc:
            self._changes = None
            self.rows = []
            self._set_status(f"Cannot compare: {exc}", error=True)
            self._draw()
            return
        self.rows = [
            {"path": c.path, "change": c.change, "kind": c.kind, "detail": c.detail, "by": str(c.by),
             "call_id": c.by.call_id or ""}
            for c in self._changes
        ]  # fmt: skip
        notes = self._manager().notes[-2:]
        excluded = len(self._changes.excluded)
        extra = f"; {excluded} not recorded (too large or being written)" if excluded else ""
        self._set_status((" ".join(notes) + extra).strip(" ;"))
        self._draw()

    def _set_status(self, text: str, *, error: bool = False) -> None:
        self.status = text
        colour = f"color: {BAD}" if error else MUTED
        self.status_line.value = f"<div style='{colour}'>{html.escape(text)}</div>" if text else ""

    # --- drawing ------------------------------------------------------------------------------------

    def _visible_rows(self) -> list[dict[str, Any]]:
        if not self.call_filter:
            return list(self.rows)
        return [r for r in self.rows if r["call_id"] == self.call_filter]

    def _draw(self) -> None:
        for widget in self._row_widgets:
            widget.close()
        self._row_widgets = []
        rows = self._visible_rows()
        name = next((c["name"] for c in self.checkpoints if c["id"] == self.since), "")
        what = f" by call {self.call_filter}" if self.call_filter else ""
        self.header.value = (
            f"<strong>Changes{html.escape(what)}</strong> <span style='{MUTED}'>{len(rows)} since checkpoint "
            f"{html.escape(name)}</span>"
            if self.since
            else "<strong>Changes</strong>"
        )
        self.show_all_button.layout.display = "" if self.call_filter else "none"
        self.restore_all_button.disabled = not self.rows
        children: list[w.Widget] = []
        for r in rows[:MAX_ROWS]:
            label = flexible(
                w.HTML(
                    f"<div style='{_WRAP}; line-height: 1.4'>{badge(r['change'], CHANGE_COLOURS.get(r['change'], MUTED))} "
                    f"<span style='{MONO}'>{esc(r['path'])}{'/' if r['kind'] == 'dir' else ''}</span> "
                    + (
                        f"<span style='{MUTED}'>[{esc(r['detail'])}]</span> "
                        if r["detail"] and r["detail"] != "content"
                        else ""
                    )
                    + f"<span style='{MUTED}'>— {esc(r['by'])}</span></div>"
                )
            )
            label.layout.flex = "1 1 20em"
            diff = button("Diff", icon="columns", tooltip=f"Show what changed in {r['path']}")
            restore = button(
                "Restore", icon="undo", tooltip=f"Bring back {r['path']} as it was at the checkpoint"
            )
            diff.add_class("ws-change-diff")
            restore.add_class("ws-change-restore")
            diff.on_click(lambda _, p=r["path"]: self.show_diff(p))
            restore.on_click(lambda _, p=r["path"]: self.restore(p))
            if r["kind"] == "dir":
                diff.disabled = True
            row = w.HBox([label, diff, restore], layout=w.Layout(align_items="center", flex_flow="row wrap"))
            children.append(row)
            self._row_widgets += [row, label, diff, restore]
        if len(rows) > MAX_ROWS:
            more = w.HTML(f"<div style='{MUTED}'>… {len(rows) - MAX_ROWS} more (see %ws changes)</div>")
            children.append(more)
            self._row_widgets.append(more)
        if not rows and self.since:
            empty = w.HTML(f"<div style='{MUTED}'>Nothing changed.</div>")
            children.append(empty)
            self._row_widgets.append(empty)
        self.list_box.children = children
        self.diff_view.value = (
            f"<div><strong>{esc(self.diff_path)}</strong></div>{diff_html(self.diff_text)}"
            if self.diff_path
            else ""
        )
        self.snapshot_changed()

    # --- actions ------------------------------------------------------------------------------------

    def show_diff(self, path: str) -> None:
        """Shows the diff of one changed file (again: hides it)."""
        if self.diff_path == path:
            self.diff_path, self.diff_text = "", ""
            self._draw()
            return
        change = self._changes.get(path) if self._changes is not None else None
        if change is None:
            return
        try:
            text = self._manager().file_diff(change, self._changes.since)
        except (WorkspaceError, OSError) as exc:
            self._set_status(f"No diff of {path}: {exc}", error=True)
            return
        self.diff_path, self.diff_text = path, text or "(no difference in content)"
        self._draw()

    def restore(self, path: str | None = None) -> None:
        """Restores one path (None: every file) from the chosen checkpoint."""
        if not self.since:
            return
        try:
            report = self.workspace.restore(
                self.since, None if path is None else [path], remove_new=bool(self.remove_new.value)
            )
        except (WorkspaceError, OSError) as exc:
            self._set_status(f"Restore failed: {exc}", error=True)
            return
        self._undo = report.undo
        self.undo_button.layout.display = ""
        message = report.text()
        self._load()
        self._set_status(message)

    def undo(self) -> None:
        """Puts back what the last restore replaced (a restore of its own first checkpoint)."""
        if self._undo is None:
            return
        undo, self._undo = self._undo, None
        try:
            report = self.workspace.restore(undo.id, remove_new=True)
        except (WorkspaceError, OSError) as exc:
            self._set_status(f"Undo failed: {exc}", error=True)
            return
        self.undo_button.layout.display = "none"
        self._load()
        self._set_status(f"Undone: {report.text()}")

    def take(self) -> None:
        """Records a checkpoint now and lists the changes since it (none yet)."""
        try:
            cp = self._manager().take(reason="Changes tab")
        except (WorkspaceError, OSError) as exc:
            self._set_status(f"No checkpoint: {exc}", error=True)
            return
        self.since = cp.id
        self.refresh()
        self._set_status(f"Checkpoint {cp.name} taken" if cp.new else f"Nothing changed since {cp.name}")

    def show_call(self, call_id: str) -> None:
        """Lists only the changes of one tool call ("" lists all again) and shows the first diff."""
        self.call_filter = call_id
        self._draw()
        rows = self._visible_rows()
        if call_id and rows and rows[0]["kind"] != "dir":
            self.show_diff(rows[0]["path"])

    # --- snapshot -----------------------------------------------------------------------------------

    def snapshot(self) -> tuple[str, str]:
        rows = self._visible_rows()[:50]
        body = f"<div>{self.header.value}</div>" + (
            table(
                ["change", "path", "changed by"],
                [[esc(r["change"]), esc(r["path"]), esc(r["by"])] for r in rows],
            )
            if rows
            else ""
        )
        text = "\n".join([html.unescape(self.header.value.replace("<strong>", "").split("<")[0])]
                         + [f"{r['change']} {r['path']} — {r['by']}" for r in rows])  # fmt: skip
        return body, text

    def close(self) -> None:
        if not getattr(self, "_closed_once", False):
            self._closed_once = True
            self.close_snapshot()
        for widget in self._row_widgets:
            widget.close()
        for widget in (
            self.header, self.picker, self.refresh_button, self.take_button, self.restore_all_button,
            self.remove_new, self.undo_button, self.status_line, self.list_box, self.diff_view,
            self.show_all_button,
        ):  # fmt: skip
            widget.close()
        super().close()
