"""Generated hostile paths and the layout they attack, shared by the filesystem and tool suites.

``build_layout(root)`` makes ``root/ws`` (the workspace) beside ``root/outside`` (must never be
read or written) and plants symlinks in the workspace that lead outside: to a file, to a
directory, dangling (relative and absolute), and a directory link to the common parent.
``hostile_paths(root)`` returns >= 500 ``HostilePath``s: ``..`` chains, absolute paths, paths
through each symlink (existing targets, new files below a symlinked ancestor), unicode tricks and
NUL bytes, and very long names — each in several spellings (``./`` prefix, doubled and trailing
slashes).

``snapshot(dir)`` records names, types, sizes, modes, mtimes and content hashes, so a test can
prove the outside tree is byte-for-byte unchanged.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

#: Marker planted in every outside file; no result may ever contain it.
SECRET = "TOP-SECRET-" + secrets.token_hex(8)
#: Name of an entry that exists only outside; no listing may ever show it.
OUTSIDE_ONLY = "outside-only-" + secrets.token_hex(4)


@dataclass(frozen=True)
class HostilePath:
    path: str
    kind: str  # "escape": must be refused by every method; "invalid": malformed; "other": may be legal


def build_layout(root: Path) -> tuple[Path, Path]:
    """Create ``root/ws`` and ``root/outside`` with planted symlinks; return (ws, outside)."""
    ws = root / "ws"
    out = root / "outside"
    ws.mkdir(parents=True, exist_ok=True)
    (out / "dir" / OUTSIDE_ONLY).mkdir(parents=True, exist_ok=True)
    (out / "secret.txt").write_text(SECRET)
    (out / "dir" / "inner.txt").write_text(SECRET + " inner")
    (out / "dir" / OUTSIDE_ONLY / "deep.txt").write_text(SECRET + " deep")
    reset_workspace(ws, out)
    return ws, out


LAYOUT_NAMES = {"safe.txt", "sub", "link_file", "link_dir", "dangling", "dangling_abs"}


def reset_workspace(ws: Path, out: Path) -> None:
    """(Re)create the workspace side of the layout (tests may have moved, deleted or added parts)."""
    for name in os.listdir(ws):
        if name not in LAYOUT_NAMES:
            _remove(os.open(ws, os.O_RDONLY | os.O_DIRECTORY), name)
    for name in ("link_file", "link_dir", "dangling", "dangling_abs", "up"):
        p = ws / name
        if (os.path.lexists(p) and not p.is_dir()) or p.is_symlink():
            p.unlink()
    (ws / "safe.txt").write_text("safe")
    (ws / "sub").mkdir(exist_ok=True)
    _link(os.path.relpath(out / "secret.txt", ws), ws / "link_file")
    _link(os.path.relpath(out / "dir", ws), ws / "link_dir")
    _link(os.path.relpath(out / "nothing-here.txt", ws), ws / "dangling")
    _link(str(out / "dangling-target"), ws / "dangling_abs")
    _link("../..", ws / "sub" / "up")  # sub/up -> the common parent of ws and outside


def _remove(parent_fd: int, name: str) -> None:
    """Remove an entry below ``parent_fd`` (trees of any depth; links never followed); closes parent_fd."""
    stack = [(parent_fd, name)]
    opened = [parent_fd]
    try:
        while stack:
            pfd, entry = stack[-1]
            st = os.stat(entry, dir_fd=pfd, follow_symlinks=False)
            if not os.path.stat.S_ISDIR(st.st_mode):
                os.unlink(entry, dir_fd=pfd)
                stack.pop()
                continue
            dfd = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=pfd)
            opened.append(dfd)
            children = os.listdir(dfd)
            if not children:
                os.rmdir(entry, dir_fd=pfd)
                stack.pop()
                continue
            stack.extend((dfd, c) for c in children)
    finally:
        for fd in opened:
            os.close(fd)


def secret_copies(ws: Path) -> list[str]:
    """Regular files in the workspace (any depth) that contain outside content."""
    found = []
    stack = [(os.open(ws, os.O_RDONLY | os.O_DIRECTORY), "")]
    while stack:
        dfd, rel = stack.pop()
        try:
            for name in os.listdir(dfd):
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                if os.path.stat.S_ISDIR(st.st_mode):
                    stack.append(
                        (
                            os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd),
                            rel + name + "/",
                        )
                    )
                elif os.path.stat.S_ISREG(st.st_mode):
                    fd = os.open(name, os.O_RDONLY, dir_fd=dfd)
                    try:
                        if SECRET.encode() in os.read(fd, 1 << 20):
                            found.append(rel + name)
                    finally:
                        os.close(fd)
        finally:
            os.close(dfd)
    return found


def _link(target: str, at: Path) -> None:
    if os.path.lexists(at):
        os.unlink(at)
    os.symlink(target, at)


def hostile_paths(root: Path) -> list[HostilePath]:
    ws = root / "ws"
    out = root / "outside"
    rel_out = os.path.relpath(out, ws)  # "../outside"
    targets = ["secret.txt", "dir", "dir/inner.txt", "dir/new.txt", "new.txt", "newdir/x.txt", ""]
    escape: list[str] = []
    for depth in range(1, 7):
        up = "../" * depth
        for t in targets:
            escape.append(f"{up}{t}")
            escape.append(f"{up}outside/{t}")
    escape += (
        [f"sub/../../outside/{t}" for t in targets]
        + [f"sub/../{rel_out}/{t}" for t in targets]
        + [f"./{rel_out}/{t}" for t in targets]
    )
    escape += [str(out / t) for t in targets] + [str(ws / ".." / "outside" / t) for t in targets]
    escape += [
        "/",
        "/etc/passwd",
        "/etc",
        "/tmp",
        "//etc/passwd",
        "/./etc/../etc/passwd",
        "~",
        "~/",
        "~/.bashrc",
        "~root/.profile",
        "..",
        "../",
        "./..",
        "sub/../..",
        "a/../../b",
        "a/b/../../../c",
    ]
    # through symlinks planted in the workspace (targets outside)
    escape += [
        "link_file",
        "link_dir",
        "link_dir/inner.txt",
        "link_dir/new.txt",
        "link_dir/newdir/x.txt",
        f"link_dir/{OUTSIDE_ONLY}",
        f"link_dir/{OUTSIDE_ONLY}/deep.txt",
        "dangling",
        "dangling_abs",
        "sub/up",
        "sub/up/outside/secret.txt",
        "sub/up/outside/new.txt",
        "sub/up/outside/dir",
        "sub/up/ws/../outside/secret.txt",
        "sub/up/outside/newdir/deeper/x.txt",
    ]
    invalid = ["a\x00b", "\x00", "../\x00secret", "sub/\x00/../..", "\ud800", "link\udfff\ud800"]
    other = [
        # look-alikes of ".." that are ordinary names inside the workspace
        "\u2025/x",
        "\uff0e\uff0e/x",
        "..\u202e/x",
        "...",
        "....//x",
        ".. /x",
        " ../x",
        "..\\..\\outside\\secret.txt",
        "..%2f..%2foutside%2fsecret.txt",
        "%2e%2e/outside/secret.txt",
        # very long names (errors, never escapes)
        "a" * 300,
        "../" + "b" * 5000,
        ("d" * 200 + "/") * 30 + "f",
        "x/" * 700 + "y",
        "../" * 500,
    ]
    cases: list[HostilePath] = []
    for group, kind in ((escape, "escape"), (invalid, "invalid"), (other, "other")):
        for p in group:
            for variant in _spellings(p):
                cases.append(HostilePath(variant, kind))
    # de-duplicate, keep order
    seen: set[tuple[str, str]] = set()
    unique = []
    for c in cases:
        if (c.path, c.kind) not in seen:
            seen.add((c.path, c.kind))
            unique.append(c)
    return unique


def _spellings(p: str) -> list[str]:
    out = [p]
    if p and not p.startswith(("/", "~")):
        out.append("./" + p)
    if "/" in p:
        out.append(p.replace("/", "//"))
    if p and not p.endswith("/"):
        out.append(p + "/")
    return out


def snapshot(directory: Path) -> dict[str, tuple]:
    """Everything observable about a tree without following symlinks."""
    state: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            digest = None
            if os.path.isfile(p) and not os.path.islink(p):
                digest = hashlib.sha256(Path(p).read_bytes()).hexdigest()
            state[os.path.relpath(p, directory)] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return state


def leaks(value: object) -> bool:
    """True when a result reveals outside content or names (strip the echoed input path first)."""
    text = repr(value)
    return SECRET in text or OUTSIDE_ONLY in text
