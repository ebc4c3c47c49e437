"""How file names are shown to a model or a person: as they are, unless that would mislead.

Two kinds of names cannot be shown as they are:

* a name that is **not UTF-8** (any bytes are allowed on a POSIX disk) reaches Python with its
  undecodable bytes as lone surrogates (``surrogateescape``), which no JSON/UTF-8 consumer
  accepts — one such name broke whole listings and killed the MCP server's output stream.
  :func:`wire_text` shows each undecodable byte as ``\\xNN``; :func:`name_notes` says so;
* **same-looking names** — two entries whose names differ only by Unicode normalisation (NFC
  ``café`` and NFD ``cafe\\u0301``, which macOS and Linux tools produce) or by invisible format
  characters — would be listed twice under one name. :func:`name_notes` gives each its exact
  form with escapes (``caf\\u00e9.md``, ``cafe\\u0301.md``), which is also how a JSON string
  spells the name.

>>> wire_text("bad\\udcff.txt")
'bad\\\\xff.txt'
>>> name_notes(["caf\\u00e9.md", "cafe\\u0301.md", "plain.md"])["cafe\\u0301.md"]
'same-looking name: cafe\\\\u0301.md'
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

__all__ = ["escaped_name", "name_notes", "wire_text"]


def wire_text(text: str) -> str:
    """``text`` as valid Unicode: undecodable bytes of a name (lone surrogates) as ``\\xNN``,
    any other lone surrogate as ``\\udXXX``; text that is valid is returned as it is."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def escaped_name(name: str) -> str:
    """``name`` in ASCII: printable ASCII as it is, undecodable bytes as ``\\xNN``, every other
    character as ``\\uXXXX`` (``\\UXXXXXXXX`` past the BMP) — the way a JSON string spells it."""
    out = []
    for ch in name:
        code = ord(ch)
        if 0x20 <= code < 0x7F and ch != "\\":
            out.append(ch)
        elif ch == "\\":
            out.append("\\\\")
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


def _looks(name: str) -> str:
    """What a name looks like: NFKC, without invisible format characters (zero-width joiners,
    direction marks)."""
    folded = unicodedata.normalize("NFKC", name)
    return "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")


def name_notes(names: Iterable[str]) -> dict[str, str]:
    """A note for each of ``names`` (the entries of one directory) that cannot be shown as it is:
    not UTF-8, or looking the same as another name. Names not in the result need none."""
    names = list(names)
    notes: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    for name in names:
        if wire_text(name) != name:
            notes[name] = "name is not UTF-8: its undecodable bytes are shown as \\xNN"
        groups.setdefault(_looks(name), []).append(name)
    for group in groups.values():
        if len(set(group)) > 1:
            for name in group:
                notes[name] = f"same-looking name: {escaped_name(name)}"
    return notes
