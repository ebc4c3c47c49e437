"""Reading a workspace file for display: shared by ``%ws cat``, the FileBrowser preview, search
results, ``%ws skill --file`` and the skills browser, so they agree on what is shown as text, image
or binary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentError
from .views.files import FileView

if TYPE_CHECKING:  # the notebook view and document model load with the first notebook shown
    from .views.notebook import NotebookView

__all__ = ["IMAGE_TYPES", "MAX_IMAGE_BYTES", "MAX_TEXT_BYTES", "load_file_view", "skill_file_view"]

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml", "image/webp")
MAX_IMAGE_BYTES = 20 << 20
MAX_TEXT_BYTES = 64 << 20


def load_file_view(
    fs: Any,
    path: str,
    *,
    lines: tuple[int | None, int | None] | None = None,
    max_lines: int = 2000,
    around: int | None = None,
    base_path: str | None = None,
    stat: Any = None,
    cell: int | None = None,
    cells: tuple[int, int] | None = None,
    raw: bool = False,
) -> FileView | NotebookView:
    """A ``FileView`` of ``path``: text (numbered, long files cut in the middle), image or binary;
    a ``NotebookView`` for a notebook (unless ``lines`` or ``raw`` ask for its JSON text).

    ``lines`` picks a 1-based inclusive range; ``around`` centres a window of ``max_lines`` lines
    on that line and marks it (search hits) — in a notebook, the line of ``cell``, which is marked
    too; ``cells`` picks a notebook's cells (0-based, inclusive). ``stat``: the file's
    ``fs.stat(path)`` when the caller already has it (it is not looked up again). A ``.ipynb``
    that is not a readable notebook is shown as text.
    """
    from ..filesystem.mime import guess_mime_type, looks_like_text
    from ..filesystem.reading import read_limited
    from ..notebooks.document import is_notebook_path

    if stat is None:
        stat = fs.stat(path)
    if stat.type == "directory":
        raise InvalidArgumentError(f"{stat.path} is a directory")
    if lines is None and not raw and is_notebook_path(stat.path):
        from ..errors import NotebookError
        from ..notebooks import Notebook

        try:
            nb = Notebook.load(fs, stat.path)
        except NotebookError:
            nb = None
        if nb is not None:
            from .views.notebook import NotebookView

            return NotebookView(
                stat.path, nb, size=stat.size, base_path=base_path, cells=cells,
                highlight_cell=cell, highlight_line=around if cell is not None else None,
            )  # fmt: skip
        around = None if cell is not None else around
    mime = stat.mime_type or guess_mime_type(stat.path)
    if mime in IMAGE_TYPES and stat.size <= MAX_IMAGE_BYTES and lines is None:
        data = read_limited(fs, stat.path, MAX_IMAGE_BYTES, size=stat.size)
        return FileView(stat.path, data=data, mime_type=mime, size=stat.size, base_path=base_path)
    if stat.size > MAX_TEXT_BYTES:
        raise InvalidArgumentError(
            f"{stat.path} is {stat.size:,} bytes, too large to show; look at parts of it with "
            f"`%ws run head -n 50 {stat.path}`"
        )
    data = read_limited(fs, stat.path, MAX_TEXT_BYTES, size=stat.size)
    if not looks_like_text(data[:8192]):
        return FileView(stat.path, mime_type=mime, size=stat.size, base_path=base_path)
    all_lines = data.decode("utf-8", errors="replace").splitlines()
    total = len(all_lines)
    limit = max(max_lines, 2)
    if around is not None:
        first = max(1, around - limit // 3)
        last = min(total, first + limit - 1)
    else:
        start, end = lines or (None, None)
        first = start or 1
        last = min(end or total, total)
        if lines is not None and first > max(total, 1):
            raise InvalidArgumentError(f"{stat.path} has {total} lines; the range starts at {first}")
    chosen = all_lines[first - 1 : last]
    omitted = None
    if len(chosen) > limit:
        head = limit // 2
        tail = limit - head
        omitted = (first + head, first + len(chosen) - tail - 1)
        chosen = chosen[:head] + chosen[len(chosen) - tail :]
    return FileView(
        stat.path,
        text_content="\n".join(chosen),
        mime_type=mime,
        size=stat.size,
        first_line=first,
        total_lines=total,
        omitted=omitted,
        base_path=base_path,
        highlight=around,
    )


def skill_file_view(f: Any) -> FileView:
    """A ``FileView`` of a ``SkillFile`` (``skills.read_file``): numbered text, an image or binary."""
    from ..filesystem.mime import guess_mime_type

    label = f"{f.skill_name}/{f.path}"
    if f.text is None:
        mime = guess_mime_type(f.path)
        return FileView(label, data=f.data if mime in IMAGE_TYPES else None, mime_type=mime, size=f.size)
    first = f.line_range[0] if f.line_range else 1
    return FileView(label, text_content=f.text, size=f.size, first_line=first, total_lines=f.total_lines)
