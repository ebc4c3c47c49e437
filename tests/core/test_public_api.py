"""The public surface: what ``ws_jupyter`` exports is exactly the documented list, every name
resolves, and importing the package stays light (heavy dependencies load on first use)."""

from __future__ import annotations

import subprocess
import sys

import ws_jupyter

PUBLIC = {
    # workspace
    "Workspace", "WorkspaceInfo", "RequestContext",
    # filesystem
    "WorkspaceFilesystem", "LocalFilesystem", "FsspecFilesystem", "FileEntry", "FileStat", "FilesystemInfo",
    # sandbox and processes
    "WorkspaceSandbox", "LocalSandbox", "NativeSandboxConfig", "IsolationDetection", "CommandResult",
    "SandboxInfo", "ProcessManager", "ProcessHandle", "ProcessInfo",
    # kernels
    "SandboxKernelManager", "Kernel", "KernelInfo", "KernelsConfig", "ExecutionResult", "ExecutionError",
    "MimeBundle", "OutputEvent", "OutputLimits",
    # search
    "BM25Config", "EmbedPolicy", "SearchEngine", "SearchResult", "VectorStore", "ChromaVectorStore", "DefaultEmbedder",
    "IndexProgress", "IndexReport", "IndexStatus", "install_model",
    # skills
    "Skill", "SkillChanges", "SkillFile", "SkillIssue", "SkillSearchResult", "SkillWarning", "SkillsContext",
    "SkillSource", "LocalSkillSource", "FilesystemSkillSource", "VersionedSkillSource", "WorkspaceSkills",
    # agent tools
    "WORKSPACE_TOOLS", "Tool", "ToolResult", "MediaPart", "ToolsConfig", "ToolCallContext", "ToolHookContext",
    "ToolActivity", "ToolActivityEvent", "tool_activity", "run_tool_call", "to_openai", "to_anthropic",
    "serve_mcp", "openai_tool_output", "anthropic_tool_result", "run_openai_tool_calls",
    "run_anthropic_tool_calls", "to_openai_agents", "to_langchain", "to_pydantic_ai", "to_smolagents",
    # checkpoints
    "Checkpoint", "Changes", "FileChange", "RestoreReport", "CheckpointsConfig",
    # errors
    "WorkspaceError", "WorkspaceConfigError", "InvalidArgumentError", "WorkspaceNotReadyError",
    "OperationTimeoutError", "FilesystemNotAvailableError", "SandboxNotAvailableError",
    "SearchNotAvailableError", "FilesystemError", "FileNotFound", "DirectoryNotFound", "FileExists",
    "IsADirectory", "NotADirectory", "DirectoryNotEmpty", "PathEscapeError", "ReadOnlyError",
    "StaleFileError", "FileReadRequiredError", "FileTooLargeError", "InvalidPathError", "FileEncodingError",
    "FilesystemNotReadyError", "SandboxError", "SandboxStateError", "IsolationUnavailableError",
    "ProcessNotFoundError", "ProcessWaitTimeoutError", "StdinClosedError", "KernelError",
    "KernelNotFoundError", "SearchError",
    "SearchModeError", "EmbedderError", "IndexCorruptedError", "NotebookError", "CellNotFoundError",
    "SkillError", "SkillValidationError",
    "SkillNotFoundError", "DuplicateSkillError", "SkillPathError", "UserDataError", "VariableNotSharedError",
    "UnsupportedValueError", "TransferTooLargeError", "UnsafeTransferError", "ToolError", "ToolConfigError",
    "ToolArgumentError", "ToolNotFoundError", "ToolApprovalDeniedError", "WriteLockTimeoutError",
    "CheckpointError", "CheckpointNotFoundError", "CheckpointDamagedError",
    # IPython extension entry points
    "load_ipython_extension", "unload_ipython_extension", "__version__",
}  # fmt: skip


def test_all_is_the_documented_surface():
    assert set(ws_jupyter.__all__) == PUBLIC
    assert len(ws_jupyter.__all__) == len(PUBLIC)


def test_every_public_name_resolves():
    for name in ws_jupyter.__all__:
        assert getattr(ws_jupyter, name) is not None, name
    assert set(dir(ws_jupyter)) >= PUBLIC


def test_unknown_attribute_is_an_attribute_error():
    try:
        ws_jupyter.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


def test_import_is_light():
    code = (
        "import sys, ws_jupyter\n"
        "from ws_jupyter import Workspace, LocalFilesystem, LocalSandbox\n"
        "heavy = [m for m in ('chromadb', 'onnxruntime', 'onnx', 'numpy', 'IPython', 'ipywidgets', 'tokenizers',"
        " 'agents', 'langchain_core', 'pydantic_ai', 'smolagents', 'openai', 'anthropic', 'mcp')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_tools_load_when_first_listed_not_with_the_workspace():
    """The tool registry (every tool module: grep's engines, the kernel tools...) loads when tools
    are first listed or their groups read, not when the workspace (or its checkpoints) is imported."""
    code = (
        "import sys\n"
        "from ws_jupyter import Workspace\n"
        "import ws_jupyter.checkpoints\n"
        "print([m for m in sys.modules if m.startswith(('ws_jupyter.tools.registry', 'ws_jupyter.tools.files',"
        " 'ws_jupyter.tools.grep', 'ws_jupyter.tools.sandbox', 'ws_jupyter.tools.open_notebook'))])\n"
        "from ws_jupyter.checkpoints.attribution import CHANGING_TOOLS\n"
        "print('workspace_write_file' in CHANGING_TOOLS, 'ws_jupyter.tools.registry' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[]", "True True"]


def test_core_never_imports_jupyter_packages():
    """Everything outside ws_jupyter/jupyter/ imports neither IPython nor ipywidgets."""
    import pathlib
    import re

    root = pathlib.Path(ws_jupyter.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if "jupyter" in path.relative_to(root).parts[:1]:
            continue
        text = path.read_text()
        if re.search(r"^\s*(from|import)\s+(IPython|ipywidgets|ipykernel)\b", text, re.M):
            offenders.append(str(path.relative_to(root)))
    assert offenders == []
