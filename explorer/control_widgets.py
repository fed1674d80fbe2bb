"""The controls dock's building blocks: spin boxes that say why a typed value is refused, a
slider with a spin box showing its value (its drags throttled), and setters that leave a
widget alone when it already shows the value (a spin box re-formats and repaints its text,
and a combo box its list, on every set). `explorer.controls.ConfigControls` is made of them.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QEvent, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QStandardItemModel, QTextDocument, QValidator
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QWidget,
)
from superqt.utils import qthrottled

from .sizing import hold_size

#: Slider drags send at most one change per this many ms (the trailing value always goes).
THROTTLE_MS = 25


def _parse_number(spin: QSpinBox | QDoubleSpinBox, text: str) -> float | None:
    body = text.strip()
    for affix in (spin.prefix(), spin.suffix()):
        if affix:
            body = body.replace(affix.strip(), "")
    try:
        return float(body.strip().replace(",", "."))
    except ValueError:
        return None


class LinesLabel(QLabel):
    """A word-wrapped rich-text label exactly `lines` lines of `sample` high in its current
    font: the rows below it do not move when its text needs another line. The height follows
    the font (a change of language brings a CJK font whose lines, and whose "●", are taller:
    a height measured once in English cut the third line)."""

    def __init__(self, lines: int, sample: str) -> None:
        super().__init__()
        self.lines, self.sample = lines, sample
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self._fit()

    def _fit(self) -> None:
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self.font())
        doc.setHtml("<br>".join([self.sample] * self.lines))
        self.setFixedHeight(math.ceil(doc.size().height()) + 2)

    def changeEvent(self, event) -> None:
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange, QEvent.Type.LanguageChange):
            self._fit()
        super().changeEvent(event)


class _Ranged:
    """A spin box that says why a typed value is refused: Qt drops a keystroke that would
    leave the range without a word ("3" in a box that ends at 2.0). The concrete classes
    declare `out_of_range = Signal(float)` (a Qt signal lives on a QObject class)."""

    def validate(self, text: str, pos: int):
        result = super().validate(text, pos)
        if result[0] == QValidator.State.Invalid:
            value = _parse_number(self, text)
            if value is not None and not (self.minimum() <= value <= self.maximum()):
                self.out_of_range.emit(value)
        return result


class RangedSpinBox(_Ranged, QSpinBox):
    out_of_range = Signal(float)  # the refused value


class RangedDoubleSpinBox(_Ranged, QDoubleSpinBox):
    out_of_range = Signal(float)


class ValueSlider(QWidget):
    """A slider over lo, lo+step, ..., hi with a spin box showing (and editing) the value."""

    value_changed = Signal(object)

    def __init__(self, lo: float, hi: float, step: float = 1, decimals: int = 0,
                 tooltip: str = "") -> None:
        super().__init__()
        # opaque: a slider that moves with every frame of a drag repaints itself, not the
        # group box and the dock behind it
        self.setAutoFillBackground(True)
        self.decimals = decimals
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.spin = RangedDoubleSpinBox() if decimals else RangedSpinBox()
        if decimals:
            self.spin.setDecimals(decimals)
        self.spin.setKeyboardTracking(False)
        self.spin.setMinimumWidth(70)
        self.spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.spin)
        self._lo, self._step, self._n = lo, step, 0
        self.set_range(lo, hi, step)
        self._send = qthrottled(self._emit, timeout=THROTTLE_MS, leading=True)
        self.slider.valueChanged.connect(self._on_slider)
        self.spin.valueChanged.connect(self._on_spin)
        if tooltip:
            self.setToolTip(tooltip)

    def _to_value(self, index: int) -> float | int:
        v = self._lo + index * self._step
        return round(v, self.decimals) if self.decimals else round(v)

    def _to_index(self, value: float) -> int:
        return int(min(max(round((value - self._lo) / self._step), 0), self._n))

    def set_range(self, lo: float, hi: float, step: float = 1) -> None:
        n = max(0, round((hi - lo) / step))
        if self._n and (lo, step, n) == (self._lo, self._step, self._n):
            return  # unchanged: a spin box re-formats (and repaints) its text on every setRange
        with QSignalBlocker(self.slider), QSignalBlocker(self.spin):
            value = self.value() if self._n else lo
            self._lo, self._step = lo, step
            self._n = max(0, round((hi - lo) / step))
            self.slider.setRange(0, self._n)
            self.slider.setPageStep(max(1, self._n // 16))
            self.spin.setRange(lo, lo + self._n * step)
            self.spin.setSingleStep(step)
            hold_size(self.spin)  # a new range must not re-lay out the whole dock
            self.set_value(value)

    def set_value(self, value: float, exact: bool = False) -> None:
        """Mirror a value (no signal). `exact`: the spin box shows `value` itself, not the
        nearest slider step (a derived value such as 1/√d_k = 0.0625 on a 0.005 grid)."""
        i = self._to_index(value)
        with QSignalBlocker(self.slider), QSignalBlocker(self.spin):
            self.slider.setValue(i)
            set_spin(self.spin, round(value, self.decimals) if exact and self.decimals else self._to_value(i))

    def value(self) -> float | int:
        return self._to_value(self.slider.value())

    def _on_slider(self, index: int) -> None:
        with QSignalBlocker(self.spin):
            self.spin.setValue(self._to_value(index))
        self._send(self._to_value(index))

    def _on_spin(self, value: float) -> None:
        i = self._to_index(value)
        with QSignalBlocker(self.slider):
            self.slider.setValue(i)
        if self._to_value(i) != value:
            with QSignalBlocker(self.spin):
                self.spin.setValue(self._to_value(i))
        self._send(self._to_value(i))

    def _emit(self, value) -> None:
        self.value_changed.emit(value)

    def flush(self) -> None:
        """Send a throttled pending value now."""
        self._send.flush()


def set_spin(spin: QSpinBox | QDoubleSpinBox, value: float) -> None:
    """spin.setValue, skipped when unchanged (a spin box re-formats and repaints its text,
    and the panel under it, on every setValue)."""
    if spin.value() != value:
        spin.setValue(value)


def set_items(combo: QComboBox, items: list[tuple[str, Any]], current: Any) -> None:
    """Replace the items of a combo (signals blocked) and select `current`."""
    with QSignalBlocker(combo):
        if [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())] != items:
            combo.clear()
            for text, data in items:
                combo.addItem(text, data)
        idx = combo.findData(current)
        combo.setCurrentIndex(max(idx, 0))


def set_enabled_items(combo: QComboBox, reasons: dict[Any, str | None]) -> None:
    """Disable the items whose data has a reason (shown as the item's tooltip)."""
    model = combo.model()
    if not isinstance(model, QStandardItemModel):
        return
    for i in range(combo.count()):
        why = reasons.get(combo.itemData(i))
        item = model.item(i)
        item.setEnabled(why is None)
        item.setToolTip(why or "")
