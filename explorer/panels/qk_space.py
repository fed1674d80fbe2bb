"""`qk_space` and `model_qk_space`: the queries and keys of one head in one plane.

One PCA over a head's queries and keys together (engine.qk_space.project_qk; the explained
variance in the title and on the axes), each point labelled with its token: a query is a
filled marker, a key a hollow one (colours in the legend), the shape says which text. A "+"
marks where the zero vector lands: measured from it, a query's and a key's arrows multiply
to their score restricted to the plane, and the dashed rays are the selected pair's.

- **qk_space** (a `Panel`): the sliders' layer. The current frame's Q of the selected head
  times the config's scale, and K of the KV head it reads (GQA), so the plane's geometry is
  that of the scores softmax gets (`engine.qk_space.head_qk_space`): a smaller √d_k scale
  pulls the queries to the zero vector, RoPE turns each point by its position, and the keys
  the selected query may not see (causal, window, padding) are drawn pale. Made with the
  window, closed, in a tab beside qkv (View ▸ opens it).
- **model_qk_space** (an `AnalysisPanel`): a loaded model's selected (layer, head) over its
  text and, by choice, sample sentences (`LoadedModel.qk_embedding`, in the model's worker,
  lane "qk_space"; a GQA head's keys are its KV head's). The vectors are what the model
  multiplies (after RoPE, before its scale). Docked in a tab beside the circuits panels.

Two panels, not one with two modes: a model's panels follow the model's selection and its
worker, the sliders' panels the frames; each has a dock of its own, so both can be open.
Hovering a point names it in the status bar and moves the crosshair of the matrices of the
same shape to its (query, selected key) or (selected query, key) cell, and a hovered cell
there rings its two points; a click selects the query or key.
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtWidgets import QComboBox, QLabel

from engine.qk_space import head_qk_space

from ..figures.plots import fmt_number, fmt_percent, set_axis_label
from ..figures.qk_scatter import SHAPE_GLYPHS, QKScatter
from ..figures.text import short_token
from ..figures.themes import Theme
from ..subscribe import follow
from .analysis import AnalysisPanel
from .base import Panel, register_panel

#: the texts the model panel can add to the model's own (sample sentences)
MORE_TEXTS = (0, 1, 2, 3)


def _short(text: str, n: int = 24) -> str:
    return html.escape(text if len(text) <= n else text[:n - 1] + "…")


def _start(text: str) -> str:
    """A sentence's first three words (or, unspaced, characters), lower case."""
    words = text.lower().split()
    return " ".join(words[:3]) if len(words) > 1 else text[:3]


class _Plane:
    """What both panels share: the figure, the axes and title, the point readout and the
    hover link. A subclass fills `kinds` (n,) bool is_key, `positions`, `groups`, `tokens`,
    `n_queries`, and says `link_shape()` and which group is the selection's (`group 0`)."""

    def _build_plane(self) -> None:
        self.fig = QKScatter(on_hover=self._hover_point, on_click=self._click_point)
        ci = self.graphics.ci
        ci.addItem(self.fig.cell, 0, 0)
        ci.addItem(self.fig.legend, 1, 0)
        ci.layout.setRowStretchFactor(0, 1)
        self.is_key = np.zeros(0, dtype=bool)
        self.positions = np.zeros(0, dtype=int)
        self.groups = np.zeros(0, dtype=int)
        self.tokens: list[str] = []
        self.texts_shown: list[str] = []
        follow(self.hover.hovered, self._on_link_hover)

    # ---- indices -------------------------------------------------------------------------
    def point_of(self, is_key: bool, position: int, group: int = 0) -> int | None:
        """The index of the point of that kind, position and text (None: not shown)."""
        hit = np.nonzero((self.is_key == is_key) & (self.positions == position) & (self.groups == group))[0]
        return int(hit[0]) if hit.size else None

    def describe_point(self, i: int) -> str:
        if not 0 <= i < len(self.tokens):
            return ""
        kind = (QCoreApplication.translate("QKSpacePanel", "key") if self.is_key[i]
                else QCoreApplication.translate("QKSpacePanel", "query"))
        line = QCoreApplication.translate("QKSpacePanel", "{kind} at position {pos} “{token}”").format(
            kind=kind, pos=int(self.positions[i]), token=self.tokens[i])
        if len(self.texts_shown) > 1:
            g = int(self.groups[i])
            line += QCoreApplication.translate("QKSpacePanel", " · text {n}: “{text}”").format(
                n=g + 1, text=self.texts_shown[g][:40])
        x, y = self.fig.xy[i]
        return line + f" · PC1 {fmt_number(x)}, PC2 {fmt_number(y)}"

    def link_shape(self) -> tuple[int, int] | None:
        raise NotImplementedError

    # ---- hover and click -------------------------------------------------------------------
    def _hover_point(self, i: int | None) -> None:
        shape = self.link_shape()
        if i is None or shape is None:
            if shape is not None:
                self.hover.clear(shape)
            return
        if self.groups[i] == 0:  # the selection's text: the cell this point stands for
            sel, pos = self.selection, int(self.positions[i])
            row, col = (sel.query, pos) if self.is_key[i] else (pos, sel.key)
            self.hover.publish(shape, row, col)
        self.hover.describe(self.describe_point(i))

    def _click_point(self, i: int) -> None:
        if self.groups[i] != 0:
            return
        pos = int(self.positions[i])
        if self.is_key[i]:
            self.selection.set(key=pos)
        else:
            self.selection.set(query=pos)

    def _on_link_hover(self, shape, row: int, col: int) -> None:
        if shape != self.link_shape() or row < 0:
            self.fig.set_marks(self.fig.selected, [])
            return
        marks = [self.point_of(False, row), self.point_of(True, col)]
        self.fig.set_marks(self.fig.selected, [i for i in marks if i is not None])

    # ---- the parts of a title and legend ---------------------------------------------------
    def variance_text(self, explained: np.ndarray) -> str:
        ex = [float(v) for v in explained] + [0.0] * (2 - len(explained))
        set_axis_label(self.fig.plot, "bottom", QCoreApplication.translate(
            "QKSpacePanel", "PC1 ({share} of the variance)").format(share=fmt_percent(ex[0])))
        set_axis_label(self.fig.plot, "left", QCoreApplication.translate(
            "QKSpacePanel", "PC2 ({share})").format(share=fmt_percent(ex[1])))
        return QCoreApplication.translate("QKSpacePanel", "PC1 + PC2 explain {share} of the variance").format(
            share=fmt_percent(ex[0] + ex[1]))

    def markers_text(self, queries: str) -> str:
        """The legend's first line: the two kinds and the zero vector."""
        th = self.theme
        q = f"<span style='color:{th.accent2}'>●</span>"
        k = f"<span style='color:{th.accent}'>○</span>"
        return QCoreApplication.translate(
            "QKSpacePanel", "{q} queries {queries} &nbsp; {k} keys &nbsp; + the zero vector: the score "
            "of a query and a key is the product of their arrows from it").format(q=q, k=k, queries=queries)

    def texts_text(self) -> str:
        """Which shape is which text (several texts only)."""
        if len(self.texts_shown) < 2:
            return ""
        parts = [f"{SHAPE_GLYPHS[g % len(SHAPE_GLYPHS)]} “{_short(t)}”" for g, t in enumerate(self.texts_shown)]
        return QCoreApplication.translate("QKSpacePanel", "texts: {texts}").format(texts=" &nbsp; ".join(parts))

    def pair_text(self, qi: int, kj: int, q_token: str, k_token: str, score: float | None,
                  plane: float | None, masked: bool) -> str:
        text = QCoreApplication.translate("QKSpacePanel", "selected: query {q} “{qt}” · key {k} “{kt}”").format(
            q=qi, qt=html.escape(q_token), k=kj, kt=html.escape(k_token))
        if score is not None and plane is not None:
            text += QCoreApplication.translate("QKSpacePanel", ": q·k = {score}, in this plane {plane}").format(
                score=fmt_number(score), plane=fmt_number(plane))
        if masked:
            text += QCoreApplication.translate("QKSpacePanel", " (masked: this query cannot see it)")
        return text


@register_panel
class QKSpacePanel(_Plane, Panel):
    name = "qk_space"
    title = QT_TRANSLATE_NOOP("Panel", "Q/K space: queries and keys in one plane")

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        self.space = None  # engine.qk_space.QKSpace of the head shown
        self._space_for: tuple | None = None  # (frame, head) it was made from
        self.error = ""
        self._build_plane()

    # ---- data ------------------------------------------------------------------------------
    def link_shape(self) -> tuple[int, int] | None:
        f = self.frame
        return None if f is None else (f.config.seq_len, f.config.key_len)

    def head(self) -> int:
        return min(self.selection.head, self.frame.config.n_heads - 1)

    def update_space(self) -> bool:
        """(Re)project the selected head of the frame; True when it changed."""
        f, h = self.frame, self.head()
        if self._space_for is not None and self._space_for[0] is f and self._space_for[1] == h:
            return False
        self._space_for = (f, h)
        try:
            self.space = head_qk_space(f.config, f.q, f.k, h)
            self.error = ""
        except ValueError as exc:
            self.space, self.error = None, str(exc)
        sp = self.space
        if sp is None:
            self.is_key, self.positions, self.groups, self.tokens = (np.zeros(0, bool), np.zeros(0, int),
                                                                     np.zeros(0, int), [])
            return True
        self.is_key = np.r_[np.zeros(sp.n_queries, bool), np.ones(sp.n_keys, bool)]
        self.positions = np.r_[sp.query_positions, sp.key_positions].astype(int)
        self.groups = np.zeros(len(self.positions), dtype=int)
        self.tokens = ([f.query_labels[p] for p in sp.query_positions]
                       + [f.key_labels[p] for p in sp.key_positions])
        return True

    def draw_frame(self, frame) -> None:
        """Nothing before the selection is known: draw_selection projects the head."""

    def draw_selection(self) -> None:
        f = self.frame
        if f is None:
            return
        changed = self.update_space()
        sp, fig = self.space, self.fig
        if sp is None:
            if changed:
                fig.clear()
                fig.set_title(QCoreApplication.translate("QKSpacePanel", "<b>Q/K space</b>: {why}").format(
                    why=html.escape(self.error)))
                fig.set_legend("")
            return
        sel, cfg = self.selection, f.config
        qpos = min(sel.query, cfg.seq_len - 1)
        faded = self.is_key & ~f.mask[qpos][np.minimum(self.positions, cfg.key_len - 1)]
        if changed:
            pts = sp.points if sp.points.shape[1] == 2 else np.c_[sp.points, np.zeros(len(sp.points))]
            origin = sp.origin if sp.origin.size == 2 else np.r_[sp.origin, 0.0]
            fig.set_origin(tuple(origin))
            fig.set_points(pts, self.is_key, self.groups, [short_token(t, 12) for t in self.tokens], faded)
        else:
            fig.set_faded(faded)
        qi, kj = self.point_of(False, sel.query), self.point_of(True, sel.key)
        fig.set_marks([i for i in (qi, kj) if i is not None])
        fig.set_rays([i for i in (qi, kj) if i is not None])
        self.draw_texts()

    def draw_texts(self) -> None:
        f, sp, sel = self.frame, self.space, self.selection
        cfg, h = f.config, self.head()
        kv = ""
        if cfg.kv_heads != cfg.n_heads:
            kv = self.tr(" · keys of KV head {g}, shared by {n} query heads").format(
                g=sp.kv_head, n=cfg.group_size)
        self.fig.set_title(self.tr("<b>Q/K space</b> of head {h}{kv} · {variance}").format(
            h=h, kv=kv, variance=self.variance_text(sp.explained)))
        scale = fmt_number(sp.scale)
        how = (self.tr("× 1/√d_k = {scale}").format(scale=scale) if cfg.scale is None
               else self.tr("× the scale {scale}").format(scale=scale))
        lines = [self.markers_text(self.tr("{how} (so q·k is the score softmax gets)").format(how=how))]
        qpos, kpos = min(sel.query, cfg.seq_len - 1), min(sel.key, cfg.key_len - 1)
        q = np.asarray(f.q[h, qpos], dtype=np.float64) * sp.scale
        k = np.asarray(f.k[sp.kv_head, kpos], dtype=np.float64)
        c = sp.components
        lines.append(self.pair_text(qpos, kpos, f.query_labels[qpos], f.key_labels[kpos], float(q @ k),
                                    float((q @ c.T) @ (k @ c.T)), not bool(f.mask[qpos, kpos])))
        notes = []
        if not f.mask.all():
            notes.append(self.tr("pale keys: masked for the selected query"))
        if cfg.positional == "rope":
            notes.append(self.tr("RoPE has turned every query and key by its position"))
        if cfg.positional == "alibi":
            notes.append(self.tr("ALiBi's bias is added to the scores, not to q or k: it is not in "
                                 "this picture"))
        if sp.step > 1:
            notes.append(self.tr("one position in {step} shown").format(step=sp.step))
        if notes:
            lines.append(f"<span style='color:{self.theme.muted}'>{' · '.join(notes)}</span>")
        self.fig.set_legend("<br>".join(lines))

    # ---- look ------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.fig.apply_theme(theme)
        super().apply_theme(theme)  # (redraws the frame: titles and legend in the new colours)


@register_panel
class ModelQKSpacePanel(_Plane, AnalysisPanel):
    name = "model_qk_space"
    title = QT_TRANSLATE_NOOP("Panel", "Model: Q/K space of the selected head")

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, parent)
        self.embedding = None  # engine.models.QKEmbedding shown
        self._drawn = None
        self.more_label = QLabel()
        self.more = QComboBox()
        self.more.setObjectName("qk_space_texts")
        for n in MORE_TEXTS:
            self.more.addItem("", n)
        self.more_label.setBuddy(self.more)
        self.more.currentIndexChanged.connect(lambda _i: self.update_request())
        self.toolbar.addStretch(1)
        self.toolbar.addWidget(self.more_label)
        self.toolbar.addWidget(self.more)
        self.toolbar.addSpacing(24)  # room for the "?" button
        self._build_plane()
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        self.more_label.setText(self.tr("texts"))
        self.more.setItemText(0, self.tr("the model's text"))
        self.more.setItemText(1, self.tr("+ 1 sample sentence"))
        self.more.setItemText(2, self.tr("+ 2 sample sentences"))
        self.more.setItemText(3, self.tr("+ 3 sample sentences"))
        self.more.setToolTip(self.tr("Project the queries and keys of sample sentences too (one PCA "
                                     "for all texts; the shape of a point says its text)"))
        super().retranslate_ui()

    def busy_text(self, kind: str) -> str:
        return self.tr("Projecting the selected head's queries and keys…")

    # ---- what to compute ---------------------------------------------------------------------
    def texts(self) -> list[str]:
        """The model's text, then as many sample sentences as chosen (the interface's language)."""
        from assets import sample_texts

        text = self.model_text()
        n = self.more.currentData() or 0
        lang = "zh" if str(self.app_state.language).startswith("zh") else "en"
        try:
            known = sample_texts()
        except OSError:
            known = {}
        samples = known.get(lang) or known.get("en") or []
        chosen, starts = [text], {_start(text)}
        for s in samples:  # sentences that start alike share their first vectors (causal): skip them
            if len(chosen) > n:
                break
            if _start(s) not in starts:
                chosen.append(s)
                starts.add(_start(s))
        return chosen

    def needs(self):
        model = self.loaded
        layer, head = self.model_layer(), min(self.selection.head, model.n_heads - 1)
        texts = tuple(self.texts())
        return [("qk_space", (texts, layer, head),
                 lambda job: model.qk_embedding(list(texts), layer, head, progress=job.check))]

    def link_shape(self) -> tuple[int, int] | None:
        tr_ = self.trace
        return None if tr_ is None else (tr_.seq_len, tr_.seq_len)

    # ---- drawing -----------------------------------------------------------------------------
    def draw_refusal(self, line: str) -> None:
        self.embedding = self._drawn = None
        self.fig.clear()
        name = html.escape(self.loaded.name) if self.loaded is not None else ""
        self.fig.set_title(self.tr("<b>Q/K space</b> · {name}").format(name=name))
        self.fig.set_legend(html.escape(line) if line and self.is_figure() else "")

    def draw(self, outcomes) -> None:
        got = outcomes.get("qk_space")
        if got is None:
            return
        emb = got.result if got.ok else None
        self.embedding = emb
        if emb is None:
            self.draw_refusal(got.error or "")
            return
        if emb is not self._drawn:
            self._drawn = emb
            self.is_key = np.array([k == "key" for k in emb.kinds], dtype=bool)
            self.positions = np.asarray(emb.positions, dtype=int)
            self.groups = np.asarray(emb.text_index, dtype=int)
            self.tokens = list(emb.tokens)
            self.texts_shown = list(self.asked["qk_space"][0])  # (texts, layer, head)
            pts = emb.points if emb.points.shape[1] == 2 else np.c_[emb.points, np.zeros(len(emb.points))]
            origin = -(emb.mean.astype(np.float64) @ emb.components.astype(np.float64).T)
            self.fig.set_origin(tuple(origin) if origin.size == 2 else (float(origin[0]), 0.0))
            self.fig.set_points(pts, self.is_key, self.groups, [short_token(t, 12) for t in self.tokens],
                                self.masked_keys(), faded_source=self.masked_source())
        self.draw_selection()

    def masked_source(self) -> tuple:
        """What `masked_keys` is made from: the embedding, and the selected query in a causal
        model (an encoder's query sees every key: the same mask for every query)."""
        tr_ = self.trace
        return (self.embedding, self.selection.query) if tr_ is not None and tr_.causal else (self.embedding,)

    def masked_keys(self) -> np.ndarray:
        """(n,) keys of the model's text the selected query cannot see (a causal model: later ones)."""
        tr_ = self.trace
        if tr_ is None or not tr_.causal:
            return np.zeros(len(self.positions), dtype=bool)
        return self.is_key & (self.groups == 0) & (self.positions > self.selection.query)

    def draw_selection(self) -> None:
        emb, fig = self.embedding, self.fig
        if emb is None or emb is not self._drawn:
            return
        sel, tr_ = self.selection, self.trace
        fig.set_faded(self.masked_keys(), source=self.masked_source())
        qi, kj = self.point_of(False, sel.query), self.point_of(True, sel.key)
        fig.set_marks([i for i in (qi, kj) if i is not None])
        fig.set_rays([i for i in (qi, kj) if i is not None])
        kv = ""
        if self.loaded is not None and self.loaded.n_kv_heads != self.loaded.n_heads:
            kv = self.tr(" · keys of KV head {g}").format(g=emb.kv_head)
        fig.set_title(self.tr("<b>Q/K space</b> · layer {layer} · head {head}{kv} · {variance}").format(
            layer=emb.layer, head=emb.head, kv=kv, variance=self.variance_text(emb.explained)))
        lines = [self.markers_text(self.tr("as the model multiplies them (after RoPE, before its "
                                           "scale)"))]
        if qi is not None and kj is not None and tr_ is not None:
            score = plane = None
            if emb.layer in tr_.layers:
                li = tr_.layers.index(emb.layer)
                q = tr_.queries[li][emb.head][sel.query].double().cpu().numpy()
                k = tr_.keys[li][emb.kv_head][sel.key].double().cpu().numpy()
                c = emb.components.astype(np.float64)
                score, plane = float(q @ k), float((q @ c.T) @ (k @ c.T))
            lines.append(self.pair_text(sel.query, sel.key, short_token(self.tokens[qi], 16),
                                        short_token(self.tokens[kj], 16), score, plane,
                                        bool(self.masked_keys()[kj])))
        extra = self.texts_text()
        if extra:
            lines.append(extra)
        fig.set_legend("<br>".join(lines))

    # ---- look --------------------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.graphics.setBackground(theme.background)
        self.fig.apply_theme(theme)
        self.update_request()
