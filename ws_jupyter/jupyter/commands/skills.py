"""Browse the workspace's skills: a list with a search box and each skill's instructions and files.

In a notebook this shows the SkillsBrowser widget (QUERY pre-fills its search box); --list shows a
static table instead (also what terminal IPython shows). Problems found while loading skills (an
invalid SKILL.md, two skills with one name) are listed with the reason.

Examples:
  %ws skills
  %ws skills plotting
  %ws skills --list
"""

from __future__ import annotations

from typing import Any

from IPython.display import display

from ..parsing import WsArgumentParser
from ..skill_problems import skill_problems
from ..views.skills import SkillTableView
from .base import Invocation, Subcommand

__all__ = ["COMMAND", "require_skills"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("query", nargs="*", metavar="QUERY", help="filter the skills")
    parser.add_argument("--list", "-l", action="store_true", help="a static table instead of the browser")


def require_skills(inv: Invocation) -> Any:
    skills = inv.workspace.skills
    if skills is None:
        raise inv.usage_error(
            "this workspace has no skills configured (put SKILL.md folders in DIR/skills, "
            "or use `%ws init DIR --skills PATH`)"
        )
    return skills


def run(inv: Invocation) -> Any:
    skills = require_skills(inv)
    query = " ".join(inv.args.query)
    if inv.args.list or not inv.in_kernel:
        with skill_problems():  # listed in the table below
            found = skills.list()
        if query:
            found = [s for s in found if query.lower() in f"{s.name} {s.description}".lower()]
        return SkillTableView(found, skills.issues())
    from ..widgets.skills_browser import SkillsBrowser

    browser = SkillsBrowser(inv.workspace, query=query)
    inv.session.track(browser.close)
    display(browser)
    return None


COMMAND = Subcommand(
    name="skills",
    summary="skills browser (`--list` for a table): `%ws skills [QUERY]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
