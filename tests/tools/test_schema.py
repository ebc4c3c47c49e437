"""Every tool's JSON Schema passes OpenAI strict-mode and Anthropic tool-input rules, and argument
validation gives short errors naming the field."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest

from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace
from ws_jupyter.errors import ToolArgumentError
from ws_jupyter.live import LiveStatus, attach
from ws_jupyter.tools.names import ALL_TOOL_NAMES
from ws_jupyter.tools.schema import Param, build_schema, validate_args

NAME_RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# Keywords both OpenAI strict mode and Anthropic (strict) tool use accept.
ALLOWED_KEYWORDS = {"type", "properties", "required", "additionalProperties", "items", "enum", "description"}
PRIMITIVES = {"string", "integer", "number", "boolean", "array", "object", "null"}


def _toy_embedder(text: str) -> list[float]:
    return [float(len(text) % 7), 1.0, float(text.count("a"))]


@pytest.fixture
def all_tools(workdir):
    (workdir / "skills" / "demo").mkdir(parents=True)
    (workdir / "skills" / "demo" / "SKILL.md").write_text(
        "---\nname: demo\ndescription: A demo skill.\n---\nDo the demo.\n"
    )
    ws = Workspace(
        filesystem=LocalFilesystem(workdir),
        sandbox=LocalSandbox(working_directory=workdir),
        embedder=_toy_embedder,
        skills=["skills"],
        tools={"workspace_checkpoint": {"enabled": True}},  # the one tool that is off by default
    )
    ws.share([1, 2, 3], name="numbers")  # the user-data tools exist while something is shared
    # the open-notebook tools are listed while a notebook page is connected: a link that says so
    # (its schemas are what this module checks; the link itself is tested in the browser)
    attach(ws, ConnectedLink())
    try:
        yield ws.tools()
    finally:
        ws.destroy()


class ConnectedLink:
    """A LiveNotebook that reports a connected page and does nothing else."""

    def status(self) -> LiveStatus:
        return LiveStatus(True, path="nb.ipynb", subshells=True)

    def connect(self, timeout: float) -> LiveStatus:
        return self.status()

    def read(self, **kw: Any) -> Any:
        raise NotImplementedError

    propose = proposal = show_outputs = run_in_user_kernel = user_run = read


def check_openai_strict(schema: dict[str, Any], where: str = "$", depth: int = 0) -> list[str]:
    """OpenAI structured-outputs rules for function parameters (strict: true)."""
    problems = []
    if depth > 5:
        problems.append(f"{where}: nested deeper than 5 levels")
    for key in schema:
        if key not in ALLOWED_KEYWORDS:
            problems.append(f"{where}: keyword {key!r} not supported in strict mode")
    types = schema.get("type")
    type_list = types if isinstance(types, list) else [types]
    if not type_list or any(t not in PRIMITIVES for t in type_list):
        problems.append(f"{where}: missing or unknown type {types!r}")
    if "object" in type_list:
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            problems.append(f"{where}: additionalProperties must be false")
        if sorted(schema.get("required", [])) != sorted(props):
            problems.append(f"{where}: every property must be required")
        for name, sub in props.items():
            problems += check_openai_strict(sub, f"{where}.{name}", depth + 1)
    if "array" in type_list:
        if "items" not in schema:
            problems.append(f"{where}: array without items")
        else:
            problems += check_openai_strict(schema["items"], f"{where}[]", depth + 1)
    if "enum" in schema:
        if "null" in type_list and None not in schema["enum"]:
            problems.append(f"{where}: nullable enum must list null")
        for value in schema["enum"]:
            if value is not None and not isinstance(value, str):
                problems.append(f"{where}: enum values must be strings")
    return problems


def check_anthropic(tool: dict[str, Any]) -> list[str]:
    problems = []
    if not NAME_RULE.match(tool["name"]):
        problems.append("name must match ^[a-zA-Z0-9_-]{1,64}$")
    schema = tool["input_schema"]
    if schema.get("type") != "object":
        problems.append("input_schema must be an object schema")
    if not isinstance(tool.get("description"), str) or not tool["description"].strip():
        problems.append("description must be a non-empty string")
    return problems


def test_every_tool_is_listed(all_tools):
    assert sorted(t.workspace_tool_name for t in all_tools) == sorted(ALL_TOOL_NAMES)


def test_schemas_pass_openai_strict_rules(all_tools):
    for tool in all_tools:
        assert NAME_RULE.match(tool.name)
        assert tool.input_schema["type"] == "object"
        assert check_openai_strict(tool.input_schema) == [], tool.name


def test_schemas_pass_anthropic_rules(all_tools):
    for tool in all_tools:
        assert check_anthropic(tool.to_dict()) == [], tool.name


def test_schemas_are_valid_json_schema(all_tools):
    for tool in all_tools:
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)


def test_descriptions_are_written_for_a_model(all_tools):
    for tool in all_tools:
        assert 60 <= len(tool.description) <= 1024, tool.name
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), (tool.name, name)


def test_search_schema_lists_only_available_modes(workdir):
    ws = Workspace(filesystem=LocalFilesystem(workdir))  # bm25 only
    try:
        search = next(t for t in ws.tools() if t.name == "workspace_search")
        assert search.input_schema["properties"]["mode"]["enum"] == ["bm25", None]
    finally:
        ws.destroy()
    ws = Workspace(filesystem=LocalFilesystem(workdir), embedder=_toy_embedder)
    try:
        search = next(t for t in ws.tools() if t.name == "workspace_search")
        assert search.input_schema["properties"]["mode"]["enum"] == ["hybrid", "vector", "bm25", None]
    finally:
        ws.destroy()


def test_valid_arguments_accepted_by_jsonschema_and_validator(all_tools):
    """What a strict-mode model sends (every field, nulls for unset) passes both validators."""
    for tool in all_tools:
        args = {}
        for name, prop in tool.input_schema["properties"].items():
            types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
            if "null" in types:
                args[name] = None
            elif "enum" in prop:
                args[name] = prop["enum"][0]
            else:
                args[name] = {"string": "x", "integer": 1, "number": 1.0, "boolean": False, "array": []}[
                    types[0]
                ]
        jsonschema.validate(args, tool.input_schema)


PARAMS = (
    Param("path", "string", "p", required=True, allow_empty=False),
    Param("limit", "integer", "l", minimum=1, maximum=100),
    Param("ratio", "number", "r"),
    Param("flag", "boolean", "f", default=True),
    Param("mode", "string", "m", enum=("a", "b")),
    Param("tags", "string_list", "t", accept_single=True),
)


def test_schema_shape():
    schema = build_schema(PARAMS)
    assert schema["required"] == ["path", "limit", "ratio", "flag", "mode", "tags"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["path"]["type"] == "string"
    assert schema["properties"]["limit"]["type"] == ["integer", "null"]
    assert schema["properties"]["flag"]["description"] == "f Default: true."
    assert schema["properties"]["tags"] == {
        "type": ["array", "null"],
        "items": {"type": "string"},
        "description": "t",
    }


def test_defaults_and_lenient_coercion():
    out = validate_args(PARAMS, {"path": "a", "limit": "5", "flag": "false", "tags": "x", "ratio": 2})
    assert out == {"path": "a", "limit": 5, "ratio": 2, "flag": False, "mode": None, "tags": ["x"]}
    assert validate_args(PARAMS, {"path": "a", "limit": 3.0})["limit"] == 3
    assert validate_args(PARAMS, {"path": "a", "flag": None})["flag"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, 'Invalid arguments: "path" is required'),
        ({"path": ""}, 'Invalid arguments: "path" must not be empty'),
        ({"path": 3.5j}, 'Invalid arguments: "path" must be a string (got complex)'),
        ({"path": "a", "limit": 0}, 'Invalid arguments: "limit" must be an integer >= 1 (got 0)'),
        ({"path": "a", "limit": 101}, 'Invalid arguments: "limit" must be an integer <= 100 (got 101)'),
        ({"path": "a", "limit": 1.5}, 'Invalid arguments: "limit" must be an integer (got 1.5)'),
        ({"path": "a", "limit": "many"}, "Invalid arguments: \"limit\" must be an integer (got 'many')"),
        ({"path": "a", "limit": True}, 'Invalid arguments: "limit" must be an integer (got True)'),
        ({"path": "a", "ratio": "nan"}, "Invalid arguments: \"ratio\" must be a number (got 'nan')"),
        ({"path": "a", "flag": "yes"}, "Invalid arguments: \"flag\" must be true or false (got 'yes')"),
        ({"path": "a", "mode": "c"}, "Invalid arguments: \"mode\" must be one of a, b (got 'c')"),
        ({"path": "a", "tags": [1]}, 'Invalid arguments: "tags" must be a list of strings (got [1])'),
        (
            {"path": "a", "colour": 1},
            'Invalid arguments: unknown argument "colour" (expected: path, limit, ratio, flag, mode, tags)',
        ),
        ([1, 2], "Invalid arguments: expected a JSON object of arguments, got list"),
    ],
)
def test_argument_errors_are_short_and_name_the_field(args, message):
    with pytest.raises(ToolArgumentError) as info:
        validate_args(PARAMS, args)
    assert str(info.value) == message


def test_tool_run_turns_bad_arguments_into_error_text(all_tools):
    read = next(t for t in all_tools if t.name == "workspace_read_file")
    assert (
        read.run({"path": "a", "offset": 0})
        == 'Error: Invalid arguments: "offset" must be an integer >= 1 (got 0)'
    )
    assert read.run({}) == 'Error: Invalid arguments: "path" is required'
    assert read.run('{"path": ').startswith("Error: Invalid arguments: not valid JSON")
