"""`patching`: which heads, and which positions of the residual stream, carry the answer.

engine.models.patching.activation_patching: a clean and a corrupted text of the same token
length, a metric at the last position (logit(answer), or logit(answer) − logit(wrong)); the
corrupted text is run again with one activation taken from the clean run, and the effect is
(patched − corrupted) / (clean − corrupted): 1 = that activation alone restores the clean
metric, 0 = it changes nothing. Left, one heatmap per (layer, head) (the head's output
before W_O, every position); right, per (layer, position) of the residual stream entering the
layer. The estimate (attribution patching: one backward pass) is drawn at once; the exact
method runs one forward pass per patched batch, with progress and Cancel.

The toolbar holds the clean text (the model's text unless typed), the corrupted one (made by
"Corrupt": engine.models.patching.corrupt_text swaps the first half of the tokens, a new
draw at each press), the answer (default: the model's top prediction on the clean text) and
an optional wrong token. The figure names both texts, the swapped tokens marked. A click on
a head's cell selects that head, a position's cell its layer and position, in every model
panel.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QProgressBar, QPushButton

from engine.numbers import fixed

from ..figures.cell_text import CellTexts, contrast_colours
from ..figures.heatmap import Heatmap, colorize
from ..figures.plots import (
    Drawn,
    cache_static_items,
    nice_ceil,
    set_axis_label,
    set_bar_levels,
    set_label_text,
    style_colorbar,
)
from ..figures.text import RunsLabel, short_token
from ..figures.themes import SIGNED_CMAP, Theme
from ..figures.token_axis import TokenAxis
from .analysis import AnalysisPanel
from .base import register_panel

#: method key (the engine's) → its menu text
METHODS = {
    "attribution": QT_TRANSLATE_NOOP("PatchingPanel", "estimate (attribution patching, one backward pass)"),
    "exact": QT_TRANSLATE_NOOP("PatchingPanel", "exact (one forward pass per batch of patches)"),
}
#: heads or positions patched per forward pass (engine.models.patching.DEFAULT_BATCH)
BATCH = 16
#: decimals written in the cells by the columns a grid has: (at most this many columns,
#: decimals); a wider grid writes none (the hover readout names every cell). The heads grid
#: gets 2/5 of the width, the positions grid 3/5.
HEAD_DIGITS = ((6, 2), (10, 1))
POSITION_DIGITS = ((12, 2), (20, 1))
#: tokens of each text written above the grids (the grids' axes name every position)
SHOWN_TOKENS = 32


def cell_number(value: float, digits: int) -> str:
    """An effect as a cell writes it: `digits` decimals, no "-0.0"."""
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _tr(text: str) -> str:
    return QCoreApplication.translate("PatchingPanel", text)


@dataclass(eq=False)
class PatchPair:
    """A job's result: the engine's PatchResult over heads (L, H) and over positions (L, S),
    and whether the answer was the model's own prediction (none typed)."""

    heads: object
    positions: object
    predicted: bool
    #: the metric's scale (engine.models.metric_scale.logit_spread: the logits' spread at the
    #: last position of the clean text, logit units); 0 = not known
    scale: float = 0.0

    def within_noise(self) -> bool:
        """The clean–corrupted gap is under NOISE_SHARE of the metric's scale: the effects
        divide noise by noise and are not ranked."""
        from engine.models.metric_scale import within_noise

        return within_noise(self.heads.clean_metric, self.heads.corrupted_metric, self.scale)


def patch_job(model, clean: str, corrupted: str, answer: str, wrong: str, method: str):
    """The job (in the model's worker): heads then positions, progress over both."""
    def job(j) -> PatchPair:
        ans = answer or model.top_prediction(clean, progress=j.check)
        s = len(model.tokenize(clean)[0])
        n_heads = model.n_layers * math.ceil(model.n_heads / BATCH)
        total = n_heads + model.n_layers * math.ceil(s / BATCH) if method == "exact" else 2
        kw = {"wrong": wrong or None, "method": method, "batch": BATCH}
        heads = model.activation_patching(clean, corrupted, ans, over="heads",
                                          progress=lambda d, _t: j.progress(d, total), **kw)
        done = n_heads if method == "exact" else 1
        positions = model.activation_patching(clean, corrupted, ans, over="positions",
                                              progress=lambda d, _t: j.progress(done + d, total), **kw)
        from engine.models.metric_scale import logit_spread

        scale = logit_spread(model, clean, difference=bool(wrong), progress=j.check)  # one more forward
        return PatchPair(heads, positions, not answer, scale)
    return job


def corrupt_job(model, clean: str, seed: int):
    def job(_j) -> str:
        from engine.models.patching import corrupt_text

        return corrupt_text(model, clean, seed)
    return job


@register_panel
class PatchingPanel(AnalysisPanel):
    name = "patching"
    title = QT_TRANSLATE_NOOP("Panel", "Patching: which heads carry the answer")
    readable_size = (560, 400)  # (the window keeps a dock in front at least this large)

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        self.pair: PatchPair | None = None
        self.seed = 0
        self._model_text: str | None = None  # the model's text the clean field was given
        self._corrupt_of: str | None = None  # the clean text "Corrupt" made the corrupted one of
        self._stopped = None  # the exact run's key, cancelled: not asked again until Run
        self._pair_key = None  # the key of the result `pair` holds (drawn until the next comes)
        #: what the cells' numbers were drawn from: (pair, theme); see plots.Drawn
        self._painted = Drawn()
        # ---- toolbar: the texts ------------------------------------------------------------
        self.clean_label, self.corrupted_label = QLabel(), QLabel()
        self.clean, self.corrupted = QLineEdit(), QLineEdit()
        self.clean.setObjectName("patching_clean")
        self.corrupted.setObjectName("patching_corrupted")
        for label, edit in ((self.clean_label, self.clean), (self.corrupted_label, self.corrupted)):
            label.setBuddy(edit)
            edit.editingFinished.connect(self.update_request)
            edit.setClearButtonEnabled(True)
            self.toolbar.addWidget(label)
            self.toolbar.addWidget(edit, 1)
        # a typed corrupted text is the user's: a new clean text no longer re-corrupts it
        self.corrupted.textEdited.connect(self._corrupted_typed)
        self.corrupt_button = QPushButton()
        self.corrupt_button.setObjectName("patching_corrupt")
        self.corrupt_button.clicked.connect(self.corrupt)
        self.toolbar.addWidget(self.corrupt_button)
        self.toolbar.addSpacing(24)  # room for the "?" button
        # ---- second row: the metric, the method, the run -------------------------------------
        row = QHBoxLayout()
        row.setContentsMargins(6, 0, 6, 0)
        self.answer_label, self.wrong_label = QLabel(), QLabel()
        self.answer, self.wrong = QLineEdit(), QLineEdit()
        self.answer.setObjectName("patching_answer")
        self.wrong.setObjectName("patching_wrong")
        for label, edit in ((self.answer_label, self.answer), (self.wrong_label, self.wrong)):
            label.setBuddy(edit)
            edit.setMinimumWidth(90)
            edit.setMaximumWidth(160)
            edit.setClearButtonEnabled(True)
            edit.editingFinished.connect(self.update_request)
            row.addWidget(label)
            row.addWidget(edit)
        self.method_label = QLabel()
        self.method = QComboBox()
        self.method.setObjectName("patching_method")
        # the menu texts are long: the closed box shows their start (the list shows them whole),
        # so the panel fits beside model_head and the lesson in a 1600-px window (lesson 14)
        self.method.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.method.setMinimumContentsLength(18)
        for key in METHODS:
            self.method.addItem("", key)
        self.method_label.setBuddy(self.method)
        self.method.currentIndexChanged.connect(lambda _i: self.update_request())
        row.addSpacing(12)
        row.addWidget(self.method_label)
        row.addWidget(self.method)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 100)
        self.progress_bar.setMaximumWidth(160)
        self.progress_bar.hide()
        self.run_button = QPushButton()
        self.run_button.setObjectName("patching_run")
        self.run_button.clicked.connect(self._run_or_cancel)
        self.run_button.hide()
        row.addWidget(self.progress_bar)
        row.addWidget(self.run_button)
        row.addStretch(1)
        self.layout().insertLayout(1, row)
        # ---- the texts, the two grids, one colour bar, the legend ------------------------------
        self.texts_label = RunsLabel("", justify="left")
        self.graphics.ci.addItem(self.texts_label, 0, 0, 1, 3)
        self.heads = Heatmap(self.hover, SIGNED_CMAP, on_click=self._click_head, describe=self.describe_head)
        self.heads.vb.setMouseEnabled(x=False, y=False)
        self.graphics.ci.addItem(self.heads.cell, 1, 0)
        self.head_texts = CellTexts()
        self.heads.vb.addItem(self.head_texts, ignoreBounds=True)
        self.positions = Heatmap(self.hover, SIGNED_CMAP, on_click=self._click_position,
                                 describe=self.describe_position)
        self.corrupted_axis = TokenAxis("top")
        self.positions.item.setAxisItems({"top": self.corrupted_axis})
        self.positions.item.showAxis("top")
        self.graphics.ci.addItem(self.positions.cell, 1, 1)
        self.position_texts = CellTexts()
        self.positions.vb.addItem(self.position_texts, ignoreBounds=True)
        self.cbar = pg.ColorBarItem(values=(-1.0, 1.0), colorMap=pg.colormap.get(SIGNED_CMAP),
                                    interactive=False, width=12)
        self.cbar.axis.enableAutoSIPrefix(False)
        set_bar_levels(self.cbar, (-1.0, 1.0))
        self.graphics.ci.addItem(self.cbar, 1, 2)
        self.legend = RunsLabel("", justify="left")
        self.graphics.ci.addItem(self.legend, 2, 0, 1, 3)
        lay = self.graphics.ci.layout
        lay.setColumnStretchFactor(0, 2)
        lay.setColumnStretchFactor(1, 3)
        self.retranslate_ui()

    # ---- language --------------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        self.clean_label.setText(self.tr("clean"))
        self.corrupted_label.setText(self.tr("corrupted"))
        self.clean.setToolTip(self.tr("The clean text (the model's text unless you type another)"))
        self.corrupted.setToolTip(self.tr("The corrupted text: the same number of tokens as the clean one"))
        self.corrupt_button.setText(self.tr("Corrupt"))
        self.corrupt_button.setToolTip(self.tr("Swap the first half of the clean text's tokens for "
                                               "other tokens (a new draw at each press)"))
        self.answer_label.setText(self.tr("answer"))
        self.answer.setPlaceholderText(self.tr("the model's prediction"))
        self.answer.setToolTip(self.tr("The token whose logit at the last position is the metric; "
                                       "empty: the model's top prediction on the clean text"))
        self.wrong_label.setText(self.tr("wrong"))
        self.wrong.setPlaceholderText(self.tr("optional"))
        self.wrong.setToolTip(self.tr("A wrong token: the metric becomes logit(answer) − logit(wrong)"))
        self.method_label.setText(self.tr("method"))
        for i, key in enumerate(METHODS):
            self.method.setItemText(i, _tr(METHODS[key]))
        super().retranslate_ui()

    def busy_text(self, kind: str) -> str:
        """What runs (the job's own method: the combo box may have changed since)."""
        key = self._pending_key()
        if key[:1] == ("corrupt",):
            return self.tr("Corrupting the clean text…")
        if key[-1:] == ("exact",):
            return self.tr("Patching every head and position exactly…")
        if self._stopped is not None and self.pair is not None and self._pair_key != key:
            # cancelled: the estimate runs, the plots still hold an earlier result (its titles say which)
            return self.tr("Exact patching cancelled. Until the estimate comes, the plots show the "
                           "earlier {method} result; estimating…").format(method=self._pair_method())
        return self.tr("Estimating the patching effects (one backward pass)…")

    def _pair_method(self) -> str:
        return self.tr("estimate") if self.pair.heads.method == "attribution" else self.tr("exact")

    # ---- the model -----------------------------------------------------------------------
    def set_model(self, controller) -> None:
        if self.controller is not controller:
            controller.analyses.progress.connect(self._on_patch_progress)
        super().set_model(controller)

    def copy_choices(self, source: PatchingPanel) -> None:
        """A figure of `source`: an exact run cancelled there is not run again here."""
        self.seed, self._stopped = source.seed, source._stopped

    def forget_model(self) -> None:
        """Another model: its tokens differ, so a corrupted text made here is made again."""
        self._stopped = None
        if self._corrupt_of is not None:
            self.corrupted.clear()
            self._corrupt_of = None
        super().forget_model()  # (draw_refusal drops the pair)

    def _corrupted_typed(self, _text: str) -> None:
        self._corrupt_of = None

    def detach(self) -> None:
        super().detach()
        c = self.controller
        if c is not None:
            try:
                c.analyses.progress.disconnect(self._on_patch_progress)
            except (RuntimeError, TypeError):
                pass

    # ---- what to compute ---------------------------------------------------------------------
    def method_key(self) -> str:
        return self.method.currentData() or "attribution"

    def clean_text(self) -> str:
        """The clean text: the field, following the model's text until another is typed."""
        model_text = self.model_text()
        shown = self.clean.text()
        if not shown.strip() or shown == self._model_text:
            if shown != model_text:
                self.clean.setText(model_text)
            self._model_text = shown = model_text
        return shown

    def _pending_key(self) -> tuple:
        """The key of the patching job running now (() when none)."""
        c = self.controller
        key = c.analyses.pending("patching") if c is not None else None
        return key if isinstance(key, tuple) else ()

    def corrupt(self) -> None:
        """The "Corrupt" button: a new draw of the corrupted text."""
        self.seed += 1
        self.corrupted.clear()
        self._corrupt_of = None
        self.update_request()

    def patch_key(self, clean: str) -> tuple:
        return ("patch", clean, self.corrupted.text(), self.answer.text().strip(),
                self.wrong.text().strip(), self.method_key())

    def needs(self):
        model = self.loaded
        if not model.summary.causal:
            return self.tr("No patching for {name}: it is an encoder (bidirectional), which "
                           "predicts no next token to restore; open a causal language model "
                           "(GPT-2, Llama, Qwen2, a training-lab run).").format(name=model.name)
        clean = self.clean_text()
        made = self._corrupt_of is not None and self._corrupt_of != clean
        if not self.corrupted.text().strip() or made:  # none yet, or made of another clean text
            key = ("corrupt", clean, self.seed)
            got = self.controller.analyses.get("patching", key)
            if got is None:
                return [("patching", key, corrupt_job(model, clean, self.seed))]
            if not got.ok:
                return got.error
            self.corrupted.setText(got.result)
            self._corrupt_of = clean
        key = self.patch_key(clean)
        if key[-1] == "exact" and key == self._stopped:  # cancelled: the estimate meanwhile
            key = (*key[:-1], "attribution")
        _, clean, corrupted, answer, wrong, method = key
        return [("patching", key, patch_job(model, clean, corrupted, answer, wrong, method))]

    # ---- progress and cancel -----------------------------------------------------------------
    def _exact_running(self) -> bool:
        key = self._pending_key()
        return key[:1] == ("patch",) and key[-1] == "exact"

    def _on_patch_progress(self, kind: str, done: float, total: float) -> None:
        if kind == "patching" and total > 0:
            self.progress_bar.setValue(int(100 * done / total))

    def _run_or_cancel(self) -> None:
        if self._exact_running():
            self.cancel()
        else:
            self._stopped = None
            self.update_request()

    def cancel(self) -> None:
        """Stop the exact run (the estimate is drawn meanwhile; "Run exact" starts it again)."""
        c = self.controller
        if c is not None and self._exact_running():
            self._stopped = c.analyses.pending("patching")
            c.analyses.cancel("patching")

    def _update_run_controls(self) -> None:
        running = self._exact_running()
        stopped = self.method_key() == "exact" and self._stopped is not None and not running
        self.progress_bar.setVisible(running)
        if not running:
            self.progress_bar.setValue(0)
        self.run_button.setVisible(running or stopped)
        self.run_button.setText(self.tr("Cancel") if running else self.tr("Run exact"))

    # ---- drawing -----------------------------------------------------------------------------
    def draw_refusal(self, line: str) -> None:
        self.pair = None
        self._painted.forget()  # (the cells are cleared: the same pair again draws them again)
        self._update_run_controls()
        for hm, texts in ((self.heads, self.head_texts), (self.positions, self.position_texts)):
            hm.set_data(np.full((1, 1), np.nan, dtype=np.float32), (-1.0, 1.0), source=("refused",))
            hm.set_labels([""], [""])
            hm.set_marker(None)
            texts.clear()
        self.corrupted_axis.set_labels([""])
        self.cbar.hide()
        name = html.escape(self.loaded.name) if self.loaded is not None else ""
        self.heads.set_title(self.tr("<b>Patching</b> · {name}").format(name=name))
        self.positions.set_title("")
        set_label_text(self.texts_label, "")
        self.say_refusal_below(self.legend, line)

    def draw(self, outcomes) -> None:
        self._update_run_controls()
        got = outcomes.get("patching")
        c = self.controller
        key = c.analyses.pending("patching") if got is None else None
        if got is not None:
            if isinstance(got.result, str) and got.ok:  # the corrupted text came (a figure waited)
                self.update_request()
                return
            if not got.ok:
                self.draw_refusal(got.error)
                return
            self.pair = got.result
            self._pair_key = self.asked.get("patching")
        if self.pair is None or (key is not None and key[:1] == ("corrupt",)):
            return
        self.draw_grids()
        if (got is not None and self._stopped is not None and self.method_key() == "exact"
                and not self._exact_running()):  # (the estimate itself: until then, busy_text)
            self._set_status(self.tr("Exact patching cancelled: the estimate is shown. Press Run "
                                     "exact to start it again."), warning=True)
        cache_static_items(self.graphics.scene())

    def levels(self) -> tuple[float, float]:
        """Symmetric colour levels: ±1 (the clean metric), wider when an effect overshoots."""
        m = max(float(np.nanmax(np.abs(self.pair.heads.effect))),
                float(np.nanmax(np.abs(self.pair.positions.effect))), 1.0)
        m = 1.0 if m <= 1.0 else nice_ceil(m)
        return (-m, m)

    def draw_grids(self) -> None:
        h, p, th = self.pair.heads, self.pair.positions, self.theme
        levels = self.levels()
        self.cbar.show()
        set_bar_levels(self.cbar, levels)
        L, H = h.effect.shape
        eh, ep = h.effect.astype(np.float32), p.effect.astype(np.float32)
        self.heads.set_data(eh, levels, source=(self.pair,))
        self.heads.set_labels([str(i) for i in range(L)], [str(i) for i in range(H)])
        self.positions.set_data(ep, levels, source=(self.pair,))
        swapped = [a != b for a, b in zip(p.clean_tokens, p.corrupted_tokens, strict=True)]
        self.positions.set_labels([str(i) for i in range(L)], [short_token(t, 10) for t in p.clean_tokens])
        self.corrupted_axis.set_labels([short_token(t, 10) if s else "·"
                                        for t, s in zip(p.corrupted_tokens, swapped, strict=True)])
        set_axis_label(self.heads.item, "left", self.tr("layer"))
        set_axis_label(self.heads.item, "bottom", self.tr("head"))
        set_axis_label(self.positions.item, "left", self.tr("residual stream entering layer"))
        set_axis_label(self.positions.item, "bottom", self.tr("position (its clean token)"))
        set_axis_label(self.positions.item, "top", self.tr("its corrupted token (· the same)"))
        set_axis_label(self.cbar.axis, "right", self.tr("effect (1 = restores the clean metric)"))
        method = self.tr("estimate") if h.method == "attribution" else self.tr("exact")
        self.heads.set_title(self.tr("<b>Each head</b> patched · {method}").format(method=method))
        self.positions.set_title(self.tr("<b>Each position</b> of the residual stream · {method}").format(
            method=method))
        for slot, hm, texts, data, rule in (("heads", self.heads, self.head_texts, eh, HEAD_DIGITS),
                                            ("positions", self.positions, self.position_texts, ep,
                                             POSITION_DIGITS)):
            if not self._painted.changed(slot, self.pair, th):
                continue  # the same pair in the same theme: its numbers are drawn (a cell move)
            digits = next((d for n, d in rule if data.shape[1] <= n), None)
            if digits is not None and data.shape[0] <= 24:
                rgba, _nan = colorize(data, hm.lut, levels)
                texts.set_texts([[cell_number(v, digits) for v in row] for row in data.tolist()],
                                contrast_colours(rgba), th.font(8.5))
            else:
                texts.clear()
        set_label_text(self.texts_label, self.texts_html(p, swapped), color=th.foreground, size=th.pt(9.0))
        set_label_text(self.legend, self.legend_html(), color=th.foreground, size=th.pt(8.5))
        self.draw_selection()

    def texts_html(self, p, swapped: list[bool]) -> str:
        """The clean and the corrupted text side by side, the swapped tokens marked."""
        th = self.theme

        def text(tokens: list[str], colour: str) -> str:
            shown = tokens if len(tokens) <= SHOWN_TOKENS else [*tokens[:SHOWN_TOKENS], "…"]
            return " ".join(f"<span style='color:{colour}'><b>{html.escape(short_token(t, 12))}</b></span>"
                            if i < len(swapped) and swapped[i] else html.escape(short_token(t, 12))
                            for i, t in enumerate(shown))

        return self.tr("<b>clean</b> {clean}<br><b>corrupted</b> {corrupted}").format(
            clean=text(p.clean_tokens, th.accent2), corrupted=text(p.corrupted_tokens, th.accent))

    def legend_html(self) -> str:
        h = self.pair.heads
        metric = f"logit({html.escape(short_token(h.answer, 16))})"
        if h.wrong is not None:
            metric += f" − logit({html.escape(short_token(h.wrong, 16))})"
        where = self.tr(" (the model's prediction)") if self.pair.predicted else ""
        H = h.effect.shape[1]
        order = np.argsort(-h.effect, axis=None)[:3]
        best = ", ".join(self.tr("layer {layer} · head {head} {value}").format(
            layer=int(i // H), head=int(i % H), value=fixed(h.effect.flat[i])) for i in order)
        how = (self.tr("the estimate: ∂metric/∂activation · (clean − corrupted), one backward pass "
                       "(Nanda 2023)") if h.method == "attribution"
               else self.tr("exact: one forward pass per batch of {n} patches").format(n=BATCH))
        if self.pair.within_noise():
            from engine.models.metric_scale import NOISE_SHARE

            ranked = self.tr("⚠ <b>Not ranked</b>: clean and corrupted differ by {gap}, under {share}% of "
                             "the metric's scale ({scale}, the spread of the logits at the last "
                             "position), so every effect divides noise by noise. Corrupt the text "
                             "differently or choose another answer. Method: {how}.").format(
                gap=f"{abs(h.clean_metric - h.corrupted_metric):.3g}", share=f"{100 * NOISE_SHARE:g}",
                scale=f"{self.pair.scale:.3g}", how=how)
        else:
            ranked = self.tr("Largest head effects: {best}. Method: {how}.").format(best=best, how=how)
        return "<br>".join([
            self.tr("Metric at the last position: <b>{metric}</b>{where}; clean {clean}, corrupted "
                    "{corrupted}.").format(metric=metric, where=where, clean=fixed(h.clean_metric, 3),
                                           corrupted=fixed(h.corrupted_metric, 3)),
            self.tr("Effect = (patched − corrupted) / (clean − corrupted): 1 = the patch alone "
                    "restores the clean metric, 0 = no change. Click a cell to select it."),
            ranked])

    def draw_selection(self) -> None:
        if self.pair is None or self.loaded is None:
            return
        L, H = self.pair.heads.effect.shape
        layer, head = self.model_layer(), int(self.selection.head)
        if layer < L and head < H:
            self.heads.set_marker("cell", layer, head)
        S = self.pair.positions.effect.shape[1]
        self.positions.set_marker("cell", min(layer, L - 1), min(int(self.selection.query), S - 1))

    # ---- interaction -------------------------------------------------------------------------
    def _click_head(self, row: int, col: int) -> None:
        self.selection.set(head=col, layer=self.layer_index(row))

    def _click_position(self, row: int, col: int) -> None:
        self.selection.set(query=col, layer=self.layer_index(row))

    def describe_head(self, row: int, col: int) -> str:
        if self.pair is None:
            return ""
        return self.tr("layer {layer} · head {head} · effect {value}").format(
            layer=row, head=col, value=fixed(self.pair.heads.effect[row, col], 3))

    def describe_position(self, row: int, col: int) -> str:
        if self.pair is None:
            return ""
        p = self.pair.positions
        return self.tr("entering layer {layer} · position {pos} “{clean}” (corrupted “{corrupted}”) · "
                       "effect {value}").format(layer=row, pos=col, clean=short_token(p.clean_tokens[col], 16),
                                                corrupted=short_token(p.corrupted_tokens[col], 16),
                                                value=fixed(p.effect[row, col], 3))

    def heatmaps(self):
        return []  # not linked with the attention layer's heatmaps

    # ---- look --------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.graphics.setBackground(theme.background)
        for hm in (self.heads, self.positions):
            hm.apply_theme(theme)
            hm.marker.setPen(theme.pen(theme.foreground, 2.5))  # (the accent is one of the map's reds)
        style_colorbar(self.cbar, theme)
        cache_static_items(self.graphics.scene())
        self.update_request()
