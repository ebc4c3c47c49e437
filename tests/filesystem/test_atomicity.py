"""A writer killed with SIGKILL in the middle of a write leaves the old file or the new one, never a mix."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

SIZE = 4 << 20  # large enough that a kill often lands inside a write

WRITER = """
import sys
from ws_jupyter import LocalFilesystem
fs = LocalFilesystem(sys.argv[1])
versions = [b"A" * {size}, b"B" * {size}, b"C" * ({size} // 2)]
i = 0
print("ready", flush=True)
while True:
    fs.write_file("target.bin", versions[i % 3])
    i += 1
"""


def test_sigkill_mid_write_never_tears(workdir: Path):
    (workdir / "target.bin").write_bytes(b"A" * SIZE)
    valid = {b"A" * SIZE, b"B" * SIZE, b"C" * (SIZE // 2)}
    rng = random.Random(1234)
    kills = 0
    for _ in range(40):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER.format(size=SIZE), str(workdir)],
            stdout=subprocess.PIPE,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.001, 0.05))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += proc.returncode == -signal.SIGKILL
        data = (workdir / "target.bin").read_bytes()
        assert data in valid, f"torn file: {len(data)} bytes starting {data[:8]!r}"
    assert kills == 40
    # only the hidden temporary files of interrupted writes may remain beside the target
    leftovers = [n for n in os.listdir(workdir) if n != "target.bin"]
    assert all(n.startswith(".ws-") and n.endswith(".tmp") for n in leftovers)
