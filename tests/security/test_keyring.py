"""Attack: the notebook kernel's session keyring is readable from inside the sandbox.

Keys in the session keyring (credentials some tools cache there) were inherited by every
sandboxed command and readable with ``keyctl read``. The host side here is a child Python
that joins a fresh session keyring, adds a key with a secret payload and starts a sandbox;
the sandboxed command then tries to find and read that key, and to list keys in /proc/keys.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from .conftest import SYSCALLS, requires_bwrap

pytestmark = [
    requires_bwrap,
    pytest.mark.bwrap,
    pytest.mark.skipif("keyctl" not in SYSCALLS, reason="no syscall numbers for this architecture"),
]

HOST = """
import ctypes, json, sys
from ws_jupyter.sandbox import LocalSandbox
libc = ctypes.CDLL(None, use_errno=True)
KEYCTL, ADD_KEY = {keyctl}, {add_key}
libc.syscall.restype = ctypes.c_long
# KEYCTL_JOIN_SESSION_KEYRING(NULL): a new anonymous session keyring for this process only.
assert libc.syscall(KEYCTL, 1, None) > 0, ctypes.get_errno()
secret = b"hunter2-session-secret"
key = libc.syscall(ADD_KEY, b"user", b"ws-test-key", secret, len(secret), ctypes.c_long(-3))
assert key > 0, ctypes.get_errno()
buf = ctypes.create_string_buffer(100)
assert libc.syscall(KEYCTL, 11, ctypes.c_long(key), buf, 100) == len(secret)  # readable here
probe = '''
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
buf = ctypes.create_string_buffer(100)
n = libc.syscall({keyctl}, 11, ctypes.c_long(int(sys.argv[1])), buf, 100)
print(buf.raw[:n].decode() if n > 0 else "denied %d" % ctypes.get_errno())
try:
    print(open("/proc/keys").read())
except OSError as exc:
    print("proc-keys", exc.errno)
'''
sb = LocalSandbox(working_directory=sys.argv[1], isolation="bwrap")
try:
    open(sys.argv[1] + "/probe.py", "w").write(probe)
    r = sb.execute_command(f"{{sys.executable}} probe.py {{key}}")
    print(json.dumps([r.stdout, r.stderr]))
finally:
    sb.destroy()
"""


def test_session_keyring_is_out_of_reach(tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    code = textwrap.dedent(HOST).format(**SYSCALLS)
    proc = subprocess.run([sys.executable, "-c", code, str(wd)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    import json

    stdout, stderr = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "hunter2" not in stdout + stderr, "the sandbox read the kernel's session key"
    assert stdout.startswith("denied 1\n"), (stdout, stderr)  # EPERM from the filter
    assert "ws-test-key" not in stdout
