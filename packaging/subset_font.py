"""Cut the bundled Chinese font down to the characters the interface and the lessons use.

    python packaging/subset_font.py [--source-dir DIR] [--extra-text FILE]...

Many Linux machines have no CJK font, so Chinese would show as boxes; the
explorer registers assets/fonts/NotoSansCJKsc-{Regular,Bold}-subset.otf at
start (explorer.i18n.install_fonts) as a fallback family. The full Noto Sans
CJK SC is ~16 MB per weight; the subset holds only:

- every character of the Chinese translations (assets/translations/*_zh_CN.ts),
- every character of the Chinese lesson texts and help pages (assets/{lessons,help}/zh/*.md),
- the Chinese words in the code (explorer/**/*.py: the help's verdicts),
- the Chinese sample sentences (assets/samples/zh.txt),
- printable ASCII, CJK and full-width punctuation, and common typographic marks,

so it is a few hundred KB. Run this again after adding Chinese text (the test
suite checks that the font covers every character of the translations and
lessons, and says so when it does not).

The source is Noto Sans CJK (SIL Open Font License 1.1; the licence travels
with the subset as assets/fonts/OFL.txt). Get it with your package manager,
e.g. on Debian/Ubuntu without installing it:

    apt-get download fonts-noto-cjk && dpkg-deb -x fonts-noto-cjk_*.deb noto
    python packaging/subset_font.py --source-dir noto/usr/share/fonts/opentype/noto

This is a build step: it needs fontTools (`pip install fonttools`), which the
application itself never imports.
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "assets" / "fonts"
FAMILY = "Noto Sans CJK SC"
WEIGHTS = {"Regular": "NotoSansCJK-Regular.ttc", "Bold": "NotoSansCJK-Bold.ttc"}
SEARCH = ["/usr/share/fonts/opentype/noto", "/usr/share/fonts/noto-cjk", "/usr/share/fonts/google-noto-cjk",
          "/usr/local/share/fonts", str(Path.home() / ".local/share/fonts")]

# always in: ASCII, CJK symbols and punctuation, full-width forms, typographic marks used around Chinese
BASE_RANGES = [(0x20, 0x7E), (0x3000, 0x303F), (0xFF01, 0xFF5E), (0x2010, 0x2027), (0x2030, 0x203A)]
BASE_CHARS = "·×÷→←↑↓…—–“”‘’《》「」『』【】〈〉"


def used_text() -> str:
    """All the Chinese text the app can show from its own files."""
    parts = []
    for ts in sorted((ROOT / "assets" / "translations").glob("*_zh_CN.ts")):
        root = ET.parse(ts).getroot()
        parts += [t.text or "" for t in root.iter("translation")]
    for folder in ("lessons", "help"):
        parts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "assets" / folder / "zh").glob("*.md"))]
    # Chinese words the code fills in (the help's verdicts, explorer/help.py)
    parts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "explorer").rglob("*.py"))]
    sample = ROOT / "assets" / "samples" / "zh.txt"
    if sample.is_file():
        parts.append(sample.read_text(encoding="utf-8"))
    return "".join(parts)


def needed_codepoints(extra: str = "") -> set[int]:
    cps = {cp for lo, hi in BASE_RANGES for cp in range(lo, hi + 1)}
    cps |= {ord(c) for c in BASE_CHARS}
    cps |= {ord(c) for c in used_text() + extra if c.isprintable() and ord(c) > 0x7E}
    return cps


def find_source(name: str, source_dir: str | None) -> Path:
    dirs = [source_dir] if source_dir else SEARCH
    for d in dirs:
        for p in Path(d).rglob(name) if Path(d).is_dir() else []:
            return p
    sys.exit(f"{name} not found in {', '.join(dirs)}: pass --source-dir (see this script's docstring)")


def subset(source: Path, out: Path, codepoints: set[int]) -> int:
    from fontTools import subset as ft_subset
    from fontTools.ttLib import TTCollection

    fonts = TTCollection(str(source)).fonts
    index = next((i for i, f in enumerate(fonts) if f["name"].getDebugName(1) == FAMILY), None)
    if index is None:
        sys.exit(f"{source} has no face named {FAMILY!r}")
    options = ft_subset.Options()
    options.font_number = index
    options.layout_features = ["kern", "liga", "vert", "vrt2", "locl", "halt", "palt"]
    options.name_IDs = ["*"]  # keep the copyright, licence and family names
    options.name_languages = ["*"]
    options.hinting = False
    options.notdef_outline = True
    font = ft_subset.load_font(str(source), options)
    sub = ft_subset.Subsetter(options)
    sub.populate(unicodes=sorted(codepoints & set(font.getBestCmap())))
    sub.subset(font)
    out.parent.mkdir(parents=True, exist_ok=True)
    ft_subset.save_font(font, str(out), options)
    return len(font.getBestCmap())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source-dir", help="folder holding NotoSansCJK-Regular.ttc and NotoSansCJK-Bold.ttc")
    ap.add_argument("--extra-text", action="append", default=[], help="a UTF-8 file whose characters to add")
    args = ap.parse_args(argv)
    extra = "".join(Path(p).read_text(encoding="utf-8") for p in args.extra_text)
    cps = needed_codepoints(extra)
    han = sum(1 for cp in cps if re.match(r"[\u4e00-\u9fff]", chr(cp)))
    for weight, name in WEIGHTS.items():
        out = OUT_DIR / f"NotoSansCJKsc-{weight}-subset.otf"
        n = subset(find_source(name, args.source_dir), out, cps)
        print(f"{out.relative_to(ROOT)}: {n} characters ({han} Han), {out.stat().st_size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
