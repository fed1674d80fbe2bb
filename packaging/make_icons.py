"""Regenerate the application icons from assets/icons/attention-explorer.svg.

    python packaging/make_icons.py

Writes assets/icons/attention-explorer-<N>.png (N = 16..512, needs ``rsvg-convert``
from librsvg), attention-explorer.ico (Windows, PNG-compressed entries) and
attention-explorer.icns (macOS, PNG entries). The .ico/.icns writers are pure Python so
the outputs are reproducible and committed; the build machines never run this.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "assets" / "icons"
SVG = ICONS / "attention-explorer.svg"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS element types holding PNG data, by pixel size.
ICNS_TYPES = {16: b"icp4", 32: b"icp5", 64: b"icp6", 128: b"ic07", 256: b"ic08", 512: b"ic09",
              1024: b"ic10"}


def render(size: int, out: Path) -> None:
    exe = shutil.which("rsvg-convert")
    if exe is None:
        sys.exit("make_icons: rsvg-convert not found (apt-get install librsvg2-bin)")
    subprocess.run([exe, "-w", str(size), "-h", str(size), str(SVG), "-o", str(out)], check=True)


def write_ico(pngs: dict[int, bytes], out: Path) -> None:
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = 6 + 16 * len(sizes)
    entries, blobs = b"", b""
    for s in sizes:
        data = pngs[s]
        dim = 0 if s >= 256 else s
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset)
        blobs += data
        offset += len(data)
    out.write_bytes(header + entries + blobs)


def write_icns(pngs: dict[int, bytes], out: Path) -> None:
    body = b""
    for s in sorted(pngs):
        body += ICNS_TYPES[s] + struct.pack(">I", 8 + len(pngs[s])) + pngs[s]
    out.write_bytes(b"icns" + struct.pack(">I", 8 + len(body)) + body)


def main() -> int:
    for s in PNG_SIZES:
        render(s, ICONS / f"attention-explorer-{s}.png")
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "1024.png"
        render(1024, big)
        pngs = {s: (ICONS / f"attention-explorer-{s}.png").read_bytes() for s in PNG_SIZES}
        pngs[1024] = big.read_bytes()
    write_ico({s: pngs[s] for s in ICO_SIZES}, ICONS / "attention-explorer.ico")
    write_icns({s: pngs[s] for s in ICNS_TYPES}, ICONS / "attention-explorer.icns")
    print(f"make_icons: wrote PNGs, .ico and .icns to {ICONS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
