"""Reading and validating ``SKILL.md``: YAML frontmatter + Markdown body.

Validation collects *every* broken rule with a precise reason (so a skill author fixes them in
one pass) and raises one ``SkillValidationError`` whose ``reasons`` lists them. Unknown
frontmatter keys are kept, not dropped: they land in ``metadata`` and in ``frontmatter``.

Rules (the Agent Skills format):

* the file is UTF-8 and starts with a ``---`` line; the frontmatter ends at the next ``---``
  (or ``...``) line and is a YAML mapping without duplicate keys;
* ``name``: 1-64 characters of ``a-z``, ``0-9`` and ``-``, no leading, trailing or double
  hyphen, equal to the skill's folder name;
* ``description``: a non-blank string of at most 1024 characters;
* ``license``: a string; ``compatibility``: a string of at most 500 characters;
* ``metadata``: a mapping with string keys; ``allowed-tools``: a space-separated string or a
  list of strings; ``user-invocable``: a boolean.

Very long instructions are accepted with a warning (they cost context on every activation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import SkillValidationError

__all__ = [
    "KNOWN_FRONTMATTER_KEYS",
    "MAX_COMPATIBILITY_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "MAX_SKILL_MD_BYTES",
    "SkillDefinition",
    "parse_skill_md",
    "split_frontmatter",
    "validate_name",
]

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500
#: A SKILL.md is read whole into an agent's context; anything this large is a mistake.
MAX_SKILL_MD_BYTES = 1 << 20
#: Past these sizes the skill still loads, with a warning.
WARN_BODY_LINES = 500
WARN_BODY_TOKENS = 5000

KNOWN_FRONTMATTER_KEYS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools", "user-invocable"}
)

_NAME_CHARS = re.compile(r"^[a-z0-9-]+$")
_FENCE_OPEN = re.compile(r"^---[ \t]*$")
_FENCE_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")


@dataclass(frozen=True)
class SkillDefinition:
    """The validated content of one SKILL.md (no file listings: see discovery)."""

    name: str
    description: str
    instructions: str
    license: str | None
    compatibility: str | None
    metadata: dict[str, Any]
    allowed_tools: tuple[str, ...]
    user_invocable: bool
    frontmatter: dict[str, Any]
    #: 1-based line of the SKILL.md file where the body (instructions) starts.
    body_start_line: int
    warnings: tuple[str, ...]


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys (PyYAML silently keeps the last one)."""


def _construct_mapping(
    loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False
) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            duplicate = key in seen
        except TypeError:  # unhashable key: let the normal constructor report it
            duplicate = False
        if duplicate:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen[key] = loader.construct_object(value_node, deep=deep)
    return seen


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _fail(path: str, reasons: list[str]) -> SkillValidationError:
    if len(reasons) == 1:
        message = f"Invalid skill at {path}: {reasons[0]}"
    else:
        message = f"Invalid skill at {path}:\n" + "\n".join(f"  - {r}" for r in reasons)
    err = SkillValidationError(message, path=path)
    err.reasons = tuple(reasons)  # type: ignore[attr-defined]
    return err


def _decode(content: str | bytes, path: str) -> str:
    if isinstance(content, str):
        text = content
    else:
        if len(content) > MAX_SKILL_MD_BYTES:
            raise _fail(path, [f"SKILL.md is {len(content)} bytes; the limit is {MAX_SKILL_MD_BYTES} bytes"])
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _fail(path, [f"SKILL.md is not valid UTF-8 (byte {exc.start}: {exc.reason})"])
    if len(text) > MAX_SKILL_MD_BYTES:
        raise _fail(path, [f"SKILL.md is longer than {MAX_SKILL_MD_BYTES} characters"])
    if "\x00" in text:
        raise _fail(path, ["SKILL.md contains NUL bytes (is it a binary file?)"])
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def split_frontmatter(text: str, path: str = "SKILL.md") -> tuple[str, str, int]:
    """Split SKILL.md text into ``(frontmatter_yaml, body, body_start_line)``.

    Raises ``SkillValidationError`` when the file does not start with a closed ``---`` block.
    """
    lines = text.split("\n")
    if not lines or not _FENCE_OPEN.match(lines[0]):
        first = next((line for line in lines if line.strip()), "")
        hint = " (it must be the very first line)" if first.strip() == "---" else ""
        raise _fail(path, [f"SKILL.md has no YAML frontmatter: expected a first line '---'{hint}"])
    for index in range(1, len(lines)):
        if _FENCE_CLOSE.match(lines[index]):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    raise _fail(path, ["SKILL.md frontmatter is not closed: no '---' line after the opening one"])


def _load_yaml(source: str, path: str) -> Any:
    try:
        return yaml.load(source, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at frontmatter line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "syntax error"
        hint = ""
        if "mapping values are not allowed" in problem:
            hint = " (a value containing ': ' must be quoted)"
        raise _fail(path, [f"frontmatter is not valid YAML{where}: {problem}{hint}"])
    except yaml.YAMLError as exc:
        raise _fail(path, [f"frontmatter is not valid YAML: {exc}"])


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def validate_name(name: Any, folder_name: str | None = None) -> list[str]:
    """Reasons why ``name`` is not a valid skill name (empty list when valid)."""
    if name is None:
        return ["'name' is required"]
    if not isinstance(name, str):
        return [f"'name' must be a string, got {_type_name(name)} {name!r}"]
    reasons: list[str] = []
    if not name:
        reasons.append("'name' must not be empty")
    elif len(name) > MAX_NAME_LENGTH:
        reasons.append(f"'name' is {len(name)} characters long; the limit is {MAX_NAME_LENGTH}")
    if name and not _NAME_CHARS.match(name):
        bad = sorted({c for c in name if not ("a" <= c <= "z" or "0" <= c <= "9" or c == "-")})
        reasons.append(
            f"'name' {name!r} may only contain lowercase letters a-z, digits and hyphens "
            f"(found {', '.join(repr(c) for c in bad)})"
        )
    if name.startswith("-") or name.endswith("-"):
        reasons.append(f"'name' {name!r} must not start or end with a hyphen")
    if "--" in name:
        reasons.append(f"'name' {name!r} must not contain consecutive hyphens")
    if folder_name is not None and name and name != folder_name:
        reasons.append(f"'name' {name!r} must match the skill's folder name {folder_name!r}")
    return reasons


def _validate_description(value: Any) -> list[str]:
    if value is None:
        return ["'description' is required"]
    if not isinstance(value, str):
        return [f"'description' must be a string, got {_type_name(value)}"]
    if not value.strip():
        return ["'description' must not be empty or whitespace"]
    if len(value) > MAX_DESCRIPTION_LENGTH:
        return [f"'description' is {len(value)} characters long; the limit is {MAX_DESCRIPTION_LENGTH}"]
    return []


def _allowed_tools(value: Any, reasons: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    reasons.append(
        f"'allowed-tools' must be a space-separated string or a list of strings, got {_type_name(value)}"
    )
    return ()


def parse_skill_md(
    content: str | bytes, *, path: str = "SKILL.md", folder_name: str | None = None
) -> SkillDefinition:
    """Parse and validate one SKILL.md.

    ``path`` names the file in error messages; ``folder_name`` (the skill folder's name) is what
    ``name`` must equal — pass None to skip that rule (e.g. for a SKILL.md read on its own).

    >>> d = parse_skill_md("---\\nname: demo\\ndescription: Shows it.\\n---\\nDo X.", folder_name="demo")
    >>> d.name, d.instructions
    ('demo', 'Do X.')
    """
    text = _decode(content, path)
    raw_frontmatter, body, body_start_line = split_frontmatter(text, path)
    data = _load_yaml(raw_frontmatter, path) if raw_frontmatter.strip() else {}
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise _fail(path, [f"frontmatter must be a YAML mapping of keys to values, got {_type_name(data)}"])
    non_string_keys = [k for k in data if not isinstance(k, str)]
    if non_string_keys:
        raise _fail(path, [f"frontmatter keys must be strings, got {non_string_keys[0]!r}"])
    frontmatter: dict[str, Any] = dict(data)

    reasons: list[str] = []
    name = frontmatter.get("name")
    reasons += validate_name(name, folder_name)
    description = frontmatter.get("description")
    reasons += _validate_description(description)

    license_ = frontmatter.get("license")
    if license_ is not None and not isinstance(license_, str):
        reasons.append(f"'license' must be a string, got {_type_name(license_)}")
    compatibility = frontmatter.get("compatibility")
    if compatibility is not None:
        if not isinstance(compatibility, str):
            reasons.append(f"'compatibility' must be a string, got {_type_name(compatibility)}")
        elif len(compatibility) > MAX_COMPATIBILITY_LENGTH:
            reasons.append(
                f"'compatibility' is {len(compatibility)} characters long; the limit is {MAX_COMPATIBILITY_LENGTH}"
            )
    metadata_value = frontmatter.get("metadata")
    metadata: dict[str, Any] = {}
    if metadata_value is not None:
        if not isinstance(metadata_value, Mapping):
            reasons.append(f"'metadata' must be a mapping, got {_type_name(metadata_value)}")
        elif any(not isinstance(k, str) for k in metadata_value):
            reasons.append("'metadata' keys must be strings")
        else:
            metadata = dict(metadata_value)
    allowed_tools = _allowed_tools(frontmatter.get("allowed-tools"), reasons)
    user_invocable = frontmatter.get("user-invocable", True)
    if not isinstance(user_invocable, bool):
        reasons.append(
            f"'user-invocable' must be true or false, got {_type_name(user_invocable)} {user_invocable!r}"
        )
        user_invocable = True

    if reasons:
        raise _fail(path, reasons)

    # Keys this package does not model are kept (the frontmatter's own metadata wins a clash).
    for key, value in frontmatter.items():
        if key not in KNOWN_FRONTMATTER_KEYS - {"allowed-tools"}:
            metadata.setdefault(key, value)

    instructions = body.strip()
    warnings: list[str] = []
    body_lines = instructions.count("\n") + 1 if instructions else 0
    est_tokens = int(len(instructions.split()) * 1.3)
    if body_lines > WARN_BODY_LINES:
        warnings.append(
            f"instructions are {body_lines} lines long (over {WARN_BODY_LINES}); move detail into references/"
        )
    elif est_tokens > WARN_BODY_TOKENS:
        warnings.append(
            f"instructions are about {est_tokens} tokens (over {WARN_BODY_TOKENS}); move detail into references/"
        )
    if not instructions:
        warnings.append("SKILL.md has no instructions after the frontmatter")
    assert isinstance(name, str) and isinstance(description, str)
    return SkillDefinition(
        name=name,
        description=description.strip(),
        instructions=instructions,
        license=license_,
        compatibility=compatibility,
        metadata=metadata,
        allowed_tools=allowed_tools,
        user_invocable=user_invocable,
        frontmatter=frontmatter,
        body_start_line=body_start_line,
        warnings=tuple(warnings),
    )
