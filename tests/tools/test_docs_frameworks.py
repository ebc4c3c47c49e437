"""The "Use with your agent framework" page (docs/frameworks.md): every snippet is extracted and run as
written, offline. The model APIs are a local stand-in (``fake_llm``) reached through the real SDKs
by their base-URL settings; LangChain's snippet takes any chat model as ``model``, given here as a
scripted one (LangChain core ships no model client). The MCP client configurations are parsed
and their command is started and listed with the ``mcp`` client."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from ..helpers import write
from .fake_llm import ANSWER, FakeLLM

PAGE = Path(__file__).resolve().parents[2] / "docs" / "frameworks.md"


def _section() -> str:
    text = PAGE.read_text()
    assert text.startswith("# Use with your agent framework\n")
    return text


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", _section(), re.S)


def _snippet(marker: str) -> str:
    found = [b for b in _blocks("python") if marker in b]
    assert len(found) == 1, f"one snippet with {marker!r} in docs/frameworks.md"
    return found[0]


def test_the_section_has_a_snippet_per_framework_and_two_client_configs():
    python = _blocks("python")
    for marker in ("from openai import", "import anthropic", "from agents import", "to_langchain", "pydantic_ai", "smolagents"):
        assert any(marker in b for b in python), marker
    assert len(_blocks("json")) == 2


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    write(tmp_path, "project/notes.md", "hello\n")
    monkeypatch.chdir(tmp_path)
    with FakeLLM() as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", llm.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
        yield llm


def _run(code: str, **namespace: Any) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/frameworks.md", "exec"), {"__name__": "__snippet__", **namespace})
    return out.getvalue()


@pytest.mark.parametrize(
    "marker", ["from openai import", "import anthropic", "from agents import", "pydantic_ai", "smolagents"]
)
def test_snippet_runs_against_the_model_api(project, marker):
    printed = _run(_snippet(marker))
    assert ANSWER in printed
    # the tool really ran and its output went back to the model
    assert any(FakeLLM.answered(body) for _, body in project.requests)


def test_langchain_snippet(project):
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage

    seen: list[Any] = []

    class Scripted(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            seen.extend(t.name for t in tools)
            return self

        def invoke(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append(list(messages))
            return super().invoke(messages, *args, **kwargs)

    model = Scripted(
        responses=[
            AIMessage("", tool_calls=[{"name": "workspace_read_file", "args": {"path": "notes.md"}, "id": "lc1"}]),
            AIMessage(ANSWER),
        ]
    )
    assert ANSWER in _run(_snippet("to_langchain"), model=model)
    assert "workspace_read_file" in seen
    last_turn = seen[-1]
    assert last_turn[-1].content == "notes.md (6 bytes)\n     1→hello" and last_turn[-1].tool_call_id == "lc1"


@pytest.mark.slow
def test_mcp_client_configs_start_a_working_server(tmp_path):
    from mcp import Client, StdioServerParameters

    write(tmp_path, "project/notes.md", "hello\n")
    cli = str(Path(sys.executable).with_name("ws-jupyter"))
    servers = []
    for block in _blocks("json"):
        config = json.loads(block)
        entry = (config.get("mcpServers") or config.get("servers"))["workspace"]
        args = [
            a.replace("/path/to/project", str(tmp_path / "project")).replace("${workspaceFolder}", str(tmp_path / "project"))
            for a in entry["args"]
        ]
        if "bwrap" in args:
            from ws_jupyter import LocalSandbox

            probe = LocalSandbox.detect_isolation()
            if probe.backend != "bwrap" or not probe.available:
                args[args.index("bwrap")] = "none"
        assert entry["command"].endswith("/bin/ws-jupyter")
        servers.append(StdioServerParameters(command=cli, args=[*args, "--no-search"], env={"PATH": os.environ["PATH"]}))

    async def main() -> list[str]:
        texts = []
        with anyio.fail_after(120):
            for params in servers:
                async with Client(params) as client:
                    result = await client.call_tool("workspace_read_file", {"path": "notes.md"})
                    texts.append(result.content[0].text)
        return texts

    assert anyio.run(main) == ["notes.md (6 bytes)\n     1→hello"] * 2
