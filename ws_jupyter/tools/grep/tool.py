"""``workspace_grep``: the tool — its description, parameters and output (the search is
:func:`.engines.search`). When nothing matches, a quick look at the files the search skipped says
which match and why (hidden, ignored, binary), naming an argument only when it finds them."""

from __future__ import annotations

import time

from ...errors import WorkspaceError
from ...filesystem.globs import split_glob_path
from ...filesystem.walk import relative_to
from ...text.shaping import truncate_head
from ..base import ToolCall, ToolSpec
from ..facts import LOOKS, WORKSPACE_TOOLS
from ..schema import Param
from ..types import ToolErrorText
from .engines import search
from .regex import PatternError
from .result import GrepResult, format_result
from .visibility import Visibility

__all__ = ["DESCRIPTION", "MAX_PATTERN", "PARAMS", "SPEC", "grep"]

MAX_PATTERN = 1000

DESCRIPTION = (
    "Search file contents with a regular expression (Python syntax) and get matching lines as "
    "'path:line:column: text'. Searches text files under path (default: the whole workspace), "
    "honouring .gitignore; hidden files only with include_hidden. path may be a file, a directory or "
    "a glob such as 'src/**/*.py' or '*.md'. Use context_lines to see lines around each match and "
    "max_count to limit matches per file. Notebooks (.ipynb) are searched cell by cell, not as JSON: "
    "a match reads 'nb.ipynb [cell 4]:2:col: text' (line 2 of cell 4; cells count from 0), and "
    "cell outputs only with include_outputs. At most 1000 matching lines are returned (the summary "
    "gives the total; continue with offset); files_only=true lists matching files with counts."
)

PARAMS = (
    Param(
        "pattern",
        "string",
        "Regular expression to search for, e.g. 'def \\w+_test' or 'TODO'.",
        required=True,
    ),
    Param(
        "path", "string", "File, directory or glob to search, relative to the workspace root.", default="."
    ),
    Param(
        "context_lines",
        "integer",
        "Lines of context to show before and after each match.",
        default=0,
        minimum=0,
        maximum=50,
    ),
    Param("max_count", "integer", "Maximum matching lines per file. Default: no limit.", minimum=1),
    Param("case_sensitive", "boolean", "Match case exactly.", default=True),
    Param(
        "include_hidden",
        "boolean",
        "Also search files and directories whose name starts with '.'.",
        default=False,
    ),
    Param("respect_gitignore", "boolean", "Skip files that .gitignore excludes.", default=True),
    Param(
        "offset",
        "integer",
        "Skip this many matching lines (or files, with files_only) first: continue a truncated search.",
        default=0,
        minimum=0,
    ),
    Param(
        "files_only",
        "boolean",
        "List the matching files with their number of matching lines instead of the lines.",
        default=False,
    ),
    Param(
        "include_outputs",
        "boolean",
        "Notebooks: also search the text of cell outputs (reported as '[cell N output]').",
        default=False,
    ),
)


_PROBE_BUDGET = 5.0


def _skipped_note(call: ToolCall, pattern: str, result: GrepResult) -> str:
    """When nothing matched: which files this search skipped do match, why each was skipped, and
    the argument that searches them — named only when a search with it does find the example.

    A quick search with every skip turned off (hidden files, ``.gitignore``; one match per file is
    enough) lists candidates. Each example is then searched alone, as the suggested argument
    would search it: a file skipped as binary (a NUL byte met while searching it, possibly past
    the first match: the quick search stops there) is said to be binary, and no argument is
    suggested for it, since none makes grep search binary files.
    """
    args = call.args
    fs = call.filesystem()
    deadline = time.monotonic() + _PROBE_BUDGET
    try:
        probe = search(
            fs,
            pattern,
            args["path"],
            max_count=1,
            case_sensitive=args["case_sensitive"],
            include_hidden=True,
            respect_gitignore=False,
            files_only=True,
            max_matches=50,
            count_all=False,
            time_budget=_PROBE_BUDGET,
        )
        base = fs.stat(split_glob_path(args["path"])[0]).path
        rules = Visibility(fs, base, True, "", respect_gitignore=True) if args["respect_gitignore"] else None
    except (PatternError, WorkspaceError, OSError):
        return ""
    examples: dict[str, str] = {}
    for rel, _count in probe.file_counts or ():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        parts = relative_to(base, rel).split("/") if rel != base else []
        hidden = not args["include_hidden"] and any(p.startswith(".") for p in parts)
        try:
            ignored = rules is not None and rel != base and not rules(rel)
            alone = search(  # as the main search would have searched it, without the skip
                fs, pattern, rel, max_count=args["max_count"], case_sensitive=args["case_sensitive"],
                files_only=True, count_all=False, time_budget=left,
            )  # fmt: skip
        except (PatternError, WorkspaceError, OSError):
            continue
        if alone.binary_skipped:
            kind = "binary" if not result.binary_skipped else ""
        elif not alone.total_matches:
            kind = ""  # changed meanwhile, unreadable...: nothing to say about it
        else:
            kind = ("hidden " if hidden else "") + ("ignored" if ignored else "")
        if kind.strip() and kind.strip() not in examples:
            examples[kind.strip()] = rel
        if len(examples) == 4:
            break
    notes = []
    if "hidden" in examples:
        notes.append(
            f"hidden files that match, e.g. {examples['hidden']} (include_hidden=true searches them)"
        )
    if "ignored" in examples:
        notes.append(
            f".gitignore'd files that match, e.g. {examples['ignored']} (respect_gitignore=false searches them)"
        )
    if "hidden ignored" in examples:
        notes.append(
            f"hidden, .gitignore'd files that match, e.g. {examples['hidden ignored']} "
            "(include_hidden=true with respect_gitignore=false searches them)"
        )
    if "binary" in examples:
        notes.append(
            f"binary files that match, e.g. {examples['binary']} (it holds a NUL byte; no grep option "
            "searches binary files)"
        )
    return " (skipped: " + "; ".join(notes) + ")" if notes else ""


def grep(call: ToolCall) -> str:
    args = call.args
    pattern = args["pattern"]
    if len(pattern) > MAX_PATTERN:
        return ToolErrorText(
            f"Error: Pattern too long ({len(pattern)} chars, max {MAX_PATTERN}). Use a shorter pattern."
        )
    try:
        result = search(
            call.filesystem(),
            pattern,
            args["path"],
            context_lines=args["context_lines"],
            max_count=args["max_count"],
            case_sensitive=args["case_sensitive"],
            include_hidden=args["include_hidden"],
            respect_gitignore=args["respect_gitignore"],
            offset=args["offset"],
            files_only=args["files_only"],
            notebook_outputs=args["include_outputs"],
        )
    except PatternError as exc:
        return ToolErrorText(f"Error: {exc}")
    summary, body = format_result(result, args["context_lines"])
    if result.total_matches == 0 and not result.target_missing and not result.timed_out:
        summary += _skipped_note(call, pattern, result)
    if not body:
        return summary
    body = truncate_head(
        body, call.max_tokens, reserve=60, hint="narrow path or pattern, set max_count, or use files_only"
    )
    return f"{summary}\n---\n{body}"


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.FILESYSTEM.GREP,
    description=DESCRIPTION,
    params=PARAMS,
    run=grep,
    title="Search file contents (grep)",
    hints=LOOKS,
    needs={"filesystem"},
    writes=False,
    options=(),
)
