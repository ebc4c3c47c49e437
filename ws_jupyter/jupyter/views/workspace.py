"""Views of the workspace itself: ``%ws info`` (and ``%ws init``/``%ws use``, which end with it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .base import RichView
from .common import CELL, MUTED, WARN, esc

__all__ = ["InfoView", "info_rows", "network_summary"]


@dataclass(repr=False)
class InfoView(RichView):
    """``%ws info``: key/value rows."""

    heading: str
    rows: list[tuple[str, str]]
    notes: list[str] = field(default_factory=list)  # warnings shown under the rows
    kind = "info"

    def title(self) -> str:
        return self.heading

    def text(self) -> str:
        width = max((len(k) for k, _ in self.rows), default=0)
        lines = [self.heading, *(f"  {k:<{width}}  {v}" for k, v in self.rows)]
        return "\n".join(lines + [f"! {note}" for note in self.notes])

    def html_body(self) -> str:
        rows = "".join(
            f'<tr style="background: none"><td style="{MUTED}; {CELL}; padding: 1px 14px 1px 0">{esc(k)}</td>'
            f'<td style="{CELL}; padding: 1px 0">{esc(v)}</td></tr>'
            for k, v in self.rows
        )
        notes = "".join(f'<div style="color: {WARN}">! {esc(note)}</div>' for note in self.notes)
        return f'<table style="border-collapse: collapse">{rows}</table>{notes}'

    def as_dict(self) -> dict[str, str]:
        return dict(self.rows)


def network_summary(network: dict[str, Any]) -> str:
    """``allow: pypi.org, *.example.com · header secrets for api.example.com · 12 connections logged``."""
    mode = str(network.get("mode"))
    if mode != "allow":
        return {"none": "none (no route out)", "full": "full (the host's network)"}.get(mode, mode)
    text = "allow: " + (", ".join(map(str, network.get("allow") or [])) or "nothing allowed")
    secrets = network.get("secrets") or {}
    if secrets:
        text += " · header secrets for " + ", ".join(sorted(map(str, secrets)))
    if network.get("connections_logged") is not None:
        text += f" · {network['connections_logged']} connections logged"
    return text


def _host_trusted_text(trusted: dict[str, Any], isolation: str) -> str:
    """The host-trusted files row: which ones commands can and cannot change."""

    def names(key: str) -> str:
        items = [str(x) for x in trusted.get(key) or ()]
        return ", ".join(items[:12]) + (f" and {len(items) - 12} more" if len(items) > 12 else "")

    parts = []
    if trusted.get("read_only"):
        parts.append(f"{names('read_only')}: read-only to the sandbox")
    if trusted.get("writable"):
        who = "commands (no isolation)" if isolation == "none" else "commands"
        parts.append(f"{names('writable')}: {who} can change them")
    text = "; ".join(parts) + " — git, editors or direnv on the host run what they name"
    if not trusted.get("complete", True):
        text += f" ({trusted.get('note') or 'the search was cut short'}; deeper ones are not listed)"
    return text


def info_rows(info: Any) -> list[tuple[str, str]]:
    """Rows for a ``WorkspaceInfo`` (duck-typed, so other providers' infos render too)."""
    rows: list[tuple[str, str]] = [("id", str(info.id)), ("status", str(info.status))]
    fs = getattr(info, "filesystem", None)
    if fs == "dynamic":
        rows.append(("filesystem", "dynamic (resolved per request)"))
    elif fs is not None:
        desc = f"{fs.provider} · {fs.base_path or ''}".rstrip(" ·")
        if getattr(fs, "read_only", False):
            desc += " · read-only"
        rows.append(("filesystem", desc))
        if getattr(fs, "total_files", None) is not None:
            rows.append(("files", f"{fs.total_files:,}"))
    sb = getattr(info, "sandbox", None)
    if sb == "dynamic":
        rows.append(("sandbox", "dynamic (resolved per request)"))
    elif sb is not None:
        # a SandboxInfo: every provider's get_info() returns one
        rows.append(("sandbox", f"{sb.provider} · {sb.status}"))
        rows.append(("isolation", str(sb.isolation)))
        network = (sb.metadata or {}).get("network")
        if isinstance(network, dict) and network.get("mode"):
            rows.append(("network", network_summary(network)))
        if sb.working_directory:
            rows.append(("working directory", str(sb.working_directory)))
        metadata = sb.metadata or {}
        trusted = metadata.get("host_trusted")
        if isinstance(trusted, dict):
            rows.append(("host-trusted files", _host_trusted_text(trusted, str(sb.isolation))))
        warning = metadata.get("warning")
        if warning:
            rows.append(("warning", str(warning)))
    search = getattr(info, "search", None)
    if search:
        rows.append(("search", ", ".join(search.get("modes", [])) or "none"))
        if "documents" in search:
            rows.append(("index size", f"{search['documents']:,} documents"))
        if search.get("status") is not None:  # building, embedding, or ready
            rows.append(("index", str(search["status"])))
    else:
        rows.append(("search", "not configured"))
    skills = getattr(info, "skills", None)
    if skills is not None:
        rows.append(("skills", str(skills.get("count", "?"))))
    for what, err in (getattr(info, "errors", None) or {}).items():
        rows.append((f"{what} error", err))
    created = getattr(info, "created_at", None)
    if isinstance(created, datetime):
        rows.append(("created", created.astimezone().strftime("%Y-%m-%d %H:%M:%S")))
    return rows
