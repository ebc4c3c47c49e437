"""A skill as a prompt: its declared arguments, and its text with the values substituted.

What MCP's ``prompts/get`` (and any other front-end that lets a user invoke a skill) sends to a
model. A skill's ``arguments`` (names, or mappings with name/description/required; top level or
in ``metadata``) — or, without them, one ``arguments`` from its ``argument-hint`` — are
substituted for ``$name``, and all values together for ``$ARGUMENTS``:

>>> from .model import Skill
>>> skill_prompt(Skill("greet", "d", "Say hello to $who ($ARGUMENTS).", "skills/greet"), {"who": "Ada"})
'Say hello to Ada (Ada).'

SKILL.md files and argument values may be hostile, so substitution is one linear pass: each
placeholder of the skill's text is replaced once, and nothing that was substituted is read again
(a value holding ``$who`` stays ``$who``). The result is measured before it is built: a prompt
over :data:`MAX_PROMPT_CHARS` is refused with a :class:`~ws_jupyter.errors.SkillError` (code
``PROMPT_TOO_LARGE``) that says where the size comes from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import SkillError

__all__ = ["MAX_PROMPT_ARGUMENTS", "MAX_PROMPT_CHARS", "PromptArgument", "skill_arguments", "skill_prompt"]

#: Longest prompt built (characters): twice the largest SKILL.md, so any skill fits with its values.
MAX_PROMPT_CHARS = 2 << 20
#: Most arguments one prompt takes.
MAX_PROMPT_ARGUMENTS = 100
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class PromptArgument:
    """One argument a skill's prompt takes."""

    name: str
    description: str | None = None
    required: bool = False


def skill_arguments(skill: Any) -> list[PromptArgument]:
    """The arguments a skill declares: ``arguments`` (names, or mappings with name/description/
    required; top level or in ``metadata``), else one ``arguments`` from ``argument-hint``."""
    front = dict(skill.frontmatter or {})
    meta = dict(skill.metadata or {})
    declared = front.get("arguments", meta.get("arguments"))
    out: list[PromptArgument] = []
    if isinstance(declared, (list, tuple)):
        for item in declared:
            if isinstance(item, str) and _NAME.fullmatch(item):
                out.append(PromptArgument(item))
            elif isinstance(item, dict) and isinstance(item.get("name"), str):
                desc = item.get("description")
                out.append(
                    PromptArgument(
                        item["name"], desc if isinstance(desc, str) else None, item.get("required") is True
                    )
                )
        return out[:MAX_PROMPT_ARGUMENTS]
    hint = front.get("argument-hint", meta.get("argument-hint"))
    if isinstance(hint, str) and hint.strip():
        return [PromptArgument("arguments", f"Arguments: {hint.strip()}")]
    return out


def skill_prompt(skill: Any, args: Mapping[str, str]) -> str:
    """The skill's text (:meth:`Skill.to_markdown`) with ``args`` substituted in one pass; when it
    has no placeholder for them, the values are listed under ``## Arguments``."""
    if len(args) > MAX_PROMPT_ARGUMENTS:
        raise SkillError(
            f"Prompt {skill.name!r} was given {len(args)} arguments; at most {MAX_PROMPT_ARGUMENTS} are taken",
            code="PROMPT_TOO_LARGE",
        )
    text = skill.to_markdown()
    values = {"ARGUMENTS": " ".join(v for v in args.values() if v)}
    values.update((k, v) for k, v in args.items() if _NAME.fullmatch(k))
    # the longest name first, so $file_name is not read as $file followed by "_name"
    names = sorted(values, key=len, reverse=True)
    pattern = re.compile(r"\$(" + "|".join(re.escape(n) for n in names) + r")(?![A-Za-z0-9_])")
    growth = 0
    uses: dict[str, int] = {}
    for match in pattern.finditer(text):
        name = match.group(1)
        uses[name] = uses.get(name, 0) + 1
        growth += len(values[name]) - len(match.group(0))
    listed = ""
    if args and not uses:
        listed = "\n\n## Arguments\n" + "\n".join(f"- {k}: {v}" for k, v in args.items())
    size = len(text) + growth + len(listed)
    if size > MAX_PROMPT_CHARS:
        worst = max(uses, key=lambda n: uses[n] * len(values[n]), default=None)
        why = (
            f": ${worst} appears {uses[worst]:,} times and its value is {len(values[worst]):,} characters"
            if worst is not None
            else ""
        )
        raise SkillError(
            f"Prompt {skill.name!r} would be {size:,} characters with these arguments, over the "
            f"{MAX_PROMPT_CHARS:,}-character limit{why}",
            code="PROMPT_TOO_LARGE",
        )
    if uses:
        text = pattern.sub(lambda m: values[m.group(1)], text)
    return text + listed
