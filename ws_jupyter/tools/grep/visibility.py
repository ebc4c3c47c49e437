"""The walker's rules (hidden entries, ``.git``, ``.gitignore`` at every level) applied to files
found another way: by ripgrep, or by the look at skipped files when nothing matched."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from ...filesystem.reading import read_config
from ...filesystem.walk import IgnoreRules, start_rules

if TYPE_CHECKING:
    from ...filesystem.types import WorkspaceFilesystem

__all__ = ["Visibility"]


class Visibility:
    """Whether a file below ``base`` is one the walker would yield (hidden, .git, .gitignore)."""

    def __init__(
        self,
        fs: WorkspaceFilesystem,
        base: str,
        include_hidden: bool,
        host_base: str,
        respect_gitignore: bool = True,
        *,
        ignore_dirs: set[str] | None = None,
    ) -> None:
        self.fs = fs
        # the directories known to hold a .gitignore (from the rules scan): the others are not read
        self.ignore_dirs = ignore_dirs
        self.base = base
        self.host_base = host_base
        self.include_hidden = include_hidden
        self.respect_gitignore = respect_gitignore
        rules = start_rules(fs, base) if respect_gitignore else IgnoreRules()
        self._dir_rules: dict[str, IgnoreRules] = {}
        self._base_rules = rules
        self._dir_visible: dict[str, bool] = {}

    def _rules_in(self, rel_dir: str) -> IgnoreRules:
        """Rules in effect for the children of ``rel_dir`` (a directory at or below base)."""
        cached = self._dir_rules.get(rel_dir)
        if cached is not None:
            return cached
        if not self.respect_gitignore:
            return self._base_rules
        if rel_dir == self.base:
            parent_rules = self._base_rules
        else:
            parent_rules = self._rules_in(posixpath.dirname(rel_dir) or ".")
        if self.ignore_dirs is not None and rel_dir not in self.ignore_dirs:
            data = None
        else:
            data = read_config(self.fs, rel_dir + "/.gitignore" if rel_dir != "." else ".gitignore")
        text = None if data is None else data.decode("utf-8", "replace")
        rules = parent_rules.with_file(rel_dir, text) if text else parent_rules
        self._dir_rules[rel_dir] = rules
        return rules

    def _name_ok(self, name: str) -> bool:
        return name != ".git" and (self.include_hidden or not name.startswith("."))

    def _dir_ok(self, rel_dir: str) -> bool:
        if rel_dir == self.base:
            return True
        known = self._dir_visible.get(rel_dir)
        if known is not None:
            return known
        parent = posixpath.dirname(rel_dir) or "."
        ok = (
            self._dir_ok(parent)
            and self._name_ok(posixpath.basename(rel_dir))
            and not self._rules_in(parent).is_ignored(rel_dir, True)
        )
        self._dir_visible[rel_dir] = ok
        return ok

    def __call__(self, rel: str) -> bool:
        parent = posixpath.dirname(rel) or "."
        return (
            self._dir_ok(parent)
            and self._name_ok(posixpath.basename(rel))
            and not self._rules_in(parent).is_ignored(rel, False)
        )
