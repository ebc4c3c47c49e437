"""How a user's values are written for a model: short, bounded, and never by the object itself.

Only values :func:`~.safety.is_plain_scalar` accepts are written by value (their text is the
standard library's or numpy's/pandas'); anything else appears as ``<TypeName>``. Strings that
look like secrets appear as ``[hidden]``.
"""

from __future__ import annotations

import datetime as _dt
import sys
from collections.abc import Sequence
from typing import Any

from ..notebooks.outputs import format_size
from .safety import is_plain_scalar, type_name
from .secrets import looks_secret_value

__all__ = ["HIDDEN", "format_size", "scalar_text", "short_type_name", "shorten", "stat_text", "text_table"]

HIDDEN = "[hidden: looks like a secret]"


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = text.replace("\r", " ").replace("\n", "\\n").replace("\t", " ")
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def scalar_text(value: Any, width: int = 40) -> str:
    """One value as a model reads it in a table cell or a list item."""
    t = type(value)
    if t is str:
        if looks_secret_value(value):
            return HIDDEN
        return shorten(repr(value[: width + 2]) if len(value) > width + 2 else repr(value), width)
    if not is_plain_scalar(value):
        return f"<{short_type_name(t)}>"
    if t is bytes:
        return shorten(repr(value[:width]), width)
    if t is int:
        bits = value.bit_length()
        return str(value) if bits <= 128 else f"<int of {bits} bits>"
    if t is float:
        return repr(value)
    if t in (_dt.datetime, _dt.date, _dt.time):
        return value.isoformat()
    np = sys.modules.get("numpy")
    if np is not None and issubclass(t, np.floating):
        return f"{float(value):.6g}"
    return shorten(str(value), width)


def stat_text(value: Any) -> str:
    """A statistic (mean, std...): six significant digits."""
    if type(value) is float or type(value) is int:
        return f"{value:.6g}"
    return scalar_text(value)


def short_type_name(t: type) -> str:
    """The class name without its module (``Hostile``, ``Timestamp``), for table cells."""
    return type_name(t).rsplit(".", 1)[-1]


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, max_width: int = 24) -> list[str]:
    """Aligned plain-text table lines (each cell cut to ``max_width``)."""
    cells = [[shorten(h, max_width) for h in headers]] + [[shorten(c, max_width) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
