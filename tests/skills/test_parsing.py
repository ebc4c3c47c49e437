"""SKILL.md parsing and validation, rule by rule."""

from __future__ import annotations

import pickle

import pytest

from ws_jupyter.errors import SkillValidationError
from ws_jupyter.skills.parsing import parse_skill_md, split_frontmatter, validate_name


def parse(frontmatter: str, body: str = "Steps.", folder: str | None = "demo") -> object:
    return parse_skill_md(f"---\n{frontmatter}\n---\n{body}", path="skills/demo/SKILL.md", folder_name=folder)


def reasons_of(frontmatter: str, folder: str | None = "demo") -> tuple[str, ...]:
    with pytest.raises(SkillValidationError) as info:
        parse(frontmatter, folder=folder)
    assert info.value.code == "INVALID_SKILL"
    assert info.value.path == "skills/demo/SKILL.md"
    return info.value.reasons  # type: ignore[attr-defined,no-any-return]


def test_minimal_valid_skill() -> None:
    d = parse("name: demo\ndescription: Shows how.", body="\n\n# Demo\n\nDo X.\n\n")
    assert d.name == "demo"
    assert d.description == "Shows how."
    assert d.instructions == "# Demo\n\nDo X."
    assert d.license is None and d.compatibility is None
    assert d.user_invocable is True
    assert d.allowed_tools == ()
    assert d.metadata == {}
    assert d.body_start_line == 5
    assert d.warnings == ()


def test_all_known_fields() -> None:
    d = parse(
        "name: demo\ndescription: D.\nlicense: MIT\ncompatibility: Python 3.10+\n"
        "metadata:\n  version: '2'\n  owner: data-team\nallowed-tools: Bash Read\nuser-invocable: false"
    )
    assert d.license == "MIT"
    assert d.compatibility == "Python 3.10+"
    assert d.metadata["version"] == "2" and d.metadata["owner"] == "data-team"
    assert d.allowed_tools == ("Bash", "Read")
    assert d.user_invocable is False


def test_unknown_keys_are_kept_in_metadata_not_dropped() -> None:
    d = parse(
        "name: demo\ndescription: D.\nallowed-tools: Bash\nmodel: small\ntags: [a, b]\nmetadata:\n  model: own"
    )
    assert d.metadata["allowed-tools"] == "Bash"
    assert d.metadata["tags"] == ["a", "b"]
    # the frontmatter's own metadata wins a clash, and the raw value stays in frontmatter
    assert d.metadata["model"] == "own"
    assert d.frontmatter["model"] == "small"


def test_allowed_tools_as_list() -> None:
    assert parse("name: demo\ndescription: D.\nallowed-tools: [Bash, ' Read ']").allowed_tools == (
        "Bash",
        "Read",
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Demo", "may only contain lowercase letters"),
        ("my_skill", "may only contain lowercase letters"),
        ("my skill", "may only contain lowercase letters"),
        ("café", "may only contain lowercase letters"),
        ("-demo", "must not start or end with a hyphen"),
        ("demo-", "must not start or end with a hyphen"),
        ("de--mo", "must not contain consecutive hyphens"),
        ("a" * 65, "65 characters long; the limit is 64"),
        ("", "must not be empty"),
    ],
)
def test_name_rules(name: str, expected: str) -> None:
    reasons = validate_name(name)
    assert any(expected in r for r in reasons), reasons


@pytest.mark.parametrize("name", ["a", "demo", "pdf-2-text", "x" * 64, "0day"])
def test_valid_names(name: str) -> None:
    assert validate_name(name) == []
    assert validate_name(name, folder_name=name) == []


def test_name_must_equal_folder_name() -> None:
    (reason,) = reasons_of("name: other\ndescription: D.")
    assert reason == "'name' 'other' must match the skill's folder name 'demo'"


def test_name_required_and_typed() -> None:
    assert reasons_of("description: D.") == ("'name' is required",)
    assert "'name' must be a string, got int 123" in reasons_of("name: 123\ndescription: D.")[0]
    assert "got bool" in reasons_of("name: yes\ndescription: D.")[0]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "'description' is required"),
        ("''", "'description' must not be empty or whitespace"),
        ("'   '", "'description' must not be empty or whitespace"),
        ("[a, b]", "'description' must be a string, got list"),
        ("x" * 1025, "'description' is 1025 characters long; the limit is 1024"),
    ],
)
def test_description_rules(value: str | None, expected: str) -> None:
    fm = "name: demo" + (f"\ndescription: {value}" if value is not None else "")
    assert expected in reasons_of(fm)


def test_description_at_limit_is_valid() -> None:
    assert len(parse("name: demo\ndescription: " + "x" * 1024).description) == 1024


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("license: 3", "'license' must be a string, got int"),
        ("compatibility: {python: 3}", "'compatibility' must be a string, got dict"),
        ("compatibility: " + "c" * 501, "'compatibility' is 501 characters long; the limit is 500"),
        ("metadata: [1, 2]", "'metadata' must be a mapping, got list"),
        ("metadata: {1: x}", "'metadata' keys must be strings"),
        (
            "allowed-tools: 5",
            "'allowed-tools' must be a space-separated string or a list of strings, got int",
        ),
        ("user-invocable: maybe", "'user-invocable' must be true or false, got str 'maybe'"),
    ],
)
def test_optional_field_rules(extra: str, expected: str) -> None:
    assert expected in reasons_of(f"name: demo\ndescription: D.\n{extra}")


def test_every_broken_rule_is_reported_at_once() -> None:
    reasons = reasons_of("name: Bad_Name\ndescription: ''\nlicense: 1\nuser-invocable: 2")
    assert len(reasons) == 5  # name chars, name != folder, description, license, user-invocable
    with pytest.raises(SkillValidationError) as info:
        parse("name: Bad_Name\ndescription: ''\nlicense: 1\nuser-invocable: 2")
    message = str(info.value)
    assert message.startswith("Invalid skill at skills/demo/SKILL.md:\n  - ")
    assert message.count("\n  - ") == 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: demo\n", "SKILL.md has no YAML frontmatter: expected a first line '---'"),
        ("\n---\nname: demo\n---\n", "(it must be the very first line)"),
        ("---\nname: demo\ndescription: D.\n", "frontmatter is not closed"),
        ("---\nname: demo\ndescription: Use when: cleaning\n---\n", "a value containing ': ' must be quoted"),
        ("---\nname: [unclosed\n---\n", "frontmatter is not valid YAML at frontmatter line"),
        ("---\n- a\n- b\n---\n", "frontmatter must be a YAML mapping of keys to values, got list"),
        ("---\nname: demo\nname: demo\ndescription: D.\n---\n", "duplicate key 'name'"),
        ("---\n1: x\n---\n", "frontmatter keys must be strings"),
    ],
)
def test_frontmatter_structure_errors(text: str, expected: str) -> None:
    with pytest.raises(SkillValidationError) as info:
        parse_skill_md(text, folder_name="demo")
    assert expected in str(info.value)


def test_yaml_error_names_the_line() -> None:
    with pytest.raises(SkillValidationError) as info:
        parse_skill_md("---\nname: demo\ndescription: Use when: x\n---\n", folder_name="demo")
    assert "line 2" in str(info.value)


def test_empty_frontmatter_reports_missing_fields() -> None:
    with pytest.raises(SkillValidationError) as info:
        parse_skill_md("---\n---\nbody", folder_name="demo")
    assert info.value.reasons == ("'name' is required", "'description' is required")  # type: ignore[attr-defined]


def test_encoding_and_line_endings() -> None:
    raw = "\ufeff---\r\nname: demo\r\ndescription: Déjà vu.\r\n---\r\nLine 1\r\nLine 2\r\n".encode()
    d = parse_skill_md(raw, folder_name="demo")
    assert d.description == "Déjà vu."
    assert d.instructions == "Line 1\nLine 2"


def test_non_utf8_and_binary_are_rejected_with_reason() -> None:
    with pytest.raises(SkillValidationError, match="not valid UTF-8"):
        parse_skill_md(b"---\nname: demo\ndescription: caf\xe9\n---\n", folder_name="demo")
    with pytest.raises(SkillValidationError, match="NUL bytes"):
        parse_skill_md("---\nname: demo\x00\n---\n", folder_name="demo")


def test_oversized_file_is_rejected() -> None:
    with pytest.raises(SkillValidationError, match="the limit is 1048576 bytes"):
        parse_skill_md(b"---\nname: demo\ndescription: D.\n---\n" + b"x" * (1 << 20), folder_name="demo")


def test_long_or_empty_instructions_load_with_a_warning() -> None:
    long_body = "\n".join(f"step {i}" for i in range(600))
    d = parse("name: demo\ndescription: D.", body=long_body)
    assert d.warnings and "600 lines" in d.warnings[0]
    wordy = " ".join(["word"] * 4000)
    assert "tokens" in parse("name: demo\ndescription: D.", body=wordy).warnings[0]
    assert parse("name: demo\ndescription: D.", body="").warnings == (
        "SKILL.md has no instructions after the frontmatter",
    )


def test_folder_check_can_be_skipped() -> None:
    assert parse("name: other\ndescription: D.", folder=None).name == "other"


def test_split_frontmatter_accepts_dots_terminator() -> None:
    fm, body, start = split_frontmatter("---\na: 1\n...\nbody\n")
    assert fm == "a: 1" and body == "body\n" and start == 4


def test_validation_error_survives_pickling() -> None:
    with pytest.raises(SkillValidationError) as info:
        parse("name: demo")
    clone = pickle.loads(pickle.dumps(info.value))
    assert clone.code == "INVALID_SKILL" and clone.reasons == info.value.reasons  # type: ignore[attr-defined]
