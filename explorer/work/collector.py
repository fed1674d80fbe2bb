"""Python's cyclic garbage collector runs in the UI thread only, while background threads run.

Why: CPython collects in whichever thread happens to allocate when a generation fills up.
A collection in a worker thread that frees a dropped panel, figure or window (their
Python wrappers sit in reference cycles) runs Qt destructors outside the UI thread, and Qt
crashes on that, natively and at random (a segfault seen in the suite in the compute and
training threads). pyqtgraph documents the same cure (its util.garbage_collector): turn
automatic collection off and collect from a timer of the UI thread.

Here it is off only while a background thread that allocates may run: `hold()` when one
starts, `release()` when it has ended (both called in the UI thread; they count). While
held, a timer of the UI thread collects every COLLECT_EVERY_MS, a generation at a time as
CPython would (`collect_due`): any event loop runs it, and the command-line exports' frame
loops call processEvents. With nothing held, collection is automatic again.
Users: WorkerThread (explorer/work/base.py), the training relay, the sweep and forming
exports' pools.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["COLLECT_EVERY_MS", "collect_due", "held", "hold", "release"]

#: how often the UI thread collects while automatic collection is off
COLLECT_EVERY_MS = 500

_holds = 0
_timer = None
_thresholds = gc.get_threshold()


def collect_due() -> None:
    """Collect the generations whose allocation counts passed CPython's thresholds (UI thread)."""
    counts = gc.get_count()
    for gen in range(3):
        if counts[gen] <= _thresholds[gen]:
            break
        gc.collect(gen)


def hold() -> None:
    """A background thread starts: automatic collection off, the UI thread's timer on."""
    global _holds, _timer
    _holds += 1
    if _holds > 1:
        return
    gc.disable()
    if _timer is None:
        from PySide6.QtCore import QTimer

        _timer = QTimer()
        _timer.setInterval(COLLECT_EVERY_MS)
        _timer.timeout.connect(collect_due)
    _timer.start()


def release() -> None:
    """A background thread has ended (call once per `hold`): the last one turns automatic
    collection back on."""
    global _holds
    if _holds <= 0:
        return
    _holds -= 1
    if _holds == 0:
        if _timer is not None:
            _timer.stop()
        gc.enable()


@contextmanager
def held() -> Iterator[None]:
    """`hold()` for the block (background work started and ended within it)."""
    hold()
    try:
        yield
    finally:
        release()
