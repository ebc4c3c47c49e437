"""How ``%ws mcp`` shows a served workspace: where it is, its token and the client configurations
to paste."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .base import RichView
from .common import MONO, MUTED, PRE, WARN, esc

__all__ = ["McpServersView"]


@dataclass(repr=False)
class McpServersView(RichView):
    """The running MCP servers of the workspace (url, token, allowed groups, clients seen) and,
    for a server just started, the ready-to-paste client configurations."""

    servers: Sequence[object]
    heading: str = "MCP over HTTP"
    configs: dict[str, str] = field(default_factory=dict)
    kind = "mcp"

    def title(self) -> str:
        return self.heading

    def meta(self) -> str:
        return f"{len(self.servers)} running" if self.servers else "not serving"

    def _lines(self, s: object) -> list[tuple[str, str]]:
        allow = ", ".join(sorted(getattr(s, "allow", ()))) or "none"
        clients = ", ".join(f"{c}" + (f" ({sid[:8]})" if sid else "") for c, sid in s.clients())  # type: ignore[attr-defined]
        return [
            ("url", str(getattr(s, "url", ""))),
            ("token", str(getattr(s, "token", ""))),
            ("tools", f"{len(getattr(s, 'tools', ()))} (allowed groups: {allow})"),
            ("clients", clients or "none yet"),
        ]

    def text(self) -> str:
        if not self.servers:
            return f"{self.heading}: not serving. Start with `%ws mcp serve`."
        out = [f"{self.heading}: {self.meta()}"]
        for s in self.servers:
            out += [f"  {k}: {v}" for k, v in self._lines(s)]
        for label, text in self.configs.items():
            out += ["", f"{label}:", text]
        if self.configs:
            out += ["", "The token is in this output: clear it before sharing the notebook."]
        return "\n".join(out)

    def html_body(self) -> str:
        if not self.servers:
            return f"<div style='{MUTED}'>Not serving. Start with <code>%ws mcp serve</code>.</div>"
        parts = []
        for s in self.servers:
            rows = "".join(
                f"<tr><td style='{MUTED}; text-align: left'>{esc(k)}</td>"
                f"<td style='{MONO}; text-align: left; overflow-wrap: anywhere'>{esc(v)}</td></tr>"
                for k, v in self._lines(s)
            )
            parts.append(f"<table style='border: none'>{rows}</table>")
        for label, text in self.configs.items():
            parts.append(
                f"<div style='margin-top: 6px'><strong>{esc(label)}</strong></div><pre style='{PRE}'>{esc(text)}</pre>"
            )
        if self.configs:
            parts.append(
                f"<div style='color: {WARN}; margin-top: 6px'>The token is in this output: clear it before "
                "sharing the notebook.</div>"
            )
        return "".join(parts)
