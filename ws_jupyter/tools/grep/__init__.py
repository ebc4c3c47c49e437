"""``workspace_grep``: regex search over the workspace's text files.

Which files are searched is decided the same way whatever does the work: the workspace walker's
rules (``.gitignore`` at every level and ``.git/info/exclude``, ``.git`` skipped, hidden entries
only with ``include_hidden``, symlinks not followed), content-sniffed text detection (a
``Makefile`` or a ``.sas`` log is searched; a file whose first 8 KiB are not text is not), ripgrep's
binary rule (a file in which a NUL byte is met while searching is skipped whole; reading stops at
that byte, so the decision costs no more than reading up to it), and an optional glob in ``path``
(``src/**/*.py``, ``*.md``). One file named as ``path`` is searched whatever the rules say.

Two engines, one output (a test runs both on generated trees and compares):

* **ripgrep** (the ``rg`` binary — ``pip install ripgrep`` ships it; looked up next to the Python
  executable, then on ``PATH``), always run **confined to the workspace root**
  (:mod:`.confine`: Landlock, else bubblewrap): it opens paths by name, and a
  sandboxed process can swap a workspace directory for a symlink to a host directory at any
  moment; confined, such a path leads to nothing it can read. One run walks the tree and counts
  matching lines per file; the files the output needs (in tree order, up to the 1000-line cap)
  are checked against the rules above (ancestor ``.gitignore`` files, hidden path parts, sniffing
  through the filesystem); a second run extracts their lines as JSON. One file is searched by a
  walk of its directory with an anchored glob, so that the binary rule applies to it as well.
* the **Python engine** walks with :func:`ws_jupyter.filesystem.walk.walk` and reads each file
  through the filesystem (``O_NOFOLLOW`` descriptors on a local one; any provider works) in
  blocks of whole lines, matched by RE2 in linear time (:mod:`.regex`; patterns
  RE2 cannot express run in a child process that the time budget kills), stopping as soon as the
  output is full. It is used when ripgrep is missing or cannot be confined here, for notebooks
  named as ``path``, for non-local filesystems, for patterns ripgrep's syntax rejects, when
  ripgrep fails (its heap is capped: a line longer than it may hold), when a ``.gitignore`` is
  not a regular file of at most 1 MiB (ripgrep would hang on a FIFO; ``find`` checks for that
  while ripgrep runs, and its result is reused while no directory or ``.gitignore`` of the tree
  changed: :mod:`.rules_scan`), and when ``WS_JUPYTER_GREP_ENGINE=python``. A
  search stops after 60 s (said in the summary), checked between blocks and enforced by killing
  the child process or ripgrep.

Patterns are Python regular expressions, validated first (an invalid one gives
``Error: Invalid regex pattern: ...``); ripgrep's Rust syntax agrees on everything common. At most
1000 matching lines are shown; past that the summary still gives the true number of matches and
files (counted on, within the time budget) and the ``offset`` to continue from. ``max_count`` caps
matching lines per file; ``files_only`` lists the matching files with their counts instead of
lines; ``respect_gitignore=false`` searches ignored files too. When nothing matches, a look at
the files the search skipped says which match and why (hidden, ignored, binary), naming an
argument only when it finds them.

Modules: ``tool`` (the tool: description, parameters, output), ``engines`` (``search()``: picks the
engine, pages with ``offset``), ``ripgrep`` and ``files`` (the two engines), ``notebooks`` (cell
by cell), ``result`` (``GrepResult``, ``format_result``), ``visibility`` (the walker's rules for
files found by ripgrep), ``rules_scan``, ``confine`` (and ``find_ripgrep``), ``regex``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

_EXPORTS = {
    "MAX_LINE_CHARS": "ws_jupyter.tools.grep.result",
    "MAX_MATCHES": "ws_jupyter.tools.grep.result",
    "FileMatches": "ws_jupyter.tools.grep.result",
    "GrepResult": "ws_jupyter.tools.grep.result",
    "format_result": "ws_jupyter.tools.grep.result",
    "search": "ws_jupyter.tools.grep.engines",
    "find_ripgrep": "ws_jupyter.tools.grep.confine",
    "SPEC": "ws_jupyter.tools.grep.tool",
    "grep": "ws_jupyter.tools.grep.tool",
}

__all__ = [
    "MAX_LINE_CHARS",
    "MAX_MATCHES",
    "SPEC",
    "FileMatches",
    "GrepResult",
    "find_ripgrep",
    "format_result",
    "grep",
    "search",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

if TYPE_CHECKING:  # pragma: no cover
    from .confine import find_ripgrep
    from .engines import search
    from .result import MAX_LINE_CHARS, MAX_MATCHES, FileMatches, GrepResult, format_result
    from .tool import SPEC, grep
