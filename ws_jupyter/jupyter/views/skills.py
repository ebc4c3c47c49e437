"""Views of skills: ``%ws skills --list`` (a table) and ``%ws skill NAME`` (one skill)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import RichView
from .common import BAD, MONO, MUTED, WARN, esc, one_line, table, text_table

__all__ = ["SkillTableView", "SkillView"]


@dataclass(repr=False)
class SkillTableView(RichView):
    """``%ws skills --list``: one row per skill, then the problems found while loading skills."""

    skills: list[Any]
    issues: list[Any] = field(default_factory=list)
    kind = "skills"

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.skills]

    def title(self) -> str:
        return "Skills"

    def meta(self) -> str:
        n = len(self.skills)
        text = f"{n} skill{'' if n == 1 else 's'}"
        problems = [i for i in self.issues if getattr(i, "is_error", True)]
        if problems:
            text += f", {len(problems)} problem{'' if len(problems) == 1 else 's'}"
        return text

    def text(self) -> str:
        rows = [[s.name, s.source_kind, s.path, one_line(s.description, 70)] for s in self.skills]
        out = text_table(["NAME", "SOURCE", "PATH", "DESCRIPTION"], rows) if rows else "No skills."
        for issue in self.issues:
            out += f"\n! {issue.kind}: {issue.message}"
        return out

    def html_body(self) -> str:
        if not self.skills:
            body = f'<div style="{MUTED}">No skills found.</div>'
        else:
            rows = [
                [
                    f"<strong>{esc(s.name)}</strong>",
                    esc(one_line(s.description, 160)),
                    f'<span style="{MUTED}">{esc(s.source_kind)}</span>',
                    f'<span style="{MONO}">{esc(s.path)}</span>',
                    esc(_count_files(s)),
                ]
                for s in self.skills
            ]
            body = table(["name", "description", "source", "path", "files"], rows)
        for issue in self.issues:
            colour = BAD if getattr(issue, "is_error", True) else WARN
            body += f'<div style="color: {colour}">! {esc(issue.kind)}: {esc(issue.message)}</div>'
        return body


def _count_files(skill: Any) -> str:
    bits = []
    for label, items in (("refs", skill.references), ("scripts", skill.scripts), ("assets", skill.assets)):
        if items:
            bits.append(f"{len(items)} {label}")
    return ", ".join(bits)


@dataclass(repr=False)
class SkillView:
    """``%ws skill NAME``: the skill rendered from its Markdown (instructions, then its files).

    A SKILL.md is workspace content, which an agent or a sandboxed command may have written, and
    JupyterLab renders a session's own ``text/markdown`` outputs unsanitised (``<img onerror>``
    runs, remote images load). So the bundle is HTML rendered here by ``views.markdown`` (raw
    HTML shown as text, remote images as links) and plain text — never the Markdown itself.
    """

    skill: Any
    kind = "skill"

    def markdown(self) -> str:
        s = self.skill
        lines = [f"### {s.name}", "", f"*{s.description}*", ""]
        facts = [f"`{s.path}` ({s.source_kind})"]
        if s.license:
            facts.append(f"license: {s.license}")
        if s.compatibility:
            facts.append(f"compatibility: {s.compatibility}")
        if s.allowed_tools:
            facts.append("allowed tools: " + ", ".join(f"`{t}`" for t in s.allowed_tools))
        lines += [" · ".join(facts), "", "---", "", s.to_markdown()]
        return "\n".join(lines)

    def text(self) -> str:
        s = self.skill
        return f"{s.name} ({s.source_kind}, {s.path})\n{s.description}\n\n{s.to_markdown()}"

    def __repr__(self) -> str:
        return self.text()

    def html(self) -> str:
        from .markdown import render_markdown

        return f'<div class="ws-jupyter ws-skill" style="text-align: left">{render_markdown(self.markdown())}</div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/html": self.html(), "text/plain": self.text()}
