"""``workspace_run_notebook`` on real notebooks and real sandbox kernels: outputs written back,
the first error, time limits, the notebook's folder as working directory, bounds."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace

from ..kernels.conftest import PNG_CODE
from ..notebooks.wild import executed_error
from .conftest import box

pytestmark = pytest.mark.slow
ALLOW = {T.SANDBOX.RUN_NOTEBOOK: {"require_approval": False}, T.SANDBOX.EXECUTE_CODE: {"require_approval": False}}


@pytest.fixture(scope="module")
def nb_ws(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = Path(os.path.realpath(tmp_path_factory.mktemp("run-notebook")))
    ws = Workspace(
        filesystem=LocalFilesystem(root), sandbox=LocalSandbox(working_directory=str(root), timeout=60), tools=ALLOW
    )
    ws.init()
    yield ws, root
    ws.destroy()


def write_nb(root: Path, rel: str, *sources: str) -> Path:
    cells = [new_markdown_cell("# A notebook")] + [new_code_cell(s) for s in sources]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}})
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def run(ws: Workspace, **args: Any) -> str:
    return str(box(ws)[T.SANDBOX.RUN_NOTEBOOK].run(args))


def test_runs_top_to_bottom_and_writes_outputs_back(nb_ws: Any) -> None:
    ws, root = nb_ws
    (root / "reports").mkdir(exist_ok=True)
    (root / "reports" / "numbers.txt").write_text("3\n4\n5\n")
    path = write_nb(
        root,
        "reports/sum.ipynb",
        "values = [int(x) for x in open('numbers.txt')]  # the notebook's folder is the cwd",
        "print('total', sum(values))",
        PNG_CODE,
        "sum(values) * 2",
    )
    out = run(ws, path="reports/sum.ipynb")
    assert out.startswith("Ran reports/sum.ipynb in a fresh kernel: all 4 code cells ok (")
    assert "outputs saved" in out
    assert "[3] ok" in out and "total 12" in out and "[+1 image(s)]" in out and "24" in out
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[1].outputs[0]["text"] == "total 12\n"
    assert "image/png" in code[2].outputs[0]["data"]
    assert code[3].outputs[0]["data"]["text/plain"] == "24"
    assert [c.execution_count for c in code] == [1, 2, 3, 4]
    assert not [k for k in ws.sandbox.kernels.names() if k.startswith("notebook-")]  # its kernel is gone


def test_stops_at_the_first_error_and_reports_it(nb_ws: Any) -> None:
    ws, root = nb_ws
    path = write_nb(root, "broken.ipynb", "x = 1", "def f():\n    return undefined_name\nf()", "print('never')")
    out = run(ws, path="broken.ipynb")
    assert "1 ok, stopped at cell 2" in out  # cell indexes as workspace_read_file shows them
    assert "[2] error" in out and "[3] not run" in out
    assert "First error, in cell 2: NameError: name 'undefined_name' is not defined" in out
    assert "return undefined_name" in out
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[2].outputs[0]["ename"] == "NameError" and nb.cells[3].outputs == []


def test_a_time_limit_interrupts_the_run(nb_ws: Any) -> None:
    ws, root = nb_ws
    write_nb(root, "slow.ipynb", "import time\ntime.sleep(120)", "print('after')")
    out = run(ws, path="slow.ipynb", timeout=2)
    assert "[timed out after 2 s: the kernel was interrupted; 1 code cell(s) not run]" in out
    assert "KeyboardInterrupt" in out and "[2] not run" in out


def test_runs_in_a_named_kernel_when_asked(nb_ws: Any) -> None:
    ws, root = nb_ws
    tools = box(ws)
    tools[T.SANDBOX.EXECUTE_CODE].run({"code": "prepared = 'by the agent'"})
    write_nb(root, "uses_state.ipynb", "prepared")
    out = run(ws, path="uses_state.ipynb", kernel="default")
    assert "in kernel 'default': all 1 code cells ok" in out and "by the agent" in out


def test_huge_output_is_bounded_in_the_saved_notebook(nb_ws: Any) -> None:
    ws, root = nb_ws
    path = write_nb(root, "loud.ipynb", "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * 50_000 + '\\n')")
    out = run(ws, path="loud.ipynb")
    assert "all 1 code cells ok" in out
    assert path.stat().st_size < 6 * 1024 * 1024
    nb = nbformat.read(path, as_version=4)
    (stream,) = nb.cells[1].outputs  # one output per stream, its middle counted in place
    assert stream["text"].startswith("x" * 50_000 + "\n") and stream["text"].endswith("x" * 50_000 + "\n")
    assert "lines (" in stream["text"] and "characters) not kept ...]" in stream["text"]


def test_a_notebook_changed_while_it_ran_is_not_overwritten(nb_ws: Any) -> None:
    ws, root = nb_ws
    path = write_nb(root, "moving.ipynb", "import time, os\nos.utime('moving.ipynb', (1, 1))\n1")
    before = path.read_text()
    out = run(ws, path="moving.ipynb")
    assert "outputs NOT saved: the file changed while it ran" in out
    assert path.read_text() == before


def test_bad_inputs_are_clear_errors(nb_ws: Any) -> None:
    ws, root = nb_ws
    (root / "fake.ipynb").write_text("not json at all")
    assert run(ws, path="fake.ipynb").startswith("Error: fake.ipynb is not a notebook: invalid JSON")
    assert run(ws, path="missing.ipynb").startswith("Error:")
    r_nb = write_nb(root, "r.ipynb", "print(1)")
    nb = nbformat.read(r_nb, as_version=4)
    nb.metadata["kernelspec"] = {"name": "ir", "language": "R", "display_name": "R"}
    nb.metadata["language_info"] = {"name": "R"}
    nbformat.write(nb, r_nb)
    assert "is a R notebook" in run(ws, path="r.ipynb")
    assert run(ws, path="../outside.ipynb").startswith("Error:")


def test_listed_only_with_kernels_and_a_writable_filesystem(workdir: Path) -> None:
    writable = Workspace(filesystem=LocalFilesystem(workdir), sandbox=LocalSandbox(working_directory=str(workdir)))
    read_only = Workspace(
        filesystem=LocalFilesystem(workdir, read_only=True), sandbox=LocalSandbox(working_directory=str(workdir))
    )
    no_files = Workspace(sandbox=LocalSandbox(working_directory=str(workdir)))
    no_kernels = Workspace(
        filesystem=LocalFilesystem(workdir),
        sandbox=LocalSandbox(working_directory=str(workdir), kernels={"kernel_spec": "no-such-spec"}),
    )
    try:
        assert T.SANDBOX.RUN_NOTEBOOK in box(writable)
        assert box(writable)[T.SANDBOX.RUN_NOTEBOOK].require_approval  # no isolation: like execute_command
        for ws in (read_only, no_files, no_kernels):
            assert T.SANDBOX.RUN_NOTEBOOK not in box(ws)
    finally:
        for ws in (writable, read_only, no_files, no_kernels):
            ws.destroy()


def test_cells_after_the_error_are_not_run_and_lose_the_old_outputs(nb_ws: Any) -> None:
    # an executed notebook: every cell has the previous author's outputs, counts and timestamps
    ws, root = nb_ws
    path = root / "executed_error.ipynb"
    path.write_text(executed_error(), "utf-8")
    out = run(ws, path="executed_error.ipynb")
    assert "1 ok, stopped at cell 2, 3 not run (their old outputs cleared)" in out
    assert "[1] ok" in out and "[2] error" in out
    assert all(f"[{i}] not run" in out for i in (3, 4, 5))
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[1].outputs[0]["text"] == "first\n" and nb.cells[1].execution_count == 1
    assert nb.cells[2].outputs[0]["ename"] == "ValueError"
    for cell in nb.cells[3:]:  # not run: nothing of the earlier run is left to read as this run's
        assert cell.outputs == [] and cell.execution_count is None and "execution" not in cell.metadata
    assert "stale output" not in path.read_text()
    assert not any("execution" in c.metadata for c in nb.cells)  # no timestamps unless asked


def test_timestamps_are_written_only_when_asked(nb_ws: Any) -> None:
    ws, root = nb_ws
    path = write_nb(root, "timed.ipynb", "x = 1", "print(x)")
    run(ws, path="timed.ipynb")
    assert not any("execution" in c.metadata for c in nbformat.read(path, as_version=4).cells)
    run(ws, path="timed.ipynb", record_timing=True)
    code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    assert all("shell.execute_reply" in c.metadata["execution"] for c in code)


def test_a_run_keeps_the_read_and_another_writer_is_still_refused(nb_ws: Any) -> None:
    ws, root = nb_ws
    path = write_nb(root, "kept.ipynb", "a = 1", "print(a)")
    tools = box(ws)
    tools[T.FILESYSTEM.READ_FILE].run({"path": "kept.ipynb"})
    assert "all 2 code cells ok" in run(ws, path="kept.ipynb")
    edit = tools[T.FILESYSTEM.NOTEBOOK_EDIT]
    # no new read needed after the run's own write
    assert str(edit.run({"path": "kept.ipynb", "cell_index": 2, "new_source": "print(a + 1)"})).startswith("Replaced cell 2")
    # another writer inserts a cell at the top: the next edit by index is refused
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, new_markdown_cell("# inserted elsewhere"))
    nbformat.write(nb, path)
    out = str(edit.run({"path": "kept.ipynb", "cell_index": 2, "new_source": "wrong = 1"}))
    assert "was modified since it was last read" in out
