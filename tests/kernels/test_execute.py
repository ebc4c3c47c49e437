"""Running code in a sandbox kernel: the kernel contract (``KernelConformance``) on a sandbox
without isolation, then what only a sandbox's own kernels show (its working directory, its
config's limits, process deaths seen from the host, idle culling).

One real ipykernel per module serves the contract tests (state is shared on purpose: the tests
use their own variable names).
"""

from __future__ import annotations

from typing import Any

import pytest

from ws_jupyter import LocalSandbox
from ws_jupyter.errors import InvalidArgumentError, KernelError, KernelNotFoundError

from ..helpers import wait_for
from .conformance import KernelConformance

pytestmark = pytest.mark.slow


class TestLocalKernels(KernelConformance):
    isolation = "none"

    @pytest.fixture
    def kernels(self, sandbox: LocalSandbox) -> Any:
        return sandbox.kernels


def test_the_working_directory_is_the_workspace(sandbox: LocalSandbox) -> None:
    (__import__("pathlib").Path(sandbox.working_directory) / "data.csv").write_text("a,b\n1,2\n")
    r = sandbox.kernels.execute("import os; print(os.getcwd()); open('data.csv').read()")
    assert r.stdout.strip() == sandbox.working_directory
    assert r.text == repr("a,b\n1,2\n")


def test_code_that_ignores_the_interrupt_gets_a_restart(make_sandbox) -> None:
    sb = make_sandbox(kernels={"interrupt_timeout": 1.0})
    sb.kernels.execute("lost = 1")
    code = "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass"
    r = sb.kernels.execute(code, timeout=1)
    assert r.status == "timeout" and r.restarted
    assert any("restarted (its state is lost)" in n for n in r.notes)
    after = sb.kernels.execute("lost")
    assert after.ename == "NameError"


def test_huge_output_is_bounded(make_sandbox) -> None:
    sb = make_sandbox(kernels={"limits": {"max_stream_chars": 100_000, "max_displays": 5}})
    r = sb.kernels.execute(
        "import sys\nfor i in range(200):\n    sys.stdout.write(str(i % 10) * 50_000)\n"
        "from IPython.display import display\nfor i in range(50):\n    display(i)\nprint('END')"
    )
    assert r.ok
    assert len(r.stdout) < 110_000 and r.stdout_dropped > 9_000_000
    assert r.stdout.startswith("0" * 1000) and r.stdout.endswith("END\n")
    assert len(r.display) == 5 and r.displays_dropped == 45


def test_a_message_bigger_than_the_limit_is_dropped(make_sandbox) -> None:
    # ZeroMQ drops the oversized message (and the IOPub connection with it): the execution still
    # ends, says output was lost, and the kernel answers the next call with its output intact.
    sb = make_sandbox(kernels={"max_message_bytes": 1 << 20})
    r = sb.kernels.execute(
        "from IPython.display import display\ndisplay({'text/plain': 'x' * 5_000_000}, raw=True)"
    )
    assert r.ok and r.display == ()
    assert any("output was lost" in n for n in r.notes)
    after = sb.kernels.execute("print('back'); 8")
    assert after.ok and after.stdout == "back\n" and after.text == "8"


def test_a_kernel_that_died_while_idle_is_restarted_with_a_note(make_sandbox) -> None:
    import psutil

    sb = make_sandbox()
    sb.kernels.execute("x = 1")
    k = sb.kernels["default"]
    psutil.Process(k.pid).kill()
    assert wait_for(lambda: k.status == "dead", 10)
    r = sb.kernels.execute("1 + 1")
    assert r.ok and r.text == "2"
    assert any("had died" in n and "earlier variables" in n for n in r.notes)


def test_idle_kernels_are_culled(make_sandbox) -> None:
    sb = make_sandbox(kernels={"idle_timeout": 0.5})
    sb.kernels.execute("kept = 1")
    k = sb.kernels["default"]
    assert wait_for(lambda: k.status == "stopped", 20)
    assert k.pid is None
    r = sb.kernels.execute("1")
    assert r.ok and any("without activity" in n for n in r.notes)


def test_names_specs_and_limits_are_checked(make_sandbox) -> None:
    sb = make_sandbox(kernels={"max_kernels": 1})
    with pytest.raises(InvalidArgumentError):
        sb.kernels.start("no spaces allowed")
    with pytest.raises(KernelError, match="No kernelspec named 'no-such-spec'"):
        sb.kernels.start("x", spec="no-such-spec")
    with pytest.raises(KernelNotFoundError, match="No kernel named 'ghost'"):
        sb.kernels.restart("ghost")
    sb.kernels.start("one")
    with pytest.raises(KernelError, match="Too many kernels"):
        sb.kernels.start("two")
    assert [i.name for i in sb.kernels.list()] == ["one"]


def test_kernels_config_is_checked_at_construction() -> None:
    from ws_jupyter import KernelsConfig, WorkspaceConfigError

    with pytest.raises(WorkspaceConfigError, match="Unknown kernels option"):
        LocalSandbox(kernels={"idle_timout": 5})
    with pytest.raises(WorkspaceConfigError, match="idle_timeout must be a positive number"):
        KernelsConfig(idle_timeout=-1)
    with pytest.raises(WorkspaceConfigError, match="max_kernels must be a positive integer"):
        KernelsConfig(max_kernels=0)
    assert KernelsConfig(idle_timeout=None).idle_timeout is None
    assert KernelsConfig.coerce({"limits": {"max_displays": 3}}).limits.max_displays == 3


def test_a_kernel_can_start_in_a_subfolder_of_the_workspace(sandbox: LocalSandbox) -> None:
    import os

    sub = os.path.join(sandbox.working_directory, "analysis")
    os.makedirs(sub, exist_ok=True)
    k = sandbox.kernels.start("in-sub", cwd="analysis")
    try:
        assert k.execute("import os; os.getcwd()").text == repr(sub)
    finally:
        sandbox.kernels.shutdown("in-sub")
