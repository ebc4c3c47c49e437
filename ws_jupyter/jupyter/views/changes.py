"""Views of checkpoints: ``%ws changes`` (what changed since a checkpoint, who did it, the diffs),
``%ws checkpoint`` (one or the list) and ``%ws restore`` (what a restore did).

Diffs are text from the workspace (any bytes an agent wrote): always shown escaped in ``<pre>``,
never as HTML.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import RichView
from .common import BAD, MUTED, OK, PRE, WARN, badge, esc, format_bytes, table, text_table

__all__ = ["CHANGE_COLOURS", "ChangesView", "CheckpointsView", "RestoreView", "diff_html"]

CHANGE_COLOURS = {"added": OK, "modified": WARN, "deleted": BAD}


def diff_html(text: str) -> str:
    """A unified diff in ``<pre>``, escaped, with added and removed lines coloured."""
    lines = []
    for line in text.split("\n"):
        colour = (
            MUTED
            if line.startswith(("---", "+++", "@@"))
            else f"color: {OK}"
            if line.startswith("+")
            else f"color: {BAD}"
            if line.startswith("-")
            else ""
        )
        lines.append(f'<span style="{colour}">{esc(line)}</span>' if colour else esc(line))
    body = "\n".join(lines)
    return f'<pre style="{PRE}; max-height: 30em; overflow: auto">{body}</pre>'


def _name(cp: Any) -> str:
    return f"{cp.name} ({cp.id})"


@dataclass(repr=False)
class ChangesView(RichView):
    """The changes since a checkpoint; ``diffs`` (path -> diff text) when asked for."""

    changes: Any
    diffs: dict[str, str] = field(default_factory=dict)
    notes: Sequence[str] = ()
    kind = "changes"

    def title(self) -> str:
        n = len(self.changes)
        return f"{n} change{'' if n == 1 else 's'} since checkpoint {_name(self.changes.since)}"

    def meta(self) -> str:
        return self.changes.since.created_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")

    def _rows(self) -> list[list[str]]:
        rows = []
        for c in self.changes:
            detail = c.detail if c.detail and c.detail != "content" else ""
            where = c.path + ("/" if c.kind == "dir" else "")
            rows.append([c.change, where, detail, str(c.by)])
        return rows

    def html_body(self) -> str:
        parts = []
        if not self.changes:
            parts.append(f'<div style="{MUTED}">Nothing changed.</div>')
        else:
            rows = [
                [
                    badge(r[0], CHANGE_COLOURS.get(r[0], MUTED)),
                    f"<code>{esc(r[1])}</code>",
                    esc(r[2]),
                    esc(r[3]),
                ]
                for r in self._rows()
            ]
            parts.append(table(["", "path", "detail", "changed by"], rows))
        for e in self.changes.excluded:
            parts.append(
                f'<div style="{MUTED}">not recorded: <code>{esc(e.path)}</code> — {esc(e.reason)}</div>'
            )
        for note in self.notes:
            parts.append(f'<div style="color: {WARN}">{esc(note)}</div>')
        for path, text in self.diffs.items():
            parts.append(f"<div><strong>{esc(path)}</strong></div>{diff_html(text)}")
        return "".join(parts)

    def text(self) -> str:
        lines = [self.title()]
        if self.changes:
            lines.append(text_table(["change", "path", "detail", "changed by"], self._rows()))
        lines += [f"not recorded: {e.path} — {e.reason}" for e in self.changes.excluded]
        lines += list(self.notes)
        lines += [text for text in self.diffs.values() if text]
        return "\n".join(lines)


@dataclass(repr=False)
class CheckpointsView(RichView):
    """One checkpoint just taken, or the list of them with the store's size."""

    checkpoints: Sequence[Any]
    heading: str
    usage: Any = None
    notes: Sequence[str] = ()
    kind = "checkpoints"

    def title(self) -> str:
        return self.heading

    def meta(self) -> str:
        return f"store: {format_bytes(self.usage.total)}" if self.usage is not None else ""

    def _rows(self) -> list[list[str]]:
        return [
            [c.name, c.id, c.created_at.astimezone().strftime("%Y-%m-%d %H:%M:%S"), c.reason, str(c.files),
             format_bytes(c.bytes)]
            for c in self.checkpoints
        ]  # fmt: skip

    def _excluded(self) -> list[str]:
        out = []
        for c in self.checkpoints[-1:]:
            out += [f"not recorded: {e.path} — {e.reason}" for e in c.excluded]
            out += [f"not recorded (folder): {p}" for p in c.skipped]
            out += [f"pruned to stay within the budget: {p}" for p in c.pruned]
        return out

    def html_body(self) -> str:
        rows = [[esc(x) for x in r] for r in self._rows()]
        body = (
            table(["name", "id", "taken", "why", "files", "size"], rows, numeric=(4, 5))
            if rows
            else (f'<div style="{MUTED}">No checkpoints yet.</div>')
        )
        body += "".join(f'<div style="{MUTED}">{esc(line)}</div>' for line in self._excluded())
        body += "".join(f'<div style="color: {WARN}">{esc(n)}</div>' for n in self.notes)
        return body

    def text(self) -> str:
        lines = [self.heading]
        if self.checkpoints:
            lines.append(
                text_table(["name", "id", "taken", "why", "files", "size"], self._rows(), numeric=(4, 5))
            )
        return "\n".join([*lines, *self._excluded(), *self.notes])


@dataclass(repr=False)
class RestoreView(RichView):
    """What a restore wrote, removed and left alone, and how to undo it."""

    report: Any
    kind = "restore"

    def title(self) -> str:
        return self.report.text()

    def _lines(self) -> list[str]:
        r = self.report
        return (
            [f"restored {p}" for p in r.restored]
            + [f"removed {p}" for p in r.removed]
            + [f"kept (created since) {p}" for p in r.kept]
            + [f"skipped {p}: {why}" for p, why in r.skipped]
        )

    def html_body(self) -> str:
        return f'<pre style="{PRE}">{esc(chr(10).join(self._lines()))}</pre>' if self._lines() else ""

    def text(self) -> str:
        return "\n".join([self.title(), *self._lines()])
