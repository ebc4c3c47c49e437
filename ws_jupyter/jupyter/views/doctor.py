"""The view of ``%ws doctor``: what this environment has, what each missing part costs, the fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import RichView
from .common import BAD, MONO, OK, WARN, badge, esc, table

__all__ = ["DoctorView"]

_STATUS_COLOURS = {"ok": OK, "warning": WARN, "missing": WARN, "info": "var(--jp-ui-font-color2, #6a737d)"}


@dataclass(repr=False)
class DoctorView(RichView):
    """The report of ``check_environment()``; ``report`` keeps it (``view.report.ok``, ``.get(name)``)."""

    report: Any
    kind = "doctor"

    @property
    def ok(self) -> bool:
        return bool(self.report.ok)

    def title(self) -> str:
        return "ws-jupyter doctor"

    def meta(self) -> str:
        return str(self.report.python)

    def text(self) -> str:
        return str(self.report.text())

    def html_body(self) -> str:
        rows = []
        for check in self.report.checks:
            if check.failed:
                status = badge("missing · needed", BAD)
            else:
                status = badge(check.status, _STATUS_COLOURS.get(check.status, "inherit"))
            cost = esc(check.cost) if check.status != "ok" else ""
            fix = (
                f'<code style="{MONO}">{esc(check.fix)}</code>' if check.fix and check.status != "ok" else ""
            )
            rows.append([status, f"<strong>{esc(check.name)}</strong>", esc(check.found), cost, fix])
        colour = BAD if self.report.failed else OK
        summary = f'<div style="color: {colour}; margin-top: 4px">{esc(self.report.summary())}</div>'
        return table(["", "component", "this environment", "without it", "fix"], rows) + summary
