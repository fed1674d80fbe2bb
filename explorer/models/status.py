"""The status bar's model loading indicator."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QToolButton, QWidget

from ..guard import contained

__all__ = ["ModelStatus"]


class ModelStatus(QWidget):
    """The status bar's loading indicator: a busy (or download) bar and a Cancel button."""

    def __init__(self, controller, parent: QWidget | None = None) -> None:
        """`controller`: the ModelController whose loads it shows."""
        super().__init__(parent)
        self.controller = controller
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(240)
        self.bar.setMaximumHeight(16)
        self.bar.setTextVisible(True)
        self.cancel = QToolButton()
        self.cancel.setAutoRaise(True)
        self.cancel.clicked.connect(controller.cancel)
        lay.addWidget(self.bar)
        lay.addWidget(self.cancel)
        controller.busy_changed.connect(self._on_busy)
        controller.progress_changed.connect(self._on_progress)
        self.retranslate_ui()
        self.hide()

    def retranslate_ui(self) -> None:
        self.cancel.setText(self.tr("Cancel"))
        self.cancel.setToolTip(self.tr("Stop loading the model"))

    @contained  # an exception here must not reach Qt (explorer/guard.py)
    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def _on_busy(self, text: str) -> None:
        # only a load: inspecting takes a blink, and the model panels say so themselves
        loading = bool(text) and self.controller.loading
        self.setVisible(loading)
        if loading:
            self.bar.setRange(0, 0)  # busy until a download reports sizes
            self.bar.setFormat(text)
            self.bar.setToolTip(text)

    def _on_progress(self, done: float, total: float) -> None:
        if total > 0:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(1000 * min(1.0, done / total)))
            self.bar.setFormat(self.tr("Downloading… %p%"))
