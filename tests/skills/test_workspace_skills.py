"""WorkspaceSkills: lookup, file access (with traversal attempts), line-range reads, refresh after
add/edit/delete, request-scoped resolvers and lifecycle — all on real folders."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import RequestContext
from ws_jupyter.errors import (
    FileNotFound,
    SkillError,
    SkillNotFoundError,
    SkillPathError,
    WorkspaceConfigError,
    WorkspaceNotReadyError,
)
from ws_jupyter.filesystem.types import FileEntry, FileStat
from ws_jupyter.skills import LocalSkillSource, Skill, SkillsContext, SkillWarning, WorkspaceSkills

from .conftest import skill_md, write_skill

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(64))


@pytest.fixture
def project(root: Path) -> Path:
    write_skill(
        root / "skills",
        "report",
        body="# Report\n\nWrite the report.",
        files={
            "references/style.md": "\n".join(f"style line {i}" for i in range(1, 11)) + "\n",
            "references/nested/deep.md": "deep ref\n",
            "scripts/build.py": "print('built')\n",
            "assets/logo.png": PNG,
            "assets/template.txt": "Dear {name},\n",
            "forms.md": "root level doc\n",
        },
    )
    write_skill(root / "skills", "tiny")
    return root


class CountingSource(LocalSkillSource):
    """A real LocalSkillSource that counts calls, to prove an unchanged refresh only stats."""

    def __init__(self, base: Path) -> None:
        super().__init__(base)
        self.calls: dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def readdir(self, path: str) -> list[FileEntry]:
        self._count("readdir")
        return super().readdir(path)

    def read_file(self, path: str) -> bytes:
        self._count("read_file")
        return super().read_file(path)

    def stat(self, path: str) -> FileStat:
        self._count("stat")
        return super().stat(path)

    def fingerprint(self, path: str) -> Hashable | None:
        self._count("fingerprint")
        return super().fingerprint(path)


# -- lookup ---------------------------------------------------------------------------------------


def test_list_get_has(project: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    skills = make_skills()
    assert [s.name for s in skills.list()] == ["report", "tiny"]
    assert skills.names() == ["report", "tiny"]
    report = skills.get("report")
    assert isinstance(report, Skill)
    assert report.description == "Does a thing when asked."
    assert report.instructions == "# Report\n\nWrite the report."
    assert report.references == ("references/nested/deep.md", "references/style.md")
    assert report.scripts == ("scripts/build.py",)
    assert report.assets == ("assets/logo.png", "assets/template.txt")
    assert report.other_files == ("forms.md",)
    assert report.source_kind == "local"
    for key in ("report", "skills/report", "skills/report/", "skills/report/SKILL.md", "./skills/report"):
        assert skills.get(key) is report, key
    assert skills.get(report) is report
    assert skills.get("missing") is None
    assert skills.has("report") and skills.has("skills/tiny") and not skills.has("nope")
    assert "report" in skills and "nope" not in skills
    assert len(skills) == 2 and [s.name for s in skills] == ["report", "tiny"]


def test_to_markdown_is_what_the_skill_tool_shows(
    project: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    text = make_skills().get("report").to_markdown()  # type: ignore[union-attr]
    assert text == (
        "# Report\n\nWrite the report.\n\n"
        "## References\n- references/nested/deep.md\n- references/style.md\n\n"
        "## Scripts\n- scripts/build.py\n\n"
        "## Assets\n- assets/logo.png\n- assets/template.txt"
    )
    assert make_skills().get("tiny").to_markdown() == "Follow these steps."  # type: ignore[union-attr]


def test_invalid_skills_are_skipped_and_reported_once(
    root: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    write_skill(root / "skills", "good")
    write_skill(root / "skills", "bad", text=skill_md("Bad"))
    write_skill(root / "skills", "mismatch", text=skill_md("other-name"))
    (root / "skills" / "nofront").mkdir()
    (root / "skills" / "nofront" / "SKILL.md").write_text("# no frontmatter\n")
    skills = make_skills()
    with pytest.warns(SkillWarning) as record:
        assert [s.name for s in skills.list()] == ["good"]
    assert len(record) == 3
    issues = {i.path: i for i in skills.issues()}
    assert set(issues) == {"skills/bad", "skills/mismatch", "skills/nofront"}
    assert "may only contain lowercase letters" in issues["skills/bad"].reasons[0]
    assert "must match the skill's folder name 'mismatch'" in issues["skills/mismatch"].reasons[0]
    assert "no YAML frontmatter" in issues["skills/nofront"].message
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second refresh must not warn again
        skills.refresh()
        skills.list()


# -- file access ---------------------------------------------------------------------------------


def test_get_reference_script_asset(project: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    skills = make_skills()
    assert skills.get_reference("report", "style.md").startswith("style line 1\n")  # type: ignore[union-attr]
    assert skills.get_reference("report", "references/style.md") == skills.get_reference("report", "style.md")
    assert skills.get_reference("report", "nested/deep.md") == "deep ref\n"
    assert skills.get_script("report", "build.py") == "print('built')\n"
    assert skills.get_asset("report", "logo.png") == PNG
    assert skills.get_asset("report", "assets/template.txt") == b"Dear {name},\n"
    # missing files -> None; other folders are not reachable through a typed accessor
    assert skills.get_reference("report", "nope.md") is None
    assert skills.get_reference("report", "nested") is None  # a folder
    assert skills.get_reference("report", "scripts/build.py") is None
    with pytest.raises(
        SkillNotFoundError,
        match=r'Skill "ghost" not found\. Available skills: report \(skills/report\), tiny',
    ):
        skills.get_reference("ghost", "x.md")


def test_require_is_get_that_names_the_available_skills(
    project: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    skills = make_skills()
    assert skills.require("report") == skills.get("report") == skills.require("skills/report/SKILL.md")
    assert skills.get("ghost") is None
    with pytest.raises(SkillNotFoundError, match=r'^Skill "ghost" not found\. Available skills: report \('):
        skills.require("ghost")


HOSTILE = [
    "../tiny/SKILL.md",
    "../../skills/tiny/SKILL.md",
    "references/../../tiny/SKILL.md",
    "..",
    "/etc/passwd",
    "~/.ssh/id_rsa",
    "\\etc\\passwd",
    "C:\\Windows\\win.ini",
    "..\\..\\secret",
    "refs\x00.md",
    "",
    "   ",
    ".",
    "./",
]


@pytest.mark.parametrize("path", HOSTILE)
@pytest.mark.parametrize("method", ["get_reference", "get_script", "get_asset", "read_file"])
def test_traversal_attempts_are_rejected(
    project: Path, make_skills: Callable[..., WorkspaceSkills], method: str, path: str
) -> None:
    skills = make_skills()
    with pytest.raises(SkillPathError) as info:
        getattr(skills, method)("report", path)
    assert info.value.code == "INVALID_SKILL_PATH"
    assert isinstance(info.value, PermissionError)
    assert "Invalid" in str(info.value)


@pytest.mark.parametrize("method", ["get_reference", "read_file"])
def test_symlink_out_of_the_skill_is_rejected(
    project: Path, tmp_path: Path, make_skills: Callable[..., WorkspaceSkills], method: str
) -> None:
    secret = Path(os.path.realpath(tmp_path)) / "secret.txt"
    secret.write_text("TOP SECRET")
    refs = project / "skills" / "report" / "references"
    os.symlink(secret, refs / "leak.md")
    os.symlink(secret.parent, refs / "outside-dir")
    skills = make_skills()
    for path in (
        ("leak.md", "outside-dir/secret.txt")
        if method == "get_reference"
        else (
            "references/leak.md",
            "references/outside-dir/secret.txt",
        )
    ):
        with pytest.raises(SkillPathError, match="leads outside the skill folder"):
            getattr(skills, method)("report", path)


def test_read_file_whole_and_ranges(project: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    skills = make_skills()
    whole = skills.read_file("report", "references/style.md")
    assert whole.total_lines == 10 and whole.line_range is None
    assert whole.text is not None and whole.text.endswith("style line 10\n")
    part = skills.read_file("report", "references/style.md", start_line=3, end_line=5)
    assert part.text == "style line 3\nstyle line 4\nstyle line 5"
    assert part.line_range == (3, 5)
    tail = skills.read_file("report", "references/style.md", start_line=9, end_line=99)
    assert tail.line_range == (9, 10)
    assert skills.read_file("report", "references/style.md", end_line=1).text == "style line 1"
    # bare names fall through to references/, scripts/, assets/; root-level files work too
    assert skills.read_file("report", "build.py").path == "scripts/build.py"
    assert skills.read_file("report", "template.txt").path == "assets/template.txt"
    assert skills.read_file("report", "forms.md").text == "root level doc\n"
    assert skills.read_file("report", "SKILL.md").text.startswith("---\nname: report")  # type: ignore[union-attr]
    # the skill path prefix a model may copy from listings is accepted
    assert skills.read_file("report", "skills/report/references/style.md").path == "references/style.md"


def test_read_file_errors(project: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    skills = make_skills()
    with pytest.raises(FileNotFound) as info:
        skills.read_file("report", "references/nope.md")
    assert str(info.value).startswith(
        'File "references/nope.md" not found in skill "report".\nAvailable files: SKILL.md, '
    )
    assert "references/style.md" in str(info.value) and isinstance(info.value, FileNotFoundError)
    with pytest.raises(SkillError) as past:
        skills.read_file("report", "references/style.md", start_line=11)
    assert past.value.code == "LINE_OUT_OF_RANGE"
    assert "has 10 lines (valid range 1-10)" in str(past.value) and "stop paginating" in str(past.value)
    with pytest.raises(SkillError) as bad:
        skills.read_file("report", "references/style.md", start_line=5, end_line=2)
    assert bad.value.code == "INVALID_LINE_RANGE"


def test_binary_detection(project: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    skills = make_skills()
    png = skills.read_file("report", "assets/logo.png", start_line=1, end_line=2)
    assert png.is_binary and png.text is None and png.data == PNG and png.size == len(PNG)
    latin1 = project / "skills" / "report" / "references" / "latin1.txt"
    latin1.write_bytes("café".encode("latin-1"))
    skills.refresh()
    assert skills.read_file("report", "references/latin1.txt").is_binary
    assert skills.list_files("report")[0] == "SKILL.md"
    assert "references/latin1.txt" in skills.list_files("report")


# -- refresh -------------------------------------------------------------------------------------


def test_refresh_picks_up_add_edit_delete(root: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    write_skill(root / "skills", "alpha", body="v1")
    skills = make_skills()
    assert skills.names() == ["alpha"]
    assert not skills.refresh()

    write_skill(root / "skills", "beta")  # add
    changes = skills.refresh()
    assert changes.added == ("beta",) and not changes.changed and not changes.removed
    assert skills.names() == ["alpha", "beta"]

    (root / "skills" / "alpha" / "SKILL.md").write_text(skill_md("alpha", body="version two"))  # edit
    changes = skills.refresh()
    assert changes.changed == ("alpha",)
    assert skills.get("alpha").instructions == "version two"  # type: ignore[union-attr]

    ref = root / "skills" / "alpha" / "references" / "new.md"  # add a reference
    ref.parent.mkdir()
    ref.write_text("fresh reference")
    assert skills.refresh().changed == ("alpha",)
    assert skills.get("alpha").references == ("references/new.md",)  # type: ignore[union-attr]
    ref.write_text("edited reference, longer")  # edit a reference in place
    assert skills.refresh().changed == ("alpha",)
    assert skills.get_reference("alpha", "new.md") == "edited reference, longer"

    for p in sorted((root / "skills" / "beta").rglob("*"), reverse=True):  # delete
        p.unlink() if p.is_file() else p.rmdir()
    (root / "skills" / "beta").rmdir()
    changes = skills.refresh()
    assert changes.removed == ("beta",)
    assert skills.names() == ["alpha"]
    assert skills.get("beta") is None


def test_refresh_sees_a_broken_then_fixed_skill(
    root: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    folder = write_skill(root / "skills", "alpha")
    skills = make_skills()
    assert skills.names() == ["alpha"]
    (folder / "SKILL.md").write_text("---\nname: alpha\n---\n")
    with pytest.warns(SkillWarning, match="'description' is required"):
        assert skills.refresh().removed == ("alpha",)
    (folder / "SKILL.md").write_text(skill_md("alpha", body="fixed"))
    assert skills.refresh().added == ("alpha",)
    assert skills.issues() == []


def test_missing_path_appearing_later_is_picked_up(
    root: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    skills = make_skills(["later"])
    with pytest.warns(SkillWarning):
        assert skills.list() == []
    write_skill(root / "later", "arrived")
    assert skills.refresh().added == ("arrived",)
    assert skills.issues() == []


def test_unchanged_refresh_only_stats(project: Path) -> None:
    source = CountingSource(project)
    skills = WorkspaceSkills(source, ["skills"], refresh_interval=None)
    skills.list()
    assert source.calls.get("read_file") == 2  # both SKILL.md files, once
    source.calls.clear()
    for _ in range(5):
        assert not skills.refresh()
    assert set(source.calls) == {"fingerprint"}, source.calls
    # an edit re-reads only the edited skill
    (project / "skills" / "tiny" / "SKILL.md").write_text(skill_md("tiny", body="changed body"))
    source.calls.clear()
    assert skills.refresh().changed == ("tiny",)
    assert source.calls["read_file"] == 1


def test_reads_auto_refresh_without_long_cooldown(root: Path) -> None:
    write_skill(root / "skills", "alpha")
    skills = WorkspaceSkills(LocalSkillSource(root), ["skills"], refresh_interval=0.05)
    assert skills.names() == ["alpha"]
    write_skill(root / "skills", "beta")
    time.sleep(0.06)
    assert skills.names() == ["alpha", "beta"]
    never = WorkspaceSkills(LocalSkillSource(root), ["skills"], refresh_interval=None)
    assert never.names() == ["alpha", "beta"]
    write_skill(root / "skills", "gamma")
    assert never.names() == ["alpha", "beta"]  # only an explicit refresh() looks
    assert never.refresh().added == ("gamma",)


def test_concurrent_reads_during_refreshes(root: Path) -> None:
    for i in range(5):
        write_skill(root / "skills", f"skill-{i}", files={"references/r.md": f"ref {i}\n"})
    churn = write_skill(root / "skills", "churn", body="edit -1")
    skills = WorkspaceSkills(LocalSkillSource(root), ["skills"], refresh_interval=0)
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                listed = skills.list()
                assert {s.name for s in listed} >= {f"skill-{i}" for i in range(5)}
                assert skills.get_reference("skill-0", "r.md") == "ref 0\n"
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for n in range(20):
        tmp = churn / f".SKILL.md.{n}"
        tmp.write_text(skill_md("churn", body=f"edit {n}"))
        os.replace(tmp, churn / "SKILL.md")  # editors save atomically; readers never see half a file
        skills.refresh()
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
    assert skills.get("churn").instructions == "edit 19"  # type: ignore[union-attr]


# -- resolvers and lifecycle --------------------------------------------------------------------


def test_paths_resolver_gets_the_request_context(root: Path) -> None:
    write_skill(root / "skills" / "alice", "alice-skill")
    write_skill(root / "skills" / "bob", "bob-skill")
    seen: list[SkillsContext] = []
    marker = object()

    def paths(ctx: SkillsContext) -> list[str]:
        seen.append(ctx)
        user = ctx.request_context.get("user") if ctx.request_context else None
        return [f"skills/{user}"] if user else ["skills"]

    skills = WorkspaceSkills(LocalSkillSource(root), paths, workspace=marker, refresh_interval=None)
    alice, bob = RequestContext(user="alice"), RequestContext(user="bob")
    assert skills.names(request_context=alice) == ["alice-skill"]
    assert skills.names(request_context=bob) == ["bob-skill"]
    assert skills.names() == ["alice-skill", "bob-skill"]
    assert skills.get("bob-skill", request_context=alice) is None
    assert skills.get_reference("alice-skill", "x.md", request_context=alice) is None
    assert seen[0].workspace is marker and seen[0].request_context is alice


def test_source_resolver(root: Path, tmp_path: Path) -> None:
    write_skill(root / "skills", "on-a")
    other = Path(os.path.realpath(tmp_path)) / "other"
    write_skill(other / "skills", "on-b")
    sources = {"a": LocalSkillSource(root), "b": LocalSkillSource(other)}

    def pick(ctx: SkillsContext) -> LocalSkillSource:
        return sources[ctx.request_context["tenant"]]  # type: ignore[index]

    skills = WorkspaceSkills(pick, ["skills"], refresh_interval=None)
    assert skills.names(request_context=RequestContext(tenant="a")) == ["on-a"]
    assert skills.names(request_context=RequestContext(tenant="b")) == ["on-b"]


def test_resolver_failures_are_typed(root: Path) -> None:
    def boom(ctx: SkillsContext) -> list[str]:
        raise RuntimeError("no user")

    with pytest.raises(SkillError, match="skills path resolver failed: no user"):
        WorkspaceSkills(LocalSkillSource(root), boom).list()
    with pytest.raises(WorkspaceConfigError, match="must return a list of strings"):
        WorkspaceSkills(LocalSkillSource(root), lambda ctx: [1, 2]).list()  # type: ignore[list-item]
    with pytest.raises(WorkspaceConfigError, match="not a SkillSource"):
        WorkspaceSkills(lambda ctx: None, ["skills"]).list()  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize("bad", [42, [1], {"a": 1}, [None]])
def test_bad_configuration_is_rejected_at_construction(bad: Any) -> None:
    with pytest.raises(WorkspaceConfigError):
        WorkspaceSkills(None, bad)


def test_default_source_is_the_current_directory(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_skill(root / "skills", "here")
    monkeypatch.chdir(root)
    skills = WorkspaceSkills(paths=["skills"])
    monkeypatch.chdir("/")  # the base path was fixed at construction
    assert skills.names() == ["here"]


def test_close_makes_later_calls_fail_clearly(
    project: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    skills = make_skills()
    assert skills.names()
    skills.close()
    assert skills.closed
    for call in (skills.list, skills.refresh, lambda: skills.get("report"), lambda: skills.search("x")):
        with pytest.raises(WorkspaceNotReadyError):
            call()
    skills.close()  # idempotent


def test_random_paths_never_leave_the_skill(project: Path, tmp_path: Path) -> None:
    """Property: whatever path an agent sends, a read returns a file of the skill, None, or a
    typed error — never a host file outside the skill folder."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    outside = Path(os.path.realpath(tmp_path)) / "outside.md"
    outside.write_text("OUTSIDE")
    os.symlink(outside, project / "skills" / "report" / "references" / "link-out.md")
    skills = WorkspaceSkills(LocalSkillSource(project), ["skills"], refresh_interval=None)
    segments = st.sampled_from(
        [
            "..",
            ".",
            "",
            "references",
            "scripts",
            "assets",
            "style.md",
            "link-out.md",
            "tiny",
            "SKILL.md",
            "~",
            "/",
            "\\",
            "skills",
            "report",
            "etc",
            "passwd",
            "\x00",
            "é",
            "a" * 300,
        ]
    )
    paths = st.lists(segments, min_size=1, max_size=6).map("/".join) | st.text(max_size=40)

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(path=paths, method=st.sampled_from(["get_reference", "get_script", "get_asset", "read_file"]))
    def check(path: str, method: str) -> None:
        try:
            result = getattr(skills, method)("report", path)
        except (SkillPathError, FileNotFound, SkillError):
            return
        data = result.data if hasattr(result, "data") else result
        if data is None:
            return
        raw = data if isinstance(data, bytes) else data.encode()
        assert b"OUTSIDE" not in raw
        assert b"Follow these steps." not in raw  # the other skill's SKILL.md

    check()
