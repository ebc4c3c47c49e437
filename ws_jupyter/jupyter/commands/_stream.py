"""``CellStream``: a sandbox's output streamed into the current cell, bounded.

Shared by ``%ws run`` (a command's stdout and stderr) and ``%%ws py`` (a workspace kernel's
streams): a browser tab chokes on megabytes of output, and a notebook saves whatever its cells
show, so both show the same head, live tail and counts.
"""

from __future__ import annotations

import queue
import sys
import time
from collections import deque
from typing import Any

from ...text.ansi import strip_ansi
from ..views.processes import TAIL_LINES, OutputTailView
from ._foreground import drain, events_queue

__all__ = ["CellStream"]


class CellStream:
    """Moves output chunks from an I/O thread to the cell, in the kernel's main thread.

    Writing to ``sys.stdout`` from the main thread (not from the I/O thread) is what makes ipykernel
    put the text in *this* cell, whatever other cells or threads are doing.

    The cell shows the first ``head_lines`` lines (at most ``max_chars`` characters) as they
    arrive, then one display updated in place at most a few times a second: "… N lines not shown
    …" and the newest ``tail_lines`` lines. The caller's result keeps the output itself
    (``kept`` says where, in that notice; None: a ``%ws run`` result). ``live=False`` (terminal
    IPython, where a display cannot be updated) prints that tail once, at the end.

    Chunks arrive either through ``on_stdout``/``on_stderr`` and ``pump`` (a queue filled by the
    I/O thread), or through ``write`` then ``refresh`` from a caller that has its own queue.
    """

    _UPDATE = 0.3  # seconds between updates of the tail display
    _LINE = 2000  # characters of one tail line kept (a line can be megabytes)

    def __init__(
        self,
        quiet: bool = False,
        max_chars: int = 0,
        *,
        head_lines: int = 0,
        tail_lines: int = TAIL_LINES,
        live: bool = False,
        kept: str | None = None,
    ) -> None:
        self.queue: queue.Queue[tuple[str, str]] = events_queue()
        self.quiet = quiet
        self.max_chars = max_chars  # 0: no limit
        self.head_lines = head_lines  # 0: no limit
        self.live = live
        self.kept = kept
        self.written = 0
        self.lines_written = 0
        self.cut = False  # past the head: only the tail is shown
        self.hidden = 0  # complete lines neither in the head nor in the tail
        self.tail: deque[tuple[str, str]] = deque(maxlen=max(0, tail_lines))
        self.partial = {"stdout": "", "stderr": ""}
        self._display: Any = None
        self._dirty = False
        self._shown_at = 0.0

    def on_stdout(self, text: str) -> None:
        self.queue.put(("stdout", text))

    def on_stderr(self, text: str) -> None:
        self.queue.put(("stderr", text))

    def pump(self, timeout: float) -> None:
        """Draws what the I/O thread queued (waiting up to ``timeout`` for the first chunk)."""
        drain(self.queue, lambda chunk: self.write(*chunk), timeout)
        self.refresh()

    def write(self, kind: str, text: str) -> None:
        """One chunk of ``"stdout"`` or ``"stderr"``: into the head while it has room, else the tail."""
        if self.quiet:
            return
        if not self.cut:
            text = self._head(kind, text)
        if text:
            self._add_to_tail(kind, text)

    def refresh(self) -> None:
        """Flushes the head and, at most every ``_UPDATE`` seconds, redraws the live tail."""
        if self.quiet:
            return
        sys.stdout.flush()
        sys.stderr.flush()
        if self._dirty and self.live and time.monotonic() - self._shown_at >= self._UPDATE:
            self._show_tail(running=True)

    def reset(self) -> None:
        """The cell's output was cleared (``clear_output``): start again with an empty head and tail."""
        self.written = self.lines_written = self.hidden = 0
        self.cut = self._dirty = False
        self.tail.clear()
        self.partial = {"stdout": "", "stderr": ""}
        self._display = None

    def _head(self, kind: str, text: str) -> str:
        """Writes what fits in the head; returns the rest (then the tail takes over)."""
        cut = len(text)
        if self.head_lines:
            left = self.head_lines - self.lines_written
            pos = -1
            for _ in range(max(left, 0)):
                pos = text.find("\n", pos + 1)
                if pos < 0:
                    break
            if left <= 0:
                cut = 0
            elif pos >= 0:
                cut = pos + 1
        if self.max_chars and self.written + cut > self.max_chars:
            room = max(0, self.max_chars - self.written)
            newline = text.rfind("\n", 0, room)
            cut = newline + 1 if newline >= 0 else room
        shown = text[:cut]
        if shown:
            (sys.stdout if kind == "stdout" else sys.stderr).write(shown)
            self.written += len(shown)
            self.lines_written += shown.count("\n")
        rest = text[cut:]
        if rest:
            self.cut = True
        return rest

    def _add_to_tail(self, kind: str, text: str) -> None:
        buf = self.partial[kind] + text
        n = buf.count("\n")
        if n == 0:
            self.partial[kind] = buf[-self._LINE :]
            return
        k = min(n, (self.tail.maxlen or 0) + 1)
        parts = buf.rsplit("\n", k)
        self.partial[kind] = parts[-1][-self._LINE :]
        if k == n:
            new = parts[:-1]
        else:  # parts[0] holds the n - k + 1 oldest lines, older than a full tail
            new = parts[1:-1]
            self.hidden += n - k + 1
        self.hidden += max(0, len(self.tail) + len(new) - (self.tail.maxlen or 0))
        # Terminal colours render in the head; the tail is plain HTML, where they would be noise.
        self.tail.extend((kind, strip_ansi(line[: self._LINE])) for line in new)
        self._dirty = True

    def _view(self, *, running: bool, truncated: bool = False) -> OutputTailView:
        return OutputTailView(
            self.hidden, list(self.tail), running=running, truncated=truncated, kept=self.kept
        )

    def _show_tail(self, *, running: bool, truncated: bool = False) -> None:
        from IPython.display import display

        view = self._view(running=running, truncated=truncated)
        if self._display is None:
            self._display = display(view, display_id=True)
        else:
            self._display.update(view)
        self._dirty = False
        self._shown_at = time.monotonic()

    def finish(self, truncated: bool = False) -> None:
        """The output ended: the last lines (also an unfinished one) and the final notice."""
        self.pump(0)
        if self.quiet or not self.cut:
            return
        for kind in ("stdout", "stderr"):
            unfinished, self.partial[kind] = self.partial[kind], ""
            if unfinished:
                self._add_to_tail(kind, unfinished + "\n")
        if self.live:
            self._show_tail(running=False, truncated=truncated)
        else:
            sys.stdout.write(self._view(running=False, truncated=truncated).text() + "\n")
            sys.stdout.flush()
