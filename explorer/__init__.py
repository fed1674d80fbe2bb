"""Attention Explorer's Qt window (PySide6 + pyqtgraph) over the Qt-free engine.

`create_window(session=None)` builds the full window (not yet shown); see
docs/contract.md for the contract (`config`, `set_config`, `frame_rendered`,
`selection`, `panel(name)`). The session helpers in `explorer.session` are
Qt-free and can be imported without a display.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .qt_app import ensure_app

if TYPE_CHECKING:
    from .window import MainWindow

PAINT_THREADS_ENV = "ATTN_EXPLORER_PAINT_THREADS"


def serial_raster_fills(environ: dict | None = None) -> bool:
    """Keep Qt's raster fills on the UI thread (sets QT_NO_GUI_THREADPOOL); True when set.

    Qt 6 hands every raster fill of 96 or more scanlines (a scaled heatmap, a
    dashed crosshair, a grid line) to a GUI thread pool in 64-line slices and
    waits for them: ~200 hand-offs per frame here, each a thread wake-up that
    costs more than the few microseconds of filling it saves. Measured with
    `python main.py bench` on 2 cores, alternating 4 runs each: drag seq_len
    median 16.6-17.8 -> 14.2-15.7 ms, S=256/H=16 toggle 60-67 -> 53-62 ms.
    Qt reads the variable when it first paints, so this must run before that.
    ATTN_EXPLORER_PAINT_THREADS=1 leaves Qt's default (threaded fills) alone.
    """
    env = os.environ if environ is None else environ
    if env.get(PAINT_THREADS_ENV, "").strip() not in ("", "0"):
        return False
    env.setdefault("QT_NO_GUI_THREADPOOL", "1")
    return True


serial_raster_fills()


def create_window(session: str | os.PathLike | Mapping | None = None) -> MainWindow:
    """The full explorer window, not yet shown.

    `session` is a session file path, an already-parsed session dict or an
    explorer.session.Session; a malformed or newer one raises SessionError.
    """
    ensure_app()
    from .window import MainWindow

    window = MainWindow(session)
    _freeze_startup_objects()
    return window


_frozen = False


def _freeze_startup_objects() -> None:
    """Move everything allocated so far (torch, Qt, pyqtgraph, the first window) out of the
    garbage collector's reach, once per process.

    Those objects live as long as the app; without this every full collection walks all
    of them again, ~10 ms every few frames while a slider is dragged (gc.freeze is meant
    for exactly this: long-lived objects made at start-up).
    """
    global _frozen
    if not _frozen:
        _frozen = True
        gc.collect()
        gc.freeze()


__all__ = ["create_window", "ensure_app"]
