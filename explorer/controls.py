"""The controls dock: one widget per AttentionConfig field.

The controls are made from the state (explorer.state) and hold no config of their own:
they follow `state.config_changed` (every widget updated with its signals blocked, so
there are no feedback loops) and change the config with `state.set_config`. Every
request goes through constraints.coerce, and
the widgets only offer values from constraints, so an invalid combination
cannot be chosen. Slider drags are throttled (leading and trailing edge: the
first and the final value are always sent).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QSignalBlocker, Qt, Signal
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
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

import engine
import explorer.constraints as C
from engine import AttentionConfig, ConfigError

from .control_widgets import (
    LinesLabel,
    RangedDoubleSpinBox,
    RangedSpinBox,
    ValueSlider,
    set_enabled_items,
    set_items,
    set_spin,
)
from .figures.themes import CATEGORY_COLORS
from .i18n import engine_text
from .state import AppState
from .subscribe import follow

#: The KV-group map shows at most this many groups, in a label this many lines high.
GROUP_MAP_PARTS, GROUP_MAP_LINES = 6, 3
MASK_VALUES = ("-inf", "min", "-1e9")
#: the token that fills a typed sentence up to a longer query length
FILLER = "·"
SCALE_MODES = ("default", "none", "custom")
POSITIONALS = ("none", "sinusoidal", "learned", "rope", "alibi")
KERNELS = ("softmax", "linear", "performer")
#: performer's random features m offered (the engine accepts up to 65536)
N_FEATURES_MAX = 4096


class ConfigControls(QWidget):
    """Every AttentionConfig field as a widget of `state.config` (a state of its own when
    none is given)."""

    reset_requested = Signal()
    message = Signal(str)  # a refused edit, said in one line (the window's status bar shows it)

    def __init__(self, state: AppState | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state if state is not None else AppState()
        root = QVBoxLayout(self)
        root.setContentsMargins(6, 6, 6, 6)
        root.setSpacing(8)

        # every text is set in retranslate_ui (again on each language change)
        self._mirrored: dict[str, tuple] = {}  # see _fresh
        self._groups: list[QGroupBox] = []
        self._labels: dict[str, QLabel] = {}

        def group() -> QFormLayout:
            box = QGroupBox()
            form = QFormLayout(box)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            form.setContentsMargins(6, 10, 6, 4)
            form.setVerticalSpacing(5)
            root.addWidget(box)
            self._groups.append(box)
            return form

        def row(form: QFormLayout, key: str | None, field) -> None:
            if key is None:
                form.addRow("", field)
            else:
                label = self._labels[key] = QLabel()
                form.addRow(label, field)

        # ---- shape ---------------------------------------------------------------
        f = group()
        self.d_model = ValueSlider(4, C.D_MODEL_MAX, 4)
        row(f, "d_model", self.d_model)
        self.heads = QComboBox()
        row(f, "heads", self.heads)
        self.kv_heads = QComboBox()
        row(f, "kv_heads", self.kv_heads)
        # a fixed height: the rows below must not move when the map needs another line
        self.group_map = LinesLabel(GROUP_MAP_LINES, "<b>GQA</b>: <span>●</span>kv0←q0 · ●kv1←q1")
        self.group_map.setObjectName("groupMap")
        row(f, None, self.group_map)
        self.head_dim = QLabel()
        self.head_dim.setObjectName("hint")
        row(f, "head_dim", self.head_dim)
        self.batch = RangedSpinBox()
        self.batch.setRange(1, C.BATCH_MAX)
        row(f, "batch", self.batch)

        # ---- sequence ------------------------------------------------------------
        f = group()
        self.tokens = QLineEdit()
        self.tokens.setClearButtonEnabled(True)
        row(f, "tokens", self.tokens)
        self._sentence: tuple[str, ...] | None = None  # the words typed, kept while S cuts or pads them
        self.sentence_note = QLabel()
        self.sentence_note.setObjectName("hint")
        self.sentence_note.setWordWrap(False)
        # a held line: the rows below must not move when the note comes and goes
        self.sentence_note.setFixedHeight(self.sentence_note.fontMetrics().lineSpacing() + 2)
        row(f, None, self.sentence_note)
        self.seq_len = ValueSlider(1, C.SEQ_MAX, 1)
        row(f, "seq_len", self.seq_len)
        self.cross = QCheckBox()
        row(f, None, self.cross)
        self.kv_len = ValueSlider(1, C.KV_LEN_MAX, 1)
        row(f, "kv_len", self.kv_len)

        # ---- mask ----------------------------------------------------------------
        f = group()
        self.causal = QCheckBox()
        row(f, None, self.causal)
        self.window_on = QCheckBox()
        self.window = ValueSlider(1, C.SEQ_MAX, 1)
        hbox = QHBoxLayout()
        hbox.addWidget(self.window_on)
        hbox.addWidget(self.window, 1)
        row(f, None, hbox)
        self.pad = ValueSlider(0, C.SEQ_MAX, 1)
        row(f, "pad", self.pad)
        self.mask_value = QComboBox()
        for value in MASK_VALUES:
            self.mask_value.addItem(value, value)  # the literal value: it is what the code writes
        row(f, "mask_value", self.mask_value)
        # the ways out of O(n²) (docs/contract.md, "Efficient attention"): kernel, local + global, hierarchy
        self.kernel = QComboBox()
        for k in KERNELS:
            self.kernel.addItem("", k)
        self.n_features = RangedSpinBox()
        self.n_features.setRange(1, N_FEATURES_MAX)
        self.n_features.setKeyboardTracking(False)
        self.n_features.setPrefix("m = ")
        hbox = QHBoxLayout()
        hbox.addWidget(self.kernel, 1)
        hbox.addWidget(self.n_features)
        row(f, "kernel", hbox)
        self.global_tokens = ValueSlider(0, C.SEQ_MAX, 1)
        row(f, "global_tokens", self.global_tokens)
        self.summary_on = QCheckBox()
        self.summary_block = ValueSlider(1, C.SEQ_MAX, 1)
        hbox = QHBoxLayout()
        hbox.addWidget(self.summary_on)
        hbox.addWidget(self.summary_block, 1)
        row(f, None, hbox)

        # ---- scaling and precision -----------------------------------------------
        f = group()
        self.scale_mode = QComboBox()
        for mode in SCALE_MODES:
            self.scale_mode.addItem("", mode)
        row(f, "scale_mode", self.scale_mode)
        self.scale = ValueSlider(*C.SCALE_RANGE, 0.005, decimals=4)
        row(f, "scale", self.scale)
        self.prescale_q = QCheckBox()
        row(f, None, self.prescale_q)
        self.dtype = QComboBox()
        for d in ("float32", "float16", "bfloat16"):
            self.dtype.addItem(d, d)
        row(f, "dtype", self.dtype)
        self.positional = QComboBox()
        for p in POSITIONALS:
            self.positional.addItem("", p)
        row(f, "positional", self.positional)

        # ---- run -------------------------------------------------------------------
        f = group()
        self.backend = QComboBox()
        for b in ("eager", "sdpa", "flash"):
            self.backend.addItem(b, b)
        row(f, "backend", self.backend)
        self.device = QComboBox()
        for d in ("cpu", "cuda"):
            self.device.addItem(d, d)
        row(f, "device", self.device)
        self.seed = RangedSpinBox()
        self.seed.setRange(0, engine.MAX_SEED)  # the engine's range: every valid seed shows
        row(f, "seed", self.seed)
        self.init_xavier = QCheckBox()
        self.init_std = RangedDoubleSpinBox()
        self.init_std.setRange(*C.INIT_STD_RANGE)
        self.init_std.setDecimals(3)
        self.init_std.setSingleStep(0.01)
        self.init_std.setKeyboardTracking(False)
        self.init_std.setValue(0.02)
        hbox = QHBoxLayout()
        hbox.addWidget(self.init_xavier)
        hbox.addWidget(self.init_std, 1)
        row(f, "init_std", hbox)

        self.reset = QPushButton()
        root.addWidget(self.reset)
        root.addStretch(1)

        self._connect()
        self.retranslate_ui()  # also mirrors the state's config
        follow(self.state.config_changed, self._mirror)

    # ---- language -------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        """Every label, tooltip and item text in the current language."""
        for box, title in zip(self._groups, (self.tr("Shape"), self.tr("Sequence"), self.tr("Mask"),
                                             self.tr("Scaling and precision"), self.tr("Run"))):
            box.setTitle(title)
        labels = {
            "d_model": self.tr("d_model"), "heads": self.tr("heads"), "kv_heads": self.tr("KV heads"),
            "head_dim": self.tr("head_dim"), "batch": self.tr("batch"), "tokens": self.tr("tokens"),
            "seq_len": self.tr("query length"), "kv_len": self.tr("key length"), "pad": self.tr("padding"),
            "mask_value": self.tr("mask value"), "kernel": self.tr("kernel"),
            "global_tokens": self.tr("global tokens"), "scale_mode": self.tr("scaling"), "scale": self.tr("multiplier"),
            "dtype": self.tr("dtype"), "positional": self.tr("positions"), "backend": self.tr("backend"),
            "device": self.tr("device"), "seed": self.tr("seed"), "init_std": self.tr("init std"),
        }
        for key, label in self._labels.items():
            label.setText(labels[key])
        tips = (
            (self.d_model, self.tr("Model width d_model; only multiples of the head count are offered")),
            (self.heads, self.tr("Query heads: the divisors of d_model (head_dim = d_model / heads)")),
            (self.kv_heads, self.tr("KV heads: divisors of the head count. MHA = one per query head, "
                               "GQA n:1 = n query heads share one, MQA = all share one")),
            (self.group_map, self.tr("Which query heads read which KV head")),
            (self.batch, self.tr("Batch size; the panels show batch row 0")),
            (self.tokens, self.tr("Space-separated words become the tokens (and the axis labels); "
                             "equal words get equal embeddings. Empty = random inputs.")),
            (self.seq_len, self.tr("Query length S: a typed sentence is cut to its first S words or "
                                    "filled up with ‘·’ tokens, and comes back whole when S does")),
            (self.cross, self.tr("Keys and values come from a separate memory of its own length")),
            (self.kv_len, self.tr("Key length Skv")),
            (self.causal, self.tr("Query i sits at position i + (Skv − S) and sees keys j ≤ that position")),
            (self.window, self.tr("Keys within this distance of the query are visible")),
            (self.pad, self.tr("The last `pad` keys are padding, hidden from every query")),
            (self.mask_value, self.tr("What masked scores become before the softmax")),
            (self.kernel, self.tr("softmax: exact, O(n²). linear: φ(x) = elu(x) + 1 on q and k, cost grows with n. "
                                  "performer: FAVOR+ random features, exp(q·k) on average")),
            (self.n_features, self.tr("Performer's random features m: more features, a smaller error, more work")),
            (self.global_tokens, self.tr("The first g positions are global: every query sees them and they see "
                                         "every key (local + global with the sliding window)")),
            (self.summary_on, self.tr("Hierarchical attention: the own block's keys exactly, one mean summary "
                                      "per other block")),
            (self.summary_block, self.tr("Keys per block of the hierarchical attention")),
            (self.scale_mode, self.tr("The multiplier of QKᵀ")),
            (self.scale, self.tr("Custom multiplier of QKᵀ")),
            (self.prescale_q, self.tr("Multiply Q by the scale before Q·Kᵀ so the product stays in range")),
            (self.dtype, self.tr("The computation really runs in this dtype")),
            (self.positional, self.tr("Positional encoding: without one, attention cannot see order")),
            (self.backend, self.tr("Which kernel computes the output (the pictures always come from eager)")),
            (self.seed, self.tr("Seeds inputs and weights: the same config gives the same numbers")),
            (self.init_xavier, self.tr("Weight init std: Xavier √(2/(fan_in+fan_out)), or a fixed std")),
            (self.reset, self.tr("Back to the default configuration (Ctrl+R)")),
        )
        for widget, tip in tips:
            widget.setToolTip(tip)
            # also in the status bar while the mouse is over it (a tooltip window may not show:
            # offscreen, some X servers without a window manager, a remote desktop)
            for part in (widget, *widget.findChildren(QWidget)):
                part.setStatusTip(tip)
        self.tokens.setPlaceholderText(self.tr("type words: they become the tokens"))
        self.cross.setText(self.tr("separate keys (cross-attention)"))
        self.causal.setText(self.tr("causal (bottom-right aligned)"))
        self.window_on.setText(self.tr("sliding window"))
        self.summary_on.setText(self.tr("block summaries"))
        kernel_texts = {"softmax": self.tr("softmax (full)"), "linear": self.tr("linear (elu + 1)"),
                        "performer": self.tr("performer (FAVOR+)")}
        for i, k in enumerate(KERNELS):
            self.kernel.setItemText(i, kernel_texts[k])
        self.prescale_q.setText(self.tr("pre-scale Q (fp16 overflow fix)"))
        self.init_xavier.setText(self.tr("Xavier"))
        self.reset.setText(self.tr("Reset to defaults"))
        mask_tips = {
            "-inf": self.tr("masked_fill(-inf): a fully masked row becomes NaN"),
            "min": self.tr("the dtype's finfo.min: a fully masked row becomes uniform garbage"),
            "-1e9": self.tr("-1e9: uniform garbage for a fully masked row; -inf in float16"),
        }
        for i, value in enumerate(MASK_VALUES):
            self.mask_value.setItemData(i, mask_tips[value], Qt.ItemDataRole.ToolTipRole)
        scale_texts = {"default": self.tr("1/√d_k"), "none": self.tr("none (×1)"), "custom": self.tr("custom")}
        for i, mode in enumerate(SCALE_MODES):
            self.scale_mode.setItemText(i, scale_texts[mode])
        pos_texts = {"none": self.tr("none"), "sinusoidal": self.tr("sinusoidal"), "learned": self.tr("learned"),
                     "rope": self.tr("RoPE"), "alibi": self.tr("ALiBi")}
        for i, p in enumerate(POSITIONALS):
            self.positional.setItemText(i, pos_texts[p])
        self._mirrored.clear()  # item texts, tooltips and value texts in the new language
        self.refresh()  # the texts that carry values (head_dim, group map)

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def _positional_refusal(self, cfg: AttentionConfig, positional: str) -> str | None:
        """constraints.positional_refusal, in the interface language."""
        if positional == "alibi" and cfg.kernel != "softmax":
            return self.tr("ALiBi is a bias inside the softmax: the {kernel} kernel cannot take it "
                           "(switch the kernel back to softmax first)").format(kernel=cfg.kernel)
        if C.positional_refusal(cfg, positional) is None:
            return None
        return self.tr("RoPE needs an even head_dim; d_model/heads = {d_model}/{heads} = {head_dim}").format(
            d_model=cfg.d_model, heads=cfg.n_heads, head_dim=cfg.head_dim)

    def _kernel_refusal(self, cfg: AttentionConfig, kernel: str) -> str | None:
        """Why `kernel` cannot be chosen for cfg as it stands (constraints.kernel_refusal), in
        the interface language."""
        why = C.kernel_refusal(cfg, kernel)
        if why == "alibi":
            return self.tr("ALiBi is a bias inside the softmax: a {kernel} kernel cannot take it "
                           "(choose another positional encoding)").format(kernel=kernel)
        if why == "summary_block":
            return self.tr("Block summaries need the softmax kernel (turn them off first)")
        return None

    def combination_refusal(self, cfg: AttentionConfig, changes: dict[str, Any]) -> str | None:
        """Why the edit `changes` on cfg makes a combination without a definition (docs/contract.md:
        refused by name), in the interface language; None when it has one."""
        new = {f: changes.get(f, getattr(cfg, f)) for f in
               ("kernel", "positional", "summary_block", "window", "global_tokens")}
        if "kernel" in changes:
            return self._kernel_refusal(cfg, changes["kernel"])
        if new["kernel"] != "softmax" and new["positional"] == "alibi":
            return self.tr("ALiBi is a bias inside the softmax: the {kernel} kernel cannot take it "
                           "(switch the kernel back to softmax first)").format(kernel=new["kernel"])
        if new["summary_block"] is None:
            return None
        if new["window"] is not None:
            return self.tr("Block summaries cannot take a sliding window: each query sees its own block "
                           "exactly and a summary of every other (turn one of them off)")
        if new["global_tokens"]:
            return self.tr("Block summaries cannot take global tokens: the summaries are their global view "
                           "(set global tokens to 0 first)")
        return None

    # ---- requests ------------------------------------------------------------------
    def _request(self, **changes: Any) -> None:
        refusal = self.combination_refusal(self.state.config, changes)
        if refusal is not None:
            self.refresh()  # the widget back to the state's value
            self.message.emit(refusal)
            return
        try:
            new = C.coerce(self.state.config, **changes)
        except ConfigError as exc:
            self.refresh()  # put the widget back, and say why in one line
            self.message.emit(engine_text(str(exc).splitlines()[0]))  # (in the window's language)
            return
        self.state.set_config(new)

    def _connect(self) -> None:
        def on(widget_signal, fn: Callable) -> None:
            widget_signal.connect(fn)

        on(self.d_model.value_changed, lambda v: self._request(d_model=int(v)))
        on(self.heads.activated, lambda _i: self._request(n_heads=self.heads.currentData()))
        on(self.kv_heads.activated, lambda _i: self._request(
            n_kv_heads=None if self.kv_heads.currentData() == self.state.config.n_heads else self.kv_heads.currentData()))
        on(self.batch.valueChanged, lambda v: self._request(batch=int(v)))
        on(self.tokens.editingFinished, self._on_tokens)
        on(self.seq_len.value_changed, self._on_seq_len)
        on(self.cross.toggled, lambda b: self._request(kv_len=int(self.kv_len.value()) if b else None))
        on(self.kv_len.value_changed, lambda v: self._request(kv_len=int(v)) if self.cross.isChecked() else None)
        on(self.causal.toggled, lambda b: self._request(causal=bool(b)))
        on(self.window_on.toggled, lambda b: self._request(window=int(self.window.value()) if b else None))
        on(self.window.value_changed, lambda v: self._request(window=int(v)) if self.window_on.isChecked() else None)
        on(self.pad.value_changed, lambda v: self._request(pad=int(v)))
        on(self.kernel.activated, lambda _i: self._request(kernel=self.kernel.currentData()))
        on(self.n_features.valueChanged, lambda v: self._request(n_features=int(v)))
        on(self.global_tokens.value_changed, lambda v: self._request(global_tokens=int(v)))
        on(self.summary_on.toggled, lambda b: self._request(
            summary_block=int(self.summary_block.value()) if b else None))
        on(self.summary_block.value_changed, lambda v: self._request(summary_block=int(v))
           if self.summary_on.isChecked() else None)
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
        ranged = {"d_model": self.d_model.spin, "seq_len": self.seq_len.spin, "kv_len": self.kv_len.spin,
                  "pad": self.pad.spin, "scale": self.scale.spin, "batch": self.batch, "seed": self.seed,
                  "init_std": self.init_std, "window": self.window.spin, "n_features": self.n_features,
                  "global_tokens": self.global_tokens.spin, "summary_block": self.summary_block.spin}
        for key, spin in ranged.items():
            spin.out_of_range.connect(lambda v, k=key, sp=spin: self._refused(k, sp, v))

    def _refused(self, key: str, spin: QSpinBox | QDoubleSpinBox, value: float) -> None:
        others = {"window": self.tr("sliding window"), "summary_block": self.tr("block summaries"),
                  "n_features": self.tr("random features m")}
        name = self._labels[key].text() if key in self._labels else others[key]
        fmt = (lambda v: f"{v:g}") if isinstance(spin, QDoubleSpinBox) else (lambda v: f"{v:.0f}")
        self.message.emit(self.tr("{field} accepts {lo} to {hi}: {value} is out of range").format(
            field=name, lo=fmt(spin.minimum()), hi=fmt(spin.maximum()), value=f"{value:g}"))

    def _on_tokens(self) -> None:
        words = tuple(self.tokens.text().split())[: C.SEQ_MAX]
        if words == (self._sentence or ()):
            return
        self._sentence = words or None
        self._request(tokens=words or None)

    def fit_sentence(self, seq_len: int) -> tuple[str, ...] | None:
        """The typed sentence at query length `seq_len`: its first words, or all of them and
        filler tokens (FILLER, equal embeddings like padding tokens); None without one."""
        words = self._sentence
        if not words:
            return None
        return words[:seq_len] if seq_len <= len(words) else words + (FILLER,) * (seq_len - len(words))

    def _on_seq_len(self, value) -> None:
        tokens = self.fit_sentence(int(value))
        if tokens is None:
            self._request(seq_len=int(value))
        else:
            self._request(tokens=tokens)

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
        for s in (self.d_model, self.seq_len, self.kv_len, self.window, self.pad, self.scale,
                  self.global_tokens, self.summary_block):
            s.flush()

    # ---- mirror ----------------------------------------------------------------------
    @property
    def config(self) -> AttentionConfig:
        """The state's config (the controls keep no copy)."""
        return self.state.config

    def refresh(self) -> None:
        """Show the state's config in every widget again, the offered choices rebuilt (a
        refused edit put back, a new language, another set of available backends)."""
        self._mirror(self.state.config, None)

    def _mirror(self, cfg: AttentionConfig, last: AttentionConfig | None = None) -> None:
        """Show `cfg` in every widget (no signals), offering only values valid with it;
        `last`: the config shown before (stepping seeds then updates one spin box)."""
        if last is not None and cfg.seed != last.seed and cfg == last.replace(seed=cfg.seed):  # stepping seeds: one spin box
            with QSignalBlocker(self.seed):
                set_spin(self.seed, cfg.seed)
            return
        blockers = [QSignalBlocker(w) for w in (
            self.heads, self.kv_heads, self.batch, self.tokens, self.cross, self.causal, self.window_on,
            self.mask_value, self.kernel, self.n_features, self.summary_on, self.scale_mode, self.prescale_q, self.dtype, self.positional, self.backend,
            self.device, self.seed, self.init_xavier, self.init_std)]
        if self._fresh("shape", (cfg.d_model, cfg.n_heads, cfg.kv_heads, cfg.positional)):
            step = cfg.n_heads * (2 if C.needs_even_head_dim(cfg.positional) else 1)
            self.d_model.set_range(step, max(C.D_MODEL_MAX, step), step)
            set_items(self.heads, [(str(h), h) for h in C.allowed_heads(cfg.d_model, cfg.positional)],
                       cfg.n_heads)
            set_items(self.kv_heads, [(C.kv_label(cfg.n_heads, g), g) for g in C.allowed_kv_heads(cfg.n_heads)],
                       cfg.kv_heads)
            self.group_map.setText(self._group_map_html(cfg))
            self.head_dim.setText(self.tr("{head_dim}  (scale 1/√{head_dim} = {scale})").format(
                head_dim=cfg.head_dim, scale=f"{1 / math.sqrt(cfg.head_dim):.3g}"))
        else:  # same choices offered: only show the values (a refused edit is put back here)
            self.heads.setCurrentIndex(max(self.heads.findData(cfg.n_heads), 0))
            self.kv_heads.setCurrentIndex(max(self.kv_heads.findData(cfg.kv_heads), 0))
        if self._fresh("positional", (cfg.d_model, cfg.n_heads, cfg.positional, cfg.kernel)):
            set_enabled_items(self.positional, {p: self._positional_refusal(cfg, p) for p in POSITIONALS})
        self.d_model.set_value(cfg.d_model)
        set_spin(self.batch, cfg.batch)
        if cfg.tokens is None:
            self._sentence = None
        elif self.fit_sentence(len(cfg.tokens)) != tuple(cfg.tokens):
            self._sentence = tuple(cfg.tokens)  # a new sentence (typed, a preset, a session)
        text = " ".join(self._sentence) if self._sentence else ""
        if self.tokens.text().split() != text.split():
            self.tokens.setText(text)
            self.tokens.setCursorPosition(0)  # show the start of the sentence
        self.sentence_note.setText(self._sentence_note(cfg))
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
        self.kernel.setCurrentIndex(self.kernel.findData(cfg.kernel))
        set_enabled_items(self.kernel, {k: self._kernel_refusal(cfg, k) for k in KERNELS})
        set_spin(self.n_features, cfg.n_features)
        self.n_features.setVisible(cfg.kernel == "performer")  # m is performer's alone
        self.global_tokens.set_range(0, max(cfg.key_len, 1), 1)
        self.global_tokens.set_value(cfg.global_tokens)
        self.summary_block.set_range(1, max(cfg.key_len, 1), 1)
        self.summary_on.setChecked(cfg.summary_block is not None)
        self.summary_block.set_value(cfg.summary_block if cfg.summary_block is not None
                                     else max(1, cfg.key_len // 4))
        self.summary_block.setEnabled(cfg.summary_block is not None)
        mode = "default" if cfg.scale is None else ("none" if cfg.scale == 1.0 else "custom")
        self.scale_mode.setCurrentIndex(self.scale_mode.findData(mode))
        self.scale.set_value(cfg.effective_scale, exact=mode != "custom")
        self.scale.setEnabled(mode == "custom")
        self.prescale_q.setChecked(cfg.prescale_q)
        self.dtype.setCurrentIndex(self.dtype.findData(cfg.dtype))
        self.positional.setCurrentIndex(self.positional.findData(cfg.positional))
        self.backend.setCurrentIndex(self.backend.findData(cfg.backend))
        self.device.setCurrentIndex(self.device.findData(cfg.device))
        set_enabled_items(self.backend, engine.available_backends(cfg.device, cfg.dtype))
        cuda = engine.available_backends("cuda", cfg.dtype).get("eager")
        set_enabled_items(self.device, {"cpu": None, "cuda": cuda})
        set_spin(self.seed, cfg.seed)
        self.init_xavier.setChecked(cfg.init_std is None)
        if cfg.init_std is not None:
            set_spin(self.init_std, cfg.init_std)
        self.init_std.setEnabled(cfg.init_std is not None)
        del blockers

    def _sentence_note(self, cfg: AttentionConfig) -> str:
        n = len(self._sentence or ())
        if not n or cfg.seq_len == n:
            return ""
        if cfg.seq_len < n:
            return self.tr("first {S} of {n} words (the rest returns with S)").format(S=cfg.seq_len, n=n)
        return self.tr("{n} words + {k} filler tokens ‘{filler}’").format(n=n, k=cfg.seq_len - n, filler=FILLER)

    def _fresh(self, section: str, key: tuple) -> bool:
        """True (and remembered) when `section`'s offered choices were last built for other
        config fields than `key`: set_config rebuilds item lists, ranges and the texts that
        carry values only then (every mirror of a dragged slider did all of it)."""
        if self._mirrored.get(section) == key:
            return False
        self._mirrored[section] = key
        return True

    def _group_map_html(self, cfg: AttentionConfig) -> str:
        parts = []
        for g, heads in C.group_map(cfg):
            color = CATEGORY_COLORS[g % len(CATEGORY_COLORS)]
            qs = ",".join(map(str, heads)) if len(heads) <= 4 else f"{heads[0]}–{heads[-1]}"
            parts.append(f"<span style='color:{color}'>●</span>kv{g}←q{html.escape(qs)}")
        if len(parts) > GROUP_MAP_PARTS:
            parts = [*parts[:GROUP_MAP_PARTS - 1], self.tr("… ({n} groups)").format(n=len(parts))]
        return f"<b>{cfg.attention_kind}</b>: " + " · ".join(parts)
