"""Terminal output as a reader sees it: escape sequences removed, carriage-return redraws resolved.

The one ``strip_ansi`` of the package: tool outputs, notebook output summaries, kernel tracebacks,
the ``%ws`` views and the process widget all clean terminal text with it, so a colour code or a
hyperlink that one of them drops is dropped by all.

>>> strip_ansi("\\x1b[31mred\\x1b[0m 10%\\r100%")
'red 100%'
"""

from __future__ import annotations

import re

__all__ = ["strip_ansi"]

# CSI (colors, cursor moves), OSC (titles, hyperlinks; BEL or ST terminated), DCS/SOS/PM/APC
# strings, other 2-byte escapes, and their 8-bit C1 forms.
_ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d).*?(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[PX^_].*?(?:\x1b\\|\x9c)"
    r"|\x1b[@-Z\\-_]"
    r"|\x1b[ -/]+[0-~]",
    re.DOTALL,
)


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences and resolve carriage-return redraws.

    A progress bar that redraws itself with ``\\r`` leaves only its final state, as a terminal
    would show it (``"10%\\r50%\\r100%"`` -> ``"100%"``); ``\\r\\n`` line ends become ``\\n``.
    """
    if "\x1b" in text or "\x9b" in text or "\x9d" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            lines = text.split("\n")
            for i, line in enumerate(lines):
                if "\r" in line:
                    segments = [s for s in line.split("\r") if s]
                    lines[i] = segments[-1] if segments else ""
            text = "\n".join(lines)
    return text
