"""Small helpers shared by test packages."""

from __future__ import annotations

from pathlib import Path


def write(root: Path, rel: str, content: str | bytes = "x") -> Path:
    """Create ``root/rel`` (and its parent directories) with ``content``; return its path."""
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content)
    return p
