"""A tool written the way a new tool is added: this one module, and one line in the registry
(``tests/tools/test_tool_specs.py`` adds the line for the test)."""

from __future__ import annotations

from ws_jupyter.tools.base import ToolCall, ToolSpec
from ws_jupyter.tools.facts import LOOKS
from ws_jupyter.tools.schema import Param


def word_count(call: ToolCall) -> str:
    text = call.filesystem().read_file(call.args["path"])
    words = len((text if isinstance(text, str) else text.decode("utf-8", "replace")).split())
    return f"{words} words (waited up to {call.option('max_wait', 0):g}s)"


SPEC = ToolSpec(
    name="workspace_word_count",
    description="Count the words of a text file.",
    params=(Param("path", "string", "Path relative to the workspace root.", required=True),),
    run=word_count,
    title="Count words",
    hints=LOOKS,
    needs={"filesystem"},
    writes=False,
    options=("max_wait",),
    max_output_tokens=None,
)
