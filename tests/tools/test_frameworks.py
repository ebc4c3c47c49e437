"""The agent-framework adapters, each run through the framework's own tool-invocation machinery
offline: the Agents SDK ``Runner`` with a scripted model, pydantic-ai's ``FunctionModel``, a
LangChain ``ToolCall`` invoke, a smolagents ``ToolCallingAgent`` with a scripted model. Per
framework: the definitions are accepted by its types, a round trip, an image result (handled
generically: any tool that returns media), an error result, and approval where it has one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import (
    LocalFilesystem,
    LocalSandbox,
    Workspace,
    to_langchain,
    to_openai_agents,
    to_pydantic_ai,
    to_smolagents,
)
from ws_jupyter.tools.types import MediaPart, Tool, ToolResult

from ..helpers import write
from .test_filesystem_tools import png_bytes


@pytest.fixture
def ws(workdir: Path):
    write(workdir, "notes.md", "hello\n")
    (workdir / "img.png").write_bytes(png_bytes())
    # no isolation: workspace_execute_command requires approval, the case approval paths need
    w = Workspace(
        filesystem=LocalFilesystem(workdir),
        sandbox=LocalSandbox(working_directory=workdir, isolation="none"),
        bm25=False,
    )
    yield w
    w.destroy()


def _image_tool() -> Tool:
    """A tool that is none of the workspace's: adapters must handle media generically."""
    data = MediaPart.from_bytes("image/png", png_bytes())
    return Tool(
        name="render_plot",
        workspace_tool_name="render_plot",
        description="Render a plot.",
        input_schema={"type": "object", "properties": {}, "required": [], "additionalProperties": False},
        runner=lambda args, ctx, approved: ToolResult("plot (2x2)", (data,)),
    )


# --- OpenAI Agents SDK ---------------------------------------------------------------------------


class ScriptedModel:
    """An Agents SDK ``Model`` that answers with the next scripted output items, recording inputs."""

    def __init__(self, turns: list[list[Any]]) -> None:
        from agents.models.interface import Model

        self.turns = list(turns)
        self.inputs: list[Any] = []
        outer = self

        class _Model(Model):
            async def get_response(self, system_instructions, input, *args: Any, **kwargs: Any):
                from agents.items import ModelResponse
                from agents.usage import Usage

                outer.inputs.append(input)
                return ModelResponse(output=outer.turns.pop(0), usage=Usage(), response_id=None)

            def stream_response(self, *args: Any, **kwargs: Any):
                raise NotImplementedError

        self.model = _Model()


def _call(name: str, args: dict[str, Any], call_id: str) -> Any:
    from openai.types.responses import ResponseFunctionToolCall

    return ResponseFunctionToolCall(
        id=f"fc_{call_id}",
        call_id=call_id,
        name=name,
        arguments=json.dumps(args),
        type="function_call",
        status="completed",
    )


def _say(text: str) -> Any:
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    return ResponseOutputMessage(
        id="msg_1",
        content=[ResponseOutputText(annotations=[], text=text, type="output_text")],
        role="assistant",
        status="completed",
        type="message",
    )


def _outputs(model_input: Any) -> dict[str, Any]:
    return {
        i["call_id"]: i["output"]
        for i in model_input
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    }


def test_openai_agents_runner_round_trip_image_and_error(ws):
    from agents import Agent, FunctionTool, RunConfig, Runner

    tools = to_openai_agents([*ws.tools(), _image_tool()])
    assert all(isinstance(t, FunctionTool) for t in tools)
    read = next(t for t in tools if t.name == "workspace_read_file")
    assert read.strict_json_schema and read.params_json_schema["required"] == [
        "path",
        "offset",
        "limit",
        "show_line_numbers",
        "encoding",
        "cell",
        "raw",
    ]
    script = ScriptedModel(
        [
            [
                _call("workspace_read_file", {"path": "notes.md"}, "c1"),
                _call("workspace_read_file", {"path": "img.png"}, "c2"),
                _call("workspace_read_file", {"path": "missing.md"}, "c3"),
                _call("render_plot", {}, "c4"),
            ],
            [_say("done")],
        ]
    )
    agent = Agent(name="dev", tools=tools, model=script.model)
    result = asyncio.run(Runner.run(agent, "read them", run_config=RunConfig(tracing_disabled=True)))
    assert result.final_output == "done"
    sent = _outputs(script.inputs[1])
    assert sent["c1"] == "notes.md (6 bytes)\n     1→hello"
    for call_id in ("c2", "c4"):  # the workspace's image and a foreign tool's image, alike
        kinds = [part["type"] for part in sent[call_id]]
        assert kinds == ["input_text", "input_image"], sent[call_id]
        assert sent[call_id][1]["image_url"].startswith("data:image/png;base64,")
    assert sent["c3"].startswith("Error: File not found: missing.md")


def test_openai_agents_dynamic_approval_interrupts_then_runs_approved(ws, workdir):
    from agents import Agent, RunConfig, Runner

    tools = to_openai_agents(ws.tools())
    command = {"command": "touch approved.txt && echo ok"}
    script = ScriptedModel([[_call("workspace_execute_command", command, "c1")], [_say("finished")]])
    agent = Agent(name="dev", tools=tools, model=script.model)
    config = RunConfig(tracing_disabled=True)
    first = asyncio.run(Runner.run(agent, "run it", run_config=config))
    assert [i.raw_item.name for i in first.interruptions] == ["workspace_execute_command"]
    assert not (workdir / "approved.txt").exists()
    state = first.to_state()
    state.approve(first.interruptions[0])
    second = asyncio.run(Runner.run(agent, state, run_config=config))
    assert second.final_output == "finished"
    assert (workdir / "approved.txt").exists()
    assert _outputs(script.inputs[-1])["c1"] == "ok"

    # a read-only tool never interrupts: the rule is evaluated per call
    script2 = ScriptedModel([[_call("workspace_list_files", {}, "c9")], [_say("listed")]])
    agent2 = Agent(name="dev", tools=tools, model=script2.model)
    assert asyncio.run(Runner.run(agent2, "list", run_config=config)).final_output == "listed"


# --- LangChain -----------------------------------------------------------------------------------


def test_langchain_tool_call_invoke(ws):
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from ws_jupyter import tool_activity

    tools = {t.name: t for t in to_langchain([*ws.tools(), _image_tool()])}
    read = tools["workspace_read_file"]
    assert isinstance(read, BaseTool)
    spec = convert_to_openai_tool(read)["function"]
    assert spec["name"] == "workspace_read_file" and spec["parameters"]["required"] == ["path"]

    def call(name: str, args: dict[str, Any], call_id: str) -> ToolMessage:
        return tools[name].invoke({"type": "tool_call", "id": call_id, "name": name, "args": args})

    ok = call("workspace_read_file", {"path": "notes.md"}, "call_1")
    assert isinstance(ok, ToolMessage) and ok.status == "success" and ok.tool_call_id == "call_1"
    assert ok.content == "notes.md (6 bytes)\n     1→hello"
    events = [e for e in tool_activity(ws).recent() if e.kind == "finished"]
    assert events[-1].tool_call_id == "call_1"  # the id reached the workspace tool

    for name, args in (("workspace_read_file", {"path": "img.png"}), ("render_plot", {})):
        img = call(name, args, "call_2")
        assert [b["type"] for b in img.content] == ["text", "image"]
        assert img.content[1]["mime_type"] == "image/png" and img.content[1]["base64"]
        assert isinstance(img.artifact, ToolResult)

    bad = call("workspace_read_file", {"path": "missing.md"}, "call_3")
    assert bad.status == "error" and bad.content.startswith("Error: File not found: missing.md")
    invalid = call("workspace_read_file", {"path": "notes.md", "limit": 0}, "call_4")
    assert invalid.status == "error" and '"limit"' in invalid.content

    async_msg = asyncio.run(
        tools["workspace_read_file"].ainvoke(
            {"type": "tool_call", "id": "call_5", "name": "workspace_read_file", "args": {"path": "notes.md"}}
        )
    )
    assert async_msg.content == ok.content


# --- pydantic-ai ---------------------------------------------------------------------------------


def test_pydantic_ai_function_model_round_trip_image_error_and_approval(ws, workdir):
    from pydantic_ai import Agent, BinaryContent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults

    toolset = to_pydantic_ai([*ws.tools(), _image_tool()])
    seen: dict[str, Any] = {}

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        names = {t.name for t in info.function_tools}
        assert {"workspace_read_file", "render_plot"} <= names
        returns = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(
                parts=[
                    ToolCallPart("workspace_read_file", {"path": "notes.md"}, tool_call_id="p1"),
                    ToolCallPart("workspace_read_file", {"path": "img.png"}, tool_call_id="p2"),
                    ToolCallPart("workspace_read_file", {"path": "missing.md"}, tool_call_id="p3"),
                    ToolCallPart("render_plot", {}, tool_call_id="p4"),
                ]
            )
        for part in returns:
            seen[part.tool_call_id] = part
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), toolsets=[toolset])
    assert agent.run_sync("go").output == "done"
    assert seen["p1"].content == "notes.md (6 bytes)\n     1→hello"
    for call_id in ("p2", "p4"):
        content = seen[call_id].content
        assert isinstance(content, list) and isinstance(content[1], BinaryContent)
        assert content[1].media_type == "image/png" and content[1].data == png_bytes()
    assert "File not found: missing.md" in str(seen["p3"].content)

    # approval: the tool defers the call; resumed with it approved, it runs approved
    def commander(messages: list[Any], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(
                parts=[
                    ToolCallPart(
                        "workspace_execute_command", {"command": "touch ok.txt; echo ran"}, tool_call_id="x1"
                    )
                ]
            )
        return ModelResponse(parts=[TextPart(f"got {returns[-1].content}")])

    agent2 = Agent(FunctionModel(commander), toolsets=[toolset], output_type=[str, DeferredToolRequests])
    first = agent2.run_sync("run")
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.approvals] == ["x1"]
    assert not (workdir / "ok.txt").exists()
    second = agent2.run_sync(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"x1": True}),
    )
    assert second.output == "got ran" and (workdir / "ok.txt").exists()


# --- smolagents ----------------------------------------------------------------------------------


def test_smolagents_tool_calling_agent_round_trip_image_and_error(ws):
    from smolagents import AgentImage, ToolCallingAgent
    from smolagents import Tool as SmolTool
    from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, Model

    tools = to_smolagents([*ws.tools(), _image_tool()])
    by_name = {t.name: t for t in tools}
    read = by_name["workspace_read_file"]
    assert isinstance(read, SmolTool)
    assert read.inputs["path"] == {"type": "string", "description": read.inputs["path"]["description"]}
    assert read.inputs["offset"]["nullable"] is True and read.inputs["offset"]["type"] == "integer"

    script = [
        ("workspace_read_file", {"path": "notes.md"}),
        ("workspace_read_file", {"path": "missing.md"}),
        ("render_plot", {}),
        ("final_answer", {"answer": "done"}),
    ]

    class Scripted(Model):
        def generate(
            self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kw
        ):
            name, args = script.pop(0)
            call = ChatMessageToolCall(
                id=f"s{len(script)}",
                type="function",
                function=ChatMessageToolCallFunction(name=name, arguments=args),
            )
            return ChatMessage(role="assistant", content="", tool_calls=[call])

    agent = ToolCallingAgent(tools=tools, model=Scripted(model_id="scripted"), max_steps=6, verbosity_level=0)
    assert agent.run("go") == "done"
    observations = [getattr(s, "observations", None) for s in agent.memory.steps]
    observations = [o for o in observations if o]
    assert observations[0] == "notes.md (6 bytes)\n     1→hello"
    assert observations[1].startswith("Error: File not found: missing.md")
    assert "Stored 'image.png' in memory." in observations[2]
    assert isinstance(agent.state["image.png"], AgentImage)

    # the workspace's image reads come back as images too, through the tool call path
    assert isinstance(read(path="img.png"), AgentImage)
    assert read(path="notes.md", offset=None, limit=None) == "notes.md (6 bytes)\n     1→hello"
