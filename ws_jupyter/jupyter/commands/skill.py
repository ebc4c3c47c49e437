"""Show one skill rendered as Markdown: description, instructions, references, scripts, assets.

--file shows one of the skill's files instead (`references/style.md`, or just `style.md`).

Examples:
  %ws skill data-cleaning
  %ws skill data-cleaning --file references/checklist.md
"""

from __future__ import annotations

from typing import Any

from ..files import skill_file_view
from ..parsing import WsArgumentParser
from ..skill_problems import skill_problems
from ..views.skills import SkillView
from ._common import line_range
from .base import Invocation, Subcommand
from .skills import require_skills

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="skill name (or its folder path)")
    parser.add_argument("--file", "-f", metavar="PATH", help="show this file of the skill")
    parser.add_argument("--lines", "-n", type=line_range, metavar="A:B", help="line range of --file")


def run(inv: Invocation) -> Any:
    skills = require_skills(inv)
    name = inv.args.name
    with skill_problems():  # `%ws skills` lists them
        skill = skills.get(name)
    if skill is None:
        available = ", ".join(skills.names()) or "none"
        raise inv.usage_error(f'Skill "{name}" not found. Available skills: {available}')
    if inv.args.file is None:
        if inv.args.lines is not None:
            raise inv.usage_error("--lines needs --file")
        return SkillView(skill)
    start, end = inv.args.lines or (None, None)
    return skill_file_view(skills.read_file(skill, inv.args.file, start_line=start, end_line=end))


COMMAND = Subcommand(
    name="skill",
    summary="one skill rendered as Markdown: `%ws skill NAME [--file PATH]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
