"""``SkillsBrowser``: the workspace's skills — list, search, instructions and files.

Left: a search box and the skills (name — description, with the source: local, managed or
external). Right: the selected skill's instructions rendered as Markdown, its references, scripts
and assets (click one to read it), and the problems found while loading skills. The search box
matches names and descriptions, and the skills' contents through ``skills.search``.

State for code and tests: ``query``, ``names`` (the skills listed), ``selected``,
``selected_file``.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w
from traitlets import List, Unicode

from ..files import skill_file_view
from ..skill_problems import skill_problems
from ..views.common import BAD, MUTED, WARN, one_line, table
from ..views.markdown import render_markdown
from .controls import button, flexible, stretch
from .snapshot import Snapshotting

__all__ = ["SkillsBrowser"]


class SkillsBrowser(Snapshotting, w.VBox):
    """Browse and read skills. See the module docstring."""

    query = Unicode("")
    names = List(Unicode())
    selected = Unicode("")
    selected_file = Unicode("")
    snapshot_label = "skills browser"

    def __init__(self, workspace: Any, *, query: str = "") -> None:
        self.workspace = workspace
        skills = workspace.skills
        if skills is None:
            raise ValueError("This workspace has no skills configured")
        self.skills = skills
        self.search_box = flexible(w.Text(value=query, placeholder="Filter skills…", continuous_update=True))
        self.listing = stretch(w.Select(options=[], rows=12))
        self.listing.add_class("ws-skill-list")
        self.refresh_button = button(icon="refresh", tooltip="Re-read the skills")
        self.issues_html = w.HTML()
        self.header = w.HTML()
        self.detail = w.Output(layout=w.Layout(width="100%", max_height="30em", overflow="auto"))
        self.files = w.ToggleButtons(options=[], value=None, style={"button_width": "auto"})
        self.file_view = w.HTML(layout=w.Layout(width="100%"))
        left = w.VBox(
            [w.HBox([self.search_box, self.refresh_button]), self.listing, self.issues_html],
            layout=w.Layout(width="34%", min_width="220px"),
        )
        right = w.VBox(
            [self.header, self.files, self.detail, self.file_view],
            layout=w.Layout(width="66%", padding="0 0 0 8px"),
        )
        super().__init__(
            [w.HBox([left, right], layout=w.Layout(width="100%"))], layout=w.Layout(width="100%")
        )
        self.add_class("ws-skills-browser")
        self.search_box.observe(lambda c: self.filter(c["new"]), names="value")
        self.listing.observe(self._on_pick, names="value")
        self.files.observe(self._on_file, names="value")
        self.refresh_button.on_click(lambda _: self.refresh())
        self.observe(lambda _: self.snapshot_changed(), names=["names", "selected", "selected_file"])
        self.filter(query)

    # --- listing ----------------------------------------------------------------------------------

    def refresh(self) -> None:
        with skill_problems():  # shown under the list
            self.skills.refresh()
        self.filter(self.search_box.value)

    def filter(self, query: str) -> list[str]:
        """Shows the skills matching ``query`` (name, description, then contents)."""
        self.query = query = query.strip()
        with skill_problems():  # shown under the list
            all_skills = self.skills.list()
        if query:
            q = query.lower()
            found = [s for s in all_skills if q in s.name.lower() or q in s.description.lower()]
            try:
                # a filter shows skills that contain the words: keywords, not nearest meanings
                mode = "bm25" if getattr(self.workspace, "can_bm25", False) else None
                hits = self.skills.search(query, top_k=10, mode=mode)
            except Exception:
                hits = []
            seen = {s.name for s in found}
            by_name = {s.name: s for s in all_skills}
            for hit in hits:
                if hit.skill_name not in seen and hit.skill_name in by_name:
                    found.append(by_name[hit.skill_name])
                    seen.add(hit.skill_name)
        else:
            found = all_skills
        self.names = [s.name for s in found]
        self.listing.options = [
            (f"{s.name} — {one_line(s.description, 60)}  [{s.source_kind}]", s.name) for s in found
        ]
        issues = self.skills.issues()
        self.issues_html.value = "".join(
            f"<div style='color: {BAD if i.is_error else WARN}; font-size: 0.9em'>"
            f"! {html.escape(i.kind)}: {html.escape(i.message)}</div>"
            for i in issues
        )
        if self.selected in self.names:
            self.listing.value = self.selected
        elif found:
            self.select(found[0].name)
        else:
            self.header.value = f"<div style='{MUTED}'>No skills match.</div>"
        return self.names

    def snapshot(self) -> tuple[str, str]:
        """The skills listed (name, description, source) and the one selected."""
        rows, lines = [], []
        for name in self.names:
            skill = self.skills.get(name)
            if skill is None:
                continue
            mark = "▸ " if name == self.selected else ""
            rows.append(
                [
                    f"<strong>{html.escape(mark + name)}</strong>",
                    html.escape(one_line(skill.description, 120)),
                    f"<span style='{MUTED}'>{html.escape(skill.source_kind)}</span>",
                ]
            )
            lines.append(f"{mark}{name} — {one_line(skill.description, 80)} [{skill.source_kind}]")
        body = (
            table(["skill", "description", "source"], rows)
            if rows
            else f"<div style='{MUTED}'>No skills.</div>"
        )
        if self.selected_file:
            body += f"<div style='{MUTED}'>open file: {html.escape(self.selected)}/{html.escape(self.selected_file)}</div>"
        return body + self.issues_html.value, "\n".join(lines) or "No skills."

    # --- one skill --------------------------------------------------------------------------------

    def select(self, name: str) -> None:
        """Shows a skill's instructions and files."""
        skill = self.skills.get(name)
        if skill is None:
            raise KeyError(f"no skill named {name!r}")
        self.selected = skill.name
        if self.listing.value != skill.name and skill.name in self.names:
            self.listing.value = skill.name
        facts = [f"{skill.source_kind}", f"<code>{html.escape(skill.path)}</code>"]
        if skill.license:
            facts.append(f"license {html.escape(skill.license)}")
        if skill.allowed_tools:
            facts.append("tools: " + ", ".join(html.escape(t) for t in skill.allowed_tools))
        self.header.value = (
            f"<div style='line-height: 1.4'><div style='font-size: 1.15em'><strong>{html.escape(skill.name)}</strong></div>"
            f"<div><em>{html.escape(skill.description)}</em></div>"
            f"<div style='{MUTED}'>{' · '.join(facts)}</div></div>"
        )
        # A display_data output built here (not through the shell's formatters, which a terminal or
        # test shell may have turned off), so the instructions render wherever the widget is shown.
        # HTML rendered here, never the Markdown: the SKILL.md is workspace content, and the
        # front-end would render its raw HTML and remote images (see views.markdown).
        markdown = skill.to_markdown()
        self.detail.outputs = (
            {
                "output_type": "display_data",
                "data": {"text/html": render_markdown(markdown), "text/plain": markdown},
                "metadata": {},
            },
        )
        self.files.options = [f for f in skill.files if f != "SKILL.md"]
        self.files.value = None
        self.selected_file = ""
        self.file_view.value = ""

    def open_file(self, path: str) -> None:
        """Shows one file of the selected skill (text with line numbers, or an image)."""
        f = self.skills.read_file(self.selected, path)
        self.selected_file = f.path
        view = skill_file_view(f)
        self.file_view.value = f"<div style='line-height: 1.4'><div><strong>{html.escape(f.path)}</strong></div>{view.html_body()}</div>"

    def _on_pick(self, change: dict[str, Any]) -> None:
        if change["new"] and change["new"] != self.selected:
            self.select(change["new"])

    def _on_file(self, change: dict[str, Any]) -> None:
        if change["new"]:
            try:
                self.open_file(change["new"])
            except Exception as exc:
                self.file_view.value = f"<span style='color: {BAD}'>{html.escape(str(exc))}</span>"

    def close(self) -> None:
        self.close_snapshot()
        for widget in (
            self.search_box,
            self.listing,
            self.refresh_button,
            self.issues_html,
            self.header,
            self.detail,
            self.files,
            self.file_view,
        ):
            widget.close()
        super().close()
