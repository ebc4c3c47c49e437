"""Workspace Markdown as inert HTML: notebook Markdown cells (``%ws cat nb.ipynb``, the FileBrowser
preview) and skills (``%ws skill``, the SkillsBrowser).

The text comes from the workspace, which a sandboxed command or an agent may have written, and a
front-end shows the HTML (and the Markdown) a running session displays as it is — JupyterLab
renders a cell's own ``text/markdown`` output unsanitised, ``<img onerror=...>`` included. So the
Markdown is rendered here, by markdown-it-py (CommonMark with tables): raw HTML in it is shown as
text, links are checked by markdown-it (no ``javascript:``; ``data:`` only for images), and an
image is drawn only from bytes at hand — a ``data:`` URI or a cell attachment whose bytes are the
image type they claim (PNG, JPEG, GIF, WebP), re-encoded. An image at any other address is shown
as a link (its alt text, or its address): the browser fetches nothing when the view is shown,
and a sandbox without network access cannot send what it read out in an image's URL.

``ImageBudget`` bounds the images one view inlines: each attachment (and each distinct output
image) at most once — later references say "shown above" — and at most
``MAX_VIEW_IMAGE_BYTES`` in all; what is left out is named with its size and counted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from .common import MUTED, esc, format_bytes

__all__ = ["MAX_VIEW_IMAGE_BYTES", "ImageBudget", "image_html", "render_markdown"]

#: Bytes of images one view draws inline (as base64 ``data:`` URIs, 4/3 of that in HTML).
MAX_VIEW_IMAGE_BYTES = 4 << 20
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


@dataclass
class ImageBudget:
    """What one view may still inline, and what it left out (see the module docstring)."""

    left: int = MAX_VIEW_IMAGE_BYTES
    shown: set[str] = field(default_factory=set)  # digests of the images drawn
    left_out: dict[str, int] = field(default_factory=dict)  # digest -> size, of those not drawn
    digests: dict[int, str] = field(default_factory=dict)  # id(base64 value) -> digest, per drawing

    def take(self, key: str, size: int) -> bool:
        """True when ``size`` more bytes fit (and are now spent); else notes the image as left out."""
        if size > self.left:
            self.left_out[key] = size
            return False
        self.left -= size
        self.shown.add(key)
        return True

    def note(self) -> str:
        """One line on what was left out ("" when nothing was)."""
        if not self.left_out:
            return ""
        n = len(self.left_out)
        return (
            f"{n} image{'' if n == 1 else 's'} ({format_bytes(sum(self.left_out.values()))}) not shown: a view "
            f"draws at most {format_bytes(MAX_VIEW_IMAGE_BYTES)} of images (open the notebook to see them)"
        )


def _muted(text: str) -> str:
    return f'<span style="{MUTED}; font-style: italic">{esc(text)}</span>'


def image_html(raw: bytes, alt: str, budget: ImageBudget, key: str | None = None, style: str = "") -> str:
    """``raw`` as an inline ``<img>`` when it is an image within ``budget``; else a note saying why.

    ``key`` names the image for "shown above" (default: the digest of its bytes).
    """
    from ...filesystem.mime import image_type

    mime = image_type(raw)
    if mime is None:
        return _muted(f"[{alt}: not an image (PNG, JPEG, GIF or WebP)]")
    key = key if key is not None else hashlib.sha1(raw).hexdigest()
    if key in budget.shown:
        return _muted(f"[{alt}: shown above]")
    if not budget.take(key, len(raw)):
        return _muted(f"[{alt}: {format_bytes(len(raw))}, not shown: the view's image budget is used]")
    data = base64.b64encode(raw).decode("ascii")
    return f'<img src="data:{mime};base64,{data}" alt="{esc(alt)}" style="{style or "max-width: 100%"}"/>'


def _inline(value: Any, alt: str, budget: ImageBudget) -> str:
    """Base64 text (or nbformat's list of lines) as an image, via ``image_html``. The same text
    twice is drawn once; text that could not fit the budget anyway is not decoded at all."""
    text = "".join(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else value
    if not isinstance(text, str):
        return _muted(f"[{alt}: not an image]")
    key = budget.digests.get(id(value))
    if key is None:  # an attachment referenced again is the same object: hashed once
        key = budget.digests[id(value)] = (
            "base64:" + hashlib.sha1(text.encode("ascii", "replace")).hexdigest()
        )
    if key in budget.shown:
        return _muted(f"[{alt}: shown above]")
    size = len(text) * 3 // 4  # the decoded size, at most
    if size > budget.left:
        budget.take(key, size)
        return _muted(f"[{alt}: {format_bytes(size)}, not shown: the view's image budget is used]")
    try:
        raw = base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return _muted(f"[{alt}: not an image]")
    return image_html(raw, alt, budget, key=key)


def _attachment(name: str, alt: str, attachments: Any, budget: ImageBudget) -> str:
    bundle = attachments.get(name) if isinstance(attachments, Mapping) else None
    if not isinstance(bundle, Mapping):
        return _muted(f"[{alt}: attachment {name!r} not in this cell]")
    mime = next((m for m in _IMAGE_TYPES if m in bundle), None)
    if mime is None:
        return _muted(f"[{alt}: attachment {name!r} has no PNG, JPEG, GIF or WebP image]")
    return _inline(bundle[mime], alt, budget)


def _image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """markdown-it's image rule, replaced: see the module docstring."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    budget = env.setdefault("budget", ImageBudget())
    if src.startswith("attachment:"):
        name = src[len("attachment:") :]
        attachments = env.get("attachments")
        if isinstance(attachments, Mapping) and name not in attachments:
            name = unquote(name)  # markdown-it percent-encodes the URL
        return _attachment(name, alt or name, attachments, budget)
    if src.startswith("data:image/") and ";base64," in src:
        return _inline(src.split(",", 1)[1], alt or "image", budget)
    label = f"image: {alt}" if alt else f"image: {src}"
    return f'<a href="{esc(src)}" title="{esc(src)}">{esc(label)}</a>'


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    md.add_render_rule("image", _image)
    return md


def render_markdown(source: str, attachments: Any = None, budget: ImageBudget | None = None) -> str:
    """Markdown to inert HTML (see the module docstring); ``attachment:NAME`` images come from
    ``attachments`` (a cell's), within ``budget`` (one per view: pass the same one for every cell).

    >>> render_markdown("![x](https://example.org/t.png?k=v)")
    '<p><a href="https://example.org/t.png?k=v" title="https://example.org/t.png?k=v">image: x</a></p>\\n'
    """
    env = {"attachments": attachments, "budget": budget if budget is not None else ImageBudget()}
    return str(_markdown().render(source, env))
