"""Render the README screenshots of a lesson, in English and in Chinese (headless).

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/lesson_screenshots.py [--chapter 3]

writes assets/screenshot_lesson_en.png and assets/screenshot_lesson_zh.png: the window at
1600×1000 with the lesson panel open, the chapter's preset applied and its "try this"
done (the ✓ shown). Needs the built translations (`make translations`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chapter", type=int, default=3, help="1-based chapter number (default 3: √d_k)")
    ap.add_argument("--out", type=Path, default=ROOT / "assets")
    args = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # fresh settings: no saved geometry or language changes the picture
    os.environ["ATTN_EXPLORER_SETTINGS"] = str(Path(tempfile.mkdtemp()) / "settings.ini")
    os.environ["ATTN_EXPLORER_LANGUAGE"] = "en"

    import explorer

    app = explorer.ensure_app()
    w = explorer.create_window()
    w.resize(1600, 1000)
    w.show()

    def settle(pred=lambda: True, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            app.processEvents()
            if pred():
                break
            time.sleep(0.02)
        for _ in range(20):  # let layouts and repaints finish
            app.processEvents()
            time.sleep(0.01)

    settle(lambda: w.frame is not None)
    lesson = w.show_lessons(args.chapter - 1)
    lesson.apply_preset()
    ch = lesson.chapter()
    settle(lambda: w.frame is not None and w.frame.config == ch.config)
    lesson.do_it()
    settle(lambda: w.frame is not None and w.frame.config == ch.try_config and lesson.try_holds is True)
    args.out.mkdir(parents=True, exist_ok=True)
    for lang, suffix in (("en", "en"), ("zh_CN", "zh")):
        if not w.set_language(lang):
            print(f"no {lang} translation: run `make translations`", file=sys.stderr)
            return 1
        settle()
        path = args.out / f"screenshot_lesson_{suffix}.png"
        if not w.grab().save(str(path)):
            print(f"could not write {path}", file=sys.stderr)
            return 1
        print(path)
    w.set_language("en")
    w.close()
    w.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
