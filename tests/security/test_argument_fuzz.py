"""Unclean errors from odd arguments: every tool, fuzzed with hypothesis.

Before: a lone surrogate in a string gave ``Error: UnicodeEncodeError ...`` and ``{"path": NaN}``
created a file named ``nan``. Every tool's output must be a clean string: a documented message,
never a Python exception's name, and nothing outside the workspace (or named after a non-string).
"""

from __future__ import annotations

import math
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ws_jupyter import LocalFilesystem, Workspace

from ..helpers import write

_UNCLEAN = re.compile(r"^Error: [A-Za-z_]*(Error|Exception|Warning)\b|Traceback")
_SKIP = {"workspace_execute_command"}  # runs arbitrary commands by design (covered by the sandbox)

_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=30)
_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    _text,
    st.sampled_from(["a.txt", "../x", "/etc/passwd", "d", "", ".", "sk/SKILL.md", "\ud800", "a\x00b"]),
    st.lists(_text, max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def test_every_tool_gives_clean_errors_for_any_arguments(tmp_path):
    import os

    root = os.path.realpath(tmp_path)
    ws_dir = os.path.join(root, "ws")
    write(tmp_path / "ws", "a.txt", "hello\nworld\n")
    write(tmp_path / "ws", "d/b.md", "# b\n")
    write(tmp_path / "ws", "skills/demo/SKILL.md", "---\nname: demo\ndescription: A demo skill.\n---\nBody\n")
    ws = Workspace(filesystem=LocalFilesystem(ws_dir), bm25=True, skills=["skills"])
    tools = [t for t in ws.tools() if t.name not in _SKIP]
    names = {t.name: list(t.input_schema["properties"]) for t in tools}

    @settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(
        st.sampled_from(sorted(names)).flatmap(
            lambda name: st.tuples(
                st.just(name),
                st.dictionaries(st.sampled_from([*names[name], "bogus"]), _values, max_size=4),
            )
        )
    )
    def check(case):
        name, args = case
        tool = next(t for t in tools if t.name == name)
        out = tool.run(args)
        text = str(out)
        assert isinstance(text, str)
        assert not _UNCLEAN.search(text), (name, args, text[:300])
        for value in args.values():
            if isinstance(value, float) and not math.isfinite(value):
                assert not os.path.exists(os.path.join(ws_dir, str(value))), (name, args)

    check()
    assert not os.path.exists(os.path.join(root, "x"))
    assert sorted(os.listdir(root)) == ["ws"]
