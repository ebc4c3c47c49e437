"""Filesystem providers: the protocol, the local implementation, containment, the walker, glob
matching (``globs``), and how file names are shown (``display``)."""

from .containment import Containment, ResolvedPath
from .local import LocalFilesystem
from .types import FileEntry, FileStat, FilesystemInfo, WorkspaceFilesystem
from .walk import IgnoreRules, WalkEntry, walk

__all__ = [
    "Containment",
    "FileEntry",
    "FileStat",
    "FilesystemInfo",
    "IgnoreRules",
    "LocalFilesystem",
    "ResolvedPath",
    "WalkEntry",
    "WorkspaceFilesystem",
    "walk",
]
