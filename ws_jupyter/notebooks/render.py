"""A notebook as an agent reads it: cells with cell-relative line numbers and output summaries.

The layout is built to cost little more than the cells' own text (``bench/notebook_tokens.py``
measures it against the sources plus the outputs' text, and against the raw JSON)::

    analysis.ipynb (3 cells, python, 2104 bytes)
    [0] markdown 3f2a9c1e
    # Load the data
    [1] code 9b1d04aa In[7]
    1 df = load("x.csv")
    2 df.shape
    » Out[7]: (120, 4)
    [2] code c0ffee00 In[8]
    1 / 0
    » error: ZeroDivisionError: division by zero
    ----> 1 1 / 0

* a cell header ``[index] type id In[execution count]`` (index 0-based; no id before nbformat 4.5);
* source lines as ``n text``, numbered from 1 within each cell — the numbers grep and search
  use (``analysis.ipynb [cell 1]:2``); a one-line cell's line is shown bare (it is line 1);
* each output after a ``»`` line: streams and results shortened to their first and last lines,
  errors as ``ename: evalue`` plus the last traceback lines, images attached as images (``image 1``
  in the order of the media parts), other MIME types named with their size.

``offset``/``limit`` choose cells; over the token budget the rendering stops at a cell boundary
and says which ``offset`` continues.

**Only the renderer writes structure.** Cell headers and notes start with ``[``, output labels
with ``»``; no line of a source or an output ever does, so text in a notebook cannot forge a cell,
an output or a note in the agent's view:

* a block of output text (a stream, a multi-line result, a traceback) in which some line would
  read as structure — it starts, after blanks and invisible characters, with ``[``, ``»`` or a
  look-alike (``［``, ``⟦``, ``›``...) — is shown with every line quoted: ``│ [5] code ...``;
* a one-line cell that would read so is numbered (``1 [5] code ...``) like longer cells (without
  line numbers, source blocks are quoted as outputs are);
* fields written into headers and labels (cell type and id, stream name, MIME types, the
  error's first line) are single lines, with line breaks and control characters escaped;
* line breaks other than ``\n`` (``\r``, U+2028...) are shown escaped, so a reader that splits
  lines on them sees the same lines.

Benign notebooks are rendered exactly as before: the quoting costs tokens only where it is needed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..text.tokens import count_tokens
from .document import CELL_TYPES, Notebook, cell_source
from .outputs import (
    DEFAULT_MAX_LINES,
    ImageOutput,
    OutputSummary,
    cell_outputs,
    data_uri_images,
    format_size,
)

__all__ = [
    "NotebookRendering",
    "cell_header",
    "render_cell",
    "render_cells",
    "render_notebook",
]

#: At most this many images are attached to one read (the rest are named, with their size).
MAX_IMAGES = 8
#: The prefix of each line of a quoted block (text that would otherwise read as structure).
QUOTE = "│ "
#: First characters of structural lines, and what looks like them (compared after NFKC).
_STRUCTURE_START = frozenset("[»›≫⟫⟦〔【〚⁅❲〘«‹≪")
#: Line breaks other than "\n" (``str.splitlines`` and some viewers break lines there too).
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
#: Control characters escaped in header and label fields (a tab is harmless there).
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")
_ID_SHOWN = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: A one-line cell that starts with a digit is numbered like longer cells: shown bare, ``1 - x``
#: would read as line 1 ``- x``.
_STARTS_WITH_DIGIT = re.compile(r"\s*\d")


@dataclass(frozen=True)
class NotebookRendering:
    """``text`` for the model, ``images`` to attach (numbered ``image 1``... in ``text``), and which
    cells were shown: ``first``..``last`` (inclusive; ``last < first`` when none) of ``total``;
    ``cut`` when the budget stopped the rendering before the requested cells were all shown."""

    text: str
    images: tuple[ImageOutput, ...]
    first: int
    last: int
    total: int
    cut: bool

    @property
    def complete(self) -> bool:
        """Every cell of the notebook was shown, none of them cut."""
        return self.total == 0 or (self.first == 0 and self.last == self.total - 1 and not self.cut)


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return {"\r": "\\r", "\t": "\\t", "\n": "\\n"}.get(ch, f"\\u{ord(ch):04x}")


def _field(value: object) -> str:
    """A value written into a header or a label: one line, control characters escaped."""
    return _CONTROL.sub(_escape, str(value))


def _visible(line: str) -> str:
    """A content line with line breaks other than "\n" escaped (a line's final "\r", the rest of
    a Windows line end, dropped)."""
    if line.endswith("\r"):
        line = line[:-1]
    return _OTHER_BREAKS.sub(_escape, line) if _OTHER_BREAKS.search(line) else line


def reads_as_structure(line: str) -> bool:
    """Whether ``line`` would look like a header, note or output label: it starts, after blanks
    and invisible characters, with ``[``, ``»`` or a look-alike."""
    for ch in line:
        if ch.isspace() or unicodedata.category(ch) in ("Cf", "Mn"):
            continue
        return ch in _STRUCTURE_START or unicodedata.normalize("NFKC", ch)[:1] in _STRUCTURE_START
    return False


def _block(lines: list[str]) -> list[str]:
    """Content lines as shown: escaped, and all quoted when one of them would read as structure."""
    shown = [_visible(line) for line in lines]
    if any(reads_as_structure(line) for line in shown):
        return [QUOTE + line for line in shown]
    return shown


def cell_header(index: int, cell: object) -> str:
    """``[3] code 9b1d04aa [7]``: index, type, id (when the format has ids), execution count."""
    assert isinstance(cell, dict)
    kind = cell.get("cell_type", "?")
    parts = [f"[{index}]", kind if kind in CELL_TYPES else repr(_field(kind))]
    cid = cell.get("id")
    if isinstance(cid, str):
        parts.append(cid if _ID_SHOWN.fullmatch(cid) else repr(_field(cid)))
    count = cell.get("execution_count")
    if isinstance(count, int) and not isinstance(count, bool):
        parts.append(f"In[{count}]")
    return " ".join(parts)


def _numbered(source: str, numbers: bool) -> list[str]:
    """Source lines as ``n text``; a one-line cell's line is shown bare (it is line 1) unless it
    would read as structure; without numbers the lines are a block (quoted when needed)."""
    if source == "":
        return []
    lines = [_visible(line) for line in source.split("\n")]
    if numbers and (len(lines) > 1 or reads_as_structure(lines[0]) or _STARTS_WITH_DIGIT.match(lines[0])):
        return [f"{n} {line}" if line else "" for n, line in enumerate(lines, 1)]
    return _block(lines)


def _output_lines(
    out: OutputSummary, images: list[ImageOutput], attach: Sequence[str], max_media_bytes: int
) -> list[str]:
    lines: list[str] = []
    if out.kind == "stream":
        lines.append(f"» {_field(out.name or 'stream')}:")
        if out.text:
            lines.extend(_block(out.text.split("\n")))
        return lines
    if out.kind == "error":
        first, *more = out.headline.split("\n")
        lines.append(f"» error: {_field(first)}")
        lines.extend(_block([*more, *out.traceback]))
        return lines
    if out.kind not in ("execute_result", "display_data"):
        lines.append(f"» {_field(out.kind)} output")
        return lines
    label = f"» Out[{out.execution_count}]" if out.execution_count is not None else "» display"
    attached = [
        img for img in out.images if img.mime_type in attach and img.size <= max_media_bytes
    ][: max(0, MAX_IMAGES - len(images))]
    if out.text and not attached:  # a front-end shows the image instead of the text (a Figure repr)
        if "\n" in out.text:  # a table or a long repr: its lines as they are, below the label
            lines += [f"{label}:", *_block(out.text.split("\n"))]
        else:
            lines.append(f"{label}: {_field(out.text)}")
        label = "»"
    for img in out.images:
        if img in attached:
            images.append(img)
            dims = f" {img.width}x{img.height}" if img.width and img.height else ""
            lines.append(f"{label} image {len(images)}: {_field(img.mime_type.split('/')[-1])}{dims}")
        else:
            why = (
                "not attached: over max_media_bytes"
                if img.size > max_media_bytes
                else "not attached"
                if img.mime_type not in attach
                else f"not attached: more than {MAX_IMAGES} images, read fewer cells"
            )
            lines.append(f"{label} {_field(img.describe())} ({why})")
        label = "»"
    if out.others:
        shown = ", ".join(f"{_field(m)} {format_size(n)}" for m, n in out.others)
        lines.append(f"{label} {shown}")
    elif label != "»":
        lines.append(f"{label}: (no data)")
    return lines


def render_cell(
    index: int,
    cell: object,
    *,
    numbers: bool = True,
    images: list[ImageOutput] | None = None,
    attach: Sequence[str] = (),
    max_media_bytes: int = 0,
    max_output_lines: int = DEFAULT_MAX_LINES,
    note: str = "",
) -> str:
    """One cell as in :func:`render_notebook` (``images`` collects what is to be attached; ``note``
    is added to the header line)."""
    collected = images if images is not None else []
    header = cell_header(index, cell) + (f" {_field(note)}" if note else "")
    lines = [header, *_numbered(_inline_images(cell, collected, attach, max_media_bytes), numbers)]
    for out in cell_outputs(cell, max_lines=max_output_lines):
        lines.extend(_output_lines(out, collected, attach, max_media_bytes))
    return "\n".join(lines)


def _inline_images(cell: object, images: list[ImageOutput], attach: Sequence[str], max_media_bytes: int) -> str:
    """A Markdown or raw cell's source with each data-URI image shown as ``[image 1: png 7.3 KB]``
    and attached like an output image (``[image png 7.3 KB]`` when it is not attached)."""
    source = cell_source(cell)
    if not isinstance(cell, dict) or cell.get("cell_type") == "code" or "data:image/" not in source:
        return source

    def label(img: ImageOutput | None, mime: str, size: int) -> str:
        kind = _field(mime.split("/")[-1])
        if img is not None and img.mime_type in attach and img.size <= max_media_bytes and len(images) < MAX_IMAGES:
            images.append(img)
            return f"[image {len(images)}: {kind} {format_size(size)}]"
        return f"[image {kind} {format_size(size)}]"

    return data_uri_images(source, label)[0]


def _heading(nb: Notebook, label: str, size: int | None) -> str:
    facts = [f"{len(nb)} {'cell' if len(nb) == 1 else 'cells'}"]
    if nb.language:
        facts.append(nb.language)
    if not nb.has_cell_ids:
        facts.append(f"nbformat {nb.nbformat_version}: no cell ids")
    elif nb.normalised:
        major, minor = nb.source_version
        facts.append(f"nbformat {major}.{minor} with cell ids, written as {nb.nbformat_version} at the next edit")
    if size is not None:
        facts.append(f"{size} bytes")
    return f"{label} ({', '.join(facts)})"


def render_notebook(
    nb: Notebook,
    *,
    label: str | None = None,
    offset: int = 0,
    limit: int | None = None,
    budget: int | None = None,
    numbers: bool = True,
    attach: Sequence[str] = (),
    max_media_bytes: int = 10 << 20,
    size: int | None = None,
    cell: int | None = None,
) -> NotebookRendering:
    """Render cells ``offset``.. (at most ``limit``) within ``budget`` tokens (None: no limit).

    ``attach`` lists the image MIME types to return as images (others are named); ``size`` is
    the file size shown in the first line. With ``cell``, the lines of that one cell instead:
    ``offset`` (from 1) and ``limit`` count its lines — how a cell longer than one read is read
    to its end, its outputs after its last line.
    """
    total = len(nb)
    name = _field(label or nb.path or "notebook")
    head = [_heading(nb, name, size)]
    if cell is not None:
        return _cell_lines(nb, cell, head, max(1, offset), limit, budget, numbers, attach, max_media_bytes)
    if nb.problem:
        head.append(f"[not a valid notebook: {_field(nb.problem)}; edits are refused until it is fixed]")
    if nb.normalised:
        head.append(
            f"[as saved, not valid nbformat; an edit makes it valid as Jupyter does when it saves: "
            f"{_field('; '.join(nb.normalised))}]"
        )
    if nb.ids_filled:
        head.append("[some cells had no id or a repeated one: the ids shown are kept at the next edit]")
    if nb.cell_languages:
        head.append(
            f"[nbformat 3 code cells in several languages ({_field(nb.languages_summary())}): edits are "
            "refused, as nbformat 4 has no per-cell language]"
        )
    if offset >= total and total:
        head.append(
            f"[offset {offset} is past the last cell: the notebook has {total} cells (0-{total - 1}); "
            "the notebook has been fully read]"
        )
        return NotebookRendering("\n".join(head), (), offset, offset - 1, total, False)
    end = total if limit is None else min(total, offset + limit)
    return render_cells(
        [(i, nb.cells[i]) for i in range(offset, end)],
        head=head,
        total=total,
        paged=limit is not None and end < total,
        budget=budget,
        numbers=numbers,
        attach=attach,
        max_media_bytes=max_media_bytes,
    )


def render_cells(
    cells: Sequence[tuple[int, object]],
    *,
    head: Sequence[str],
    total: int,
    paged: bool = False,
    budget: int | None = None,
    numbers: bool = True,
    attach: Sequence[str] = (),
    max_media_bytes: int = 10 << 20,
    notes: Callable[[int, object], str] | None = None,
) -> NotebookRendering:
    """``(index, cell)`` pairs under the ``head`` lines, within ``budget`` tokens, stopping at a
    cell boundary with a note saying which ``offset`` continues (``paged``: cells after the last
    one exist even when all fit). ``notes(index, cell)`` adds to a cell's header line (the open
    notebook's cell versions and states)."""
    offset = cells[0][0] if cells else 0
    images: list[ImageOutput] = []
    blocks: list[str] = []
    room = None if not budget else max(1, budget - count_tokens("\n".join(head)) - 40)
    used = 0
    last = offset - 1
    note = ""
    for i, cell in cells:
        mark = len(images)
        block = render_cell(
            i,
            cell,
            numbers=numbers,
            images=images,
            attach=attach,
            max_media_bytes=max_media_bytes,
            note=notes(i, cell) if notes is not None else "",
        )
        cost = count_tokens(block) + 1
        if room is not None and used + cost > room:
            if blocks:
                del images[mark:]
                note = f"[output truncated: showing cells {offset}-{last} of {total}; continue with offset={last + 1}]"
            else:  # even this one cell does not fit: its start, and how to see the rest
                shown, hidden = _cut_block(block, room)
                del images[mark + _images_in(shown) :]
                blocks.append(shown)
                last = i
                source_lines = cell_source(cell).count("\n") + 1
                done = shown.count("\n")  # the lines under the header
                rest = (
                    f"read the rest with cell={i}, offset={done + 1}"
                    if done < source_lines
                    else "its outputs were shortened"
                )
                note = (
                    f"[cell {i} was cut to fit the output budget ({hidden} more lines); {rest}, or "
                    f"continue with offset={i + 1}]"
                )
            break
        blocks.append(block)
        used += cost
        last = i
    if not note and paged:
        shown = f"cell {last}" if last == offset else f"cells {offset}-{last}"
        note = f"[{shown} of {total} shown; continue with offset={last + 1}]"
    text = "\n".join([*head, *blocks, *([note] if note else [])])
    return NotebookRendering(text, tuple(images), offset, last, total, note.startswith(("[output", "[cell")))


_ATTACHED = re.compile(r"» (?:Out\[\d+\] |display )?image \d+: ")
_INLINE = re.compile(r"\[image \d+: ")


def _images_in(text: str) -> int:
    """How many attached images a (cut) block names: its ``» image N:`` labels (no source or
    output line starts with "»") and the ``[image N: ...]`` of inline images."""
    lines = text.split("\n")
    return sum(1 for line in lines if _ATTACHED.match(line)) + sum(len(_INLINE.findall(ln)) for ln in lines[1:])


def _cut_block(block: str, room: int) -> tuple[str, int]:
    """The lines of one oversized cell that fit ``room`` tokens, and how many were left out."""
    lines = block.split("\n")
    kept: list[str] = []
    used = 0
    for line in lines:
        n = count_tokens(line) + 1
        if used + n > room - 30:
            break
        kept.append(line)
        used += n
    if not kept:  # a single enormous line: its start
        kept = [lines[0][: max(40, (room - 30) * 3)] + " …"]
    return "\n".join(kept), len(lines) - len(kept)


def _cell_lines(
    nb: Notebook,
    index: int,
    head: list[str],
    first: int,
    limit: int | None,
    budget: int | None,
    numbers: bool,
    attach: Sequence[str],
    max_media_bytes: int,
) -> NotebookRendering:
    """Lines ``first``.. (at most ``limit``) of cell ``index`` under ``head`` (``render_notebook``
    with ``cell``)."""
    total = len(nb)
    cell = nb.cell(index)
    lines = cell_source(cell).split("\n")
    n = len(lines)
    if first > n:
        head.append(f"[offset {first} is past the last line of cell {index}: it has {n} lines]")
        return NotebookRendering("\n".join(head), (), index, index, total, False)
    end = n if limit is None else min(n, first + limit - 1)
    room = None if not budget else max(1, budget - count_tokens("\n".join(head)) - 60)
    images: list[ImageOutput] = []
    shown: list[str] = []
    used = 0
    for number in range(first, end + 1):
        mark = len(images)
        line = _visible(_inline_images({**cell, "source": lines[number - 1]}, images, attach, max_media_bytes))
        if numbers:
            text = f"{number} {line}" if line else str(number)
        else:
            text = QUOTE + line if reads_as_structure(line) else line
        cost = count_tokens(text) + 1
        if room is not None and shown and used + cost > room:
            del images[mark:]
            break
        shown.append(text)
        used += cost
    last = first + len(shown) - 1
    body = [f"{cell_header(index, cell)} lines {first}-{last} of {n}", *shown]
    if last == n:
        for out in cell_outputs(cell):
            body.extend(_output_lines(out, images, attach, max_media_bytes))
    if last < n:
        note = f"[lines {first}-{last} of {n} of cell {index} shown; continue with cell={index}, offset={last + 1}]"
    elif index + 1 < total:
        note = f"[cell {index} shown to its end; the next cell is offset={index + 1}]"
    else:
        note = ""
    text = "\n".join([*head, *body, *([note] if note else [])])
    return NotebookRendering(text, tuple(images), index, index, total, last < n)
