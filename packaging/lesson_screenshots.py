"""Render the README pictures (headless).

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/lesson_screenshots.py [--chapter 3]
    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/lesson_screenshots.py --window
    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/lesson_screenshots.py --lessons 9,10,11,12

The first writes assets/screenshot_lesson_en.png and assets/screenshot_lesson_zh.png: the
window at 1600×1000 with the lesson panel open, the chapter's preset applied and its "try
this" done (the ✓ shown); it needs the built translations (`make translations`). --window
writes assets/screenshot.png (the window, dark theme, a typed sentence, causal) and
assets/figure_heads.png (the heads panel exported in the slides theme at 1920 px, as
File ▸ Export and `main.py export` write it). --lessons writes assets/screenshot_lesson_NN.png
for each chapter: the window at its default 1600×1000 with the chapter's preset applied, as a
student first sees it (a model chapter once its model is open; a training chapter once the lab
has trained its preset's steps, the floating lab painted where it stands beside the lesson).
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
    ap.add_argument("--window", action="store_true", help="the window screenshot and the heads figure")
    ap.add_argument("--lessons", help="1-based chapter numbers, e.g. 9,10,11,12: one window picture each")
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
    args.out.mkdir(parents=True, exist_ok=True)
    if args.window:
        return window_pictures(w, settle, args.out)
    if args.lessons:
        return lesson_pictures(w, settle, args.out, [int(n) for n in args.lessons.split(",")])
    lesson = w.show_lessons(args.chapter - 1)
    lesson.apply_preset()
    ch = lesson.chapter()
    settle(lambda: w.frame is not None and w.frame.config == ch.config)
    lesson.do_it()
    settle(lambda: w.frame is not None and w.frame.config == ch.try_config and lesson.try_holds is True)
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


def lesson_pictures(w, settle, out: Path, chapters: list[int]) -> int:
    from PySide6.QtGui import QPainter

    from explorer.panels.base import PANELS

    for number in chapters:
        lesson = w.show_lessons(number - 1)
        settle(lambda lesson=lesson: lesson.apply_button.isEnabled())
        lesson.apply_button.click()
        ch = lesson.chapter()
        if any(PANELS[n].requires_model for n in ch.panels) and "training" not in ch.panels:
            settle(lambda ch=ch: w.model_controller.loaded is not None
                   and all(n in w.panel_names() for n in ch.panels), timeout=120)
            w.model_controller.wait_ready(60)
        picture = w.grab
        if "training" in ch.panels:
            lab = w.training_lab
            settle(timeout=2)
            lab.start()  # (the preset's steps, then "done")
            settle(lambda lab=lab: lab.viewed_run() is not None and lab.viewed_run().steps_done > 0
                   and not lab.running, timeout=300)
            dock = w.dock("training")

            def picture(dock=dock):  # the lab floats beside the lesson: painted where it stands
                img = w.grab()
                painter = QPainter(img)
                painter.drawPixmap(dock.mapToGlobal(dock.rect().topLeft()) - w.mapToGlobal(w.rect().topLeft()),
                                   dock.grab())
                painter.end()
                return img
        # (the backend card measured: on a loaded machine that takes a while; never "computing…")
        settle(lambda: w.frame is not None and w.frame.backends is not None, timeout=90)
        path = out / f"screenshot_lesson_{number:02d}.png"
        if not picture().save(str(path)):
            print(f"could not write {path}", file=sys.stderr)
            return 1
        print(path)
    w.shutdown()
    return 0


def window_pictures(w, settle, out: Path) -> int:
    from engine import AttentionConfig
    from explorer.export import ExportOptions, render_panel

    tokens = tuple("the cat sat on the mat because it was tired".split())
    w.render_sync(AttentionConfig(tokens=tokens, causal=True))
    w.selection.set(head=1, query=7, key=4)
    settle(lambda: w.frame is not None and w.frame.backends is not None)  # the backend card
    for path, write in ((out / "screenshot.png", lambda p: w.grab().save(str(p))),
                        (out / "figure_heads.png", lambda p: p.write_bytes(
                            render_panel(w, "heads", "png", ExportOptions(width=1920, theme="slides"))))):
        if write(path) is False:
            print(f"could not write {path}", file=sys.stderr)
            return 1
        print(path)
    # a panel's help with today's numbers (the window's state above)
    dlg = w.show_help("heads")
    settle()
    path = out / "screenshot_help.png"
    if not dlg.grab().save(str(path)):
        print(f"could not write {path}", file=sys.stderr)
        return 1
    print(path)
    dlg.close()
    # the positions panel under RoPE, as a slide figure
    w.render_sync(AttentionConfig(tokens=tokens, positional="rope"))
    settle()
    path = out / "figure_positions.png"
    path.write_bytes(render_panel(w, "positions", "png", ExportOptions(width=1600, theme="slides")))
    print(path)
    w.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
