"""The live link between the agent and the notebook the user has open, in real JupyterLab + Chromium.

One JupyterLab (with the worktree's build of the ws-jupyter extension) and one browser serve the
module; each test opens its own notebook on a real ws-jupyter kernel. The agent either runs as a
blocking loop in a cell (the normal case: its tool calls go out while that cell runs) or is driven
by the test in a subshell of the same kernel (:class:`~tests.jupyter.live_support.KernelAgent`),
with the main shell busy. The user is Playwright: keystrokes, clicks on Accept / Reject / Approve /
Deny, Ctrl+S, Ctrl+Z; bulk user edits go through JupyterLab's own model in the page.

``LIVE_LAB_PYTHON`` (set by ``test_live_rtc.py``) runs the same tests on a JupyterLab with
jupyter-collaboration installed.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .lab import CELL_IN_VIEW, JupyterLab, LabPage, browser_unavailable, launch_chromium
from .live_support import (
    AGENT_SETUP,
    PANEL_JS,
    REPO,
    KernelAgent,
    cell_output_text,
    disk_cells,
    is_dirty,
    labextension_problem,
    labextension_share,
    model_cells,
    model_sources,
    wait_for,
    write_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = REPO / "test-artifacts" / "live"

_why_not = browser_unavailable()
if _why_not:
    pytestmark.append(pytest.mark.skip(reason=_why_not))


@pytest.fixture(scope="module")
def collaborative() -> bool:
    """Whether the module's JupyterLab has jupyter-collaboration (test_live_rtc.py says yes)."""
    return False


@pytest.fixture(scope="module")
def interleavings() -> int:
    """Rounds of the random interleavings test (test_live_rtc.py runs fewer: the same code paths)."""
    return 200


def live_lab(
    kernel_prefix: Path, tmp_path_factory: pytest.TempPathFactory, *, python: str | None = None, name: str = "live"
) -> Iterator[JupyterLab]:
    """A JupyterLab with the worktree's extension build, the ws-jupyter kernelspec, ``python``'s server."""
    problem = labextension_problem()
    if problem:
        pytest.skip(problem)
    root = tmp_path_factory.mktemp(f"{name}-root")
    state = tmp_path_factory.mktemp(f"{name}-state")
    share = labextension_share(state)
    server = JupyterLab(root, state, jupyter_path=f"{share}{os.pathsep}{kernel_prefix / 'share' / 'jupyter'}", python=python)
    with server:
        yield server
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(server.log_path, ARTIFACTS / f"jupyterlab-{name}.log")


@pytest.fixture(scope="module")
def lab(kernel_prefix: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    yield from live_lab(kernel_prefix, tmp_path_factory)


@pytest.fixture(scope="module")
def browser(lab: JupyterLab) -> Iterator[Any]:
    with launch_chromium() as chromium:
        yield chromium


class Notebook:
    """One test's notebook: its page, its path, and helpers for what the user does."""

    def __init__(self, lp: LabPage, path: str) -> None:
        self.lp = lp
        self.page = lp.page
        self.path = path

    def cells(self) -> list[dict[str, Any]]:
        return model_cells(self.page, self.path)

    def sources(self) -> dict[str, str]:
        return model_sources(self.page, self.path)

    def run_cell(self, cell_id: str) -> None:
        """Runs one cell as the Run button does (it becomes the active cell)."""
        self.page.evaluate(
            f"""([path, id]) => {{
                const panel = ({PANEL_JS})(path);
                panel.content.activeCellIndex = panel.content.widgets.findIndex(w => w.model.id === id);
                panel.content.mode = 'command';
                void window.jupyterapp.commands.execute('notebook:run-cell');  // not awaited: it resolves when the cell ends
            }}""",
            [self.path, cell_id],
        )

    def cell_node(self, cell_id: str) -> Any:
        """The cell's DOM node (tagged with its id here: cells are rebuilt when moved)."""
        self.page.evaluate(
            f"(path) => ({PANEL_JS})(path).content.widgets.forEach(w => {{ w.node.dataset.wsTestId = w.model.id; }})",
            self.path,
        )
        return self.page.locator(f".jp-Cell[data-ws-test-id='{cell_id}']")

    def type_into(self, cell_id: str, text: str, *, delay: float = 0) -> None:
        """Clicks into the cell's editor at its end and types ``text`` as keystrokes."""
        editor = self.cell_node(cell_id).locator(".cm-content")
        editor.click()
        self.page.keyboard.press("Control+End")
        self.page.keyboard.type(text, delay=delay)

    def output(self, cell_id: str) -> str:
        return cell_output_text(self.page, self.path, cell_id)

    def wait_output(self, cell_id: str, pattern: str, timeout: float = 120) -> str:
        return wait_for(
            lambda: (m := re.search(pattern, self.output(cell_id), re.S)) and m.group(0),
            timeout,
            what=f"{pattern!r} in the output of {cell_id}",
        )

    def proposal(self, cell_id: str | None = None) -> Any:
        scope = self.cell_node(cell_id) if cell_id else self.page
        return scope.locator("section.ws-live-edit").first

    def press_in_notebook(self, cell_id: str, *keys: str) -> None:
        """Clicks the prompt of ``cell_id`` (command mode, focus in the notebook) and presses ``keys``."""
        self.cell_node(cell_id).locator(".jp-InputPrompt").first.click()
        for key in keys:
            self.page.keyboard.press(key)

    def save(self) -> None:
        self.lp.save()

    def dirty(self) -> bool:
        return is_dirty(self.page, self.path)


@pytest.fixture
def open_notebook(browser: Any, lab: JupyterLab, request: pytest.FixtureRequest) -> Iterator[Any]:
    pages: list[Notebook] = []

    def opener(name: str, cells: list[tuple[str, str, str]]) -> Notebook:
        write_notebook(lab.root_dir / name, cells)
        context = browser.new_context(viewport={"width": 1360, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(60_000)
        lp = LabPage(page, lab, ARTIFACTS)
        lp.open_notebook(name)
        page.wait_for_selector(".ws-live-mode", timeout=60_000)  # the extension is active in this tab
        nb = Notebook(lp, name)
        pages.append(nb)
        return nb

    yield opener
    for nb in pages:
        nb.lp.screenshot(f"{request.node.name}-end")
        nb.page.context.close()


def init_cell(name: str) -> tuple[str, str, str]:
    """``%ws init`` on the notebook's own directory (the lab root), so its files are the workspace's."""
    return ("code", f"%ws init . --name {name} --no-vector --no-index", "c-init")


def start_agent(lab: JupyterLab, nb: Notebook) -> KernelAgent:
    agent = KernelAgent(lab, nb.path)
    agent.run(AGENT_SETUP)
    return agent


BUSY_LOOP = "import os, time\nwhile not os.path.exists('{flag}'):\n    time.sleep(0.02)\nprint('busy loop done')"


# --- the main scenario: an agent loop in a cell, accepted, undone, rejected -------------------------

AGENT_LOOP = r"""import os, re, time
tools = {t.name: t for t in ws.tools()}
read, edit = tools["open_notebook_read"], tools["open_notebook_edit"]
versions = lambda text: dict(re.findall(r"^\[\d+\] \w+ (\S+)(?: In\[\d+\])? v=([0-9a-f]{16})", text, re.M))
seen = read.run({})
print("READ unsaved note:", "typed by the user" in seen, "| state:", seen.splitlines()[1], flush=True)
v = versions(seen)
first = edit.run({"edits": [{"op": "replace", "cell_id": "c-target", "version": v["c-target"],
                             "source": "total = sum(data) / len(data)"},
                            {"op": "insert", "after": "c-target", "cell_type": "markdown",
                             "source": "The mean, not a division by zero."}], "wait": 300})
print("FIRST:", first, flush=True)
while not os.path.exists("go-second"):
    time.sleep(0.02)
v = versions(read.run({"cells": ["c-target"]}))
second = edit.run({"edits": [{"op": "replace", "cell_id": "c-target", "version": v["c-target"],
                              "source": "total = 0  # not wanted"}], "wait": 300})
print("SECOND:", second, flush=True)
"""


def test_agent_loop_in_a_cell_reads_unsaved_edits_and_the_user_accepts_undoes_and_rejects(
    lab: JupyterLab, open_notebook: Any, collaborative: bool
) -> None:
    """A scripted agent loop running in a cell reads the open notebook — a cell the user typed but
    did not save included — and proposes an edit of two cells (a replaced source, a new cell);
    Accept applies it to the model and the next save writes it; one Ctrl+Z reverts all of it; a
    second proposal, rejected, changes nothing."""
    nb = open_notebook(
        "accept.ipynb",
        [
            init_cell("accept"),
            ("code", "data = [3, 1, 2]", "c-data"),
            ("code", "total = sum(data) / 0", "c-target"),
            ("code", "# notes", "c-note"),
            ("code", AGENT_LOOP, "c-agent"),
        ],
    )
    original = "total = sum(data) / 0"
    (lab.root_dir / "go-second").unlink(missing_ok=True)
    nb.run_cell("c-init")
    nb.run_cell("c-data")
    nb.wait_output("c-init", "Workspace accept")
    nb.type_into("c-note", "\n# typed by the user")
    assert nb.sources()["c-note"].endswith("# typed by the user")
    assert nb.dirty() or collaborative  # (with collaboration the server saves as the user types)
    nb.run_cell("c-agent")  # the agent loop: the kernel is busy with it from now on
    diff = nb.proposal("c-target")
    diff.wait_for(timeout=60_000)
    assert "READ unsaved note: True" in nb.output("c-agent")
    assert "running: c-agent" in nb.output("c-agent")  # the agent sees its own cell running
    assert diff.locator(".ws-live-del .ws-live-text").inner_text() == "total = sum(data) / 0"
    assert diff.locator(".ws-live-add .ws-live-text").inner_text() == "total = sum(data) / len(data)"
    new_cell = nb.cell_node("c-target").locator("section.ws-live-op-insert")
    assert new_cell.locator(".ws-live-add .ws-live-text").inner_text() == "The mean, not a division by zero."
    assert nb.sources()["c-target"] == original and len(nb.cells()) == 5  # nothing changes before the decision
    nb.lp.screenshot("live-proposal-diff", nb.cell_node("c-target"))
    diff.locator(".ws-live-proposal-head").get_by_role("button", name="Accept").click()
    nb.wait_output("c-agent", r"FIRST: Proposal \S+ was applied after the user accepted it")
    ids = [c["id"] for c in nb.cells()]
    added = ids[ids.index("c-target") + 1]
    assert nb.sources()["c-target"] == "total = sum(data) / len(data)"
    assert nb.sources()[added] == "The mean, not a division by zero."
    assert nb.sources()["c-note"].endswith("# typed by the user")  # the user's unsaved edit is kept
    nb.save()
    on_disk = wait_for(lambda: (d := disk_cells(lab.root_dir / "accept.ipynb")).get(added) and d, 30, what="the save")
    assert on_disk["c-target"] == "total = sum(data) / len(data)" and on_disk[added].startswith("The mean")
    assert on_disk["c-note"].endswith("# typed by the user")
    nb.press_in_notebook("c-data", "Control+z")  # one undo step reverts the whole proposal
    wait_for(lambda: nb.sources()["c-target"] == original, 10, what="Ctrl+Z to revert the proposal")
    assert added not in nb.sources() and len(nb.cells()) == 5
    assert nb.sources()["c-note"].endswith("# typed by the user")
    (lab.root_dir / "go-second").write_text("")
    diff = nb.proposal("c-target")
    diff.wait_for(timeout=60_000)
    diff.get_by_role("button", name="Reject").click()
    nb.wait_output("c-agent", r"SECOND: The user rejected proposal \S+; the notebook was not changed")
    assert nb.sources()["c-target"] == original
    assert nb.page.locator("section.ws-live-edit").count() == 0  # the review is gone
    nb.save()
    wait_for(lambda: disk_cells(lab.root_dir / "accept.ipynb")["c-target"] == original, 30, what="the second save")
    assert nb.page.locator(".jp-Dialog").count() == 0  # never a "file changed on disk" dialog


# --- concurrency: keystrokes in one cell while the agent's edits to others are accepted -----------

KEYSTROKE_AGENT = r"""import re
tools = {t.name: t for t in ws.tools()}
read, edit = tools["open_notebook_read"], tools["open_notebook_edit"]
versions = lambda text: dict(re.findall(r"^\[\d+\] \w+ (\S+)(?: In\[\d+\])? v=([0-9a-f]{16})", text, re.M))
for name in "BCDEF":
    v = versions(read.run({"cells": [f"c-{name}"]}))
    out = edit.run({"edits": [{"op": "replace", "cell_id": f"c-{name}", "version": v[f"c-{name}"],
                               "source": f"{name.lower()} = 'set by the agent'"}], "wait": 120})
    print(name, out.splitlines()[0], flush=True)
print("AGENT DONE", flush=True)
"""


def test_every_keystroke_is_kept_while_the_agent_edits_other_cells(lab: JupyterLab, open_notebook: Any) -> None:
    """The user types into cell A (real keystrokes) while the agent proposes edits to B..F one after
    the other and the user accepts each — clicking Accept without leaving A: every keystroke lands
    in A, every accepted edit in its cell."""
    cells = [init_cell("keys"), ("code", "a = ''", "c-A")]
    cells += [("code", f"{n.lower()} = None", f"c-{n}") for n in "BCDEF"]
    cells.append(("code", KEYSTROKE_AGENT, "c-agent"))
    nb = open_notebook("keys.ipynb", cells)
    nb.run_cell("c-init")
    nb.wait_output("c-init", "Workspace keys")
    nb.run_cell("c-agent")
    typed = ""
    chunk = iter(f" + 'k{i:02d}'" for i in range(200))
    nb.type_into("c-A", "")
    accepted = 0
    deadline = time.monotonic() + 180
    while accepted < 5 or len(typed) < 60:
        assert time.monotonic() < deadline, f"stuck: {accepted} accepted, output {nb.output('c-agent')!r}"
        piece = next(chunk)
        nb.page.keyboard.type(piece)
        typed += piece
        button = nb.page.locator("section.ws-live-edit").get_by_role("button", name="Accept")
        if button.count():
            button.first.click()  # focus stays in A: the next keystrokes still go there
            accepted += 1
    nb.wait_output("c-agent", "AGENT DONE")
    sources = nb.sources()
    assert sources["c-A"] == "a = ''" + typed  # every keystroke, in order
    for name in "BCDEF":
        assert sources[f"c-{name}"] == f"{name.lower()} = 'set by the agent'"
    assert nb.output("c-agent").count("was applied") == 5


# --- 200 random interleavings --------------------------------------------------------------------

USER_OP_JS = f"""([path, op]) => {{
    const panel = ({PANEL_JS})(path);
    const nb = panel.content.model.sharedModel;
    const cells = nb.cells;
    const i = op.index % cells.length;
    if (op.kind === 'edit') {{
        cells[i].setSource(cells[i].getSource() + '\\n# ' + op.marker);
        return cells[i].id;
    }}
    if (op.kind === 'insert') {{
        return nb.insertCell(op.index % (cells.length + 1), {{cell_type: 'code', source: '# ' + op.marker}}).id;
    }}
    if (op.kind === 'delete') {{
        const gone = cells[i].getSource();
        nb.deleteCell(i);
        return gone;
    }}
    const j = op.to % cells.length;
    nb.moveCell(i, j);
    return cells[j].id;
}}"""

MARKER = re.compile(r"# ([ua]\d+)")


def test_200_random_interleavings_lose_nothing_apply_nothing_stale_duplicate_nothing(
    lab: JupyterLab, open_notebook: Any, interleavings: int
) -> None:
    """Seeded random interleavings of user edits, inserts, deletes and moves (through the page's
    model) with the agent's reads, proposals (replace, insert, delete, move; from a subshell of the
    kernel while a cell runs) and the user's Accept/Reject decisions. Every user change is a marker
    ``# uN``, every agent edit a marker ``# aN`` appended to what it read. At the end: every marker
    the user made and did not delete is there exactly once; an agent marker is there only if its
    edit was reported applied (and every applied one is, unless deleted later); no cell id twice."""
    rng = random.Random(2026)
    cells = [init_cell("mix"), ("code", BUSY_LOOP.format(flag="stop-mix"), "c-busy")]
    cells += [("code", f"# base {i}", f"c-{i}") for i in range(8)]
    nb = open_notebook("mix.ipynb", cells)
    (lab.root_dir / "stop-mix").unlink(missing_ok=True)
    nb.run_cell("c-init")
    nb.wait_output("c-init", "Workspace mix")
    nb.run_cell("c-busy")  # the main shell is busy from here on, as with an agent loop in a cell
    agent = start_agent(lab, nb)
    protected = {"c-init", "c-busy"}
    user_made: set[str] = set()
    user_deleted: set[str] = set()
    agent_edits: list[dict[str, Any]] = []  # {"marker" | "deletes", "n", "proposal"}
    agent_deleted: set[str] = set()
    outcomes: dict[str, dict[str, Any]] = {}
    pending: list[str] = []
    last_read: dict[str, dict[str, Any]] | None = None
    counter = {"u": 0, "a": 0}
    history: list[str] = []
    stats = {"rounds": 0, "user": 0, "proposals": 0, "accepted": 0, "rejected": 0, "stale": 0}

    def marker(kind: str) -> str:
        counter[kind] += 1
        return f"{kind}{counter[kind]}"

    def user_op() -> None:
        current = [c for c in nb.cells() if c["id"] not in protected]
        kind = rng.choice(["edit", "edit", "insert", "delete", "move"])
        if kind == "delete" and len(current) < 4:
            kind = "insert"
        ids = [c["id"] for c in nb.cells()]
        free = [i for i, cid in enumerate(ids) if cid not in protected]
        op: dict[str, Any] = {"kind": kind, "index": rng.choice(free), "to": rng.choice(free)}
        if kind in ("edit", "insert"):
            op["marker"] = marker("u")
            user_made.add(op["marker"])
        result = nb.page.evaluate(USER_OP_JS, [nb.path, op])
        if kind == "delete":
            user_deleted.update(MARKER.findall(result))
        history.append(f"user {op} -> {result!r}")
        stats["user"] += 1

    def agent_read() -> None:
        nonlocal last_read
        view = agent.json(
            "_v = _LINK.read()\nprint(_json.dumps([{'id': c.id, 'version': c.version, 'source': c.source} for c in _v.cells]))"
        )
        last_read = {c["id"]: c for c in view}
        history.append(f"read {[(c['id'], c['version'][:6], MARKER.findall(c['source'])) for c in view]}")

    def agent_propose() -> None:
        if last_read is None:
            return agent_read()
        readable = [c for c in last_read.values() if c["id"] not in protected]
        edits = []
        made: list[dict[str, Any]] = []
        used: set[str] = set()
        for _ in range(rng.randint(1, 3)):
            kind = rng.choice(["replace", "replace", "insert", "delete", "move"])
            choices = [c for c in readable if c["id"] not in used]
            if not choices:
                break
            target = rng.choice(choices)
            anchor = rng.choice([*[c["id"] for c in readable], ""])
            if kind == "delete" and any(m.startswith("u") for m in MARKER.findall(target["source"])):
                kind = "replace"  # the agent deletes only its own cells (see the docstring)
            if kind == "delete" and "base" in target["source"]:
                kind = "replace"
            if kind == "replace":
                m = marker("a")
                edits.append({"op": "replace", "cell_id": target["id"], "version": target["version"],
                              "source": target["source"] + f"\n# {m}"})
                made.append({"marker": m, "n": len(edits) - 1})
            elif kind == "insert":
                m = marker("a")
                edits.append({"op": "insert", "after": anchor, "cell_type": "code", "source": f"# {m}"})
                made.append({"marker": m, "n": len(edits) - 1})
                continue
            elif kind == "delete":
                edits.append({"op": "delete", "cell_id": target["id"], "version": target["version"]})
                made.append({"deletes": MARKER.findall(target["source"]), "n": len(edits) - 1})
            else:
                if anchor == target["id"]:
                    continue
                edits.append({"op": "move", "cell_id": target["id"], "version": target["version"], "after": anchor})
            used.add(target["id"])
        if not edits:
            return
        out = agent.json(f"print(_json.dumps(_outcome(_LINK.propose(_Proposal.from_args({edits!r}), wait=0))))")
        for entry in made:
            entry["proposal"] = out["id"]
            agent_edits.append(entry)
        outcomes[out["id"]] = out
        history.append(f"propose {edits} -> {out['id']} {out['status']} {[(c['cell_id'], c['status'], c.get('reason')) for c in out['cells']]}")
        stats["proposals"] += 1
        if out["status"] == "pending":
            pending.append(out["id"])
        elif out["status"] == "stale":
            stats["stale"] += 1

    def user_decides() -> None:
        if not pending:
            return
        pid = rng.choice(pending)
        accept = rng.random() < 0.7
        section = nb.page.locator(f"section.ws-live-edit[data-ws-proposal='{pid}']")
        if rng.random() < 0.15 and section.count():
            # a real click now and then (the rest through the same handler, for speed)
            section.first.get_by_role("button", name="Accept" if accept else "Reject").first.click()
        else:
            nb.page.evaluate(
                "([path, pid, accept]) => window.wsJupyterLive.channel(path).proposals.decide(pid, null, accept)",
                [nb.path, pid, accept],
            )
        history.append(f"decide {pid} {accept} -> {[(c['id'], MARKER.findall(c['source'])) for c in nb.cells()]}")
        stats["accepted" if accept else "rejected"] += 1

    def poll(wait: float = 0) -> None:
        for pid in list(pending):
            out = agent.json(f"print(_json.dumps(_outcome(_LINK.proposal({pid!r}, wait={wait}))))")
            if out["status"] != "pending":
                history.append(f"outcome {pid} {out['status']} {[(c['cell_id'], c['status'], c.get('reason')) for c in out['cells']]}")
                outcomes[pid] = out
                pending.remove(pid)

    steps = [user_op, user_op, agent_read, agent_propose, agent_propose, user_decides, user_decides, poll]
    try:
        for _round in range(interleavings):
            for step in rng.sample(steps, k=rng.randint(3, 5)):
                step()
            stats["rounds"] += 1
        for pid in list(pending):  # the user decides what is left, the agent hears about it
            nb.page.evaluate(
                "([path, pid]) => window.wsJupyterLive.channel(path).proposals.decide(pid, null, false)",
                [nb.path, pid],
            )
        poll(wait=10)
        assert not pending
        final = nb.cells()
        text = "\n".join(c["source"] for c in final)
        found = MARKER.findall(text)
        # no cell twice, no marker twice
        ids = [c["id"] for c in final]
        assert len(ids) == len(set(ids)), "a cell id appears twice"
        dupes = {m for m in found if found.count(m) > 1}
        assert not dupes, f"duplicated content: {sorted(dupes)[:10]}"
        # 0 lost user changes
        lost = sorted(m for m in user_made - user_deleted if m not in found)
        assert not lost, f"user changes lost: {lost[:10]}"
        # agent edits: present only when applied, applied ones present unless deleted later
        applied: set[str] = set()
        for entry in agent_edits:
            out = outcomes[entry["proposal"]]
            status = out["cells"][entry["n"]]["status"] if entry["n"] < len(out["cells"]) else None
            if "deletes" in entry:
                if status == "applied":
                    agent_deleted.update(entry["deletes"])
                continue
            if status == "applied":
                applied.add(entry["marker"])
            else:
                assert entry["marker"] not in found, f"{entry['marker']} is in the notebook but its edit was {status}"
        gone = user_deleted | agent_deleted
        missing = sorted(m for m in applied - gone if m not in found)
        assert not missing, f"applied agent edits missing: {missing[:10]}"
        assert stats["proposals"] >= interleavings // 2 and stats["accepted"] >= interleavings // 7, stats
    except AssertionError:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "interleavings-history.txt").write_text("\n".join(history))
        raise
    finally:
        (lab.root_dir / "stop-mix").write_text("")
        agent.close()
    print(f"\ninterleavings: {stats}")


# --- disk edits reach the open tab ----------------------------------------------------------------


def test_a_disk_edit_reaches_the_tab_cell_by_cell_keeping_unsaved_edits(
    lab: JupyterLab, open_notebook: Any, collaborative: bool
) -> None:
    """The agent edits the open notebook's file with workspace_notebook_edit while the user has an
    unsaved edit in another cell: the tab takes the agent's cell, keeps the user's, and the next
    save asks nothing and writes both. (With collaboration the server saves the user's edit as it
    is typed and loads the file's change into the shared document itself, cell by cell.)"""
    nb = open_notebook(
        "disk.ipynb",
        [init_cell("disk"), ("code", "x = 1", "c-user"), ("code", "y = 2", "c-agent-target"),
         ("markdown", "# Title", "c-md"), ("code", BUSY_LOOP.format(flag="stop-disk"), "c-busy")],
    )
    (lab.root_dir / "stop-disk").unlink(missing_ok=True)
    nb.run_cell("c-init")
    nb.wait_output("c-init", "Workspace disk")
    nb.save()
    nb.type_into("c-user", "  # the user's unsaved edit")
    if collaborative:
        wait_for(lambda: disk_cells(lab.root_dir / "disk.ipynb")["c-user"].endswith("edit"), 30, what="the autosave")
    nb.run_cell("c-busy")
    agent = start_agent(lab, nb)
    try:
        # the agent reads and edits the file as it would: again after "changed since it was read"
        # (with collaboration the server saves the document every moment it changes)
        said = agent.run(
            "import time\n"
            "t = {x.name: x for x in ws.tools()}\n"
            "def edit(**args):\n"
            "    for _ in range(50):\n"
            "        t['workspace_read_file'].run({'path': 'disk.ipynb'})\n"
            "        out = t['workspace_notebook_edit'].run({'path': 'disk.ipynb', **args})\n"
            "        if not getattr(out, 'is_error', False):\n"
            "            return out\n"
            "        time.sleep(0.1)\n"
            "    return out\n"
            "print(edit(cell_id='c-agent-target', new_source='y = 3  # the agent, on disk'))\n"
            "print(edit(cell_id='c-md', edit_mode='insert', cell_type='markdown', new_source='A cell the agent added'))"
        )
        assert "Replaced cell 2" in said and "Inserted cell 4" in said and "Error" not in said, said
        wait_for(lambda: nb.sources().get("c-agent-target") == "y = 3  # the agent, on disk", 30,
                 what="the disk edit to reach the tab")
        sources = nb.sources()
        assert sources["c-user"] == "x = 1  # the user's unsaved edit"  # kept, still unsaved
        assert "A cell the agent added" in list(sources.values())
        order = [c["id"] for c in nb.cells()]
        added = next(c["id"] for c in nb.cells() if c["source"] == "A cell the agent added")
        assert order.index(added) == order.index("c-md") + 1  # where the file has it
        assert nb.dirty() or collaborative
        nb.save()
        assert nb.page.locator(".jp-Dialog").count() == 0  # no "file changed on disk" dialog
        on_disk = wait_for(lambda: (d := disk_cells(lab.root_dir / "disk.ipynb"))["c-user"].endswith("edit") and d, 30,
                           what="the save")
        assert on_disk["c-user"] == "x = 1  # the user's unsaved edit"
        assert on_disk["c-agent-target"] == "y = 3  # the agent, on disk"
        assert list(on_disk.values()).count("A cell the agent added") == 1
    finally:
        (lab.root_dir / "stop-disk").write_text("")
        agent.close()


# --- running cells ----------------------------------------------------------------------------------


def test_open_notebook_run_in_the_sandbox_marks_outputs_and_leaves_the_user_kernel_alone(
    lab: JupyterLab, open_notebook: Any
) -> None:
    nb = open_notebook(
        "sandbox.ipynb",
        [init_cell("sandbox"), ("code", "secret = 'user'", "c-user"),
         ("code", "import os\nfrom IPython.display import HTML, display\nsecret = 'sandbox'\nprint('pid', os.getpid())\n"
                  "display(HTML('<b>from the sandbox</b><script>parent.__pwned = 1</script>'))\n6 * 7", "c-run"),
         ("code", BUSY_LOOP.format(flag="stop-sandbox"), "c-busy")],
    )
    (lab.root_dir / "stop-sandbox").unlink(missing_ok=True)
    nb.run_cell("c-init")
    nb.run_cell("c-user")
    nb.wait_output("c-init", "Workspace sandbox")
    nb.run_cell("c-busy")
    agent = start_agent(lab, nb)
    try:
        said = agent.run("print(_TOOLS['open_notebook_run'].run({'cell_ids': ['c-run']}))")
        assert "ran in the sandbox kernel 'default': ok" in said and "outputs shown in the cell" in said
        assert "42" in said
        out = nb.output("c-run")
        assert "pid" in out and "42" in out
        kernel_pid = agent.run("import os; print(os.getpid())").strip()
        assert f"pid {kernel_pid}" not in out  # it ran elsewhere
        assert agent.run("print(secret)").strip() == "user"  # the user's namespace is untouched
        frame = nb.cell_node("c-run").locator("iframe[sandbox='']")
        frame.wait_for()  # the sandbox's HTML, in a frame that runs nothing
        assert "from the sandbox" in frame.content_frame.locator("body").inner_text()
        assert nb.page.evaluate("() => window.__pwned === undefined")
        mark = nb.cell_node("c-run").locator(".ws-live-sandbox-mark")
        mark.wait_for()
        assert "Outputs from the workspace sandbox" in mark.inner_text()
        meta = next(c for c in nb.cells() if c["id"] == "c-run")["metadata"]
        assert meta["ws_jupyter"]["outputs_from"]["where"] == "sandbox"
        nb.lp.screenshot("live-sandbox-outputs", nb.cell_node("c-run"))
    finally:
        (lab.root_dir / "stop-sandbox").write_text("")
        agent.close()


def test_open_notebook_run_in_the_user_kernel_waits_for_approval_and_deny_runs_nothing(
    lab: JupyterLab, open_notebook: Any
) -> None:
    nb = open_notebook(
        "userrun.ipynb",
        [init_cell("userrun"), ("code", "ran = ran + 1 if 'ran' in dir() else 1\nprint('ran', ran)", "c-run"),
         ("code", BUSY_LOOP.format(flag="stop-userrun"), "c-busy")],
    )
    (lab.root_dir / "stop-userrun").unlink(missing_ok=True)
    nb.run_cell("c-init")
    nb.wait_output("c-init", "Workspace userrun")
    nb.run_cell("c-busy")
    agent = start_agent(lab, nb)
    try:
        said = agent.run("print(_TOOLS['open_notebook_run'].run({'cell_ids': ['c-run'], 'where': 'user', 'wait': 0}))")
        run_id = re.search(r'run_id="(\S+)"', said).group(1)
        request = nb.page.locator(f"section.ws-live-run-request[data-ws-run='{run_id}']")
        request.wait_for()
        assert "ran = ran + 1" in request.inner_text()  # the code is shown before anything runs
        nb.lp.screenshot("live-user-run-request", request)
        request.get_by_role("button", name="Deny").click()
        said = agent.run(f"print(_TOOLS['open_notebook_run'].run({{'run_id': {run_id!r}, 'wait': 30}}))")
        assert "denied" in said and "nothing ran" in said
        assert agent.run("print('ran' in dir())").strip() == "False"
        # asked again and approved: it runs in the user's kernel (a subshell: the cell above is busy)
        said = agent.run("print(_TOOLS['open_notebook_run'].run({'cell_ids': ['c-run'], 'where': 'user', 'wait': 0}))")
        run_id = re.search(r'run_id="(\S+)"', said).group(1)
        nb.page.locator(f"section.ws-live-run-request[data-ws-run='{run_id}']").get_by_role("button", name="Approve").click()
        said = agent.run(f"print(_TOOLS['open_notebook_run'].run({{'run_id': {run_id!r}, 'wait': 60}}))")
        assert "ran in the user's kernel after the user approved it" in said and "ran 1" in said
        assert agent.run("print(ran)").strip() == "1"
        assert "ran 1" in nb.output("c-run")
        # the user can turn such requests off entirely
        agent.run("_LINK.set_settings(user_runs='off')")
        said = agent.run("print(_TOOLS['open_notebook_run'].run({'cell_ids': ['c-run'], 'where': 'user', 'wait': 0}))")
        assert "turned off" in said and nb.page.locator("section.ws-live-run-request").count() == 0
    finally:
        (lab.root_dir / "stop-userrun").write_text("")
        agent.close()


# --- the user's mode ------------------------------------------------------------------------------


def test_accept_mode_applies_at_once_with_a_marker_and_only_the_user_sets_it(
    lab: JupyterLab, open_notebook: Any
) -> None:
    nb = open_notebook(
        "mode.ipynb",
        [init_cell("mode"), ("code", "value = 1", "c-target"), ("code", "%ws live --mode accept", "c-mode"),
         ("code", BUSY_LOOP.format(flag="stop-mode"), "c-busy")],
    )
    (lab.root_dir / "stop-mode").unlink(missing_ok=True)
    nb.run_cell("c-init")
    nb.run_cell("c-mode")
    nb.wait_output("c-mode", "applied at once")
    toolbar = nb.page.locator(".ws-live-mode")
    wait_for(lambda: "apply at once" in toolbar.inner_text(), 10, what="the toolbar to show the mode")
    nb.run_cell("c-busy")
    agent = start_agent(lab, nb)
    try:
        for tool in agent.json("print(_json.dumps([t.to_dict() for t in ws.tools() if t.name.startswith('open_notebook')]))"):
            props = tool["input_schema"]["properties"]
            assert not {"mode", "settings", "user_runs"} & set(props), tool["name"]  # no tool can set them
        agent.run("v = _versions(_TOOLS['open_notebook_read'].run({}))")
        said = agent.run(
            "print(_TOOLS['open_notebook_edit'].run({'edits': [{'op': 'replace', 'cell_id': 'c-target', "
            "'version': v['c-target'], 'source': 'value = 2'}], 'wait': 0}))"
        )
        assert "applied at once (the user's accept mode)" in said
        assert nb.sources()["c-target"] == "value = 2"
        marker = nb.cell_node("c-target").locator(".ws-live-applied")
        marker.wait_for()
        assert "Applied without review" in marker.inner_text()
        nb.lp.screenshot("live-accept-mode-marker", nb.cell_node("c-target"))
        toolbar.click()  # the user switches back to review
        wait_for(lambda: "review" in toolbar.inner_text(), 10, what="review mode")
        agent.run("v = _versions(_TOOLS['open_notebook_read'].run({}))")
        said = agent.run(
            "print(_TOOLS['open_notebook_edit'].run({'edits': [{'op': 'replace', 'cell_id': 'c-target', "
            "'version': v['c-target'], 'source': 'value = 3'}], 'wait': 0}))"
        )
        assert "waiting for the user's review" in said and nb.sources()["c-target"] == "value = 2"
    finally:
        (lab.root_dir / "stop-mode").write_text("")
        agent.close()


# --- hostile proposals ----------------------------------------------------------------------------


def test_hostile_proposals_are_inert_and_bounded(lab: JupyterLab, open_notebook: Any) -> None:
    """Script tags, event handlers and javascript: links in a proposal are drawn as text and never
    run; a 10 MB source and 10,000 cells are refused with a clear answer, by the tool and by the
    page itself (a request that skips the Python checks)."""
    nb = open_notebook(
        "hostile.ipynb",
        [init_cell("hostile"), ("code", "safe = True", "c-target"), ("code", BUSY_LOOP.format(flag="stop-hostile"), "c-busy")],
    )
    (lab.root_dir / "stop-hostile").unlink(missing_ok=True)
    nb.run_cell("c-init")
    nb.wait_output("c-init", "Workspace hostile")
    nb.run_cell("c-busy")
    agent = start_agent(lab, nb)
    hostile = (
        "<script>window.__pwned = 1</script>\n<img src=x onerror=\"window.__pwned = 2\">\n"
        "[click](javascript:window.__pwned=3) <a href=\"javascript:window.__pwned=4\">link</a>\n"
        "<iframe srcdoc=\"<script>parent.__pwned=5</script>\"></iframe>"
    )
    try:
        agent.run("v = _versions(_TOOLS['open_notebook_read'].run({}))")
        said = agent.run(
            "print(_TOOLS['open_notebook_edit'].run({'edits': ["
            f"{{'op': 'replace', 'cell_id': 'c-target', 'version': v['c-target'], 'source': {hostile!r}}},"
            f"{{'op': 'insert', 'after': 'c-target', 'cell_type': 'markdown', 'source': {hostile!r}}}], 'wait': 0}}))"
        )
        assert "waiting for the user's review" in said
        section = nb.page.locator("section.ws-live-edit").first
        section.wait_for()
        time.sleep(0.5)
        assert nb.page.evaluate("() => window.__pwned === undefined")
        for edit in nb.page.locator("section.ws-live-edit").all():
            assert edit.locator("script, img, a, iframe").count() == 0  # text, not markup
        assert "<script>window.__pwned = 1</script>" in nb.page.locator("section.ws-live-edit").last.inner_text()
        nb.lp.screenshot("live-hostile-proposal", section)
        # too large: the tool refuses before anything reaches the page
        said = agent.run(
            "print(_TOOLS['open_notebook_edit'].run({'edits': [{'op': 'insert', 'after': '', 'cell_type': 'code', "
            "'source': 'x' * (10 * 1024 * 1024)}], 'wait': 0}))"
        )
        assert said.startswith("Error:") and "10,485,760 bytes" in said and "at most 1,048,576" in said
        said = agent.run(
            "print(_TOOLS['open_notebook_edit'].run({'edits': [{'op': 'insert', 'after': '', 'cell_type': 'code', "
            "'source': 'x'}] * 10000, 'wait': 0}))"
        )
        assert said.startswith("Error:") and "10,000 entries: at most 200" in said
        # and the page refuses them too, when a request skips the Python checks
        big = agent.json(
            "r = _LINK.request('propose', {'edits': [{'op': 'insert', 'after': '', 'cell_type': 'code', "
            "'source': 'x' * (10 * 1024 * 1024)}]})\nprint(_json.dumps(dict(r)))"
        )
        assert big["status"] == "invalid" and "over the 1048576 bytes" in big["message"]
        many = agent.json(
            "r = _LINK.request('propose', {'edits': [{'op': 'insert', 'after': '', 'cell_type': 'code', "
            "'source': 'x'}] * 10000})\nprint(_json.dumps(dict(r)))"
        )
        assert many["status"] == "invalid" and "10000 edits in one proposal: at most 200" in many["message"]
        assert len(nb.cells()) == 3  # nothing was added
        # outputs forged past the Python side: the page keeps only inert types and inert HTML forms
        version = agent.run("print(_versions(_TOOLS['open_notebook_read'].run({}))['c-target'])").strip()
        forged = [
            {"output_type": "display_data", "metadata": {}, "data": {
                "text/html": '<img src=x onerror="window.__pwned = 6">', "text/plain": "plain 1"}},
            {"output_type": "display_data", "metadata": {}, "data": {
                "application/javascript": "window.__pwned = 7", "text/plain": "plain 2"}},
            {"output_type": "display_data", "metadata": {}, "data": {
                "text/html": '<iframe sandbox="allow-scripts" srcdoc="<script>parent.__pwned=8</script>"></iframe>'}},
        ]
        said = agent.run(f"print(_LINK.show_outputs('c-target', {version!r}, {forged!r}, origin={{'kernel': 'x'}}))")
        assert said.strip() == "shown"
        time.sleep(0.5)
        outputs = next(c for c in nb.cells() if c["id"] == "c-target")["outputs"]
        assert [sorted(o["data"]) for o in outputs] == [["text/plain"], ["text/plain"], ["text/plain"]]
        assert nb.page.evaluate("() => window.__pwned === undefined")
    finally:
        (lab.root_dir / "stop-hostile").write_text("")
        agent.close()


# --- navigation -----------------------------------------------------------------------------------


def test_a_cell_link_opens_the_notebook_at_that_cell_on_the_first_click(lab: JupyterLab, open_notebook: Any) -> None:
    """A grep hit on a notebook cell: one click opens the notebook scrolled to the cell, whether the
    notebook was closed or already open."""
    import nbformat
    from nbformat import v4

    study = lab.root_dir / "nav"
    study.mkdir(exist_ok=True)
    cells = [v4.new_markdown_cell(f"## Part {i}\n\n" + "Filler text about sensors. " * 60) for i in range(14)]
    cells.append(v4.new_markdown_cell("## Findings\nThe reservoir levels dropped sharply in August."))
    target = v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "ws-jupyter", "display_name": "Python 3 (ws-jupyter)", "language": "python"}})
    for i, c in enumerate(target.cells):
        c.id = f"nav-{i}"
    nbformat.write(target, study / "study.ipynb")
    nb = open_notebook("navigate.ipynb", [("code", "%ws init nav --name nav --no-vector --no-index", "c-init"),
                                          ("code", "%ws grep reservoir", "c-grep")])
    nb.run_cell("c-init")
    nb.wait_output("c-init", "Workspace nav")
    nb.run_cell("c-grep")
    link = nb.page.locator("a[href*='#cell-id=nav-14']").first
    link.wait_for(timeout=60_000)

    link.click()  # the notebook is closed: this click opens it, at the cell
    nb.page.wait_for_function(CELL_IN_VIEW, arg=["Filler text", "reservoir levels dropped"], timeout=30_000)
    nb.lp.screenshot("live-link-first-click")
    # open: back to the first notebook, scroll the study to its top, click again
    nb.page.evaluate(
        "() => { const p = Array.from(document.querySelectorAll('.jp-NotebookPanel')).find(p => p.innerText.includes('Filler text'));"
        " p.querySelector('.jp-WindowedPanel-outer, .jp-Notebook').scrollTop = 0; }"
    )
    nb.page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text="navigate.ipynb").click()
    link.click()
    nb.page.wait_for_function(CELL_IN_VIEW, arg=["Filler text", "reservoir levels dropped"], timeout=30_000)


# --- the demo notebook ------------------------------------------------------------------------------


def test_the_live_notebook_demo_fixes_its_cell_and_runs_it_in_the_sandbox(lab: JupyterLab, browser: Any) -> None:
    """notebooks/live_notebook.ipynb in JupyterLab: its scripted agent reads the open notebook,
    proposes the fix of the average cell, the user accepts, and the fixed cell runs in the sandbox
    (outputs marked; the user's kernel keeps the old value)."""
    shutil.copy(REPO / "notebooks" / "live_notebook.ipynb", lab.root_dir / "live_notebook.ipynb")
    context = browser.new_context(viewport={"width": 1360, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    lp = LabPage(page, lab, ARTIFACTS)
    try:
        lp.open_notebook("live_notebook.ipynb")
        page.wait_for_selector(".ws-live-mode")
        nb = Notebook(lp, "live_notebook.ipynb")
        for cid in ("init", "average", "status", "policy"):
            nb.run_cell(cid)
        nb.wait_output("init", "Workspace live-demo")
        nb.wait_output("average", "17.875")
        nb.wait_output("status", "Connected to live_notebook.ipynb in JupyterLab")
        nb.run_cell("agent")
        diff = nb.proposal("average")
        diff.wait_for(timeout=60_000)
        assert diff.locator(".ws-live-add .ws-live-text").inner_text() == "average = sum(prices) / len(prices)"
        lp.screenshot("live-demo-proposal", nb.cell_node("average"))
        diff.get_by_role("button", name="Accept").click()
        out = nb.wait_output("agent", r"ran in the sandbox kernel 'default': ok.*")
        assert "was applied after the user accepted it" in nb.output("agent")
        assert "11.916666666666666" in out
        assert nb.output("average").strip() == "11.916666666666666"
        nb.cell_node("average").locator(".ws-live-sandbox-mark").wait_for()
        lp.screenshot("live-demo-sandbox-run", nb.cell_node("average"))
        agent = KernelAgent(lab, "live_notebook.ipynb")
        try:
            assert agent.run("print(average)").strip() == "17.875"  # the user's kernel: untouched
        finally:
            agent.close()
    finally:
        context.close()
