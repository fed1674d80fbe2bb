"""The controls dock: one widget per AttentionConfig field.

The controls mirror the window's config (`set_config` updates every widget
with its signals blocked, so there are no feedback loops) and request changes
through `config_requested`. Every request goes through constraints.coerce, and
the widgets only offer values from constraints, so an invalid combination
cannot be chosen. Slider drags are throttled (leading and trailing edge: the
first and the final value are always sent).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import qthrottled

import engine
from engine import AttentionConfig, ConfigError

from . import constraints as C
from .themes import CATEGORY_COLORS

#: Slider drags send at most one change per this many ms (the trailing value always goes).
THROTTLE_MS = 25


class ValueSlider(QWidget):
    """A slider over lo, lo+step, ..., hi with a spin box showing (and editing) the value."""

    value_changed = Signal(object)

    def __init__(self, lo: float, hi: float, step: float = 1, decimals: int = 0,
                 tooltip: str = "") -> None:
        super().__init__()
        self.decimals = decimals
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.spin = QDoubleSpinBox() if decimals else QSpinBox()
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
        with QSignalBlocker(self.slider), QSignalBlocker(self.spin):
            value = self.value() if self._n else lo
            self._lo, self._step = lo, step
            self._n = max(0, round((hi - lo) / step))
            self.slider.setRange(0, self._n)
            self.slider.setPageStep(max(1, self._n // 16))
            self.spin.setRange(lo, lo + self._n * step)
            self.spin.setSingleStep(step)
            self.set_value(value)

    def set_value(self, value: float) -> None:
        """Mirror a value (no signal)."""
        with QSignalBlocker(self.slider), QSignalBlocker(self.spin):
            i = self._to_index(value)
            self.slider.setValue(i)
            self.spin.setValue(self._to_value(i))

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


def _set_items(combo: QComboBox, items: list[tuple[str, Any]], current: Any) -> None:
    """Replace the items of a combo (signals blocked) and select `current`."""
    with QSignalBlocker(combo):
        if [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())] != items:
            combo.clear()
            for text, data in items:
                combo.addItem(text, data)
        idx = combo.findData(current)
        combo.setCurrentIndex(max(idx, 0))


def _set_enabled_items(combo: QComboBox, reasons: dict[Any, str | None]) -> None:
    """Disable the items whose data has a reason (shown as the item's tooltip)."""
    model = combo.model()
    if not isinstance(model, QStandardItemModel):
        return
    for i in range(combo.count()):
        why = reasons.get(combo.itemData(i))
        item = model.item(i)
        item.setEnabled(why is None)
        item.setToolTip(why or "")


class ConfigControls(QWidget):
    """Every AttentionConfig field as a widget; emits `config_requested(AttentionConfig)`."""

    config_requested = Signal(object)
    reset_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._config = AttentionConfig()
        root = QVBoxLayout(self)
        root.setContentsMargins(6, 6, 6, 6)
        root.setSpacing(8)

        def group(title: str) -> QFormLayout:
            box = QGroupBox(title)
            form = QFormLayout(box)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            form.setContentsMargins(6, 10, 6, 4)
            form.setVerticalSpacing(5)
            root.addWidget(box)
            return form

        # ---- shape ---------------------------------------------------------------
        f = group("Shape")
        self.d_model = ValueSlider(4, C.D_MODEL_MAX, 4, tooltip="Model width d_model; only multiples of the head count are offered")
        f.addRow("d_model", self.d_model)
        self.heads = QComboBox()
        self.heads.setToolTip("Query heads: the divisors of d_model (head_dim = d_model / heads)")
        f.addRow("heads", self.heads)
        self.kv_heads = QComboBox()
        self.kv_heads.setToolTip("KV heads: divisors of the head count. MHA = one per query head, "
                                 "GQA n:1 = n query heads share one, MQA = all share one")
        f.addRow("KV heads", self.kv_heads)
        self.group_map = QLabel()
        self.group_map.setObjectName("groupMap")
        self.group_map.setWordWrap(True)
        self.group_map.setTextFormat(Qt.TextFormat.RichText)
        self.group_map.setToolTip("Which query heads read which KV head")
        f.addRow("", self.group_map)
        self.head_dim = QLabel()
        self.head_dim.setObjectName("hint")
        f.addRow("head_dim", self.head_dim)
        self.batch = QSpinBox()
        self.batch.setRange(1, C.BATCH_MAX)
        self.batch.setToolTip("Batch size; the panels show batch row 0")
        f.addRow("batch", self.batch)

        # ---- sequence ------------------------------------------------------------
        f = group("Sequence")
        self.tokens = QLineEdit()
        self.tokens.setPlaceholderText("type words: they become the tokens")
        self.tokens.setClearButtonEnabled(True)
        self.tokens.setToolTip("Space-separated words become the tokens (and the axis labels); "
                               "equal words get equal embeddings. Empty = random inputs.")
        f.addRow("tokens", self.tokens)
        self.seq_len = ValueSlider(1, C.SEQ_MAX, 1, tooltip="Query length S (clears the typed tokens)")
        f.addRow("query length", self.seq_len)
        self.cross = QCheckBox("separate keys (cross-attention)")
        self.cross.setToolTip("Keys and values come from a separate memory of its own length")
        f.addRow("", self.cross)
        self.kv_len = ValueSlider(1, C.KV_LEN_MAX, 1, tooltip="Key length Skv")
        f.addRow("key length", self.kv_len)

        # ---- mask ----------------------------------------------------------------
        f = group("Mask")
        self.causal = QCheckBox("causal (bottom-right aligned)")
        self.causal.setToolTip("Query i sits at position i + (Skv − S) and sees keys j ≤ that position")
        f.addRow("", self.causal)
        self.window_on = QCheckBox("sliding window")
        self.window = ValueSlider(1, C.SEQ_MAX, 1, tooltip="Keys within this distance of the query are visible")
        row = QHBoxLayout()
        row.addWidget(self.window_on)
        row.addWidget(self.window, 1)
        f.addRow("", row)
        self.pad = ValueSlider(0, C.SEQ_MAX, 1, tooltip="The last `pad` keys are padding, hidden from every query")
        f.addRow("padding", self.pad)
        self.mask_value = QComboBox()
        for text, tip in (("-inf", "masked_fill(-inf): a fully masked row becomes NaN"),
                          ("min", "the dtype's finfo.min: a fully masked row becomes uniform garbage"),
                          ("-1e9", "-1e9: uniform garbage for a fully masked row; -inf in float16")):
            self.mask_value.addItem(text, text)
            self.mask_value.setItemData(self.mask_value.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.mask_value.setToolTip("What masked scores become before the softmax")
        f.addRow("mask value", self.mask_value)

        # ---- scaling and precision -----------------------------------------------
        f = group("Scaling and precision")
        self.scale_mode = QComboBox()
        self.scale_mode.addItem("1/√d_k", "default")
        self.scale_mode.addItem("none (×1)", "none")
        self.scale_mode.addItem("custom", "custom")
        self.scale_mode.setToolTip("The multiplier of QKᵀ")
        f.addRow("scaling", self.scale_mode)
        self.scale = ValueSlider(*C.SCALE_RANGE, 0.005, decimals=3, tooltip="Custom multiplier of QKᵀ")
        f.addRow("multiplier", self.scale)
        self.prescale_q = QCheckBox("pre-scale Q (fp16 overflow fix)")
        self.prescale_q.setToolTip("Multiply Q by the scale before Q·Kᵀ so the product stays in range")
        f.addRow("", self.prescale_q)
        self.dtype = QComboBox()
        for d in ("float32", "float16", "bfloat16"):
            self.dtype.addItem(d, d)
        self.dtype.setToolTip("The computation really runs in this dtype")
        f.addRow("dtype", self.dtype)
        self.positional = QComboBox()
        for p in ("none", "sinusoidal", "learned", "rope", "alibi"):
            self.positional.addItem(p, p)
        self.positional.setToolTip("Positional encoding: without one, attention cannot see order")
        f.addRow("positions", self.positional)

        # ---- run -------------------------------------------------------------------
        f = group("Run")
        self.backend = QComboBox()
        for b in ("eager", "sdpa", "flash"):
            self.backend.addItem(b, b)
        self.backend.setToolTip("Which kernel computes the output (the pictures always come from eager)")
        f.addRow("backend", self.backend)
        self.device = QComboBox()
        for d in ("cpu", "cuda"):
            self.device.addItem(d, d)
        f.addRow("device", self.device)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setToolTip("Seeds inputs and weights: the same config gives the same numbers")
        f.addRow("seed", self.seed)
        self.init_xavier = QCheckBox("Xavier")
        self.init_xavier.setToolTip("Weight init std: Xavier √(2/(fan_in+fan_out)), or a fixed std")
        self.init_std = QDoubleSpinBox()
        self.init_std.setRange(*C.INIT_STD_RANGE)
        self.init_std.setDecimals(3)
        self.init_std.setSingleStep(0.01)
        self.init_std.setKeyboardTracking(False)
        self.init_std.setValue(0.02)
        row = QHBoxLayout()
        row.addWidget(self.init_xavier)
        row.addWidget(self.init_std, 1)
        f.addRow("init std", row)

        self.reset = QPushButton("Reset to defaults")
        self.reset.setToolTip("Back to the default configuration (Ctrl+R)")
        root.addWidget(self.reset)
        root.addStretch(1)

        self._connect()
        self.set_config(self._config)

    # ---- requests ------------------------------------------------------------------
    def _request(self, **changes: Any) -> None:
        try:
            new = C.coerce(self._config, **changes)
        except ConfigError:
            self.set_config(self._config)  # put the widget back; nothing else to do
            return
        if new != self._config:
            self.config_requested.emit(new)

    def _connect(self) -> None:
        def on(widget_signal, fn: Callable) -> None:
            widget_signal.connect(fn)

        on(self.d_model.value_changed, lambda v: self._request(d_model=int(v)))
        on(self.heads.activated, lambda _i: self._request(n_heads=self.heads.currentData()))
        on(self.kv_heads.activated, lambda _i: self._request(
            n_kv_heads=None if self.kv_heads.currentData() == self._config.n_heads else self.kv_heads.currentData()))
        on(self.batch.valueChanged, lambda v: self._request(batch=int(v)))
        on(self.tokens.editingFinished, self._on_tokens)
        on(self.seq_len.value_changed, lambda v: self._request(seq_len=int(v)))
        on(self.cross.toggled, lambda b: self._request(kv_len=int(self.kv_len.value()) if b else None))
        on(self.kv_len.value_changed, lambda v: self._request(kv_len=int(v)) if self.cross.isChecked() else None)
        on(self.causal.toggled, lambda b: self._request(causal=bool(b)))
        on(self.window_on.toggled, lambda b: self._request(window=int(self.window.value()) if b else None))
        on(self.window.value_changed, lambda v: self._request(window=int(v)) if self.window_on.isChecked() else None)
        on(self.pad.value_changed, lambda v: self._request(pad=int(v)))
        on(self.mask_value.activated, lambda _i: self._request(mask_value=self.mask_value.currentData()))
        on(self.scale_mode.activated, self._on_scale_mode)
        on(self.scale.value_changed, lambda v: self._request(scale=float(v))
           if self.scale_mode.currentData() == "custom" else None)
        on(self.prescale_q.toggled, lambda b: self._request(prescale_q=bool(b)))
        on(self.dtype.activated, lambda _i: self._request(dtype=self.dtype.currentData()))
        on(self.positional.activated, lambda _i: self._request(positional=self.positional.currentData()))
        on(self.backend.activated, lambda _i: self._request(backend=self.backend.currentData()))
        on(self.device.activated, lambda _i: self._request(device=self.device.currentData()))
        on(self.seed.valueChanged, lambda v: self._request(seed=int(v)))
        on(self.init_xavier.toggled, lambda b: self._request(init_std=None if b else float(self.init_std.value())))
        on(self.init_std.valueChanged, lambda v: self._request(init_std=float(v))
           if not self.init_xavier.isChecked() else None)
        on(self.reset.clicked, self.reset_requested.emit)

    def _on_tokens(self) -> None:
        words = tuple(self.tokens.text().split())[: C.SEQ_MAX]
        if words == (self._config.tokens or ()):
            return
        self._request(tokens=words or None)

    def _on_scale_mode(self, _i: int) -> None:
        mode = self.scale_mode.currentData()
        if mode == "default":
            self._request(scale=None)
        elif mode == "none":
            self._request(scale=1.0)
        else:
            self._request(scale=float(self.scale.value()))

    def flush(self) -> None:
        """Send any throttled slider value now."""
        for s in (self.d_model, self.seq_len, self.kv_len, self.window, self.pad, self.scale):
            s.flush()

    # ---- mirror ----------------------------------------------------------------------
    @property
    def config(self) -> AttentionConfig:
        return self._config

    def set_config(self, cfg: AttentionConfig) -> None:
        """Show `cfg` in every widget (no signals), offering only values valid with it."""
        self._config = cfg
        blockers = [QSignalBlocker(w) for w in (
            self.heads, self.kv_heads, self.batch, self.tokens, self.cross, self.causal, self.window_on,
            self.mask_value, self.scale_mode, self.prescale_q, self.dtype, self.positional, self.backend,
            self.device, self.seed, self.init_xavier, self.init_std)]
        step = cfg.n_heads * (2 if C.needs_even_head_dim(cfg.positional) else 1)
        self.d_model.set_range(step, max(C.D_MODEL_MAX, step), step)
        self.d_model.set_value(cfg.d_model)
        _set_items(self.heads, [(str(h), h) for h in C.allowed_heads(cfg.d_model, cfg.positional)], cfg.n_heads)
        _set_items(self.kv_heads, [(C.kv_label(cfg.n_heads, g), g) for g in C.allowed_kv_heads(cfg.n_heads)],
                   cfg.kv_heads)
        self.group_map.setText(self._group_map_html(cfg))
        self.head_dim.setText(f"{cfg.head_dim}  (scale 1/√{cfg.head_dim} = {1 / math.sqrt(cfg.head_dim):.3g})")
        self.batch.setValue(cfg.batch)
        text = " ".join(cfg.tokens) if cfg.tokens else ""
        if self.tokens.text().split() != text.split():
            self.tokens.setText(text)
            self.tokens.setCursorPosition(0)  # show the start of the sentence
        self.seq_len.set_value(cfg.seq_len)
        self.cross.setChecked(cfg.kv_len is not None)
        self.kv_len.set_value(cfg.key_len)
        self.kv_len.setEnabled(cfg.kv_len is not None)
        self.causal.setChecked(cfg.causal)
        reach = max(cfg.key_len, cfg.seq_len)
        self.window.set_range(1, max(reach, 1), 1)
        self.window_on.setChecked(cfg.window is not None)
        self.window.set_value(cfg.window if cfg.window is not None else max(1, reach // 2))
        self.window.setEnabled(cfg.window is not None)
        self.pad.set_range(0, cfg.key_len, 1)
        self.pad.set_value(cfg.pad)
        self.mask_value.setCurrentIndex(self.mask_value.findData(cfg.mask_value))
        mode = "default" if cfg.scale is None else ("none" if cfg.scale == 1.0 else "custom")
        self.scale_mode.setCurrentIndex(self.scale_mode.findData(mode))
        self.scale.set_value(cfg.effective_scale)
        self.scale.setEnabled(mode == "custom")
        self.prescale_q.setChecked(cfg.prescale_q)
        self.dtype.setCurrentIndex(self.dtype.findData(cfg.dtype))
        self.positional.setCurrentIndex(self.positional.findData(cfg.positional))
        _set_enabled_items(self.positional, {p: C.positional_refusal(cfg, p) for p in
                                             ("none", "sinusoidal", "learned", "rope", "alibi")})
        self.backend.setCurrentIndex(self.backend.findData(cfg.backend))
        _set_enabled_items(self.backend, engine.available_backends(cfg.device, cfg.dtype))
        self.device.setCurrentIndex(self.device.findData(cfg.device))
        cuda = engine.available_backends("cuda", cfg.dtype).get("eager")
        _set_enabled_items(self.device, {"cpu": None, "cuda": cuda})
        self.seed.setValue(cfg.seed)
        self.init_xavier.setChecked(cfg.init_std is None)
        if cfg.init_std is not None:
            self.init_std.setValue(cfg.init_std)
        self.init_std.setEnabled(cfg.init_std is not None)
        del blockers

    @staticmethod
    def _group_map_html(cfg: AttentionConfig) -> str:
        parts = []
        for g, heads in C.group_map(cfg):
            color = CATEGORY_COLORS[g % len(CATEGORY_COLORS)]
            qs = ",".join(map(str, heads)) if len(heads) <= 4 else f"{heads[0]}–{heads[-1]}"
            parts.append(f"<span style='color:{color}'>●</span>kv{g}←q{html.escape(qs)}")
        if len(parts) > 12:
            parts = [*parts[:11], f"… ({len(parts)} groups)"]
        return f"<b>{cfg.attention_kind}</b>: " + " · ".join(parts)
