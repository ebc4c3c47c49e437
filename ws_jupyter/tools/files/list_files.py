"""``workspace_list_files``: a compact tree of a directory, as a developer would want to see it.

Directories first, then files, one per line, indented with one tab per level, directories marked
with a trailing ``/``, symlinks as ``name -> target``; ``.git`` skipped, ``.gitignore`` files at
every level honoured, hidden entries only on request. The last line counts what is shown and says
``(truncated at depth N)`` only when something deeper really exists. A name that is not UTF-8
is shown with its bytes as ``\\xNN``, and names of one directory that look the same (they differ
only by Unicode normalisation) each get their exact, escaped form — with a note saying which.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ...errors import NotADirectory, WorkspaceError
from ...filesystem.display import name_notes, wire_text
from ...filesystem.globs import compile_globs
from ...filesystem.walk import WalkEntry, relative_to, walk
from ...text.shaping import truncate_head
from ..base import ToolCall, ToolSpec
from ..facts import LOOKS, WORKSPACE_TOOLS
from ..schema import Param

__all__ = ["SPEC", "list_files"]

DESCRIPTION = (
    "List the files and directories under a path as an indented tree (directories end with '/'), "
    "honouring .gitignore files; hidden entries only with show_hidden. Use max_depth to see deeper "
    "levels, pattern (globs like '*.py' or 'src/**/*.ts') or extension to show only some files, and "
    "exclude (globs) to leave out directories such as 'node_modules'. The last line counts "
    "directories and files and says when deeper levels were not shown."
)

PARAMS = (
    Param("path", "string", "Directory to list, relative to the workspace root.", default="."),
    Param(
        "max_depth",
        "integer",
        "How many levels to show (1 = direct children).",
        default=2,
        minimum=1,
        maximum=50,
    ),
    Param("show_hidden", "boolean", "Include entries whose name starts with '.'.", default=False),
    Param("dirs_only", "boolean", "List directories only.", default=False),
    Param(
        "exclude",
        "string_list",
        "Glob patterns of entries to leave out (a directory is left out with everything in it), e.g. ['node_modules', '*.pyc'].",
        accept_single=True,
    ),
    Param("extension", "string", "Only show files with this extension, e.g. '.py' (several: '.py,.md')."),
    Param(
        "pattern",
        "string_list",
        "Glob patterns files must match, relative to path, e.g. ['*.py'] or ['src/**/*.ts'].",
        accept_single=True,
    ),
    Param("respect_gitignore", "boolean", "Hide what .gitignore files ignore.", default=True),
)


def list_files(call: ToolCall) -> str:
    fs = call.filesystem()
    args = call.args
    st = fs.stat(args["path"])
    base = st.path
    if st.type != "directory":
        raise NotADirectory(
            base, f"Not a directory: {base} (use {call.exposed(WORKSPACE_TOOLS.FILESYSTEM.READ_FILE)} or {call.exposed(WORKSPACE_TOOLS.FILESYSTEM.FILE_STAT)} for a file)"
        )
    max_depth = args["max_depth"]
    show_hidden = args["show_hidden"]
    dirs_only = args["dirs_only"]
    exclude = compile_globs(args["exclude"]) if args["exclude"] else None
    patterns = [p for p in (args["pattern"] or []) if p.strip()]
    pattern = compile_globs(patterns) if patterns else None
    extensions = None
    if args["extension"]:
        extensions = tuple(
            e if e.startswith(".") else "." + e
            for e in (x.strip() for x in args["extension"].split(","))
            if e
        )
    filtering = pattern is not None or extensions is not None

    def skip_dir(entry: WalkEntry) -> bool:
        return exclude is not None and _excluded(exclude, relative_to(base, entry.path), entry.name)

    def shows_file(entry: WalkEntry) -> bool:
        if dirs_only:
            return False
        rel = relative_to(base, entry.path)
        if exclude is not None and _excluded(exclude, rel, entry.name):
            return False
        if pattern is not None and not pattern(rel):
            return False
        return extensions is None or entry.name.endswith(extensions)

    def walk_from(path: str, depth: int) -> Iterator[WalkEntry]:
        return walk(
            fs,
            path,
            max_depth=depth,
            include_hidden=show_hidden,
            respect_gitignore=args["respect_gitignore"],
            skip_dir=skip_dir if exclude is not None else None,
            stat=False,
        )

    def shown_below(directory: WalkEntry) -> bool:
        """Whether a directory at the depth limit holds something a deeper listing would show
        (by the same rules: .gitignore, hidden entries, exclude and the file filters)."""
        try:
            return any(child.is_dir or shows_file(child) for child in walk_from(directory.path, 1))
        except (WorkspaceError, OSError):
            return False

    entries: list[WalkEntry] = []
    truncated = False
    for entry in walk_from(base, max_depth):
        if entry.is_dir:
            if not truncated and entry.depth == max_depth and not entry.is_symlink:
                truncated = shown_below(entry)
            if dirs_only and pattern is not None and not pattern(relative_to(base, entry.path)):
                continue
            entries.append(entry)
        elif shows_file(entry):
            entries.append(entry)

    if filtering and not dirs_only:
        entries = _prune_empty_dirs(entries)

    siblings: dict[str, list[str]] = {}
    for entry in entries:
        siblings.setdefault(entry.path.rpartition("/")[0], []).append(entry.name)
    notes = {
        (parent, name): note for parent, names in siblings.items() for name, note in name_notes(names).items()
    }
    lines = [wire_text(base)]
    n_dirs = n_files = 0
    for entry in entries:
        name = wire_text(entry.name) + ("/" if entry.is_dir else "")
        if entry.is_symlink:
            name += f" -> {wire_text(entry.symlink_target or '')}"
        note = notes.get((entry.path.rpartition("/")[0], entry.name))
        if note:
            name += f"  [{note}]"
        lines.append("\t" * (entry.depth - 1) + name)
        if entry.is_dir:
            n_dirs += 1
        else:
            n_files += 1
    summary = f"{n_dirs} {'directory' if n_dirs == 1 else 'directories'}, {n_files} {'file' if n_files == 1 else 'files'}"
    if truncated:
        summary += f" (truncated at depth {max_depth})"
    listing = truncate_head(
        "\n".join(lines),
        call.max_tokens,
        reserve=40,
        hint="list a subdirectory, lower max_depth or filter with pattern to see the rest",
    )
    return f"{listing}\n\n{summary}"


def _excluded(matcher: Callable[[str], bool], rel: str, name: str) -> bool:
    return bool(matcher(rel) or matcher(name))


def _prune_empty_dirs(entries: list[WalkEntry]) -> list[WalkEntry]:
    """With a file filter, keep only directories that contain a shown file."""
    keep_dirs: set[str] = set()
    for e in entries:
        if not e.is_dir:
            parent = e.path.rsplit("/", 1)[0] if "/" in e.path else ""
            while parent and parent not in keep_dirs:
                keep_dirs.add(parent)
                parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
    return [e for e in entries if not e.is_dir or e.path in keep_dirs]


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.FILESYSTEM.LIST_FILES,
    description=DESCRIPTION,
    params=PARAMS,
    run=list_files,
    title="List files",
    hints=LOOKS,
    needs={"filesystem"},
    writes=False,
    options=(),
    max_output_tokens=1000,
)
