"""The play / pause / step / scrub controls both step-through panels share.

    |◀◀  |◀  ▶/||  ▶|  ▶▶|  [──────●────]  step [ 8 ] / 16   [ 10 steps/s ▾]

`position_changed(i)` is emitted for every position shown (a step 0 … count−1);
a QTimer advances it while playing, at the chosen speed, and stops at the end
(play at the end starts again from the first step). The spin box counts steps from 1, as the
panels' titles do ("step 16 of 16" is the last of 16, shown as 16 / 16); it holds the
position, so an export's fresh panel (which copies spin boxes and combo boxes from the
window's panel) shows the same step; 0 ("end") means the last step.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QToolButton,
    QWidget,
)

from ..guard import contained

#: steps per second offered; the default is SPEEDS[DEFAULT_SPEED]
SPEEDS = (1, 2, 5, 10, 20, 30, 60)
DEFAULT_SPEED = 2
#: the spin box's range before a count is known: any copied position fits
OPEN_RANGE = 1_000_000


class StepPlayer(QWidget):
    """Buttons, a slider and a step spin box over positions 0 … count−1."""

    position_changed = Signal(int)
    playing_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("step_player")
        self._count = 0
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._tick)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(3)

        def button(name: str, text: str, slot) -> QToolButton:
            b = QToolButton()
            b.setObjectName(name)
            b.setText(text)
            b.setAutoRaise(True)
            b.clicked.connect(slot)
            row.addWidget(b)
            return b

        self.first_button = button("step_first", "|◀◀", lambda: self.set_position(0))
        self.back_button = button("step_back", "|◀", lambda: self.step(-1))
        self.play_button = button("step_play", "▶", self.toggle)
        self.forward_button = button("step_forward", "▶|", lambda: self.step(1))
        self.last_button = button("step_last", "▶▶|", lambda: self.set_position(self._count - 1))
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("step_slider")
        self.slider.setMinimumWidth(80)
        self.slider.valueChanged.connect(self.set_position)
        row.addWidget(self.slider, 1)
        self.step_label = QLabel()
        row.addWidget(self.step_label)
        self.spin = QSpinBox()  # step position + 1: the step's number, counted from 1
        self.spin.setObjectName("step_spin")
        self.spin.setRange(0, OPEN_RANGE)
        self.spin.setValue(0)
        self.spin.valueChanged.connect(lambda n: self.set_position(n - 1))
        row.addWidget(self.spin)
        self.count_label = QLabel()
        row.addWidget(self.count_label)
        self.speed = QComboBox()
        self.speed.setObjectName("step_speed")
        for s in SPEEDS:
            self.speed.addItem("", s)
        self.speed.setCurrentIndex(DEFAULT_SPEED)
        self.speed.currentIndexChanged.connect(self._on_speed)
        row.addWidget(self.speed)
        self.retranslate_ui()
        self._enable()

    # ---- state ---------------------------------------------------------------------------
    @property
    def count(self) -> int:
        return self._count

    @property
    def position(self) -> int:
        """The step shown (0 … count−1); −1 before a count is known."""
        return self.spin.value() - 1 if self._count else -1

    @property
    def playing(self) -> bool:
        return self.timer.isActive()

    def steps_per_second(self) -> int:
        return int(self.speed.currentData())

    def set_count(self, count: int, keep: bool) -> int:
        """`count` steps now. keep: stay at the current position (clamped), else go to the
        last step (a new computation: its whole result). A position never set ("end", −1)
        goes to the last step too. Returns the position, not emitted."""
        old = self.spin.value() - 1
        self._count = max(0, int(count))
        last = self._count - 1
        pos = min(old, last) if keep and old >= 0 else last
        for w in (self.slider, self.spin):
            w.blockSignals(True)
        self.slider.setRange(0, max(last, 0))
        self.spin.setRange(1 if self._count else 0, self._count if self._count else OPEN_RANGE)
        self.slider.setValue(max(pos, 0))
        self.spin.setValue(pos + 1 if self._count else 0)
        for w in (self.slider, self.spin):
            w.blockSignals(False)
        self.spin.setSpecialValueText("" if self._count else QCoreApplication.translate("StepPlayer", "end"))
        self.count_label.setText(QCoreApplication.translate("StepPlayer", "/ {n}").format(n=self._count))
        if not self._count:
            self.pause()
        self._enable()
        return pos

    def set_position(self, pos: int) -> None:
        """Show step `pos` (clamped): the slider and the spin box follow, then position_changed."""
        if not self._count:
            return
        pos = max(0, min(int(pos), self._count - 1))
        for w, value in ((self.slider, pos), (self.spin, pos + 1)):
            w.blockSignals(True)
            w.setValue(value)
            w.blockSignals(False)
        self._enable()
        self.position_changed.emit(pos)

    def step(self, delta: int) -> None:
        self.pause()
        self.set_position(self.position + delta)

    # ---- playing ---------------------------------------------------------------------------
    def play(self) -> None:
        if self._count < 2:
            return
        if self.position >= self._count - 1:
            self.set_position(0)
        self.timer.start(max(1, round(1000 / self.steps_per_second())))
        self._sync_play()

    def pause(self) -> None:
        if self.timer.isActive():
            self.timer.stop()
            self._sync_play()

    def toggle(self) -> None:
        self.pause() if self.playing else self.play()

    def _tick(self) -> None:
        nxt = self.position + 1
        if nxt >= self._count:
            self.pause()
            return
        self.set_position(nxt)
        if nxt >= self._count - 1:
            self.pause()

    def _on_speed(self, _index: int) -> None:
        if self.playing:
            self.timer.setInterval(max(1, round(1000 / self.steps_per_second())))

    def _sync_play(self) -> None:
        self.play_button.setText("||" if self.playing else "▶")
        self.play_button.setToolTip(QCoreApplication.translate("StepPlayer", "Pause") if self.playing else QCoreApplication.translate("StepPlayer", "Play from this step"))
        self.playing_changed.emit(self.playing)

    def _enable(self) -> None:
        has = self._count > 0
        pos = self.position
        for w in (self.slider, self.spin, self.speed):
            w.setEnabled(has)
        self.first_button.setEnabled(has and pos > 0)
        self.back_button.setEnabled(has and pos > 0)
        self.forward_button.setEnabled(has and pos < self._count - 1)
        self.last_button.setEnabled(has and pos < self._count - 1)
        self.play_button.setEnabled(self._count > 1)

    # ---- language ----------------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        self.first_button.setToolTip(QCoreApplication.translate("StepPlayer", "First step"))
        self.back_button.setToolTip(QCoreApplication.translate("StepPlayer", "One step back"))
        self.forward_button.setToolTip(QCoreApplication.translate("StepPlayer", "One step forward"))
        self.last_button.setToolTip(QCoreApplication.translate("StepPlayer", "Last step: the finished result"))
        self.slider.setToolTip(QCoreApplication.translate("StepPlayer", "Scrub through the steps"))
        self.step_label.setText(QCoreApplication.translate("StepPlayer", "step"))
        self.spin.setSpecialValueText("" if self._count else QCoreApplication.translate("StepPlayer", "end"))
        self.spin.setToolTip(QCoreApplication.translate("StepPlayer", "The step shown"))
        self.speed.setToolTip(QCoreApplication.translate("StepPlayer", "Playing speed"))
        for i, s in enumerate(SPEEDS):
            self.speed.setItemText(i, QCoreApplication.translate("StepPlayer", "{n} steps/s").format(n=s))
        self.count_label.setText(QCoreApplication.translate("StepPlayer", "/ {n}").format(n=self._count))
        self._sync_play()

    @contained  # an exception here must not reach Qt (explorer/guard.py)
    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)
