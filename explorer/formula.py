"""The formula strip: the pipeline of one attention layer with today's shapes, each step a
button to the panel that draws it.

    X → Q, K, V → QKᵀ → ·scale → +bias → mask → softmax → ·V → W_O
        (8, 64)·(64, 16) = (8, 16)   ...

`pipeline(config, head)` (Qt-free) lists the steps with their shape arithmetic for
the selected head; `FormulaStrip` shows them in a toolbar under the menu bar.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from engine import AttentionConfig


@dataclass(frozen=True)
class Step:
    key: str  # stable id ("qkv", "scores", ...), for tests and scripts
    name: str  # what is computed, e.g. "Q = X·W_Q"
    shapes: str  # the shape arithmetic, e.g. "(8, 64)·(64, 16) = (8, 16)"
    panel: str  # the panel that draws it
    active: bool = True  # False for a step this config skips (no bias, no mask)


def _shape(*dims: int) -> str:
    return "(" + ", ".join(str(d) for d in dims) + ")"


def _scale_mode(config: AttentionConfig) -> str:
    """The scaling as the controls name it: 1/√d_k, none (×1) or custom."""
    if config.scale is None:
        return "1/√d_k"
    if config.scale == 1.0:
        return QCoreApplication.translate("Formula", "none (×1)")
    return QCoreApplication.translate("Formula", "custom")


def pipeline(config: AttentionConfig, head: int = 0) -> list[Step]:
    """The steps of `config`'s attention for query head `head` (its KV head for K and V)."""
    S, Skv, d, Dh = config.seq_len, config.key_len, config.d_model, config.head_dim
    H, Hkv = config.n_heads, config.kv_heads
    h = min(head, H - 1)
    g = config.kv_head_of(h)
    src = "M" if config.kv_len is not None else "X"  # cross-attention reads a memory
    pos = {"sinusoidal": " + PE", "learned": " + PE"}.get(config.positional, "")
    rope = " (RoPE)" if config.positional == "rope" else ""
    masks = [m for m, on in ((QCoreApplication.translate("Formula", "causal"), config.causal), (QCoreApplication.translate("Formula", "window {w}").format(w=config.window),
                                                          config.window is not None),
                             (QCoreApplication.translate("Formula", "pad {p}").format(p=config.pad), config.pad > 0)) if on]
    bias = "ALiBi" if config.positional == "alibi" else QCoreApplication.translate("Formula", "no bias")
    scale = f"{config.effective_scale:.4g}"
    return [
        Step("x", f"X{pos}", _shape(S, d), "qkv"),
        Step("q", f"Q{h} = X·W_Q{rope}", f"{_shape(S, d)}·{_shape(d, Dh)} = {_shape(S, Dh)}", "qkv"),
        Step("kv", f"K{g}, V{g} = {src}·W_K, {src}·W_V",
             f"{_shape(Skv, d)}·{_shape(d, Dh)} = {_shape(Skv, Dh)}" + (f" ×{Hkv}" if Hkv > 1 else ""), "qkv"),
        Step("scores", "QKᵀ", f"{_shape(S, Dh)}·{_shape(Dh, Skv)} = {_shape(S, Skv)}", "scores"),
        Step("scale", f"· {scale}", _scale_mode(config), "scores"),
        Step("bias", f"+ {bias}", _shape(H, S, Skv) if config.positional == "alibi" else "–", "scores",
             active=config.positional == "alibi"),
        Step("mask", QCoreApplication.translate("Formula", "mask") + f" ({config.mask_value})",
             ", ".join(masks) if masks else QCoreApplication.translate("Formula", "none"), "heads", active=bool(masks)),
        Step("softmax", "softmax", QCoreApplication.translate("Formula", "rows of {n} sum to 1").format(n=Skv), "softmax_grad"),
        Step("context", "· V", f"{_shape(S, Skv)}·{_shape(Skv, Dh)} = {_shape(S, Dh)}", "qkv"),
        Step("output", "· W_O", f"{_shape(S, H * Dh)}·{_shape(H * Dh, d)} = {_shape(S, d)}", "diagnostics"),
    ]


class FormulaStrip(QWidget):
    """One button per step (name over shapes); a click asks for the step's panel."""

    panel_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("formula_strip")
        self._lay = QHBoxLayout(self)
        self._lay.setContentsMargins(4, 0, 4, 0)
        self._lay.setSpacing(0)
        self.buttons: dict[str, QToolButton] = {}
        self._arrows: list[QLabel] = []
        self._steps: list[Step] = []
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def set_config(self, config: AttentionConfig, head: int = 0) -> None:
        steps = pipeline(config, head)
        if steps == self._steps:
            return
        if [s.key for s in steps] != [s.key for s in self._steps]:
            self._build(steps)
        self._steps = steps
        for step in steps:
            b = self.buttons[step.key]
            b.setEnabled(True)
            b.setProperty("inactive", not step.active)  # greyed by the style sheet, still a link
            b.style().unpolish(b)
            b.style().polish(b)
        self._fit_texts()

    @staticmethod
    def short_shapes(shapes: str) -> str:
        """A step's shapes as its result only: "(512, 64)·(64, 16) = (512, 16)" → "= (512, 16)"."""
        _, eq, result = shapes.rpartition("= ")
        return f"= {result}" if eq else shapes

    def _fit_texts(self) -> None:
        """Each step's whole product when the strip has room for all of them, else its result
        only (the whole in its tooltip): a narrow window elided the middle, "(512,…"."""
        if not self._steps:
            return
        texts = {s.key: f"{s.name}\n{s.shapes}" for s in self._steps}
        for s in self._steps:
            self.buttons[s.key].setText(texts[s.key])
        if self._lay.sizeHint().width() > self.width():  # (the buttons' own size for the whole texts)
            texts = {s.key: f"{s.name}\n{self.short_shapes(s.shapes)}" for s in self._steps}
        tip = QCoreApplication.translate("Formula", "Show the panel that draws this step")
        for s in self._steps:
            b = self.buttons[s.key]
            b.setText(texts[s.key])
            whole = f"{s.name}: {s.shapes}"
            b.setToolTip(tip if texts[s.key].endswith(s.shapes) else f"{whole}\n{tip}")

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_texts()

    def retranslate(self, config: AttentionConfig, head: int = 0) -> None:
        """The texts again, in the current language."""
        self._steps = []
        self.set_config(config, head)

    def _build(self, steps: list[Step]) -> None:
        while self._lay.count():
            item = self._lay.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.buttons, self._arrows = {}, []
        for i, step in enumerate(steps):
            if i:
                arrow = QLabel("→")
                arrow.setObjectName("hint")
                self._lay.addWidget(arrow)
                self._arrows.append(arrow)
            b = QToolButton()
            b.setObjectName(f"formula_{step.key}")
            b.setAutoRaise(True)
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            b.clicked.connect(lambda _c=False, p=step.panel: self.panel_requested.emit(p))
            self._lay.addWidget(b)
            self.buttons[step.key] = b
        self._lay.addStretch(1)

    def steps(self) -> list[Step]:
        return list(self._steps)
