"""MIME types and text detection.

Extensions give a MIME type for display and media handling; whether a file is *text* is decided by
looking at its bytes (a ``Makefile`` or ``data.sas7bcat.log`` is text whatever its name says),
so grep, indexing and previews never skip a text file for having an unusual extension.
"""

from __future__ import annotations

import mimetypes
import posixpath

__all__ = [
    "SNIFF_BYTES",
    "guess_mime_type",
    "image_type",
    "is_media_mime",
    "is_text_mime",
    "looks_like_text",
]

#: How many leading bytes are inspected to decide text vs binary.
SNIFF_BYTES = 8192

_EXTRA: dict[str, str] = {
    ".py": "text/x-python",
    ".pyi": "text/x-python",
    ".ipynb": "application/x-ipynb+json",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".rst": "text/x-rst",
    ".txt": "text/plain",
    ".log": "text/plain",
    ".cfg": "text/plain",
    ".ini": "text/plain",
    ".toml": "application/toml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".ndjson": "application/x-ndjson",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".ts": "text/typescript",
    ".tsx": "text/typescript",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".jsx": "text/javascript",
    ".sh": "application/x-sh",
    ".bash": "application/x-sh",
    ".r": "text/x-r",
    ".sql": "application/sql",
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".ico": "image/vnd.microsoft.icon",
    ".pdf": "application/pdf",
    ".zip": "application/zip",
    ".gz": "application/gzip",
    ".tar": "application/x-tar",
    ".parquet": "application/vnd.apache.parquet",
    ".npy": "application/octet-stream",
    ".pkl": "application/octet-stream",
}

_TEXT_APPLICATION = {
    "application/json",
    "application/jsonl",
    "application/x-ndjson",
    "application/ld+json",
    "application/javascript",
    "application/typescript",
    "application/xml",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
    "application/sql",
    "application/graphql",
    "application/x-sh",
    "application/x-ipynb+json",
    "image/svg+xml",
}

_MEDIA = {"image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"}


def guess_mime_type(path: str) -> str:
    """MIME type from the file name; ``application/octet-stream`` when unknown.

    >>> guess_mime_type("notes/figure.PNG")
    'image/png'
    """
    ext = posixpath.splitext(path.lower())[1]
    if ext in _EXTRA:
        return _EXTRA[ext]
    guessed, _ = mimetypes.guess_type(path, strict=False)
    return guessed or "application/octet-stream"


#: The leading bytes of each binary image type a notebook shows inline.
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_type(data: bytes) -> str | None:
    """The image type ``data`` really is (PNG, JPEG, GIF, WebP, from its magic bytes), else None.

    What an output or attachment *says* it is comes from whoever wrote it: an image is drawn as
    the type its bytes have, and bytes of no image type are not drawn at all.

    >>> image_type(b"\\x89PNG\\r\\n\\x1a\\n...")
    'image/png'
    >>> image_type(b"<svg onload=alert(1)>") is None
    True
    """
    for magic, mime in _IMAGE_MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def is_text_mime(mime: str | None) -> bool:
    """True for MIME types whose content is text (unknown types are *not* assumed text)."""
    if not mime:
        return False
    mime = mime.split(";")[0].strip().lower()
    return (
        mime.startswith("text/")
        or mime in _TEXT_APPLICATION
        or mime.endswith("+json")
        or mime.endswith("+xml")
    )


def is_media_mime(mime: str | None) -> bool:
    """Images and PDFs that notebooks and multimodal models can show as they are."""
    return (mime or "").lower() in _MEDIA


#: Every byte except the control characters that count against text (all but \t \n \f \r ESC).
_NOT_CONTROL = bytes(b for b in range(256) if not (b < 32 and b not in (9, 10, 12, 13, 27)))


def looks_like_text(sample: bytes) -> bool:
    """Decide from leading bytes whether content is text.

    Text means: no NUL byte, valid UTF-8 (a multi-byte character cut at the end of the sample is
    allowed), and few control characters other than whitespace. An empty file is text.

    >>> looks_like_text(b"all: build\\n\\tmake -C src\\n")
    True
    >>> looks_like_text(b"\\x89PNG\\r\\n\\x1a\\n\\x00\\x00")
    False
    """
    if not sample:
        return True
    if b"\x00" in sample:
        return False
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Accept a character cut by the sample boundary; anything else is not UTF-8 text.
        if exc.start < len(sample) - 3 or exc.reason != "unexpected end of data":
            return False
    controls = len(sample.translate(None, _NOT_CONTROL))  # C speed: grep sniffs thousands of files
    return controls <= len(sample) // 100
