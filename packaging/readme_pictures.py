"""Render the README's window screenshot and exported heads figure (headless).

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/readme_pictures.py

writes assets/screenshot.png (the window at 1600×1000, dark theme, a typed
sentence, causal) and assets/figure_heads.png (the heads panel exported in the
slides theme at 1920 px, as File ▸ Export and `main.py export` write it).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["ATTN_EXPLORER_SETTINGS"] = str(Path(tempfile.mkdtemp()) / "settings.ini")
    os.environ["ATTN_EXPLORER_LANGUAGE"] = "en"
    import explorer
    from engine import AttentionConfig
    from explorer.export import ExportOptions, render_panel

    app = explorer.ensure_app()
    w = explorer.create_window()
    w.resize(1600, 1000)
    w.show()
    tokens = tuple("the cat sat on the mat because it was tired".split())
    w.render_sync(AttentionConfig(tokens=tokens, causal=True, n_heads=4, d_model=64))
    w.selection.set(head=1, query=7, key=4)
    end = time.monotonic() + 3
    while time.monotonic() < end:  # the backend comparison arrives from the worker
        app.processEvents()
        time.sleep(0.05)
    w.grab().save(str(ROOT / "assets" / "screenshot.png"))
    (ROOT / "assets" / "figure_heads.png").write_bytes(
        render_panel(w, "heads", "png", ExportOptions(width=1920, theme="slides")))
    w.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
