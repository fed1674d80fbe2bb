"""`model_grid`: every layer × head of a real model at a glance, and the per-head table.

One mosaic image holds a thumbnail per head (rows = layers, columns =
heads): each thumbnail is that head's attention for the current text,
scaled to its own maximum so the *pattern* shows, inside a frame coloured
by the chosen metric (entropy, sink, distance, previous-token, diagonal or
the pattern label). The heads of each layer can be ordered by that metric.
One image instead of 72+ ImageItems keeps a 32 × 32-head model as cheap to
draw as MiniLM's 6 × 12 (the mosaic is drawn by `figures/mosaic.py`).

A click on a thumbnail or a table row selects that layer and head in the
model selection, which the head view (`model_head`) follows.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractTableModel,
    QCoreApplication,
    QItemSelectionModel,
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
    QTimer,
)
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QTableView,
    QWidget,
)

from engine.numbers import tidy

from ..figures.mosaic import (
    METRIC_CMAP,
    HeadMosaic,
    head_order,
    metric_frames,
    metric_levels,
    pattern_color,
    pattern_frames,
)
from ..figures.plots import (
    Drawn,
    add_plot,
    cache_static_items,
    set_axis_label,
    set_bar_levels,
    set_plot_title,
    style_colorbar,
    style_plot,
)
from ..figures.tables import setup_table, style_table
from ..figures.text import RunsLabel
from ..figures.themes import WEIGHTS_CMAP, Theme, qt_palette
from ..i18n import engine_text
from ..models.source import sample_labels
from .base import Panel, register_panel

#: metric key → (menu text, unit/explanation); "pattern" is categorical
GRID_METRICS = {
    "entropy": (QT_TRANSLATE_NOOP("ModelGridPanel", "entropy"),
                QT_TRANSLATE_NOOP("ModelGridPanel", "nats; 0 = all weight on one key")),
    "sink": (QT_TRANSLATE_NOOP("ModelGridPanel", "sink"),
             QT_TRANSLATE_NOOP("ModelGridPanel", "weight on the first token")),
    "distance": (QT_TRANSLATE_NOOP("ModelGridPanel", "distance"),
                 QT_TRANSLATE_NOOP("ModelGridPanel", "mean distance to the keys, in tokens")),
    "prev_token": (QT_TRANSLATE_NOOP("ModelGridPanel", "previous token"),
                   QT_TRANSLATE_NOOP("ModelGridPanel", "weight on the token before")),
    "diagonal": (QT_TRANSLATE_NOOP("ModelGridPanel", "diagonal"),
                 QT_TRANSLATE_NOOP("ModelGridPanel", "weight on the token itself")),
    "pattern": (QT_TRANSLATE_NOOP("ModelGridPanel", "pattern"),
                QT_TRANSLATE_NOOP("ModelGridPanel", "the pattern label of engine.models.metrics")),
}
#: table rows an exported figure shows (in the table's order), the first ones of a larger model
FIGURE_ROWS = 12

#: table columns: (key, header, tooltip, format)
TABLE_COLUMNS = (
    ("layer", QT_TRANSLATE_NOOP("ModelGridPanel", "layer"), "", "{}"),
    ("head", QT_TRANSLATE_NOOP("ModelGridPanel", "head"), "", "{}"),
    ("kv_head", QT_TRANSLATE_NOOP("ModelGridPanel", "kv"),
     QT_TRANSLATE_NOOP("ModelGridPanel", "the KV head this query head reads (GQA)"), "{}"),
    ("pattern", QT_TRANSLATE_NOOP("ModelGridPanel", "pattern"),
     QT_TRANSLATE_NOOP("ModelGridPanel", "the first rule that holds: vertical/sink, diagonal, "
                       "previous-token, broad, block, long-range, else mixed"), "{}"),
    ("entropy", QT_TRANSLATE_NOOP("ModelGridPanel", "entropy"),
     QT_TRANSLATE_NOOP("ModelGridPanel", "mean row entropy in nats (0 = one key)"), "{:.3f}"),
    ("entropy_norm", QT_TRANSLATE_NOOP("ModelGridPanel", "ent/max"),
     QT_TRANSLATE_NOOP("ModelGridPanel", "entropy / its maximum (1 = uniform)"), "{:.3f}"),
    ("sink", QT_TRANSLATE_NOOP("ModelGridPanel", "sink"),
     QT_TRANSLATE_NOOP("ModelGridPanel", "weight on the first token"), "{:.3f}"),
    ("distance", QT_TRANSLATE_NOOP("ModelGridPanel", "distance"),
     QT_TRANSLATE_NOOP("ModelGridPanel", "mean |query − key| in tokens"), "{:.2f}"),
    ("prev_token", QT_TRANSLATE_NOOP("ModelGridPanel", "prev"),
     QT_TRANSLATE_NOOP("ModelGridPanel", "weight on the previous token"), "{:.3f}"),
    ("diagonal", QT_TRANSLATE_NOOP("ModelGridPanel", "diag"),
     QT_TRANSLATE_NOOP("ModelGridPanel", "weight on the token itself"), "{:.3f}"),
    ("max_weight", QT_TRANSLATE_NOOP("ModelGridPanel", "max w"),
     QT_TRANSLATE_NOOP("ModelGridPanel", "mean of each row's largest weight"), "{:.3f}"),
    ("vertical", QT_TRANSLATE_NOOP("ModelGridPanel", "vert"),
     QT_TRANSLATE_NOOP("ModelGridPanel", "the largest share of attention one key collects"),
     "{:.3f}"),
    ("block", QT_TRANSLATE_NOOP("ModelGridPanel", "block"),
     QT_TRANSLATE_NOOP("ModelGridPanel", "how alike neighbouring rows are (1 = identical)"),
     "{:.3f}"),
)


def _tr(text: str) -> str:
    return QCoreApplication.translate("ModelGridPanel", text)


#: engine.models' pattern labels (English keys), as shown
PATTERN_NAMES = {
    "vertical/sink": QT_TRANSLATE_NOOP("ModelGridPanel", "vertical/sink"),
    "diagonal": QT_TRANSLATE_NOOP("ModelGridPanel", "diagonal"),
    "previous-token": QT_TRANSLATE_NOOP("ModelGridPanel", "previous-token"),
    "broad": QT_TRANSLATE_NOOP("ModelGridPanel", "broad"),
    "block": QT_TRANSLATE_NOOP("ModelGridPanel", "block"),
    "long-range": QT_TRANSLATE_NOOP("ModelGridPanel", "long-range"),
    "mixed": QT_TRANSLATE_NOOP("ModelGridPanel", "mixed"),
}


def pattern_name(label: str) -> str:
    """A pattern label in the interface language."""
    return QCoreApplication.translate("ModelGridPanel", PATTERN_NAMES.get(label, label))


class HeadTableModel(QAbstractTableModel):
    """trace.head_table() as a table; the sort role gives raw numbers."""

    SORT_ROLE = Qt.ItemDataRole.UserRole

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[dict] = []

    def set_rows(self, rows: list[dict]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(TABLE_COLUMNS)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        key, _h, _t, fmt = TABLE_COLUMNS[index.column()]
        value = self.rows[index.row()][key]
        if role == Qt.ItemDataRole.DisplayRole:
            if isinstance(value, float) and not math.isfinite(value):
                return "–"
            if key == "pattern":
                return pattern_name(str(value))
            return fmt.format(tidy(value, 2 if fmt == "{:.2f}" else 3) if isinstance(value, float) else value)
        if role == self.SORT_ROLE:
            return value
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if isinstance(value, str):
                return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and key == "pattern":
            return QBrush(QColor(pattern_color(value)))
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        _k, header, tip, _f = TABLE_COLUMNS[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return _tr(header)
        if role == Qt.ItemDataRole.ToolTipRole and tip:
            return _tr(tip)
        return None


class ElidedLabel(QLabel):
    """A one-line label drawn with "…" where it is narrower than its text (a QLabel clips it
    mid-word: "gpt2 · gpt2" of the model's header line in a 1280×800 window); `text()` stays
    whole, and the caller puts the whole text in its tooltip."""

    def paintEvent(self, event) -> None:
        rect, fm, text = self.contentsRect(), self.fontMetrics(), self.text()
        if fm.horizontalAdvance(text) <= rect.width():
            super().paintEvent(event)
            return
        painter = QPainter(self)
        shown = fm.elidedText(text, Qt.TextElideMode.ElideRight, rect.width())
        self.style().drawItemText(painter, rect, int(self.alignment()), self.palette(), self.isEnabled(),
                                  shown, self.foregroundRole())


@register_panel
class ModelGridPanel(Panel):
    name = "model_grid"
    title = QT_TRANSLATE_NOOP("Panel", "Model: every layer × head")
    #: the header line, the controls, the text (two lines), a plot of the thumbnails ~200 px
    #: high with its title and legend, and the table's header and two rows (at 1280×800: × 0.8)
    readable_size = (420, 480)
    requires_model = True

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        self.controller = None
        self.trace = None
        self._order: np.ndarray | None = None
        self._values: np.ndarray | None = None
        #: what the mosaic was drawn from: (trace, metric, order); see plots.Drawn
        self._painted = Drawn()
        # ---- toolbar: model facts, metric, order -------------------------------------
        self.info = ElidedLabel()  # (its tooltip: the whole line)
        self.info.setObjectName("hint")
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.metric_label = QLabel()
        self.metric_combo = QComboBox()
        for key in GRID_METRICS:
            self.metric_combo.addItem("", key)
        self.metric_combo.currentIndexChanged.connect(lambda _i: self._redraw())
        self.order = QComboBox()
        self.order.addItems(["", "", ""])
        self.order.currentIndexChanged.connect(lambda _i: self._redraw())
        self.metric_label.setBuddy(self.metric_combo)
        # the header line on a row of its own (beside three controls it had ~30 px: "gpt2 · g…"),
        # clear of the panel's "?" in the corner; the controls on the row below
        self.toolbar.addWidget(self.info, 1)
        self.toolbar.addSpacing(self.help_button.width())
        controls = QHBoxLayout()
        controls.setContentsMargins(6, 0, 6, 0)
        controls.addWidget(self.metric_label)
        controls.addWidget(self.metric_combo)
        controls.addWidget(self.order)
        controls.addStretch(1)
        # ---- the text ------------------------------------------------------------------
        text_row = QWidget()
        row = QHBoxLayout(text_row)
        row.setContentsMargins(6, 0, 6, 0)
        self.text = QPlainTextEdit()
        self.text.setObjectName("model_text")
        self.text.setTabChangesFocus(True)
        line = self.text.fontMetrics().lineSpacing()
        self.text.setFixedHeight(int(line * 2 + 12))
        self.text.textChanged.connect(self._on_text_edited)
        self.samples = QComboBox()
        self.samples.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.samples.setMinimumContentsLength(14)
        self.samples.activated.connect(self._on_sample)
        row.addWidget(self.text, 1)
        row.addWidget(self.samples, 0, Qt.AlignmentFlag.AlignTop)
        self.notice = QLabel()
        self.notice.setObjectName("model_notice")
        self.notice.setWordWrap(True)
        self.notice.setContentsMargins(8, 0, 8, 0)
        self.notice.hide()
        outer = self.layout()
        outer.insertLayout(1, controls)
        outer.insertWidget(2, text_row)
        outer.insertWidget(3, self.notice)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(350)
        self._debounce.timeout.connect(self._send_text)
        # ---- the grid --------------------------------------------------------------------
        self.plot = add_plot(self.graphics.ci, 0, 0)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.vb = self.plot.getViewBox()
        self.vb.invertY(True)
        self.vb.setAspectLocked(True)
        self.vb.setDefaultPadding(0.0)
        # one thumbnail per head: view unit (pos, layer) is the head at position pos of that layer
        self.mosaic = HeadMosaic(self.vb, self._hover, lambda cell: self._click(*self._row_pos(cell)))
        self.image, self.outline = self.mosaic.image, self.mosaic.current
        self.lut = pg.colormap.get(WEIGHTS_CMAP).getLookupTable(nPts=256, alpha=True)
        self.metric_cmap = pg.colormap.get(METRIC_CMAP)
        self.metric_lut = self.metric_cmap.getLookupTable(nPts=256, alpha=True)
        self.cbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=self.metric_cmap,
                                    interactive=False, width=12)
        self.cbar.axis.enableAutoSIPrefix(False)
        self.graphics.addItem(self.cbar, row=0, col=1)
        # (a RunsLabel wraps at the panel's width: a LabelItem's one line widened the plot's
        # column past a 1280×800 window's panel, its thumbnails and colour bar cut off)
        self.legend = RunsLabel("", size="9pt")
        self.graphics.addItem(self.legend, row=1, col=0, colspan=2)
        # ---- the table -----------------------------------------------------------------------
        self.table_model = HeadTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.table_model)
        self.proxy.setSortRole(HeadTableModel.SORT_ROLE)
        self.table = setup_table(QTableView(), "model_table", select_rows=True)
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # model order until clicked
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(line + 6)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setAlternatingRowColors(True)
        # its header and two rows whole, under a horizontal scroll bar (it had one and a half)
        self.table.setMinimumHeight(self.table.horizontalHeader().sizeHint().height() + 2 * (line + 6)
                                    + self.table.horizontalScrollBar().sizeHint().height()
                                    + 2 * self.table.frameWidth() + 2)
        self.table.selectionModel().currentRowChanged.connect(self._on_table_row)
        outer.removeWidget(self.graphics)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.graphics)
        self.splitter.addWidget(self.table)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        outer.addWidget(self.splitter, 1)
        self.retranslate_ui()

    # ---- language ------------------------------------------------------------------------
    def _figure_table_height(self) -> int:
        """px the table needs to show up to FIGURE_ROWS rows whole, with its header."""
        t = self.table
        rows = min(self.proxy.rowCount(), FIGURE_ROWS)
        bar = t.horizontalScrollBar()
        extra = bar.sizeHint().height() if bar.isVisible() else 0
        return (t.horizontalHeader().height() + rows * t.verticalHeader().defaultSectionSize()
                + 2 * t.frameWidth() + extra + 2)

    def figure_room(self) -> int:
        # (a figure at the default size showed three rows of the table, the third cut)
        return max(0, self._figure_table_height() - self.splitter.sizes()[1])

    def fit_figure(self) -> None:
        want = self._figure_table_height()
        total = sum(self.splitter.sizes())
        self.splitter.setSizes([max(1, total - want), want])

    def retranslate_ui(self) -> None:
        self.metric_label.setText(self.tr("colour by"))
        for i, key in enumerate(GRID_METRICS):
            self.metric_combo.setItemText(i, _tr(GRID_METRICS[key][0]))
        self.metric_combo.setToolTip(self.tr("The metric that colours each thumbnail's frame"))
        for i, text in enumerate((self.tr("model order"), self.tr("sorted ↑"), self.tr("sorted ↓"))):
            self.order.setItemText(i, text)
        self.order.setToolTip(self.tr("Order the heads of each layer by the metric"))
        self.text.setPlaceholderText(self.tr("Type or paste a text to run through the model"))
        self.text.setToolTip(self.tr("The model runs on this text (longer texts are cut at the "
                                     "model's maximum length)"))
        self._fill_samples()
        self.table.setToolTip(self.tr("Click a column title to sort, a row to select the head"))
        self.table_model.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(TABLE_COLUMNS) - 1)
        self._redraw()
        self._show_info()  # the model's header line and its notes, in the new language
        self._show_notice()

    def _fill_samples(self) -> None:
        self.samples.blockSignals(True)
        self.samples.clear()
        self.samples.addItem(self.tr("Samples…"), None)
        try:
            from assets import sample_texts

            texts = sample_texts()
        except Exception:  # a damaged install must not break the panel
            texts = {}
        for lang, sentences in texts.items():
            for s, short in zip(sentences, sample_labels(sentences)):
                self.samples.addItem(f"{lang}: {short}", s)
                self.samples.setItemData(self.samples.count() - 1, s, Qt.ItemDataRole.ToolTipRole)
        self.samples.setCurrentIndex(0)
        self.samples.blockSignals(False)

    # ---- the model ---------------------------------------------------------------------------
    def set_model(self, controller) -> None:
        """Follow `controller` (a ModelController): its trace, selection and busy state."""
        if self.controller is controller:
            return
        self.controller = controller
        if self.selection is not controller.selection:
            self.follow_selection(controller.selection)
        controller.trace_changed.connect(self._on_trace)
        controller.model_changed.connect(self._on_model_state)
        controller.busy_changed.connect(self._on_model_state)
        controller.notice.connect(self._on_notice)
        self._set_text_box(controller.text)
        if controller.trace is not None:
            self._on_trace(controller.trace)
        self._show_info()

    def _on_model_state(self, *_args) -> None:
        self._show_info()

    def _on_notice(self, *_args) -> None:
        self._show_notice()

    def detach(self) -> None:
        super().detach()
        ctl = self.controller
        if ctl is not None:
            for signal, slot in ((ctl.trace_changed, self._on_trace), (ctl.model_changed, self._on_model_state),
                                 (ctl.busy_changed, self._on_model_state), (ctl.notice, self._on_notice)):
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

    def _set_text_box(self, text: str) -> None:
        if self.text.toPlainText() != text:
            self.text.blockSignals(True)
            self.text.setPlainText(text)
            self.text.blockSignals(False)

    def _on_text_edited(self) -> None:
        self._debounce.start()

    def _send_text(self) -> None:
        if self.controller is not None:
            self.controller.set_text(self.text.toPlainText())

    def _on_sample(self, index: int) -> None:
        text = self.samples.itemData(index)
        self.samples.setCurrentIndex(0)
        if text:
            self.text.setPlainText(text)
            self._debounce.stop()
            self._send_text()

    def _on_trace(self, trace) -> None:
        self.trace = trace
        self._set_text_box(self.controller.text if self.controller else trace.text)
        self.table_model.set_rows(trace.head_table())
        self._redraw()
        self._show_info()
        self._show_notice()

    def _show_info(self) -> None:
        c = self.controller
        if c is None or c.loaded is None:
            self.info.setText(c.busy_text if c is not None else "")
            self.info.setToolTip(self.info.text())
            return
        s = c.loaded.summary
        kv = (self.tr(" · {kv} KV heads (GQA)").format(kv=s.n_kv_heads)
              if s.n_kv_heads != s.n_heads else "")
        kind = self.tr("causal") if s.causal else self.tr("bidirectional")
        text = self.tr("{name} · {type} · {layers} layers × {heads} heads{kv} · {kind}").format(
            name=c.loaded.name, type=s.model_type, layers=s.n_layers, heads=s.n_heads, kv=kv,
            kind=kind)
        if self.trace is not None:
            text += self.tr(" · {n} tokens").format(n=self.trace.seq_len)
        fidelity = getattr(c.loaded, "fidelity", None)  # checked on opening (engine.models.fidelity)
        if fidelity is not None:
            text += f" · {engine_text(fidelity.summary)}"
        if c.busy_text:
            text += f" · {c.busy_text}"
        self.info.setText(text)
        self.info.setToolTip(text)

    def _show_notice(self) -> None:
        c = self.controller
        notes = list(c.loaded.notices) if c is not None and c.loaded is not None else []
        if self.trace is not None and self.trace.notice:
            notes.insert(0, self.trace.notice)
        self.notice.setText("  ".join(f"ℹ {engine_text(n)}" for n in notes))
        self.notice.setVisible(bool(notes))
        self.notice.setStyleSheet(f"color: {self.theme.warning};")

    # ---- drawing ----------------------------------------------------------------------------------
    def metric_key(self) -> str:
        return self.metric_combo.currentData() or "entropy"

    def _metric_values(self) -> tuple[np.ndarray, np.ndarray, tuple[float, float] | None]:
        """(values for ordering (L, H), frame colours (L, H, 4), levels or None for pattern)."""
        m = self.trace.metrics
        key = self.metric_key()
        if key == "pattern":
            from engine.models import PATTERN_LABELS

            values, colors = pattern_frames(m["pattern"], PATTERN_LABELS)
            return values, colors, None
        values = np.asarray(m[key], dtype=float)
        levels = metric_levels(key, values, self.trace.seq_len)
        return values, metric_frames(values, self.metric_lut, levels), levels

    def _redraw(self) -> None:
        if self.trace is None:
            return
        self.draw_trace()
        self.draw_selection()

    def draw_trace(self) -> None:
        tr_ = self.trace
        values, colors, levels = self._metric_values()
        H = values.shape[1]
        mode = self.order.currentIndex()
        self._order = order = head_order(values, mode)
        self._position = np.argsort(order, axis=1)  # head → position
        self._values = values
        key = self.metric_key()
        if self._painted.changed("mosaic", tr_, key, mode):  # (not for a language or a theme)
            self.mosaic.show_heads(tr_.attentions.numpy().astype(np.float32, copy=False), order, colors, self.lut)
        left, bottom = self.plot.getAxis("left"), self.plot.getAxis("bottom")
        left.setTicks([[(li + 0.5, str(layer)) for li, layer in enumerate(tr_.layers)]])
        self.plot.setLabel("left", self.tr("layer"))
        name = _tr(GRID_METRICS[key][0])
        if mode == 0:
            bottom.setTicks([[(h + 0.5, str(h)) for h in range(H)]])
            self.plot.setLabel("bottom", self.tr("head"))
        else:
            bottom.setTicks([[(p + 0.5, str(p + 1)) for p in range(H)]])
            self.plot.setLabel("bottom", self.tr("heads of each layer ordered by {metric} "
                                                 "({direction})").format(
                metric=name, direction="↑" if mode == 1 else "↓"))
        self._draw_head_numbers(mode != 0)
        title = self.tr("<b>{name}</b> · {n} tokens · frame: {metric}").format(
            name=html.escape(tr_.model_name), n=tr_.seq_len, metric=name)
        set_plot_title(self.plot, title, self.theme)
        if levels is None:
            self.cbar.hide()
            from engine.models import PATTERN_LABELS

            items = " &nbsp; ".join(f"<span style='color:{pattern_color(p)}'>■</span> {pattern_name(p)}"
                                    for p in PATTERN_LABELS)
            self.legend.setText(items, color=self.theme.foreground, size=self.theme.pt(9.0))
            self.legend.show()
        else:
            self.cbar.show()
            set_bar_levels(self.cbar, levels)
            set_axis_label(self.cbar.axis, "right", name)
            self.legend.setText(self.tr("frame: {metric} ({meaning}) · each thumbnail is scaled to "
                                        "its own maximum").format(
                metric=name, meaning=_tr(GRID_METRICS[key][1])), color=self.theme.muted, size=self.theme.pt(8.0))
        cache_static_items(self.graphics.scene())

    def _draw_head_numbers(self, show: bool) -> None:
        """When sorted, each thumbnail carries its head number (the axis gives ranks)."""
        bg = QColor(self.theme.background)
        bg.setAlpha(170)  # readable over any thumbnail, in either theme
        heads = self._order.ravel()
        self.mosaic.set_corner_texts([str(int(h)) for h in heads] if show and heads.size <= 1024 else [],
                                     self.theme.font(8.0), self.theme.foreground, bg)

    def draw_selection(self) -> None:
        if self.trace is None or self._order is None:
            return
        sel = self.selection
        layer = min(getattr(sel, "layer", 0), self._order.shape[0] - 1)
        head = min(sel.head, self._order.shape[1] - 1)
        self.mosaic.select_position(layer, int(self._position[layer, head]), self._order.shape[1])
        self._select_table_row(layer, head)

    def _select_table_row(self, layer: int, head: int) -> None:
        H = self.trace.n_heads
        src = self.table_model.index(layer * H + head, 0)
        idx = self.proxy.mapFromSource(src)
        if not idx.isValid() or self.table.currentIndex().row() == idx.row():
            return
        sm = self.table.selectionModel()
        sm.blockSignals(True)
        sm.setCurrentIndex(idx, QItemSelectionModel.SelectionFlag.ClearAndSelect
                           | QItemSelectionModel.SelectionFlag.Rows)
        sm.blockSignals(False)
        self.table.viewport().update()
        self.table.scrollTo(idx)

    # ---- interaction ----------------------------------------------------------------------------------
    def _row_pos(self, cell) -> tuple[int, int]:
        """A mosaic cell (tile, row, col) as (layer row, position in the layer)."""
        return self.mosaic.row_pos(cell, self._order.shape[1])

    def _click(self, row: int, pos: int) -> None:
        self.select_head(row, int(self._order[row, pos]))

    def select_head(self, layer: int, head: int) -> None:
        """Select `layer` (index into the trace's layers) and `head` in the model selection."""
        self.selection.set(head=head, layer=layer)

    def _hover(self, cell) -> None:
        row, pos = (-1, -1) if cell is None else self._row_pos(cell)
        self.mosaic.mark_position(row, pos)
        self.hover.describe("" if cell is None else self.describe_head(row, int(self._order[row, pos])))

    def describe_head(self, layer: int, head: int) -> str:
        tr_ = self.trace
        m = tr_.metrics
        kv = tr_.kv_head_of[head]
        gqa = tr_.n_kv_heads != tr_.n_heads
        return self.tr("layer {layer} · head {head}{kv} · {pattern} · entropy {entropy:.3f} · "
                       "sink {sink:.3f} · distance {distance:.2f} · prev {prev:.3f} · diag "
                       "{diag:.3f}").format(
            layer=tr_.layers[layer], head=head, kv=f" (kv {kv})" if gqa else "",
            pattern=pattern_name(str(m["pattern"][layer, head])), entropy=tidy(m["entropy"][layer, head], 3),
            sink=tidy(m["sink"][layer, head], 3), distance=tidy(m["distance"][layer, head], 2),
            prev=tidy(m["prev_token"][layer, head], 3), diag=tidy(m["diagonal"][layer, head], 3))

    def _on_table_row(self, current, _previous) -> None:
        if not current.isValid() or self.trace is None:
            return
        src = self.proxy.mapToSource(current)
        row = self.table_model.rows[src.row()]
        self.select_head(self.trace.layers.index(row["layer"]), row["head"])

    # ---- look -------------------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.graphics.setBackground(theme.background)
        style_plot(self.plot, theme)
        # the theme's text colour: the frames already use plasma's reds and oranges
        self.outline.setPen(theme.pen(theme.foreground, 3))
        self.mosaic.markers.setPen(theme.pen(theme.foreground, 1, Qt.PenStyle.DashLine))
        style_colorbar(self.cbar, theme)
        self.notice.setStyleSheet(f"color: {theme.warning};")
        # the text and the table follow the panel's theme (a light figure of a dark window too)
        pal = qt_palette(theme)
        for w in (self.text, self.text.viewport(), self.notice):
            w.setPalette(pal)  # viewports keep a palette of their own: set it too
        style_table(self.table, theme)
        cache_static_items(self.graphics.scene())
        self._redraw()
