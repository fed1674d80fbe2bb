"""Hand values from any thread to the thread that made the mailbox, in order.

Why not a `Signal(object)` emitted in the worker thread and connected to a Python method
or lambda, the usual PySide way: each such connection goes through a PySide "dynamic
slot" (a receiver object PySide makes for a Python callable), and using those from two
threads at once crashes natively now and then (a segfault in about one full test run in
four: the training relay's emit, the compute worker's outcomes; PySide bug PYSIDE-3124
asks for `@Slot` receivers). Here only an argument-less signal crosses threads, to a
`@Slot` of a QObject (a real Qt slot: Qt queues the call, no Python object travels with
it); the values wait in a deque guarded by a lock and are taken in the receiving thread.

One wake is queued at a time: a post while a wake is pending only appends. The receiver
takes everything present when its wake runs; what arrives while it delivers (or while a
handler runs a nested event loop) queues a new wake, so nothing waits for a later post.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot

__all__ = ["Mailbox"]


class Mailbox(QObject):
    """`post(value)` from any thread; `deliver(value)` runs in the mailbox's thread (the
    one that made it), once per value, in the order posted."""

    _wake = Signal()

    def __init__(self, deliver: Callable[[Any], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._deliver = deliver
        self._items: deque = deque()
        self._lock = threading.Lock()
        self._waking = False
        self._wake.connect(self._drain, Qt.ConnectionType.QueuedConnection)

    def post(self, value: Any) -> None:  # any thread
        with self._lock:
            self._items.append(value)
            if self._waking:
                return
            self._waking = True
        try:
            self._wake.emit()
        except RuntimeError:  # the mailbox's C++ side is gone (interpreter exit): nobody reads
            pass

    @Slot()
    def _drain(self) -> None:  # the mailbox's thread
        with self._lock:
            self._waking = False
            values = list(self._items)
            self._items.clear()
        for value in values:
            self._deliver(value)
