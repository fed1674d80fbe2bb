"""Shared test setup: headless Qt, and settings that never touch the user's.

Kept minimal and Qt-free at import, so the engine's tests run without Qt.
"""

import atexit
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

os.environ["QT_QPA_PLATFORM"] = "offscreen"
# the explorer reads QSettings from this INI file when set (geometry, recent files)
# (one folder per test process, removed when the process ends)
if "ATTN_EXPLORER_SETTINGS" not in os.environ:
    _SETTINGS_DIR = tempfile.mkdtemp(prefix="attn-explorer-tests-")
    atexit.register(shutil.rmtree, _SETTINGS_DIR, ignore_errors=True)
    os.environ["ATTN_EXPLORER_SETTINGS"] = os.path.join(_SETTINGS_DIR, "settings.ini")
# English whatever the machine's locale: the tests that need Chinese switch to it themselves
os.environ.setdefault("ATTN_EXPLORER_LANGUAGE", "en")
# `make test` runs two workers on two cores: each gets its share of the cores for torch's
# OpenMP threads (and so do the subprocesses its tests start), not a thread per core that
# spins waiting for a core the other worker holds (the engine modules: user time 111 → 73 s,
# wall 75 → 66 s with OMP_NUM_THREADS=1, -n 2, 2 cores, 2026-12-07). Set before torch loads.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _share = max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, str(_share))

TRANSLATIONS = Path(__file__).resolve().parent.parent / "assets" / "translations"


def lrelease() -> str | None:
    """pyside6-lrelease of this environment (next to the interpreter), else on PATH."""
    tool = Path(sys.executable).with_name("pyside6-lrelease")
    return str(tool) if tool.exists() else shutil.which("pyside6-lrelease")


#: The test modules that take longest, longest first (seconds of each module in one clean-clone
#: `make test` run with `--durations=0`, 2026-12-07 00:18, on a quiet 2-core machine: figures 136,
#: layout 115, export 106, engine_long 75, compare 67, window_model 67, hardening_memory 62,
#: profile 61, ...; a module measured under 40 s is not listed).
#: `make test` hands them out first (`--no-loadscope-reorder`): pytest-xdist's loadfile
#: otherwise queues the modules by their number of tests, so these long modules with few
#: tests came last and one worker ran the last of them alone. A module not listed keeps its
#: place after these; a stale entry costs nothing but the order.
LONGEST_FIRST = (
    "test_figures.py", "test_layout.py", "test_export.py", "test_engine_long.py", "test_compare.py",
    "test_window_model.py", "test_hardening_memory.py", "test_profile.py", "test_training_panel.py",
    "test_long_window.py", "test_training_save.py", "test_newcomer.py", "test_lesson_layout.py",
    "test_animation.py", "test_monkey.py", "test_cli_gui.py", "test_fuzz.py",
)


def pytest_collection_modifyitems(config, items):
    """Run the modules of :data:`LONGEST_FIRST` first, each whole and in its own order."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: order kept


@pytest.fixture(scope="session", autouse=True)
def translations_built():
    """Build assets/translations/*.qm from the .ts (as `make translations` does) when missing
    or older than the .ts, so `pytest` alone tests the Chinese interface too."""
    exe = lrelease()
    for ts in sorted(TRANSLATIONS.glob("*.ts")):
        qm = ts.with_suffix(".qm")
        if exe is not None and (not qm.exists() or qm.stat().st_mtime < ts.stat().st_mtime):
            # written aside and renamed: test workers started together may build it at once
            tmp = qm.with_name(f"{qm.name}.{os.getpid()}.tmp")
            subprocess.run([exe, "-silent", str(ts), "-qm", str(tmp)], check=True)
            os.replace(tmp, qm)
    return TRANSLATIONS


@contextlib.contextmanager
def shown_window(qapp, **kwargs):
    """A full explorer window, 1600×1000, shown offscreen from empty settings; closed after.

    Empty settings: a dock layout saved by an earlier test module must not move panels.
    """
    import explorer
    from explorer.window import make_settings

    make_settings().clear()
    w = explorer.create_window(**kwargs)
    w.resize(1600, 1000)
    w.show()
    qapp.processEvents()
    try:
        yield w
    finally:
        from PySide6.QtCore import QEvent

        w.close()
        w.shutdown()
        w.deleteLater()
        # now, not at the next event loop: processEvents leaves deferred deletes alone, and a
        # module of render_sync tests then piled up windows (each test slower than the last)
        qapp.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        qapp.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # its workers, retired as it went
        qapp.processEvents()


@contextlib.contextmanager
def drawn_window(qapp):
    """shown_window with its first frame drawn."""
    with shown_window(qapp) as w:
        w.render_sync()
        qapp.processEvents()
        yield w


@contextlib.contextmanager
def model_window(qapp, path, text: str, timeout_s: float = 120.0):
    """shown_window with the model at `path` loaded on `text` (its trace ready); closed after.

    The model panels' modules hold one of these per module (a module-scoped fixture).
    """
    with shown_window(qapp) as w:
        c = w.model_controller
        c.text = text
        c.load(str(path))
        assert c.wait_ready(timeout_s) is None, c.last_error
        qapp.processEvents()
        yield w


@pytest.fixture(scope="module")
def window(qapp):
    """One shown window per test module (modules that need more define their own)."""
    with shown_window(qapp) as w:
        yield w


def plain(text: str) -> str:
    """What a rich-text label reads as: its tags dropped, non-breaking spaces as spaces."""
    import re

    return re.sub(r"<[^>]+>", "", text).replace("\u00a0", " ").replace("&nbsp;", " ")


def panel_text(panel) -> str:
    """Every text a panel draws (titles, readouts, notes), one per line, as a reader reads it."""
    from explorer.figures.layout import text_boxes

    return "\n".join(plain(t) for _view, boxes in text_boxes(panel) for t, _b, _a in boxes)


def profile_finished(state, qapp, timeout_s: float = 240.0) -> None:
    """Process events until the length profile `state` stops running (a failure after
    `timeout_s`); then once more, so what its end posted is drawn."""
    import time

    end = time.monotonic() + timeout_s
    while state.running and time.monotonic() < end:
        qapp.processEvents()
        time.sleep(0.01)  # (the measuring process reports by the event loop: no busy spin)
    assert not state.running, "the profile did not finish"
    qapp.processEvents()
