"""A skill as a prompt: substitution in one linear pass, and a bounded result."""

from __future__ import annotations

import time

import pytest

from ws_jupyter.errors import SkillError
from ws_jupyter.skills.model import Skill
from ws_jupyter.skills.prompt import MAX_PROMPT_CHARS, skill_arguments, skill_prompt


def skill(text: str, **front: object) -> Skill:
    return Skill("s", "d", text, "skills/s", frontmatter=front)


def test_each_placeholder_is_replaced_once_and_values_are_not_read_again():
    s = skill("to $who from $whom: $ARGUMENTS; $whoever; costs $5")
    out = skill_prompt(s, {"who": "$whom", "whom": "$ARGUMENTS"})
    # a value holding a placeholder stays as it is; $whoever is not $who followed by "ever"
    assert out == "to $whom from $ARGUMENTS: $whom $ARGUMENTS; $whoever; costs $5"


def test_values_without_a_placeholder_are_listed():
    assert skill_prompt(skill("Do it."), {"path": "a.py"}) == "Do it.\n\n## Arguments\n- path: a.py"
    assert skill_prompt(skill("Do it."), {}) == "Do it."


def test_a_hostile_skill_and_argument_are_refused_at_once_with_the_reason():
    """1 MiB of placeholders and a 2,000-character value: 181 MiB of prompt in 96 s before."""
    s = skill("$ARGUMENTS $a " * ((1 << 20) // 14), arguments=["a"])
    t0 = time.monotonic()
    with pytest.raises(SkillError) as info:
        skill_prompt(s, {"a": "x" * 2000})
    assert time.monotonic() - t0 < 5
    assert info.value.code == "PROMPT_TOO_LARGE"
    assert f"{MAX_PROMPT_CHARS:,}-character limit" in str(info.value)
    assert "appears 74,898 times and its value is 2,000 characters" in str(info.value)


def test_a_prompt_up_to_the_limit_is_built():
    s = skill("$a" * 1000)
    out = skill_prompt(s, {"a": "y" * (MAX_PROMPT_CHARS // 1000)})
    assert len(out) == MAX_PROMPT_CHARS // 1000 * 1000 <= MAX_PROMPT_CHARS
    with pytest.raises(SkillError):
        skill_prompt(skill("Do it."), {f"k{i}": "v" for i in range(101)})


def test_declared_arguments():
    s = skill("x", arguments=["path", {"name": "mode", "description": "how", "required": True}, "bad name"])
    assert [(a.name, a.description, a.required) for a in skill_arguments(s)] == [
        ("path", None, False),
        ("mode", "how", True),
    ]
    assert skill_arguments(skill("x", **{"argument-hint": "[file]"}))[0].description == "Arguments: [file]"
