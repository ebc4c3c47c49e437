"""Draws the ws-jupyter kernel logos (PNG 32x32 and 64x64, plus an SVG) with the standard library.

The logo is a dark rounded tile holding an orange shell prompt (">_") under a small folder tab:
a workspace where commands run. Run it once after changing the design; it rewrites both copies:
``kernelspec/ws-jupyter/`` (installable with ``jupyter kernelspec install``) and the package copy
``ws_jupyter/install/kernelspec/`` used by ``ws-jupyter install-kernel``.

    python kernelspec/make_logos.py
"""

from __future__ import annotations

import itertools
import math
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

__all__ = ["draw", "main", "png_bytes", "svg_text"]

BG = (38, 50, 56)  # slate
ORANGE = (243, 119, 38)  # Jupyter orange
WHITE = (236, 239, 241)

Shape = Callable[[float, float], bool]


def _rounded_rect(x0: float, y0: float, x1: float, y1: float, r: float) -> Shape:
    def inside(x: float, y: float) -> bool:
        if not (x0 <= x <= x1 and y0 <= y <= y1):
            return False
        cx = min(max(x, x0 + r), x1 - r)
        cy = min(max(y, y0 + r), y1 - r)
        return (x - cx) ** 2 + (y - cy) ** 2 <= r * r

    return inside


def _thick_polyline(points: list[tuple[float, float]], width: float) -> Shape:
    half = width / 2

    def dist_to_segment(x: float, y: float, a: tuple[float, float], b: tuple[float, float]) -> float:
        ax, ay = a
        bx, by = b
        dx, dy = bx - ax, by - ay
        t = max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)))
        return math.hypot(x - (ax + t * dx), y - (ay + t * dy))

    def inside(x: float, y: float) -> bool:
        return any(dist_to_segment(x, y, a, b) <= half for a, b in itertools.pairwise(points))

    return inside


# Geometry in a 64-unit design space.
_LAYERS: list[tuple[Shape, tuple[int, int, int]]] = [
    (_rounded_rect(2, 2, 62, 62, 12), BG),
    # folder tab across the top
    (_rounded_rect(10, 9, 28, 16, 2), ORANGE),
    (_rounded_rect(10, 13, 54, 19, 2), ORANGE),
    # prompt chevron and cursor
    (_thick_polyline([(15, 27), (29, 38), (15, 49)], 6.5), ORANGE),
    (_rounded_rect(33, 45, 51, 51, 2), WHITE),
]


def draw(size: int, samples: int = 4) -> list[list[tuple[int, int, int, int]]]:
    """RGBA pixels of the logo at ``size``x``size``, antialiased by supersampling."""
    scale = 64 / size
    rows = []
    for py in range(size):
        row = []
        for px in range(size):
            acc = [0.0, 0.0, 0.0, 0.0]
            for sy in range(samples):
                for sx in range(samples):
                    x = (px + (sx + 0.5) / samples) * scale
                    y = (py + (sy + 0.5) / samples) * scale
                    colour = None
                    for shape, rgb in _LAYERS:
                        if shape(x, y):
                            colour = rgb
                    if colour is not None:
                        acc[0] += colour[0]
                        acc[1] += colour[1]
                        acc[2] += colour[2]
                        acc[3] += 1
            n = samples * samples
            alpha = acc[3] / n
            rgb = [round(c / acc[3]) for c in acc[:3]] if acc[3] else [0, 0, 0]
            row.append((rgb[0], rgb[1], rgb[2], round(alpha * 255)))
        rows.append(row)
    return rows


def png_bytes(pixels: list[list[tuple[int, int, int, int]]]) -> bytes:
    """Encodes RGBA rows as a PNG file (no filtering; zlib level 9)."""
    height, width = len(pixels), len(pixels[0])
    raw = b"".join(b"\x00" + b"".join(struct.pack("4B", *p) for p in row) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def svg_text() -> str:
    """The same design as SVG (JupyterLab's launcher prefers ``logo-svg.svg``)."""

    def hexrgb(rgb: tuple[int, int, int]) -> str:
        return "#{:02x}{:02x}{:02x}".format(*rgb)

    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">\n'
        f'  <rect x="2" y="2" width="60" height="60" rx="12" fill="{hexrgb(BG)}"/>\n'
        f'  <rect x="10" y="9" width="18" height="7" rx="2" fill="{hexrgb(ORANGE)}"/>\n'
        f'  <rect x="10" y="13" width="44" height="6" rx="2" fill="{hexrgb(ORANGE)}"/>\n'
        f'  <polyline points="15,27 29,38 15,49" fill="none" stroke="{hexrgb(ORANGE)}" '
        'stroke-width="6.5" stroke-linecap="round" stroke-linejoin="round"/>\n'
        f'  <rect x="33" y="45" width="18" height="6" rx="2" fill="{hexrgb(WHITE)}"/>\n'
        "</svg>\n"
    )


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    targets = [root / "kernelspec" / "ws-jupyter", root / "ws_jupyter" / "install" / "kernelspec"]
    files = {
        "logo-32x32.png": png_bytes(draw(32)),
        "logo-64x64.png": png_bytes(draw(64)),
        "logo-svg.svg": svg_text().encode(),
    }
    for target in targets:
        target.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (target / name).write_bytes(data)
            print(f"wrote {target / name} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
