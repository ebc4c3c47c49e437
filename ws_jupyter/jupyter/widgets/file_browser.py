"""``FileBrowser``: a lazy tree of the workspace with breadcrumbs and a preview pane.

Built from standard ipywidgets: the tree is a single ``Select`` list whose labels are indented (one
widget however many rows, so a 100k-file workspace costs nothing until folders are opened), a
folder is read only when it is opened, and a folder with thousands of entries shows them in pages.
Clicking a folder opens or closes it; clicking a file previews it (text with line numbers, images,
size and modification time). The same rules as ``%ws ls``: .gitignore honoured and hidden files
skipped unless "hidden & ignored" is ticked.

State for code and tests: ``root``, ``selected``, ``expanded`` (open folders), ``rows`` (the
visible paths, in order), ``show_hidden``.

>>> fb = FileBrowser(ws)      # doctest: +SKIP
>>> fb.toggle("src"); fb.select("src/app.py", line=12)   # doctest: +SKIP
"""

from __future__ import annotations

import html
import posixpath
from datetime import datetime
from typing import Any

import ipywidgets as w
from traitlets import Bool, Int, List, Unicode

from ..files import load_file_view
from ..views.common import BAD, MUTED, PRE, base_path_of, format_bytes
from .controls import button, stretch
from .snapshot import Snapshotting

__all__ = ["FileBrowser"]

PAGE = 500  # entries shown per folder before a "more" row
_MORE = "\0more:"  # value prefix of "show more" rows


class FileBrowser(Snapshotting, w.VBox):
    """Lazy workspace tree + preview. See the module docstring."""

    root = Unicode(".")
    selected = Unicode("")
    selected_line = Int(0)
    selected_cell = Int(-1)  # a notebook's cell to mark (-1: none)
    expanded = List(Unicode())
    rows = List(Unicode())
    show_hidden = Bool(False)
    snapshot_label = "file browser"
    SNAPSHOT_ROWS = 60

    def __init__(
        self, workspace: Any, *, root: str = ".", height: str = "26em", preview_lines: int = 400
    ) -> None:
        self.workspace = workspace
        self.fs = workspace.resolve_filesystem(None)
        self._base = base_path_of(workspace)
        self._children: dict[str, list[Any]] = {}  # folder -> WalkEntry children (read once)
        self._shown: dict[str, int] = {}  # folder -> entries shown (paging)
        self._types: dict[str, str] = {}
        self._preview_lines = preview_lines
        self._updating = False

        self.crumbs = w.HBox(layout=w.Layout(flex_flow="row wrap", align_items="center"))
        self.up_button = button(icon="arrow-up", tooltip="Parent folder")
        self.open_button = button(
            "Open folder", icon="folder-open", tooltip="Make the selected folder the root"
        )
        self.refresh_button = button(icon="refresh", tooltip="Re-read the open folders")
        self.hidden_toggle = w.Checkbox(value=False, description="hidden & ignored", indent=False)
        self.hidden_toggle.layout.width = "auto"
        self.tree = stretch(w.Select(options=[], rows=18, layout=w.Layout(height=height)))
        self.tree.add_class("ws-file-tree")
        self.preview = w.HTML(layout=w.Layout(width="100%", overflow="auto", max_height=height))
        self.preview.add_class("ws-file-preview")
        self.message = w.HTML()

        toolbar = w.HBox(
            [self.up_button, self.refresh_button, self.open_button, self.hidden_toggle],
            layout=w.Layout(flex_flow="row wrap", align_items="center"),
        )
        left = w.VBox(
            [toolbar, self.crumbs, self.tree, self.message], layout=w.Layout(width="38%", min_width="220px")
        )
        right = w.VBox([self.preview], layout=w.Layout(width="62%", padding="0 0 0 8px"))
        super().__init__(
            [w.HBox([left, right], layout=w.Layout(width="100%"))], layout=w.Layout(width="100%")
        )
        self.add_class("ws-file-browser")

        self.up_button.on_click(lambda _: self.go_up())
        self.open_button.on_click(lambda _: self.open_selected_folder())
        self.refresh_button.on_click(lambda _: self.refresh())
        self.hidden_toggle.observe(self._on_hidden, names="value")
        self.tree.observe(self._on_pick, names="value")
        self.set_root(root)

    # --- reading --------------------------------------------------------------------------------

    def _read(self, folder: str) -> list[Any]:
        if folder not in self._children:
            from ...filesystem import walk

            entries = list(
                walk(
                    self.fs,
                    folder,
                    max_depth=1,
                    include_hidden=self.show_hidden,
                    respect_gitignore=not self.show_hidden,
                )
            )
            self._children[folder] = entries
            for e in entries:
                self._types[e.path] = e.type
        return self._children[folder]

    # --- drawing --------------------------------------------------------------------------------

    def _draw(self) -> None:
        options: list[tuple[str, str]] = []

        def add(folder: str, depth: int) -> None:
            try:
                children = self._read(folder)
            except Exception as exc:
                options.append(("    " * depth + f"! {exc}", f"{_MORE}error:{folder}"))
                return
            limit = self._shown.get(folder, PAGE)
            for e in children[:limit]:
                indent = "\u2003" * depth
                if e.type == "directory":
                    mark = "▾" if e.path in self.expanded else "▸"
                    options.append((f"{indent}{mark} {e.name}/", e.path))
                    if e.path in self.expanded:
                        add(e.path, depth + 1)
                else:
                    size = f"  ({format_bytes(e.size)})" if e.size is not None else ""
                    options.append((f"{indent}\u2003 {e.name}{size}", e.path))
            if len(children) > limit:
                more = len(children) - limit
                options.append(
                    ("\u2003" * depth + f"\u2003 … {more:,} more (click to show)", f"{_MORE}{folder}")
                )

        add(self.root, 0)
        self._updating = True
        try:
            self.tree.options = options
            self.tree.value = self.selected if self.selected in {v for _, v in options} else None
        finally:
            self._updating = False
        self.rows = [v for _, v in options if not v.startswith(_MORE)]
        self._draw_crumbs()
        self.snapshot_changed()

    def _draw_crumbs(self) -> None:
        self.up_button.disabled = self.root in ("", ".")
        parts = [] if self.root in ("", ".") else self.root.split("/")
        buttons = []
        home = button("workspace", icon="home", tooltip="Back to the workspace root")
        home.on_click(lambda _: self.set_root("."))
        buttons.append(home)
        for i, part in enumerate(parts):
            target = "/".join(parts[: i + 1])
            b = button(part, tooltip=target)
            b.on_click(lambda _, t=target: self.set_root(t))
            buttons.append(w.HTML("<span style='opacity:0.6'>/</span>"))
            buttons.append(b)
        for old in self.crumbs.children:
            old.close()
        self.crumbs.children = buttons

    def snapshot(self) -> tuple[str, str]:
        """The tree as shown (folders open as they are) and the previewed file's name."""
        labels = [label for label, _ in self.tree.options][: self.SNAPSHOT_ROWS]
        more = len(self.tree.options) - len(labels)
        listing = "\n".join(labels) + (f"\n… {more:,} more" if more else "")
        where = "workspace" if self.root in ("", ".") else f"workspace/{self.root}"
        picked = f"selected: {self.selected}" if self.selected else ""
        body = (
            f"<div><strong>{html.escape(where)}</strong> <span style='{MUTED}'>{html.escape(picked)}</span></div>"
            f'<pre style="{PRE}; max-height: 20em; overflow: auto">{html.escape(listing)}</pre>'
        )
        return body, "\n".join(x for x in (where, listing, picked) if x)

    # --- actions (also the API tests drive) --------------------------------------------------------

    def set_root(self, folder: str) -> None:
        """Shows ``folder`` as the tree's root (breadcrumbs follow)."""
        stat = self.fs.stat(folder)
        if stat.type != "directory":
            raise NotADirectoryError(f"{stat.path} is not a folder")
        self.root = stat.path
        self._draw()

    def go_up(self) -> None:
        if self.root not in ("", "."):
            parent = posixpath.dirname(self.root) or "."
            self.set_root(parent)

    def toggle(self, folder: str) -> None:
        """Opens a closed folder (reading it now) or closes an open one."""
        expanded = list(self.expanded)
        if folder in expanded:
            expanded.remove(folder)
        else:
            expanded.append(folder)
            # open the folders above it too, so it is visible
            parent = posixpath.dirname(folder)
            while parent and parent != self.root and parent not in expanded:
                expanded.append(parent)
                parent = posixpath.dirname(parent)
        self.expanded = expanded
        self.selected = folder
        self.selected_line = 0
        self.selected_cell = -1
        self.open_button.disabled = False
        self._draw()
        self._show_folder(folder)

    def open_selected_folder(self) -> None:
        if self.selected and self._types.get(self.selected) == "directory":
            self.set_root(self.selected)

    def select(self, path: str, line: int | None = None, cell: int | None = None) -> None:
        """Previews a file (``line`` marks and centres that line; in a notebook ``cell`` marks that
        cell, ``line`` a line within it); opens the folders above it."""
        stat = self.fs.stat(path)
        if stat.type == "directory":
            self.toggle(stat.path)
            return
        parent = posixpath.dirname(stat.path)
        if parent and not _is_under(stat.path, self.root):
            self.root = "."
        expanded = list(self.expanded)
        while parent and parent != self.root:
            if parent not in expanded:
                expanded.append(parent)
            parent = posixpath.dirname(parent)
        self.expanded = expanded
        self._types[stat.path] = "file"
        self._reveal(stat.path)
        self.selected = stat.path
        self.selected_line = line or 0
        self.selected_cell = -1 if cell is None else cell
        self.open_button.disabled = True
        self._draw()
        self._show_file(stat, line, cell)

    def _reveal(self, path: str) -> None:
        """Pages a big folder far enough for ``path`` to be listed."""
        parent = posixpath.dirname(path) or "."
        try:
            names = [e.path for e in self._read(parent)]
        except Exception:
            return
        if path in names:
            index = names.index(path)
            self._shown[parent] = max(self._shown.get(parent, PAGE), (index // PAGE + 1) * PAGE)

    def refresh(self) -> None:
        """Re-reads every open folder (and the root) and the previewed file."""
        self._children.clear()
        self._draw()
        if self.selected and self._types.get(self.selected) == "file" and self.fs.exists(self.selected):
            cell = self.selected_cell if self.selected_cell >= 0 else None
            self._show_file(self.fs.stat(self.selected), self.selected_line or None, cell)

    def _on_hidden(self, change: dict[str, Any]) -> None:
        self.show_hidden = bool(change["new"])
        self.refresh()

    def _on_pick(self, change: dict[str, Any]) -> None:
        value = change["new"]
        if self._updating or not value:
            return
        try:
            if value.startswith(_MORE):
                folder = value[len(_MORE) :]
                if not folder.startswith("error:"):
                    self._shown[folder] = self._shown.get(folder, PAGE) + PAGE
                    self._draw()
            elif self._types.get(value) == "directory":
                self.toggle(value)
                # let the next click on the same folder fire again
                self._updating = True
                try:
                    self.tree.value = None
                finally:
                    self._updating = False
            else:
                self.select(value)
        except Exception as exc:  # a file deleted meanwhile, a permission error...
            self.message.value = f"<span style='color: {BAD}'>{html.escape(str(exc))}</span>"

    # --- preview ----------------------------------------------------------------------------------

    def _show_folder(self, folder: str) -> None:
        try:
            children = self._read(folder)
        except Exception as exc:
            self.preview.value = f"<div style='{MUTED}'>{html.escape(str(exc))}</div>"
            return
        dirs = sum(1 for e in children if e.type == "directory")
        self.preview.value = (
            f"<div><strong>{html.escape(folder)}/</strong></div>"
            f"<div style='{MUTED}'>{dirs} folders, {len(children) - dirs} files"
            + (" (hidden and ignored included)" if self.show_hidden else "")
            + "</div>"
        )

    def _show_file(self, stat: Any, line: int | None, cell: int | None = None) -> None:
        self.message.value = ""
        modified = stat.modified_at
        when = modified.astimezone().strftime("%Y-%m-%d %H:%M") if isinstance(modified, datetime) else ""
        try:
            view = load_file_view(
                self.fs,
                stat.path,
                max_lines=self._preview_lines,
                around=line,
                base_path=self._base,
                stat=stat,
                cell=cell,
            )
            body = view.html_body()
        except Exception as exc:
            body = f"<div style='{MUTED}'>{html.escape(str(exc))}</div>"
        self.preview.value = (
            f"<div style='line-height: 1.4'><div style='margin-bottom: 4px'><strong>{html.escape(stat.path)}</strong> "
            f"<span style='{MUTED}'>{format_bytes(stat.size)} · modified {when}</span></div>{body}</div>"
        )

    def close(self) -> None:
        self.close_snapshot()
        for child in self.crumbs.children:
            child.close()
        for widget in (
            self.up_button,
            self.open_button,
            self.refresh_button,
            self.hidden_toggle,
            self.tree,
            self.preview,
            self.message,
            self.crumbs,
        ):
            widget.close()
        super().close()


def _is_under(path: str, folder: str) -> bool:
    return folder in ("", ".") or path == folder or path.startswith(folder + "/")
