"""Checkpoints: record the workspace's files, see what changed since, and take it back.

A checkpoint records every file of the workspace (by the policy in :mod:`.scan`) as content-
addressed copies and a signed manifest (:mod:`.manifest`, :mod:`.store`); :meth:`Checkpoints.changes`
compares the workspace with one — changes made by the agent's file tools, its shell commands and
kernel code, or anyone else, found by metadata then hash — and names who made each
(:mod:`.attribution`); :mod:`.diff` shows them (notebooks cell by cell); :mod:`.restore` writes a
checkpoint's files back through the filesystem's atomic write, holding the write locks, after
recording the state it replaces.

Automatic checkpoints (:class:`CheckpointsConfig` ``auto``) are taken before an agent turn's first
file-changing tool call. The public face is on ``Workspace``: ``checkpoint()``, ``changes()``,
``diff()``, ``restore()`` and ``checkpoints``.
"""

from __future__ import annotations

from .attribution import Attribution
from .config import CheckpointsConfig
from .manager import Changes, Checkpoint, Checkpoints, FileChange, RestoreReport
from .manifest import Excluded, FileRecord
from .store import StoreUsage

__all__ = [
    "Attribution",
    "Changes",
    "Checkpoint",
    "Checkpoints",
    "CheckpointsConfig",
    "Excluded",
    "FileChange",
    "FileRecord",
    "RestoreReport",
    "StoreUsage",
]
