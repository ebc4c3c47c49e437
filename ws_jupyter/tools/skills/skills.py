"""Skill tools: ``skill`` (load a skill's instructions), ``skill_search``, ``skill_read``.

They read through ``workspace.skills`` (:class:`~ws_jupyter.skills.WorkspaceSkills`), resolved for
the request, so request-scoped skill paths and sources apply. A skill's instructions are never cut
by default (``max_output_tokens`` is unset for ``skill``): they are what the model must follow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import FileNotFound, SkillError, SkillNotFoundError
from ...text.shaping import truncate_head
from ..base import ToolCall, ToolSpec
from ..facts import LOOKS, WORKSPACE_TOOLS
from ..schema import Param
from ..types import ToolErrorText

if TYPE_CHECKING:
    from ...skills.workspace_skills import WorkspaceSkills

__all__ = ["SKILL_READ_SPEC", "SKILL_SEARCH_SPEC", "SKILL_SPEC"]

_PREVIEW = 200


def _skills(call: ToolCall) -> WorkspaceSkills:
    skills = call.workspace.skills
    if skills is None:
        raise SkillError("This workspace has no skills configured")
    return skills


def skill(call: ToolCall) -> str:
    try:
        found = _skills(call).require(call.args["name"], call.request_context)
    except SkillNotFoundError as exc:
        return ToolErrorText(str(exc))
    return truncate_head(found.to_markdown(), call.max_tokens)


def skill_search(call: ToolCall) -> str:
    skills = _skills(call)
    args = call.args
    results = skills.search(
        args["query"],
        top_k=args["top_k"],
        skill_names=args["skill_names"],
        request_context=call.request_context,
    )
    if not results:
        return "No results found."
    blocks = []
    for r in results:
        where = "" if r.source == "SKILL.md" else f" {r.source}"
        lines = f" (lines {r.line_range[0]}-{r.line_range[1]})" if r.line_range else ""
        text = r.content.strip()
        preview = text[:_PREVIEW] + ("..." if len(text) > _PREVIEW else "")
        blocks.append(f"[{r.skill_name}]{where}{lines} (score: {r.score:.2f})\n{preview}")
    return truncate_head("\n\n".join(blocks), call.max_tokens)


def skill_read(call: ToolCall) -> str:
    skills = _skills(call)
    args = call.args
    start, end = args["start_line"], args["end_line"]
    try:
        f = skills.read_file(args["skill_name"], args["path"], start, end, call.request_context)
    except SkillNotFoundError as exc:
        return ToolErrorText(str(exc))
    except FileNotFound as exc:
        return ToolErrorText(str(exc))
    except SkillError as exc:
        if exc.code in ("LINE_OUT_OF_RANGE", "INVALID_LINE_RANGE"):
            return ToolErrorText(str(exc))
        raise
    if f.text is None:
        return f"Binary file: {f.skill_path}/{f.path} ({f.size} bytes)"
    if f.line_range is None:
        return truncate_head(f.text, call.max_tokens)
    a, b = f.line_range
    out = f"{f.path} (lines {a}-{b} of {f.total_lines})\n{f.text}"
    return truncate_head(out, call.max_tokens)


SKILL_SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.SKILLS.SKILL,
    description=(
        "Load a skill: its full instructions, then the lists of its references, scripts and assets "
        "(read those with skill_read). Call it when a task matches a skill's description, before "
        "doing the task."
    ),
    params=(Param("name", "string", "Skill name (or its path).", required=True, allow_empty=False),),
    run=skill,
    title="Load skill",
    hints=LOOKS,
    needs={"skills"},
    writes=False,
    options=(),
    # a skill's instructions are what the model must follow: never cut them by default
    max_output_tokens=None,
)

SKILL_SEARCH_SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.SKILLS.SKILL_SEARCH,
    description=(
        "Search the instructions and reference files of the available skills; returns the best "
        "passages with the skill name, lines and score. Use it to find which skill covers a topic."
    ),
    params=(
        Param("query", "string", "What to look for.", required=True, allow_empty=False),
        Param("skill_names", "string_list", "Only search these skills. Default: all.", accept_single=True),
        Param("top_k", "integer", "How many results to return.", default=5, minimum=1, maximum=50),
    ),
    run=skill_search,
    title="Search skills",
    hints=LOOKS,
    needs={"skills"},
    writes=False,
    options=(),
)

SKILL_READ_SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.SKILLS.SKILL_READ,
    description=(
        "Read a file of a skill (a reference, script or asset), optionally a range of lines. path "
        "is relative to the skill folder, e.g. 'references/style.md'; a bare file name is also "
        "looked up in references/, scripts/ and assets/."
    ),
    params=(
        Param("skill_name", "string", "The skill's name.", required=True, allow_empty=False),
        Param("path", "string", "File path relative to the skill folder.", required=True, allow_empty=False),
        Param("start_line", "integer", "First line to read (1-based). Default: 1.", minimum=1),
        Param("end_line", "integer", "Last line to read (inclusive). Default: the last line.", minimum=1),
    ),
    run=skill_read,
    title="Read skill file",
    hints=LOOKS,
    needs={"skills"},
    writes=False,
    options=(),
)
