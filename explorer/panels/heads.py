"""`heads`: one weight heatmap per head, the selected head large, one shared colour bar."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QRectF, QSignalBlocker, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen
from PySide6.QtWidgets import QCheckBox, QComboBox, QGraphicsPathItem, QLabel

from engine.numbers import number

from ..compare import VIEWS, comparable, why_not
from ..figures.heatmap import Heatmap, RgbaImage
from ..figures.plots import (
    fmt_number,
    fmt_percent,
    set_axis_label,
    set_bar_cmap,
    set_bar_levels,
    sticky_max,
    style_colorbar,
)
from ..figures.text import unbroken
from ..figures.themes import SIGNED_CMAP, WEIGHTS_CMAP, Theme
from ..figures.thumbnails import HeadThumbnails
from ..frame import Frame
from .base import Panel, register_panel
from .zoom_detail import ZoomDetail

#: the weights' colour scale shrinks once the largest weight is under this share of it
HOLD_SHRINK = 0.5


def describe_cell(frame: Frame, head: int, row: int, col: int) -> str:
    """Status-bar readout of one attention cell (exact, also in a long frame's level of detail)."""
    cfg = frame.config
    w = frame.cell("weights", head, row, col)
    s = frame.cell("scores", head, row, col)
    masked = not frame.mask[row, col]
    text = QCoreApplication.translate(
        "HeadsPanel", "head {head} (kv {kv}) · query {row} ‘{q}’ → key {col} ‘{k}’ · weight {w} · score {s}").format(
        head=head, kv=cfg.kv_head_of(head), row=row, q=frame.query_labels[row], col=col, k=frame.key_labels[col],
        w=number(w, 4), s=number(s, 4))
    if masked and not frame.mask[row].any() and not np.isnan(w):
        return text + QCoreApplication.translate(
            "HeadsPanel", " · masked: this query sees no key, {value} gives every key the same weight").format(
            value=cfg.mask_value)
    return text + (QCoreApplication.translate("HeadsPanel", " · masked") if masked else "")


def thumb_cell(frame: Frame | None) -> tuple[int, int]:
    """(queries, keys) one thumbnail cell stands for: (1, 1), or a long frame's block."""
    if frame is None or frame.lod is None:
        return 1, 1
    return frame.lod[0] * frame.thumb_lod[0], frame.lod[1] * frame.thumb_lod[1]


def describe_tile(frame: Frame, head: int, r: int, c: int) -> str:
    """Status-bar readout of one drawn cell of a long frame's thumbnail: the block it stands for."""
    tr, tc = thumb_cell(frame)
    cfg = frame.config
    text = (QT_TRANSLATE_NOOP("HeadsPanel", "head {head} · queries {q0}–{q1} × keys {k0}–{k1} · largest weight {w}")
            if frame.lod_reduce is None or frame.lod_reduce[head] == "max"  # (a linear kernel's: the mean)
            else QT_TRANSLATE_NOOP("HeadsPanel", "head {head} · queries {q0}–{q1} × keys {k0}–{k1} · mean weight {w}"))
    return QCoreApplication.translate("HeadsPanel", text).format(
        head=head, q0=r * tr, q1=min((r + 1) * tr, cfg.seq_len) - 1, k0=c * tc,
        k1=min((c + 1) * tc, cfg.key_len) - 1, w=number(frame.thumbs[head, r, c], 4))


def _tile_rows(flags: np.ndarray, tile: int) -> np.ndarray:
    """(S,) bool → (⌈S/tile⌉,) bool: True where every row of the tile is."""
    n = -(-len(flags) // tile)
    padded = np.ones(n * tile, bool)
    padded[: len(flags)] = flags
    return padded.reshape(n, tile).all(-1)


@register_panel
class HeadsPanel(Panel):
    name = "heads"
    title = QT_TRANSLATE_NOOP("Panel", "Heads: attention weights")
    readable_size = (320, 230)

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        hover = self.hover
        # with a pinned reference A: show the current B, A, or B − A (hidden until one is pinned)
        self.view_label = QLabel()
        self.view = QComboBox()
        self.view.addItems(["", "", "", ""])  # B, A, B − A, A | B (compare.VIEWS)
        # the thumbnails follow the view too: a whole redraw
        self.view.currentIndexChanged.connect(self._on_view_chosen)
        self.toolbar.addWidget(self.view_label)
        self.toolbar.addWidget(self.view)
        # a long frame zoomed to exact cells: the colour scale follows the region shown, or
        # stays the whole frame's (unticked), to compare regions
        self.zoom_scale = QCheckBox()
        self.zoom_scale.setChecked(True)
        self.zoom_scale.toggled.connect(lambda _on: self.draw_selection() if self.frame is not None else None)
        self.zoom_scale.hide()
        self.toolbar.addWidget(self.zoom_scale)
        self.toolbar.addStretch(1)
        self.toolbar.addSpacing(24)  # the "?" in the corner
        for w in (self.view_label, self.view):
            w.hide()
        self.big = Heatmap(
            hover, WEIGHTS_CMAP, title=self.tr("head {h}").format(h=0), row_title=self.tr("query"),
            col_title=self.tr("key"),
            on_click=lambda r, c: self.selection.set(query=r, key=c),
            # (a frame of another shape than the selection's is about to be replaced: no readout)
            describe=lambda r, c: describe_cell(self.frame, self.selection.head, r, c) if self.selection_fits() else "",
        )
        self.graphics.addItem(self.big.cell, row=0, col=0)
        self.cbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=WEIGHTS_CMAP, interactive=False,
                                    width=12, label=self.tr("weight"))
        # the bar is a legend for levels the heatmaps share (they colour themselves)
        self.cbar.setImageItem([], insert_in=self.big.item)  # (beside the map, right of its axes)
        self.thumbs = HeadThumbnails(
            hover, WEIGHTS_CMAP,
            on_click=lambda h, r, c: self.selection.set(head=h, **self._cell_of(r, c)),
            describe=lambda h, r, c: (describe_cell(self.frame, h, r, c) if self.frame.lod is None
                                      else describe_tile(self.frame, h, r, c)),
        )
        self.graphics.addItem(self.thumbs.vb, row=0, col=1)
        self.thumbs.vb.setPreferredWidth(10)  # the large map takes the width the stretch gives it
        # side by side (A | B): A's large map takes the thumbnails' place, left of B's
        self.big_a = Heatmap(
            hover, WEIGHTS_CMAP, title="", row_title=self.tr("query"), col_title=self.tr("key"),
            on_click=lambda r, c: self.selection.set(query=r, key=c),
            describe=lambda r, c: describe_cell(self.reference, self._head_a(), r, c),
        )
        self._side = False
        self.graphics.ci.layout.setColumnStretchFactor(0, 5)
        self.graphics.ci.layout.setColumnStretchFactor(1, 3)
        # the thumbnails show the cells the large map is zoomed to
        self.big.vb.sigRangeChanged.connect(lambda vb, _r, *_a: self._follow(vb.viewRange()))
        # a long frame zoomed in far enough: every visible cell exact (computed for that region)
        self.detail = ZoomDetail(self.big, self)
        self.big.vb.sigRangeChanged.connect(lambda *_a: self._request_detail())
        self.detail.changed.connect(lambda: self.draw_selection() if self.frame is not None else None)
        # NaN rows (a fully masked query with mask_value -inf) get a red wash on the large map
        self._retranslate_view()
        self.nan_overlay = RgbaImage()
        self.nan_overlay.setZValue(5)
        self.big.vb.addItem(self.nan_overlay, ignoreBounds=True)
        # rows that see no key but got weights (mask value min / -1e9: a uniform row) stay
        # coloured, and hatched over: masked cells always read as masked
        self.blind_overlay = QGraphicsPathItem()
        self._blind_key: tuple | None = None  # (rows, key_len) the overlay's path was made for
        self.blind_overlay.setPen(QPen(Qt.PenStyle.NoPen))
        self.blind_overlay.setZValue(6)
        self.big.vb.addItem(self.blind_overlay, ignoreBounds=True)

    def _on_view_chosen(self, _index: int) -> None:
        self._auto_side = False  # the learner's own choice
        if self.frame is not None:
            self.show_frame(self.frame)

    def _follow_shapes(self) -> None:
        """B − A chosen but A and B cannot be subtracted: the menu shows side by side (what is
        drawn), and goes back to B − A when they can again."""
        i = self.view.currentIndex()
        same = self._same_shape()
        with QSignalBlocker(self.view):
            if i == 2 and not same:
                self.view.setCurrentIndex(3)
                self._auto_side = True
            elif i == 3 and same and self._auto_side:
                self.view.setCurrentIndex(2)
                self._auto_side = False

    def _request_detail(self) -> None:
        if self.frame is not None and self.comparison() == "B":
            self.detail.request(self.frame, self.selection.head)

    def _cell_of(self, r: int, c: int) -> dict[str, int]:
        """The query and key a thumbnail's drawn cell (r, c) selects: its tile's first."""
        tr, tc = thumb_cell(self.frame)
        return {"query": r * tr, "key": c * tc}

    def _follow(self, view_range) -> None:
        """The thumbnails show what the large map is zoomed to (in their own cells)."""
        tr, tc = thumb_cell(self.frame)
        (x0, x1), (y0, y1) = view_range
        self.thumbs.follow_range([[(x0 + 0.5) / tc - 0.5, (x1 + 0.5) / tc - 0.5],
                                  [(y0 + 0.5) / tr - 0.5, (y1 + 0.5) / tr - 0.5]])

    def retranslate_ui(self) -> None:
        self._retranslate_view()
        set_axis_label(self.big.item, "left", self.tr("query"))
        set_axis_label(self.big.item, "bottom", self.tr("key"))
        set_axis_label(self.big_a.item, "left", self.tr("query"))  # (A's map, side by side)
        set_axis_label(self.big_a.item, "bottom", self.tr("key"))
        set_axis_label(self.cbar, "left", self.tr("weight"))  # (keeps the style style_colorbar set)
        super().retranslate_ui()

    def _retranslate_view(self) -> None:
        self.zoom_scale.setText(self.tr("Colours follow the zoom"))
        self.zoom_scale.setToolTip(self.tr("Zoomed to exact cells: colour them from 0 to the largest "
                                           "weight shown (unticked: the whole frame's scale)"))
        self.view_label.setText(self.tr("Show"))
        for i, text in enumerate((self.tr("B: current"), self.tr("A: reference"), self.tr("B − A"),
                                  self.tr("A | B: side by side"))):
            self.view.setItemText(i, text)
        self.view.setToolTip(self.tr("Compare with the pinned reference A (Edit ▸ Pin as reference A, Ctrl+P)"))

    def comparison(self) -> str:
        """What the large map shows: "B" (current), "A" (the reference), "B-A" or "A|B" (A and
        B side by side: what B − A becomes when the two cannot be subtracted)."""
        if self.reference is None:
            return "B"
        mode = VIEWS[max(self.view.currentIndex(), 0)]
        if mode == "B-A" and not self._same_shape():
            return "A|B"
        if mode == "B-A" and self._b_is_a():
            return "B"  # B − A would be a flat 0: B itself, its title says the difference will come
        return mode

    def _b_is_a(self) -> bool:
        """Whether B is still A's config (a comparison chapter at its preset): B − A is all 0."""
        f, ref = self.frame, self.reference
        return f is not None and ref is not None and f.config == ref.config

    def _same_shape(self) -> bool:
        return comparable(self.reference, self.frame, "weights")

    def _head_a(self) -> int:
        """A's head shown for the selected one (A may have fewer heads)."""
        return min(self.selection.head, self.reference.config.n_heads - 1)

    def _arrange(self, side: bool) -> None:
        """A's large map in the thumbnails' place (side by side), or the thumbnails back."""
        if side == self._side:
            return
        ci = self.graphics.ci
        if side:
            ci.removeItem(self.thumbs.vb)
            ci.removeItem(self.big.cell)
            ci.addItem(self.big_a.cell, row=0, col=0)
            ci.addItem(self.big.cell, row=0, col=1)
            ci.layout.setColumnStretchFactor(0, 1)
            ci.layout.setColumnStretchFactor(1, 1)
        else:
            ci.removeItem(self.big_a.cell)
            ci.removeItem(self.big.cell)
            ci.addItem(self.big.cell, row=0, col=0)
            ci.addItem(self.thumbs.vb, row=0, col=1)
            ci.layout.setColumnStretchFactor(0, 5)
            ci.layout.setColumnStretchFactor(1, 3)
        self._side = side
        self._size_maps(self.width())
        # emptied for a moment, the layout shrank its widget to what it could hold then: give
        # it the whole view again (what the view does when it is resized)
        ci.setGeometry(QRectF(0, 0, self.graphics.width(), self.graphics.height()))

    def set_reference(self, frame) -> None:
        for w in (self.view_label, self.view):
            w.setVisible(frame is not None)
        if frame is not None and self.view.currentIndex() == 0:
            with QSignalBlocker(self.view):
                self.view.setCurrentIndex(2)  # pinned to compare: the difference first
        super().set_reference(frame)

    def resizeEvent(self, event) -> None:
        self._size_maps(event.size().width())
        super().resizeEvent(event)

    def _size_maps(self, width: int) -> None:
        # the large map gets ~60% of the width; the grid of small maps shares the rest
        # (side by side: A and B half each)
        w = max(width, 200)
        lo, hi = (0.47, 0.5) if self._side else (0.55, 0.62)
        for hm in (self.big, self.big_a):
            hm.cell.setMinimumWidth(lo * w)
            hm.cell.setMaximumWidth(hi * w)

    def reset_view(self) -> None:
        # the exact region first: zooming out would announce its end (draw_selection) while
        # the colour scale is being forgotten
        self.detail.clear()
        self._vmax = None
        super().reset_view()

    def heatmaps(self) -> list[Heatmap]:
        return [self.big]

    def draw_frame(self, frame: Frame) -> None:
        cfg = frame.config
        ws = frame.weights_shown
        self.detail.clear()
        self._detail_head = None
        # the colour scale holds while a slider moves: it grows at once when a weight passes
        # it and shrinks only once the largest weight is under half of it (0.6 flipped the
        # scale between 0.8 and 1.0 on one seed in six at the default config)
        self._vmax = sticky_max(self._vmax, frame.weight_max, shrink=HOLD_SHRINK)
        levels = (0.0, self._vmax)
        kv_of = [cfg.kv_head_of(g) for g in range(cfg.n_heads)]
        if self.reference is not None:
            self._follow_shapes()
        mode = self.comparison()
        self._arrange(mode == "A|B")
        if mode == "B-A":  # the thumbnails follow B − A: every head's difference, one scale
            diff = frame.weights - self.reference.weights  # (H, S, Skv)
            finite = np.abs(diff[np.isfinite(diff)])
            m = max(float(finite.max()) if finite.size else 0.0, 1e-9)
            self.thumbs.set_cmap(SIGNED_CMAP)
            self.thumbs.set_data(diff, (-m, m), kv_of)
        else:
            self.thumbs.set_cmap(WEIGHTS_CMAP)
            self.thumbs.set_data(ws if frame.thumbs is None else frame.thumbs, levels, kv_of)
        self.big.set_levels(levels)
        set_bar_levels(self.cbar, levels)
        self.big.set_labels(frame.query_labels, frame.key_labels)
        if frame.overflow.nan_rows:
            self._nan_rows = ~frame.valid_rows  # (H, S)
        else:
            self._nan_rows = None
            self.nan_overlay.hide()
        blind_rows = ~frame.mask.any(-1)  # (S,) query rows that see no key
        blind = np.flatnonzero(blind_rows)
        if (blind.tolist(), cfg.key_len) != self._blind_key:  # (setPath repaints even an equal path)
            self._blind_key = (blind.tolist(), cfg.key_len)
            path = QPainterPath()
            for r in blind.tolist():
                path.addRect(QRectF(-0.5, r - 0.5, cfg.key_len, 1))
            self.blind_overlay.setPath(path)
        self._blind_rows = blind
        self.thumbs.set_blind_rows(blind_rows if frame.lod is None else _tile_rows(blind_rows, thumb_cell(frame)[0]))

    def _draw_side_by_side(self, h: int) -> str:
        """A's head in the left map, B's in the right, one colour scale; returns B's title lead."""
        ref, f = self.reference, self.frame
        ha = self._head_a()
        top = max(self._vmax or 0.0, ref.weight_max, 1e-6)
        levels = (0.0, top)
        for hm, fr, head in ((self.big_a, ref, ha), (self.big, f, h)):
            hm.set_cmap(WEIGHTS_CMAP)
            hm.set_data(fr.weights_shown[head], levels, extent=(fr.config.seq_len, fr.config.key_len),
                        source=(fr, head))
        self.big_a.set_labels(ref.query_labels, ref.key_labels)
        set_bar_cmap(self.cbar, WEIGHTS_CMAP)
        set_bar_levels(self.cbar, levels)
        sel = self.selection
        self.big_a.set_marker("cell", min(sel.query, ref.config.seq_len - 1), min(sel.key, ref.config.key_len - 1))
        size = f"{ref.config.seq_len}×{ref.config.key_len}"
        note = (f"<span style='color:{self.theme.muted}'>{size}</span>" if self._same_shape()
                else f"<span style='color:{self.theme.warning}'>{why_not(ref, f)}</span>")
        self.big_a.set_title(self.tr("<b>A</b> (reference) · head {h}").format(h=ha) + "<br>" + note)
        return self.tr("<b>B</b> (current) · head {h}").format(h=h)

    def _draw_compared(self, mode: str, h: int) -> str:
        """Put A, B − A or (side by side) B in the large map; returns the title's lead."""
        ref, f = self.reference, self.frame
        if mode == "A|B":
            return self._draw_side_by_side(h)
        if mode == "A":
            ha = min(h, ref.config.n_heads - 1)
            self.big.set_cmap(WEIGHTS_CMAP)
            levels = (0.0, max(ref.weight_max, 1e-6))
            self.big.set_data(ref.weights_shown[ha], levels, extent=(ref.config.seq_len, ref.config.key_len),
                              source=(ref, ha))
            set_bar_cmap(self.cbar, WEIGHTS_CMAP)
            set_bar_levels(self.cbar, levels)
            return self.tr("<b>A</b> (reference) · head {h}").format(h=ha)
        diff = f.weights[h] - ref.weights[h]  # (S, Skv); NaN where either row is NaN
        finite = diff[np.isfinite(diff)]
        m = float(np.abs(finite).max()) if finite.size else 0.0
        levels = (-max(m, 1e-9), max(m, 1e-9))
        self.big.set_cmap(SIGNED_CMAP)
        set_axis_label(self.cbar, "left", self.tr("weight B − A"))
        self.big.set_data(diff, levels, source=("B-A", f, ref, h))
        set_bar_cmap(self.cbar, SIGNED_CMAP)
        set_bar_levels(self.cbar, levels)
        # NaN against a number is a difference too: count the rows, never say "max |Δ| 0" for them
        nan_a, nan_b = np.isnan(ref.weights[h]).any(-1), np.isnan(f.weights[h]).any(-1)  # (S,)
        m_text = fmt_number(m) if finite.size else "–"
        notes = [text.format(n=n) for text, n in (
            (self.tr("{n} rows NaN in A only"), int((nan_a & ~nan_b).sum())),
            (self.tr("{n} rows NaN in B only"), int((nan_b & ~nan_a).sum())),
            (self.tr("{n} rows NaN in both"), int((nan_a & nan_b).sum()))) if n]
        note = "".join(f" · <span style='color:{self.theme.warning}'>{t}</span>" for t in notes)
        return self.tr("<b>B − A</b> · head {h} · max |Δ| {m}").format(h=h, m=m_text) + note

    def draw_selection(self) -> None:
        frame, sel = self.frame, self.selection
        cfg = frame.config
        h = sel.head
        mode = self.comparison()
        if self.reference is not None:
            model = self.view.model()
            item = model.item(2) if hasattr(model, "item") else None
            if item is not None:
                item.setEnabled(self._same_shape())
                item.setToolTip("" if self._same_shape() else why_not(self.reference, frame))
        if mode != "B-A":
            set_axis_label(self.cbar, "left", self.tr("weight"))
        if mode != "B" or h != self._detail_head:
            self.detail.clear()  # exact cells are of B's head: another head or view asks again
            self._detail_head = h if mode == "B" else None
            if mode == "B":
                self._request_detail()
        self.zoom_scale.setVisible(frame.lod is not None and mode == "B")
        region_top = self.detail.region_max() if self.zoom_scale.isChecked() else math.nan
        zoomed = mode == "B" and math.isfinite(region_top) and region_top > 0
        if mode == "B":
            if self._vmax is None:  # a Reset forgot the scale while this frame is still shown
                self._vmax = sticky_max(None, frame.weight_max, shrink=HOLD_SHRINK)
            levels = (0.0, region_top if zoomed else self._vmax)
            self.big.set_cmap(WEIGHTS_CMAP)
            set_bar_cmap(self.cbar, WEIGHTS_CMAP)
            set_bar_levels(self.cbar, levels)
            if self.big.levels != levels:
                self.big.set_levels(levels)
                self.detail.recolour()  # the exact cells in the new scale too
            self.big.set_data(frame.weights_shown[h], extent=(cfg.seq_len, cfg.key_len), source=(frame, h))
            lead = None
        else:
            lead = self._draw_compared(mode, h)
        self.big.set_marker("cell", sel.query, sel.key)
        kv = cfg.kv_head_of(h)
        share = self.tr(" (shared by {n})").format(n=cfg.group_size) if cfg.group_size > 1 else ""
        head = self.tr("head {h}").format(h=h)
        # facts about every head (the lessons quote them): order, causality
        facts = [f"{cfg.seq_len}×{cfg.key_len}",
                 self.tr("{share} on future keys").format(share=fmt_percent(frame.future_share))]
        if frame.lod is not None and self.detail.active:
            facts.append(self.tr("zoomed: every cell exact"))
            if zoomed:
                facts.append(self.tr("colours: this region"))  # (the bar gives its scale)
        elif frame.lod is not None and frame.lod_reduce is not None and frame.lod_reduce[h] == "mean":
            # a linear kernel's long frame: the tile's exact mean (its max would need every weight)
            facts.append(self.tr("each cell: mean of {r}×{c}").format(r=frame.lod[0], c=frame.lod[1]))
        elif frame.lod is not None:  # what one drawn cell is: the largest weight of its tile
            facts.append(self.tr("each cell: max of {r}×{c}").format(r=frame.lod[0], c=frame.lod[1]))
        if frame.identical_pairs == 1:
            facts.append(self.tr("1 identical row pair"))
        elif frame.identical_pairs:
            facts.append(self.tr("{n} identical row pairs").format(n=frame.identical_pairs))
        facts = " · ".join(unbroken(t) for t in facts)
        if mode == "A|B":  # B's own facts under its lead (A's are over its map)
            self.big.set_title(f"{lead}<br><span style='color:{self.theme.muted}'>{facts}</span>")
        elif lead is not None:  # comparing with A: say what is shown, and what the thumbnails are
            note = (self.tr("thumbnails: B − A") if mode == "B-A"
                    else self.tr("thumbnails: B, the current config"))
            self.big.set_title(f"{lead}<br><span style='color:{self.theme.muted}'>{unbroken(note)}</span>")
        else:
            waiting = ""
            if self.reference is not None and VIEWS[max(self.view.currentIndex(), 0)] == "B-A":
                waiting = "<br><span style='color:{c}'>{t}</span>".format(c=self.theme.warning, t=self.tr(
                    "B is still A: change the config and B − A appears"))
            self.big.set_title(
                f"<b>{head}</b> · kv {kv}{share} · softmax(QKᵀ·{fmt_number(cfg.effective_scale)})"
                f"<br><span style='color:{self.theme.muted}'>{facts}</span>{waiting}"
            )
        tr, tc = thumb_cell(self.frame)
        self.thumbs.set_selection(h, sel.query // tr, sel.key // tc)
        nan = self._nan_rows[h] if self._nan_rows is not None else np.zeros(cfg.seq_len, bool)
        # hatched where the row is coloured (a NaN row has its red wash and holes instead);
        # B's rows: not over A's map
        self.blind_overlay.setVisible(bool(len(self._blind_rows)) and not nan[self._blind_rows].all()
                                      and mode != "A")
        if self._nan_rows is not None and self._nan_rows[h].any() and mode != "A":
            rgba = np.zeros((cfg.seq_len, 1, 4), np.uint8)
            rgba[self._nan_rows[h]] = (220, 40, 40, 110)
            self.nan_overlay.setImage(rgba, autoLevels=False)
            self.nan_overlay.setRect(QRectF(-0.5, -0.5, cfg.key_len, cfg.seq_len))
            self.nan_overlay.show()
        else:
            self.nan_overlay.hide()

    def apply_theme(self, theme: Theme) -> None:
        bg = QColor(theme.background)
        self.detail.set_background((bg.red(), bg.green(), bg.blue()))
        self.detail.recolour()
        self.blind_overlay.setBrush(QBrush(QColor(theme.foreground), Qt.BrushStyle.BDiagPattern))
        style_colorbar(self.cbar, theme)
        self.thumbs.apply_theme(theme)
        self.big_a.apply_theme(theme)
        super().apply_theme(theme)

    _detail_head: int | None = None
    _auto_side = False  # side by side only because B − A could not be drawn
    _nan_rows: np.ndarray | None = None
    _blind_rows: np.ndarray = np.zeros(0, int)
    _vmax: float | None = None
