"""What changed inside one file, as text a person (or a model) reads: a unified diff.

* text files: ``difflib``'s unified diff (3 lines of context), ``--- a/path`` / ``+++ b/path``;
* notebooks: cell by cell, each cell rendered as the notebook tools show it to an agent
  (:func:`ws_jupyter.notebooks.render.render_cell`: source, then output summaries), cells matched
  by id (by position where the format has no ids): ``@@ cell [2] code 9b1d04aa: modified @@``;
* binary files (a NUL byte, or not UTF-8) and text over ``MAX_DIFF_BYTES``: sizes and SHA-256s;
* permission changes (``mode 644 -> 755``) and symbolic links (old and new target).

The result is plain text: widgets show it escaped, never as HTML.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from ..notebooks.outputs import format_size
from .manifest import FileRecord

__all__ = ["MAX_DIFF_BYTES", "file_diff", "is_binary"]

#: Larger texts are compared by size and hash only (difflib is quadratic in the worst case).
MAX_DIFF_BYTES = 512 << 10
_SNIFF = 8192


def is_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB, or not UTF-8 at all."""
    if b"\0" in data[:_SNIFF]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _mode(rec: FileRecord | None) -> str:
    return f"{rec.mode:o}" if rec is not None and rec.mode is not None else "?"


def _sha(rec: FileRecord | None) -> str:
    return f"sha256 {rec.sha[:12]}…" if rec is not None and rec.sha else ""


def file_diff(
    path: str,
    before: bytes | None,
    after: bytes | None,
    *,
    before_record: FileRecord | None,
    after_record: FileRecord | None,
    before_label: str,
    after_label: str,
) -> str:
    """The diff of one path (``before``/``after`` None: the file did not exist, or is not a file)."""
    head = [f"--- a/{path}\t({before_label})", f"+++ b/{path}\t({after_label})"]
    notes: list[str] = []
    b_kind = before_record.kind if before_record else None
    a_kind = after_record.kind if after_record else None
    if "link" in (b_kind, a_kind):
        old = (
            f"symlink -> {before_record.target}"
            if b_kind == "link" and before_record
            else (b_kind or "absent")
        )
        new = (
            f"symlink -> {after_record.target}" if a_kind == "link" and after_record else (a_kind or "absent")
        )
        return "\n".join([*head, f"@@ {old} => {new} @@ (symbolic links are shown, never restored)"])
    if b_kind == "dir" or a_kind == "dir":
        return "\n".join([*head, f"@@ {b_kind or 'absent'} => {a_kind or 'absent'} @@"])
    if (
        before_record is not None
        and after_record is not None
        and before_record.mode is not None
        and after_record.mode is not None
        and before_record.mode != after_record.mode
    ):
        notes.append(f"@@ mode {_mode(before_record)} => {_mode(after_record)} @@")
    if before is not None and after is not None and before == after:
        return "\n".join([*head, *notes]) if notes else ""
    if path.endswith(".ipynb"):
        cells = _notebook_diff(before, after)
        if cells is not None:
            return "\n".join([*head, *notes, *cells])
    too_big = any(d is not None and len(d) > MAX_DIFF_BYTES for d in (before, after))
    binary = any(d is not None and is_binary(d) for d in (before, after))
    if too_big or binary:
        what = "Binary file" if binary else f"Text over {format_size(MAX_DIFF_BYTES)}"
        old = "absent" if before is None else f"{format_size(len(before))} {_sha(before_record)}".strip()
        new = "absent" if after is None else f"{format_size(len(after))} {_sha(after_record)}".strip()
        return "\n".join([*head, *notes, f"@@ {what}: {old} => {new} @@"])
    a_lines = [] if before is None else before.decode("utf-8").splitlines()
    b_lines = [] if after is None else after.decode("utf-8").splitlines()
    body = list(difflib.unified_diff(a_lines, b_lines, n=3, lineterm=""))[2:]
    return "\n".join([*head, *notes, *body])


def _notebook_diff(before: bytes | None, after: bytes | None) -> list[str] | None:
    """Cell-by-cell hunks, or None when either side is not a readable notebook."""
    from ..errors import NotebookError
    from ..notebooks.document import Notebook

    try:
        old = Notebook.parse(before, "before").cells if before is not None else []
        new = Notebook.parse(after, "after").cells if after is not None else []
    except NotebookError:
        return None
    old_keys = [_key(c, i) for i, c in enumerate(old)]
    new_keys = [_key(c, i) for i, c in enumerate(new)]
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=old_keys, b=new_keys, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        paired = (
            op == "replace"
            and i2 - i1 == j2 - j1
            and not any(k.startswith("id:") for k in (*old_keys[i1:i2], *new_keys[j1:j2]))
        )  # cells without ids, replaced one for one: edited in place
        if op == "equal" or paired:
            for i, j in zip(range(i1, i2), range(j1, j2)):
                out += _cell_hunk(old[i], i, new[j], j)
        else:
            for i in range(i1, i2):
                out += _cell_hunk(old[i], i, None, None)
            for j in range(j1, j2):
                out += _cell_hunk(None, None, new[j], j)
    if not out:
        out.append("@@ the cells are unchanged (only notebook metadata or formatting differs) @@")
    return out


def _key(cell: object, index: int) -> str:
    cid = cell.get("id") if isinstance(cell, dict) else None
    if isinstance(cid, str) and cid:
        return "id:" + cid
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    return "src:" + (source if isinstance(source, str) else "".join(source))


def _rendered(cell: object, index: int) -> tuple[str, list[str]]:
    from ..notebooks.render import render_cell

    lines = render_cell(index, cell, numbers=False, attach=(), max_media_bytes=0).split("\n")
    return lines[0], lines[1:]


def _cell_hunk(old: object | None, i: int | None, new: object | None, j: int | None) -> list[str]:
    if old is not None and i is not None and new is not None and j is not None:
        old_head, old_body = _rendered(old, i)
        new_head, new_body = _rendered(new, j)
        if old_body == new_body and old_head.split(" ", 1)[1:] == new_head.split(" ", 1)[1:]:
            return []
        moved = f" (was [{i}])" if i != j else ""
        lines = [f"@@ cell {new_head}: modified{moved} @@"]
        if old_head.split(" ", 1)[1:] != new_head.split(" ", 1)[1:]:
            lines += [f"-{old_head}", f"+{new_head}"]
        lines += list(difflib.unified_diff(old_body, new_body, n=2, lineterm=""))[2:]
        return lines
    if new is not None and j is not None:
        head, body = _rendered(new, j)
        return [f"@@ cell {head}: added @@", *(f"+{line}" for line in body)]
    assert old is not None and i is not None
    head, body = _rendered(old, i)
    return [f"@@ cell {head}: removed @@", *(f"-{line}" for line in body)]


def join_diffs(parts: Sequence[str]) -> str:
    """Several files' diffs as one text."""
    return "\n".join(p for p in parts if p)
