"""ws-jupyter: one workspace for Jupyter users and the agents they prototype.

A contained filesystem, a sandbox for commands and background processes, hybrid (BM25 + vector)
search, SKILL.md skills and agent tools — plus ``%ws`` magics and widgets (``%load_ext ws_jupyter``).

Public names are imported lazily so that ``import ws_jupyter`` (and loading the IPython
extension) stays fast: chromadb and onnxruntime load only when search first needs them.

>>> from ws_jupyter import Workspace, LocalFilesystem, LocalSandbox
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._lazy import lazy_exports
from ._moved import install as _keep_old_paths
from ._trusted_imports import install as _trust_dependencies
from ._version import __version__

_trust_dependencies()  # a workspace's pathspec.py is never imported in place of ours
_keep_old_paths()  # modules that moved answer at their old import paths for one release


# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # workspace
    "Workspace": "ws_jupyter.workspace",
    "WorkspaceInfo": "ws_jupyter.workspace",
    "RequestContext": "ws_jupyter.request_context",
    # filesystem
    "WorkspaceFilesystem": "ws_jupyter.filesystem.types",
    "FileEntry": "ws_jupyter.filesystem.types",
    "FileStat": "ws_jupyter.filesystem.types",
    "FilesystemInfo": "ws_jupyter.filesystem.types",
    "LocalFilesystem": "ws_jupyter.filesystem.local",
    "FsspecFilesystem": "ws_jupyter.filesystem.fsspec_fs",
    # sandbox
    "WorkspaceSandbox": "ws_jupyter.sandbox.types",
    "CommandResult": "ws_jupyter.sandbox.types",
    "ProcessInfo": "ws_jupyter.sandbox.types",
    "SandboxInfo": "ws_jupyter.sandbox.types",
    "IsolationDetection": "ws_jupyter.sandbox.types",
    "LocalSandbox": "ws_jupyter.sandbox.local",
    "NativeSandboxConfig": "ws_jupyter.sandbox.isolation.config",
    "ProcessManager": "ws_jupyter.sandbox.processes",
    "ProcessHandle": "ws_jupyter.sandbox.processes",
    # kernels
    "SandboxKernelManager": "ws_jupyter.sandbox.kernels.manager",
    "Kernel": "ws_jupyter.sandbox.kernels.kernel",
    "KernelInfo": "ws_jupyter.sandbox.kernels.provider",
    "KernelsConfig": "ws_jupyter.sandbox.kernels.config",
    "ExecutionResult": "ws_jupyter.sandbox.kernels.result",
    "ExecutionError": "ws_jupyter.sandbox.kernels.result",
    "MimeBundle": "ws_jupyter.sandbox.kernels.result",
    "OutputEvent": "ws_jupyter.sandbox.kernels.result",
    "OutputLimits": "ws_jupyter.sandbox.kernels.result",
    # skills
    "Skill": "ws_jupyter.skills.model",
    "SkillSearchResult": "ws_jupyter.skills.model",
    "SkillsContext": "ws_jupyter.skills.model",
    "SkillIssue": "ws_jupyter.skills.model",
    "SkillFile": "ws_jupyter.skills.model",
    "SkillChanges": "ws_jupyter.skills.model",
    "SkillWarning": "ws_jupyter.skills.model",
    "WorkspaceSkills": "ws_jupyter.skills.workspace_skills",
    "SkillSource": "ws_jupyter.skills.source",
    "LocalSkillSource": "ws_jupyter.skills.source",
    "FilesystemSkillSource": "ws_jupyter.skills.source",
    "VersionedSkillSource": "ws_jupyter.skills.versioned",
    # search
    "BM25Config": "ws_jupyter.search.config",
    "EmbedPolicy": "ws_jupyter.search.embed_policy",
    "SearchResult": "ws_jupyter.search.results",
    "SearchEngine": "ws_jupyter.search.engine",
    "VectorStore": "ws_jupyter.search.vector_store",
    "ChromaVectorStore": "ws_jupyter.search.vector_store",
    "DefaultEmbedder": "ws_jupyter.search.embedder",
    "IndexReport": "ws_jupyter.search.indexer",
    "IndexProgress": "ws_jupyter.search.indexer",
    "install_model": "ws_jupyter.install.model",
    "IndexStatus": "ws_jupyter.search.status",
    # checkpoints
    "Checkpoint": "ws_jupyter.checkpoints.manager",
    "Changes": "ws_jupyter.checkpoints.manager",
    "FileChange": "ws_jupyter.checkpoints.manager",
    "RestoreReport": "ws_jupyter.checkpoints.manager",
    "CheckpointsConfig": "ws_jupyter.checkpoints.config",
    # agent tools
    "WORKSPACE_TOOLS": "ws_jupyter.tools.names",
    "Tool": "ws_jupyter.tools.types",
    "ToolResult": "ws_jupyter.tools.types",
    "MediaPart": "ws_jupyter.tools.types",
    "ToolCallContext": "ws_jupyter.tools.types",
    "ToolHookContext": "ws_jupyter.tools.types",
    "ToolsConfig": "ws_jupyter.tools.config",
    "ToolActivity": "ws_jupyter.tools.activity",
    "ToolActivityEvent": "ws_jupyter.tools.activity",
    "tool_activity": "ws_jupyter.tools.activity",
    "to_openai": "ws_jupyter.adapters.chat",
    "to_anthropic": "ws_jupyter.adapters.chat",
    "run_tool_call": "ws_jupyter.adapters.chat",
    "run_openai_tool_calls": "ws_jupyter.adapters.chat",
    "run_anthropic_tool_calls": "ws_jupyter.adapters.chat",
    "openai_tool_output": "ws_jupyter.adapters.chat",
    "anthropic_tool_result": "ws_jupyter.adapters.chat",
    "to_openai_agents": "ws_jupyter.adapters.openai_agents",
    "to_langchain": "ws_jupyter.adapters.langchain",
    "to_pydantic_ai": "ws_jupyter.adapters.pydantic_ai",
    "to_smolagents": "ws_jupyter.adapters.smolagents",
    "serve_mcp": "ws_jupyter.adapters.mcp_server",
}

_ERRORS = (
    "WorkspaceError WorkspaceConfigError InvalidArgumentError WorkspaceNotReadyError OperationTimeoutError FilesystemNotAvailableError "
    "SandboxNotAvailableError SearchNotAvailableError FilesystemError FileNotFound DirectoryNotFound "
    "FileExists IsADirectory NotADirectory DirectoryNotEmpty PathEscapeError ReadOnlyError "
    "StaleFileError FileReadRequiredError FileTooLargeError InvalidPathError FileEncodingError FilesystemNotReadyError "
    "SandboxError SandboxStateError "
    "IsolationUnavailableError ProcessNotFoundError ProcessWaitTimeoutError StdinClosedError KernelError KernelNotFoundError "
    "SearchError SearchModeError "
    "EmbedderError IndexCorruptedError NotebookError CellNotFoundError SkillError SkillValidationError SkillNotFoundError "
    "DuplicateSkillError SkillPathError UserDataError VariableNotSharedError UnsupportedValueError "
    "TransferTooLargeError UnsafeTransferError ToolError ToolConfigError ToolArgumentError ToolNotFoundError "
    "ToolApprovalDeniedError WriteLockTimeoutError CheckpointError CheckpointNotFoundError CheckpointDamagedError"
).split()
_EXPORTS.update(dict.fromkeys(_ERRORS, "ws_jupyter.errors"))

__all__ = sorted([*_EXPORTS, "load_ipython_extension", "unload_ipython_extension", "__version__"])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext ws_jupyter``: registers the ``%ws`` magics."""
    from .jupyter.extension import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext ws_jupyter``: removes the magics and stops what the extension started."""
    from .jupyter.extension import unload_ipython_extension as _unload

    _unload(ipython)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .adapters.chat import (
        anthropic_tool_result,
        openai_tool_output,
        run_anthropic_tool_calls,
        run_openai_tool_calls,
        run_tool_call,
        to_anthropic,
        to_openai,
    )
    from .adapters.langchain import to_langchain
    from .adapters.mcp_server import serve_mcp
    from .adapters.openai_agents import to_openai_agents
    from .adapters.pydantic_ai import to_pydantic_ai
    from .adapters.smolagents import to_smolagents
    from .checkpoints.config import CheckpointsConfig
    from .checkpoints.manager import Changes, Checkpoint, FileChange, RestoreReport
    from .errors import *
    from .filesystem.fsspec_fs import FsspecFilesystem
    from .filesystem.local import LocalFilesystem
    from .filesystem.types import FileEntry, FileStat, FilesystemInfo, WorkspaceFilesystem
    from .install.model import install_model
    from .request_context import RequestContext
    from .sandbox.isolation.config import NativeSandboxConfig
    from .sandbox.kernels.config import KernelsConfig
    from .sandbox.kernels.kernel import Kernel
    from .sandbox.kernels.manager import SandboxKernelManager
    from .sandbox.kernels.provider import KernelInfo
    from .sandbox.kernels.result import ExecutionError, ExecutionResult, MimeBundle, OutputEvent, OutputLimits
    from .sandbox.local import LocalSandbox
    from .sandbox.processes import ProcessHandle, ProcessManager
    from .sandbox.types import CommandResult, IsolationDetection, ProcessInfo, SandboxInfo, WorkspaceSandbox
    from .search.config import BM25Config
    from .search.embed_policy import EmbedPolicy
    from .search.embedder import DefaultEmbedder
    from .search.engine import SearchEngine
    from .search.indexer import IndexProgress, IndexReport
    from .search.results import SearchResult
    from .search.status import IndexStatus
    from .search.vector_store import ChromaVectorStore, VectorStore
    from .skills.model import (
        Skill,
        SkillChanges,
        SkillFile,
        SkillIssue,
        SkillsContext,
        SkillSearchResult,
        SkillWarning,
    )
    from .skills.source import FilesystemSkillSource, LocalSkillSource, SkillSource
    from .skills.versioned import VersionedSkillSource
    from .skills.workspace_skills import WorkspaceSkills
    from .tools.activity import ToolActivity, ToolActivityEvent, tool_activity
    from .tools.config import ToolsConfig
    from .tools.names import WORKSPACE_TOOLS
    from .tools.types import MediaPart, Tool, ToolCallContext, ToolHookContext, ToolResult
    from .workspace import Workspace, WorkspaceInfo
