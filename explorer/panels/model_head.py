"""`model_head`: one head of a real model, large, and the token-deletion test.

Left: the selected layer/head's attention for the current text, token
labels on both axes; hovering a cell puts its weight in the status bar; the
title names the KV head the query head reads (GQA) and the head's pattern.

The deletion test (engine.models.LoadedModel.deletion_test): a click on a
token button drops that token (or masks it) and runs the model again.
Right, top: how much each head's attention changed (layers × heads, mean
total-variation distance over the remaining queries: 0 = the same, 1 =
entirely different keys); right, bottom: how much each remaining token's
final hidden state changed. "Show: after deletion" draws the selected head
as it attends without the token.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QWidget,
)

from engine.numbers import tidy

from ..figures.heatmap import Heatmap, TokenAxis
from ..figures.plots import (
    Drawn,
    HighlightBars,
    cache_static_items,
    nice_ceil,
    set_axis_label,
    set_bar_levels,
    set_plot_title,
    style_colorbar,
    style_plot,
)
from ..figures.text import titled
from ..figures.themes import WEIGHTS_CMAP, Theme, qt_palette
from .base import Panel, register_panel
from .model_grid import pattern_name

CHANGE_CMAP = "inferno"
#: tokens longer than this are cut on their buttons (the tooltip has the whole token)
BUTTON_CHARS = 12


class TokenChip(QLabel):
    """One token of the text as a clickable chip: a click (or Space/Enter) drops it.

    A label rather than a button so that a figure of the panel keeps the tokenized
    text (figures leave buttons out); the dropped token is drawn highlighted.
    """

    def __init__(self, text: str, on_click, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(text)
        self._on_click = on_click
        self._checked = False
        self._pressed = False
        self.setObjectName("token_chip")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setProperty("dropped", False)

    def isChecked(self) -> bool:
        return self._checked

    def setChecked(self, checked: bool) -> None:
        if checked != self._checked:
            self._checked = checked
            self.setProperty("dropped", checked)
            self.style().unpolish(self)
            self.style().polish(self)

    def mousePressEvent(self, event) -> None:
        self._pressed = event.button() == Qt.MouseButton.LeftButton and self.isEnabled()
        event.accept()

    def mouseReleaseEvent(self, event) -> None:
        if self._pressed and self.rect().contains(event.position().toPoint()):
            self._on_click()
        self._pressed = False
        event.accept()

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._on_click()
            event.accept()
        else:
            super().keyPressEvent(event)


@register_panel
class ModelHeadPanel(Panel):
    name = "model_head"
    title = QT_TRANSLATE_NOOP("Panel", "Model: one head and the deletion test")
    readable_size = (380, 360)
    requires_model = True

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        hover = self.hover
        self.controller = None
        self.trace = None
        self.deletion = None
        self._tokens_on_buttons: list[str] | None = None
        self._vmax: float | None = None
        #: what the large map was drawn from: (trace shown, layer, head); see plots.Drawn
        self._painted = Drawn()
        # ---- toolbar: layer, head, what to show, deletion mode ------------------------------
        self.layer_label, self.head_label = QLabel(), QLabel()
        self.layer = QSpinBox()
        self.head = QSpinBox()
        self.layer_label.setBuddy(self.layer)
        self.head_label.setBuddy(self.head)
        self.layer.valueChanged.connect(lambda v: self.selection.set(layer=v))
        self.head.valueChanged.connect(lambda v: self.selection.set(head=v))
        self.show_label = QLabel()
        self.show_what = QComboBox()
        self.show_what.addItems(["", ""])
        self.show_label.setBuddy(self.show_what)
        self.show_what.currentIndexChanged.connect(lambda _i: self.draw_selection())
        self.mode_label = QLabel()
        self.mode = QComboBox()
        self.mode.addItem("", "remove")
        self.mode.addItem("", "mask")
        self.mode_label.setBuddy(self.mode)
        self.mode.currentIndexChanged.connect(self._on_mode)
        self.clear = QToolButton()
        self.clear.clicked.connect(self._on_clear)
        for w in (self.layer_label, self.layer, self.head_label, self.head, self.show_label,
                  self.show_what):
            self.toolbar.addWidget(w)
        self.toolbar.addStretch(1)
        for w in (self.mode_label, self.mode):
            self.toolbar.addWidget(w)
        self.toolbar.addSpacing(self.help_button.width())  # (the panel's "?" covered Clear)
        # ---- one button per token --------------------------------------------------------------
        strip = QWidget()
        row = QHBoxLayout(strip)
        row.setContentsMargins(6, 0, 6, 0)
        self.drop_label = QLabel()
        self.token_box = QWidget()
        self.token_row = QHBoxLayout(self.token_box)
        self.token_row.setContentsMargins(0, 0, 0, 0)
        self.token_row.setSpacing(2)
        self.token_row.addStretch(1)
        self.token_scroll = QScrollArea()
        self.token_scroll.setWidget(self.token_box)
        self.token_scroll.setWidgetResizable(True)
        self.token_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.token_scroll.viewport().setAutoFillBackground(False)  # the panel's background shows through
        self.token_box.setAutoFillBackground(False)
        self.token_scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.token_scroll.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.token_scroll.setFixedHeight(self.fontMetrics().height() + 22)
        row.addWidget(self.drop_label)
        row.addWidget(self.token_scroll, 1)
        row.addWidget(self.clear)  # (undoes the deletions of the tokens beside it)
        self.layout().insertWidget(1, strip)
        self.token_buttons: list[TokenChip] = []
        # ---- plots -------------------------------------------------------------------------------
        self.big = Heatmap(hover, WEIGHTS_CMAP, row_title="query", col_title="key",
                           on_click=lambda r, c: self.selection.set(query=r, key=c),
                           describe=self.describe_cell)
        self.graphics.addItem(self.big.cell, row=0, col=0)
        self.cbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=WEIGHTS_CMAP, interactive=False,
                                    width=12)
        self.cbar.setImageItem([], insert_in=self.big.item)
        self.right = self.graphics.addLayout(row=0, col=1)
        self.change = Heatmap(hover, CHANGE_CMAP, row_title="layer", col_title="head",
                              on_click=lambda r, c: self.selection.set(layer=r, head=c),
                              describe=self.describe_change)
        self.right.addItem(self.change.cell, row=0, col=0)
        self.change_bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=CHANGE_CMAP,
                                          interactive=False, width=10)
        self.change_bar.axis.enableAutoSIPrefix(False)
        self.change_bar.setImageItem([], insert_in=self.change.item)
        self.hidden_axis = TokenAxis("bottom")
        self.hidden_plot = pg.PlotItem(axisItems={"bottom": self.hidden_axis})
        self.hidden_plot.hideButtons()
        self.hidden_plot.setMenuEnabled(False)
        self.hidden_plot.setMouseEnabled(x=False, y=False)
        self.hidden_plot.showGrid(y=True, alpha=0.15)
        self.hidden_bars = HighlightBars(self.hidden_plot, width=0.75)
        self.right.addItem(titled(self.hidden_plot), row=1, col=0)
        self.right.layout.setRowStretchFactor(0, 3)
        self.right.layout.setRowStretchFactor(1, 2)
        lay = self.graphics.ci.layout
        lay.setColumnStretchFactor(0, 3)
        lay.setColumnStretchFactor(1, 2)
        self.right.setPreferredWidth(10)
        self._show_deletion_plots(False)
        self.retranslate_ui()

    def resizeEvent(self, event) -> None:
        self._fit_widths(event.size().width())
        super().resizeEvent(event)

    def _fit_widths(self, width: int | None = None) -> None:
        """The head takes the whole width until a deletion test ran, then ~55%."""
        w = max(width if width is not None else self.width(), 200)
        if self.right.isVisible():
            self.big.cell.setMinimumWidth(0.48 * w)
            self.big.cell.setMaximumWidth(0.56 * w)
            self.right.setMaximumWidth(16777215)
        else:
            self.big.cell.setMinimumWidth(0)
            self.big.cell.setMaximumWidth(16777215)
            self.right.setMaximumWidth(0)

    # ---- language -----------------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        self.layer_label.setText(self.tr("layer"))
        self.head_label.setText(self.tr("head"))
        self.show_label.setText(self.tr("show"))
        self.show_what.setItemText(0, self.tr("attention"))
        self.show_what.setItemText(1, self.tr("after deletion"))
        self.show_what.setToolTip(self.tr("The head as it attends now, or after the token was "
                                          "dropped (run the deletion test first)"))
        self.mode_label.setText(self.tr("deletion"))
        self.mode.setItemText(0, self.tr("remove the token"))
        self.mode.setItemText(1, self.tr("mask the token"))
        self.mode.setToolTip(self.tr("remove: the token leaves the input (later tokens move "
                                     "left); mask: it stays but no query may attend to it"))
        self.clear.setText(self.tr("Clear"))
        self.clear.setToolTip(self.tr("Forget the deletion test"))
        self.drop_label.setText(self.tr("tokens (click one to drop it):"))
        self.big.item.setLabel("left", self.tr("query"))
        self.big.item.setLabel("bottom", self.tr("key"))
        self.change.item.setLabel("left", self.tr("layer"))
        self.change.item.setLabel("bottom", self.tr("head"))
        set_axis_label(self.cbar.axis, "right", self.tr("weight"))
        set_axis_label(self.change_bar.axis, "right", self.tr("mean TV (0 = same)"))
        self.hidden_plot.setLabel("left", self.tr("‖Δh‖ / ‖h‖"))
        self.hidden_plot.setToolTip(self.tr("How far each remaining token's final hidden state "
                                            "moved: ‖h_after − h_before‖ / ‖h_before‖"))
        self._retranslate_buttons()
        self._redraw()

    # ---- the model -------------------------------------------------------------------------------
    def set_model(self, controller) -> None:
        """Follow `controller` (a ModelController): trace, deletion result, selection."""
        if self.controller is controller:
            return
        self.controller = controller
        if self.selection is not controller.selection:
            self.follow_selection(controller.selection)
        controller.trace_changed.connect(self._on_trace)
        controller.deletion_changed.connect(self._on_deletion)
        controller.busy_changed.connect(self._on_busy)
        if controller.trace is not None:
            self._on_trace(controller.trace)
        if controller.deletion is not None:
            self._on_deletion(controller.deletion)

    def detach(self) -> None:
        super().detach()
        ctl = self.controller
        if ctl is not None:
            for signal, slot in ((ctl.trace_changed, self._on_trace), (ctl.deletion_changed, self._on_deletion),
                                 (ctl.busy_changed, self._on_busy)):
                try:
                    signal.disconnect(slot)
                except (RuntimeError, TypeError):
                    pass

    def show_frame(self, frame) -> None:
        """The attention layer's frames are not this panel's business."""

    def _on_selection_changed(self) -> None:
        self.draw_selection()

    def heatmaps(self):
        return []  # nothing to link with the attention layer's heatmaps

    def _on_trace(self, trace) -> None:
        self.trace = trace
        self._vmax = None
        for spin, n in ((self.layer, len(trace.layers)), (self.head, trace.n_heads)):
            spin.blockSignals(True)
            spin.setRange(0, n - 1)
            spin.blockSignals(False)
        self._make_buttons(trace.labels)
        self._redraw()

    def _on_deletion(self, result) -> None:
        self.deletion = result
        self._check_button(None if result is None else result.removed_index)
        if result is None and self.show_what.currentIndex() == 1:
            self.show_what.blockSignals(True)
            self.show_what.setCurrentIndex(0)
            self.show_what.blockSignals(False)
        self._redraw()

    def _on_busy(self, text: str) -> None:
        busy = bool(text) and self.controller is not None and self.controller.pending("delete")
        for b in self.token_buttons:
            b.setEnabled(not busy)

    def _on_mode(self, _index: int) -> None:
        if self.deletion is not None and self.controller is not None:
            self.controller.run_deletion(self.deletion.removed_index, self.mode.currentData())

    def _on_clear(self) -> None:
        if self.controller is not None:
            self.controller.clear_deletion()

    # ---- token buttons ------------------------------------------------------------------------------
    def _make_buttons(self, labels: list[str]) -> None:
        if labels == self._tokens_on_buttons:
            return
        self._tokens_on_buttons = list(labels)
        for b in self.token_buttons:
            self.token_row.removeWidget(b)
            b.deleteLater()
        self.token_buttons = []
        for i, text in enumerate(labels):
            short = text if len(text) <= BUTTON_CHARS else text[:BUTTON_CHARS - 1] + "…"
            b = TokenChip(short, lambda i=i: self.drop_token(i))
            self.token_row.insertWidget(i, b)
            self.token_buttons.append(b)
        self._retranslate_buttons()

    def _retranslate_buttons(self) -> None:
        labels = self._tokens_on_buttons or []
        for i, (b, text) in enumerate(zip(self.token_buttons, labels)):
            b.setToolTip(self.tr("token {i} ‘{token}’: drop it and see how every head and the "
                                 "output change").format(i=i, token=text))

    def _check_button(self, index: int | None) -> None:
        for i, b in enumerate(self.token_buttons):
            b.setChecked(i == index)

    def drop_token(self, index: int) -> int:
        """Run the deletion test for token `index` with the chosen mode (off the UI thread)."""
        self._check_button(index)
        if self.controller is None:
            return 0
        return self.controller.run_deletion(index, self.mode.currentData())

    # ---- drawing ------------------------------------------------------------------------------------
    def _redraw(self) -> None:
        if self.trace is not None:
            self.draw_deletion()
            self.draw_selection()

    def _shown_trace(self):
        """(trace to draw, after deletion?) — the deletion's "after" trace when chosen."""
        if self.show_what.currentIndex() == 1 and self.deletion is not None:
            return self.deletion.after, True
        return self.trace, False

    def head_data(self) -> np.ndarray:
        """The (S, S) weights the large heatmap shows now; in a causal model the cells a
        query may not see are NaN (drawn hatched, like the masked cells of the other panels)."""
        tr_, _after = self._shown_trace()
        sel = self.selection
        return self._shown_weights(tr_, sel.layer, sel.head)

    @staticmethod
    def _shown_weights(trace, layer: int, head: int) -> np.ndarray:
        data = trace.attentions[layer, head].numpy()
        if trace.causal:
            data = data.copy()
            data[np.triu_indices(data.shape[0], 1)] = np.nan
        return data

    def draw_selection(self) -> None:
        if self.trace is None:
            return
        tr_, after = self._shown_trace()
        sel = self.selection
        layer, head = sel.layer, sel.head
        for spin, v in ((self.layer, layer), (self.head, head)):
            if spin.value() != v:
                spin.blockSignals(True)
                spin.setValue(v)
                spin.blockSignals(False)
        if self._painted.changed("big", tr_, layer, head):  # (not on a move of the selected cell)
            data = self._shown_weights(tr_, layer, head)
            self._vmax = float(nice_ceil(max(float(np.nanmax(data)), 1e-6)))
            levels = (0.0, min(1.0, self._vmax))
            self.big.set_data(data, levels, source=(tr_, layer, head))
            set_bar_levels(self.cbar, levels)
        labels = tr_.labels
        self.big.set_labels(labels, labels)
        s = tr_.seq_len
        self.big.set_marker("cell", min(sel.query, s - 1), min(sel.key, s - 1))
        m = self.trace.metrics
        model_layer = self.trace.layers[layer]
        kv = self.trace.kv_head_of[head]
        group = self.trace.n_heads // max(1, self.trace.n_kv_heads)
        muted = self.theme.muted
        parts = [self.tr("<b>layer {layer} · head {head}</b>").format(layer=model_layer, head=head)]
        if group > 1:
            parts.append(self.tr("kv {kv} (shared by {n})").format(kv=kv, n=group))
        parts.append(html.escape(pattern_name(str(m["pattern"][layer, head]))))
        parts.append(self.tr("entropy {e:.2f}").format(e=tidy(m["entropy"][layer, head], 2)))
        if after:
            d = self.deletion
            verb = self.tr("without") if d.mode == "remove" else self.tr("masking")
            parts.append(f"<span style='color:{self.theme.accent}'>"
                         + self.tr("{verb} ‘{token}’").format(
                             verb=verb, token=html.escape(self._label(d.removed_token))) + "</span>")
        parts.append(f"<span style='color:{muted}'>{s}×{s}</span>")
        self.big.set_title(" · ".join(parts))
        if self.deletion is not None:
            self.change.set_marker("cell", layer, head)
        hl = None
        if self.deletion is not None and sel.query in self.deletion.kept:
            hl = self.deletion.kept.index(sel.query)
        if self.deletion is not None:
            self.hidden_bars.set(self.deletion.hidden_change_per_token, hl, source=(self.deletion,))

    @staticmethod
    def _label(token: str) -> str:
        from engine.models import token_label

        return token_label(token)

    def deletion_shown(self) -> bool:
        """Whether the deletion plots (change per head, per token) are on screen."""
        return self.right.isVisible()

    def _show_deletion_plots(self, show: bool) -> None:
        if show != self.right.isVisible():
            self.right.setVisible(show)
            self._fit_widths()

    def draw_deletion(self) -> None:
        d = self.deletion
        self._show_deletion_plots(d is not None)
        if d is None:
            return
        change = np.asarray(d.attention_change, dtype=float)
        levels = (0.0, nice_ceil(max(float(change.max()), 1e-3)))
        self.change.set_data(change, levels, source=(d,))
        set_bar_levels(self.change_bar, levels)
        H = change.shape[1]
        self.change.set_labels([str(layer) for layer in d.layers], [str(h) for h in range(H)])
        token = html.escape(self._label(d.removed_token))
        what = self.tr("without") if d.mode == "remove" else self.tr("masking")
        set_plot_title(self.change.item, self.tr("Δ attention, {what} <b>‘{token}’</b>").format(
            what=what, token=token), self.theme)
        kept_labels = [self.trace.labels[i] for i in d.kept]
        self.hidden_axis.set_labels(kept_labels)
        n = len(kept_labels)
        top = nice_ceil(max(float(np.max(d.hidden_change_per_token)) if n else 0.0, 1e-3))
        self.hidden_plot.setXRange(-0.6, n - 0.4, padding=0)
        self.hidden_plot.setYRange(0, top, padding=0)
        self.hidden_bars.set(d.hidden_change_per_token, None, source=(d,))
        set_plot_title(self.hidden_plot, self.tr("Δ output per token · all <b>{v:.3f}</b>").format(
            v=d.hidden_change), self.theme)
        cache_static_items(self.graphics.scene())

    # ---- hover texts ----------------------------------------------------------------------------------
    def describe_cell(self, row: int, col: int) -> str:
        tr_, after = self._shown_trace()
        sel = self.selection
        w = float(tr_.attentions[sel.layer, sel.head, row, col])
        labels = tr_.labels
        kv = tr_.kv_head_of[sel.head]
        gqa = tr_.n_kv_heads != tr_.n_heads
        text = self.tr("layer {layer} · head {head}{kv} · query {q} ‘{qt}’ → key {k} ‘{kt}’ · "
                       "weight {w:.4f}").format(
            layer=tr_.layers[sel.layer], head=sel.head, kv=f" (kv {kv})" if gqa else "",
            q=row, qt=labels[row], k=col, kt=labels[col], w=w)
        if tr_.causal and col > row:
            text += " · " + self.tr("masked: a causal model's query cannot see later keys")
        if after:
            text += " · " + self.tr("after the deletion")
        return text

    def describe_change(self, row: int, col: int) -> str:
        d = self.deletion
        if d is None:
            return ""
        return self.tr("layer {layer} · head {head} · attention change {c:.3f} (largest row "
                       "{m:.3f})").format(layer=d.layers[row], head=col,
                                          c=float(d.attention_change[row, col]),
                                          m=float(d.attention_change_max[row, col]))

    # ---- look --------------------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.graphics.setBackground(theme.background)
        pal = qt_palette(theme)
        for w in (self.token_scroll, self.token_scroll.viewport(), self.token_box):
            w.setPalette(pal)
        self.drop_label.setStyleSheet(f"color: {theme.muted};")
        self.token_box.setStyleSheet(
            f"QLabel#token_chip {{ border: 1px solid {theme.hatch}; border-radius: 3px; "
            f"padding: 1px 5px; color: {theme.foreground}; background: {theme.base}; }}"
            f"QLabel#token_chip:hover, QLabel#token_chip:focus {{ border-color: {theme.accent2}; }}"
            f"QLabel#token_chip[dropped=\"true\"] {{ background: {theme.accent}; "
            f"color: {theme.background}; border-color: {theme.accent}; }}")
        for hm in (self.big, self.change):
            hm.apply_theme(theme)
        style_plot(self.hidden_plot, theme)
        self.hidden_bars.set_colors(theme.bar, theme.accent2, theme.accent)
        for bar in (self.cbar, self.change_bar):
            style_colorbar(bar, theme)
        cache_static_items(self.graphics.scene())
        self._redraw()
