"""Python's cyclic garbage collector runs in the UI thread only, while background threads run.

Why: CPython collects in whichever thread happens to allocate when a generation fills up.
A collection in a worker thread that frees a dropped panel, figure or window (their
Python wrappers sit in reference cycles) runs Qt destructors outside the UI thread, and Qt
crashes on that, natively and at random (a segfault seen in the suite in the compute and
training threads). pyqtgraph documents the same cure (its util.garbage_collector): turn
automatic collection off and collect from a timer of the UI thread.

Here it is off only while a background thread that allocates may run: `hold()` when one
starts, `release()` when it has ended (both called in the UI thread; they count). The
window's compute worker and its model controller's start with the window and wait for jobs:
while a window is open, collection is the UI thread's timer's. While
held, a timer of the UI thread collects every COLLECT_EVERY_MS, a generation at a time as
CPython would (`collect_due`): any event loop runs it, and the command-line exports' frame
loops call processEvents. With nothing held, collection is automatic again.

A full collection walks every object (0.2 s for 2 M objects here, 0.6 s seen in the test
process): CPython does one only when the long-lived objects grew by a quarter since the
last, and so does `collect_due`, with the heap's block count (`sys.getallocatedblocks`, O(1))
standing for the long-lived count CPython keeps privately. Without that rule the timer ran
a full collection every ~50 s and stalled the window for it.
Users: WorkerThread (explorer/work/base.py), the training relay, the sweep and forming
exports' pools.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["COLLECT_EVERY_MS", "collect_due", "held", "hold", "release"]

#: how often the UI thread collects while automatic collection is off
COLLECT_EVERY_MS = 500

_holds = 0
_timer = None
_thresholds = gc.get_threshold()
#: heap blocks after the last full collection (None: not yet seen in this hold)
_blocks_after_full: int | None = None
#: a full collection once the heap grew by this fraction since the last (CPython's rule)
FULL_GROWTH = 0.25


def collect_due() -> None:
    """Collect the oldest generation whose allocation count passed CPython's threshold (UI
    thread; it collects the younger ones with it); the oldest only if the heap grew enough."""
    global _blocks_after_full
    counts = gc.get_count()
    for gen in (2, 1, 0):
        if counts[gen] > _thresholds[gen] and (gen < 2 or _heap_grew()):
            gc.collect(gen)
            if gen == 2:
                _blocks_after_full = sys.getallocatedblocks()
            return


def _heap_grew() -> bool:
    """Whether the heap grew by FULL_GROWTH since the last full collection (the first call of
    a hold only takes its measure)."""
    global _blocks_after_full
    blocks = sys.getallocatedblocks()
    if _blocks_after_full is None:
        _blocks_after_full = blocks
    return blocks - _blocks_after_full > FULL_GROWTH * _blocks_after_full


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
    global _holds, _blocks_after_full
    if _holds <= 0:
        return
    _holds -= 1
    if _holds == 0:
        _blocks_after_full = None
        if _timer is not None:
            try:
                _timer.stop()
            except RuntimeError:  # at exit: the application deleted it already
                pass
        gc.enable()


@contextmanager
def held() -> Iterator[None]:
    """`hold()` for the block (background work started and ended within it)."""
    hold()
    try:
        yield
    finally:
        release()
