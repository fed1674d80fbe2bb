"""The status bar's progress for a slow frame: how far the worker is, and a Cancel.

A long sequence's frame takes seconds (every head's rows pass once through the exact
softmax); the window stays usable meanwhile, shows how many heads are done and lets
the user stop. A cancelled frame leaves the panels on the last complete one, and the
banner says so: the controls already show the new values.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QToolButton, QWidget

from .guard import contained

#: A frame that reports progress is shown as under way after this long from its first report
#: (which the worker posts after ComputeWorker.PROGRESS_EVERY_S of work; a quick one never reports).
SHOW_AFTER_S = 0.10


class FrameProgress(QWidget):
    """A progress bar and a Cancel button, hidden unless a slow frame is under way."""

    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.bar = QProgressBar()
        self.bar.setFixedWidth(160)
        self.bar.setTextVisible(True)
        self.cancel_button = QToolButton()
        self.cancel_button.setObjectName("cancel_frame")
        self.cancel_button.clicked.connect(self.cancel_requested)
        lay.addWidget(self.bar)
        lay.addWidget(self.cancel_button)
        self._rid: int | None = None
        self._started = 0.0
        self.hide()
        self.retranslate_ui()

    def report(self, rid: int, done: int, total: int) -> None:
        """Request `rid` has done `done` of `total` steps (shown once it has run SHOW_AFTER_S)."""
        now = time.monotonic()
        if rid != self._rid:
            self._rid, self._started = rid, now
        self.bar.setMaximum(max(1, total))
        self.bar.setValue(min(done, total))
        if not self.isVisible() and now - self._started >= SHOW_AFTER_S:
            self.show()

    def finish(self) -> None:
        """The frame arrived, failed or was cancelled."""
        self._rid = None
        self.hide()

    def retranslate_ui(self) -> None:
        self.cancel_button.setText(self.tr("Cancel"))
        self.cancel_button.setToolTip(self.tr("Stop computing this configuration; the panels keep the last one"))
        self.bar.setFormat(self.tr("computing… %p%"))

    @contained  # an exception here must not reach Qt (explorer/guard.py)
    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)
