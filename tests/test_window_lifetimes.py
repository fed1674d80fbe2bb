"""Object lifetimes of the window (issue 44): sequences that once crashed natively run in a
subprocess, which fails on a crash (a signal's exit status), a hang (the timeout) or any
Python traceback on stderr."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("pytestqt")

SEQUENCE = r"""
import os, sys, faulthandler
faulthandler.enable()
from PySide6.QtWidgets import QApplication
app = QApplication([])
import explorer

def settle():
    for _ in range(3):
        app.processEvents()

w = explorer.create_window()
w.resize(1600, 1000)
w.show()
w.render_sync()
settle()
# the tryout's sequence: Lessons ▸ Training lab, close the lab, View ▸ Language ▸ English
w.features["training"].action.trigger()
settle()
w.dock("training").close()
settle()
w.features["help"].act_languages["en"].trigger()
settle()
# and around it: Chinese and back with the lab closed, the lab again, the lessons, a new theme
w.features["help"].act_languages["zh_CN"].trigger()
settle()
w.features["training"].action.trigger()
settle()
w.features["lessons"].act_lessons.trigger()
w.dock("training").close()
w.dock("lesson").close()
settle()
w.features["help"].act_languages["en"].trigger()
w.menus_feature.act_dark.trigger()
settle()
w.close()
w.deleteLater()
settle()
print("survived")
"""


@pytest.mark.slow
def test_closing_the_lab_then_switching_the_language_does_not_crash(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "ATTN_EXPLORER_SETTINGS": str(tmp_path / "s.ini"),
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", SEQUENCE], capture_output=True, text=True, timeout=300,
                         env=env, cwd=tmp_path)
    assert out.returncode == 0, f"exit status {out.returncode}:\n{out.stderr[-3000:]}"
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    assert out.stdout.strip().startswith("survived")


def test_a_closed_window_is_freed_with_its_panels(qapp):
    """A window's workers are no Qt children of it (deleting a running thread aborts), and
    their C++ side held the window's slots out of the garbage collector's sight: a closed
    window lived on with its panels, plots and menus (~170,000 objects and 330 widgets a
    window). Closed and deleted, a window is now freed, and so are its panels."""
    import gc
    import weakref

    from conftest import drawn_window
    from PySide6.QtCore import QEvent

    def widgets_left() -> int:
        qapp.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # (what the app's event loop does next)
        gc.collect()
        return len(qapp.allWidgets())

    with drawn_window(qapp):  # (the process's first window is kept for good: explorer/__init__.py)
        pass
    before = widgets_left()
    with drawn_window(qapp) as w:
        window, heads = weakref.ref(w), weakref.ref(w.panel("heads"))
        assert len(qapp.allWidgets()) > before + 1000
    del w
    after = widgets_left()
    assert window() is None and heads() is None
    assert after <= before + 10, (before, after)  # (a leaked window left 333, its plots' menus)
