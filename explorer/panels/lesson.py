"""`lesson`: the chapters of assets/lessons/ as a guided tour of the other panels.

A chapter shows its text (in the interface language), "Apply preset" puts its
config and selection in the window and marks the panels it talks about, and
the "Try this" box poses one change. The box follows the window live: it shows
the chapter's metric at the preset and at the window's current config, and a
✓ once the change the text promises has happened, whether the learner made it
by hand or with "Do it for me". The metric (explorer.lessons.lesson_metric,
one engine run) is computed in a worker thread (explorer/work/base.py, one lane per
config and metric, so each runs once), never on the UI thread; a result for a config the
window has since left is simply kept in the cache.

The panel is made from the state like any other and handed a `LessonHost` (the window's
lessons feature) for what a panel cannot do itself: mark and raise the chapter's panels,
pin a preset as A, open the demo model. The chapter's task progress (started from the
preset, change achieved) is `state.lesson_progress`, so the ✓ is computed from the state
and the undo history restores it with the config: Undo never leaves a false ✓.

Not a figure: exports leave this panel out (`exportable = False`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from typing import Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QSizePolicy,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

import explorer.i18n as i18n
from engine import AttentionConfig

from ..figures.plots import fmt_number, fmt_percent
from ..figures.themes import Theme
from ..lessons import Chapter, LessonError, expect_holds, lesson_metric, load_chapters
from ..state import LessonProgress
from ..subscribe import follow
from ..work.base import Job, Worker
from .base import PANELS, Panel, register_panel
from .diagnostics import human_bytes

try:
    from PySide6.QtCore import QT_TRANSLATE_NOOP
except ImportError:  # pragma: no cover - older PySide6
    def QT_TRANSLATE_NOOP(_context: str, text: str) -> str:
        return text

MODEL_PANELS = ("model_grid", "model_head")
_BYTES = {"kv_cache_bytes", "score_grid_bytes"}
_COUNTS = {"nan_rows", "inf_scores_raw", "identical_rows", "tiles_skipped", "first_query_keys"}
_SHARES = {"future_mass"}
_CACHE_MAX = 64


def metric_job(key: tuple[AttentionConfig, str, int], wanted) -> Callable[[Job], tuple]:
    """lesson_metric(config, metric, head) in the worker thread: (key, value, error); skipped
    (error "superseded") when nobody wants it any more."""
    def job(_job: Job) -> tuple:
        if not wanted(key):
            return key, math.nan, "superseded"
        try:
            return key, lesson_metric(*key), ""
        except Exception as exc:  # a refused config: shown as "—" with the reason
            return key, math.nan, str(exc) or type(exc).__name__
    return job


class LessonHost(Protocol):
    """What the lesson panel asks of the window it is in (the lessons feature offers it)."""

    def highlight_panels(self, names: Iterable[str]) -> None:
        """Mark the docks of `names` and bring them forward (empty: clear the marks)."""

    def pin_preset(self, config: AttentionConfig, name: str, on_pinned: Callable) -> None:
        """Pin the frame of `config` as A once it is shown (a snapshot named `name`)."""

    def demo_action(self):
        """File ▸ Open demo model (a QAction) when it can be used, else None."""

    def model_panels_shown(self) -> bool:
        """Whether the model panels are in the window."""


@register_panel
class LessonPanel(Panel):
    name = "lesson"
    title = QT_TRANSLATE_NOOP("Panel", "Lessons")
    exportable = False

    try_changed = Signal(object)  # True / False once the metric is known, None while computing

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.graphics.hide()  # no plots here
        self._worker: Worker | None = None  # made on the first metric asked for
        self._cache: dict[tuple[AttentionConfig, str], tuple[float, str]] = {}
        self._pending: set[tuple[AttentionConfig, str]] = set()
        self._wanted: set[tuple[AttentionConfig, str]] = set()
        self.host: LessonHost | None = None  # set by the lessons feature (None: a figure's copy)
        self.index = 0
        self.try_holds: bool | None = None
        # the ✓ counts only from the preset of this chapter on (applied, or reached by hand),
        # not for an unrelated config that happens to move the metric the same way; once the
        # change happened the ✓ stays (the rest of a task, e.g. "then switch to min", moves
        # the metric again): both are state.lesson_progress, which undo restores
        self._pinned = None  # the frame this chapter pinned as A (a comparison chapter's preset)
        # chapters whose task no config change shows (the model chapter, the training lab's):
        # chapter key → (done, what the box says), told by whoever checks it (set_outside_check)
        self._outside: dict[str, tuple[bool, str]] = {}
        try:
            self.chapters: list[Chapter] = load_chapters()
            self.load_error = ""
        except LessonError as exc:
            self.chapters, self.load_error = [], str(exc)

        body = QWidget()
        v = QVBoxLayout(body)
        v.setContentsMargins(8, 4, 8, 8)
        v.setSpacing(6)
        self.chapter_list = QListWidget()
        self.chapter_list.setObjectName("lessonChapters")
        self.chapter_list.setMaximumHeight(150)
        self.chapter_list.currentRowChanged.connect(lambda row: self.open_chapter(row) if row >= 0 else None)
        v.addWidget(self.chapter_list)
        self.title_label = QLabel()
        self.title_label.setObjectName("lessonTitle")
        self.title_label.setWordWrap(True)
        f = QFont(self.title_label.font())
        f.setPointSizeF(f.pointSizeF() * 1.3)
        f.setBold(True)
        self.title_label.setFont(f)
        v.addWidget(self.title_label)
        self.text = QTextBrowser()
        self.text.setObjectName("lessonText")
        self.text.setOpenExternalLinks(True)
        self.text.setMinimumHeight(120)
        v.addWidget(self.text, 1)

        nav = QHBoxLayout()
        self.prev_button = QPushButton()
        self.prev_button.clicked.connect(lambda: self.open_chapter(self.index - 1))
        self.position_label = QLabel()
        self.position_label.setObjectName("hint")
        self.next_button = QPushButton()
        self.next_button.clicked.connect(lambda: self.open_chapter(self.index + 1))
        self.apply_button = QPushButton()
        self.apply_button.setDefault(True)
        self.apply_button.clicked.connect(self.apply_preset)
        nav.addWidget(self.prev_button)
        nav.addWidget(self.position_label)
        nav.addWidget(self.next_button)
        nav.addStretch(1)
        nav.addWidget(self.apply_button)
        v.addLayout(nav)
        # the preset's button on a row of its own when the row is too narrow for its text
        # ("Open the demo model" was cut to "pen the demo mod"): `_fit_nav`
        self._nav, self._nav2 = nav, QHBoxLayout()
        self._nav2.addStretch(1)
        v.addLayout(self._nav2)
        self.notice = QLabel()
        self.notice.setObjectName("lessonNotice")
        self.notice.setWordWrap(True)
        self.notice.setTextFormat(Qt.TextFormat.RichText)
        self.notice.hide()
        v.addWidget(self.notice)

        self.try_box = QGroupBox()
        t = QVBoxLayout(self.try_box)
        t.setSpacing(6)
        self.try_text = QLabel()
        self.try_text.setTextFormat(Qt.TextFormat.MarkdownText)
        self.try_text.setWordWrap(True)
        self.try_text.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        t.addWidget(self.try_text)
        row = QHBoxLayout()
        self.do_button = QPushButton()
        self.do_button.clicked.connect(self.do_it)
        self.check_label = QLabel("✓")
        self.check_label.setObjectName("lessonCheck")
        cf = QFont(self.check_label.font())
        cf.setPointSizeF(cf.pointSizeF() * 1.8)
        cf.setBold(True)
        self.check_label.setFont(cf)
        self.check_label.hide()
        row.addWidget(self.do_button)
        row.addStretch(1)
        row.addWidget(self.check_label)
        t.addLayout(row)
        self.metric_label = QLabel()
        self.metric_label.setObjectName("lessonMetric")
        self.metric_label.setTextFormat(Qt.TextFormat.RichText)
        self.metric_label.setWordWrap(True)
        t.addWidget(self.metric_label)
        v.addWidget(self.try_box)
        self.layout().addWidget(body, 1)
        self.layout().setStretch(1, 0)
        self.layout().setStretch(2, 1)
        self.retranslate_ui()

    # ---- the host -----------------------------------------------------------------------
    def set_host(self, host: LessonHost) -> None:
        """Start following the state for `host`'s window (the lessons feature calls this once)."""
        if self.host is not None:
            return
        self.host = host
        follow(self.app_state.config_changed, self._on_config_changed)
        follow(self.app_state.lesson_progress_changed, self._on_progress_changed)
        if self.app_state.models is not None:  # the model chapter follows a model being opened
            self.app_state.models.model_changed.connect(self._on_model_changed)
            # ... and its task: a deletion test run (a click on a token in model_head)
            self.app_state.models.deletion_changed.connect(self._on_deletion)

    def set_outside_check(self, chapter_key: str, done: bool, text: str) -> None:
        """The task of chapter `chapter_key` is checked outside this panel (the training lab's
        verdict, the circuit's proof): `done` gives the box its ✓ (kept once given, like a
        config task's), `text` says what the ✓ waits for or what was found."""
        self._outside[chapter_key] = (done, text)
        ch = self.chapter()
        if ch is not None and ch.key == chapter_key:
            self._update_try()

    def _on_deletion(self, result) -> None:
        for ch in self.chapters:
            if self.needs_model(ch) and result is not None:
                self._outside[ch.key] = (True, self.tr("A deletion test ran: the heads drawn strongest in "
                                                        "the model head panel changed the most."))
        if self.isVisible():
            self._update_try()

    def _demo_action(self):
        """File ▸ Open demo model, when this build has it and the demo model is installed."""
        return self.host.demo_action() if self.host is not None else None

    def progress(self) -> LessonProgress:
        """The current chapter's task progress (the state's, when it is of this chapter)."""
        ch = self.chapter()
        p = self.app_state.lesson_progress
        return p if ch is not None and p.chapter == ch.key else LessonProgress(ch.key if ch is not None else None)

    def _set_progress(self, **changes) -> None:
        self.app_state.set_lesson_progress(dataclasses.replace(self.progress(), **changes))

    def _on_model_changed(self, _model) -> None:
        if self.needs_model() and self.isVisible():
            self._show_texts()
            if self.model_panels_shown():  # never a second load from here
                self.apply_preset()

    def chapter(self) -> Chapter | None:
        return self.chapters[self.index] if self.chapters else None

    def enter(self) -> None:
        """The panel was opened: show the current chapter and mark its panels."""
        if self.chapters:
            self.open_chapter(self.index)

    def leave(self) -> None:
        """The panel was closed: clear the marks on the other panels."""
        self.app_state.set_lesson(None)
        if self.host is not None:
            self.host.highlight_panels(())

    # ---- chapters ------------------------------------------------------------------------
    def open_chapter(self, index: int) -> None:
        """Show chapter `index` (0-based, clamped) and mark its panels; the config is left alone
        until "Apply preset"."""
        if not self.chapters:
            return
        new_index = max(0, min(int(index), len(self.chapters) - 1))
        changed = new_index != self.index
        if changed:
            # another chapter: the "before" this one pinned is not A any more
            if self._pinned is not None and self.app_state.reference is self._pinned:
                self.app_state.set_reference(None)  # (it stays in the snapshots)
            self._pinned = None
        self.index = new_index
        if changed or self.app_state.lesson_progress.chapter != self.chapter().key:
            self.app_state.set_lesson_progress(LessonProgress(self.chapter().key))  # a fresh task
        if self.chapter_list.currentRow() != self.index:
            self.chapter_list.blockSignals(True)
            self.chapter_list.setCurrentRow(self.index)
            self.chapter_list.blockSignals(False)
        self._show_texts()
        ch = self.chapter()
        self.app_state.set_lesson(ch.key)
        if self.host is not None:
            self.host.highlight_panels(ch.panels)
        self._update_try()

    def needs_model(self, chapter: Chapter | None = None) -> bool:
        ch = chapter or self.chapter()
        return ch is not None and ch.needs == "model"

    def model_panels_shown(self) -> bool:
        return self.host is not None and self.host.model_panels_shown()

    def apply_preset(self) -> None:
        """The chapter's config and selection in the window; its panels marked and raised."""
        ch, w = self.chapter(), self.host
        if ch is None or w is None:
            return
        if self.needs_model(ch):
            if self.model_panels_shown():
                w.highlight_panels(ch.panels)
                if ch.selection:
                    self.app_state.model_selection.set(**{k: v for k, v in ch.selection.items() if k in ("head", "query", "key")})
            elif self._demo_action() is not None:
                self._demo_action().trigger()  # loads off the UI thread; _on_model_changed follows
            return
        # the config first (a step of its own in the undo history), then the progress: the
        # step's "before" keeps the progress from before the preset
        self.app_state.set_config(ch.config, selection=ch.selection or None, whole_step=True)
        self._set_progress(started=True, achieved=False)  # the task starts again from its preset
        if ch.compare:  # a comparison: the preset is A, so the change shows as B − A
            self._pin_preset(w, ch)
        w.highlight_panels(ch.panels)
        self._update_try()

    def do_it(self) -> None:
        """The "try this" change, made on the chapter's preset."""
        ch, w = self.chapter(), self.host
        if ch is None or w is None or not ch.try_changes or self.needs_model(ch):
            return
        self.app_state.set_config(ch.try_config, selection=ch.selection or None, whole_step=True)
        self._set_progress(started=True)
        ref = self.app_state.reference
        if ch.compare and (ref is None or ref.config != ch.config):
            self._pin_preset(w, ch)  # the preset is the "before" even when it was not applied
        w.highlight_panels(ch.panels)
        self._update_try()

    def _pin_preset(self, w, ch: Chapter) -> None:
        """Pin the chapter's preset as A (a snapshot named after the chapter), once it is shown."""
        def pinned(frame) -> None:
            self._pinned = frame

        w.pin_preset(ch.config, self.tr("Before: chapter {n}").format(n=self.index + 1), pinned)

    # ---- the live check ---------------------------------------------------------------------
    def _on_config_changed(self, _config) -> None:
        if self.isVisible():
            self._update_try()

    def _on_progress_changed(self, _progress) -> None:
        if self.isVisible():
            self._update_try()

    def _value(self, config: AttentionConfig, metric: str) -> tuple[float, str] | None:
        """The cached metric (at the chapter's selected head), or None after asking the pool."""
        ch = self.chapter()
        key = (config, metric, int(ch.selection.get("head", 0)) if ch is not None else 0)
        if key in self._cache:
            return self._cache[key]
        if key not in self._pending:
            self._pending.add(key)
            # a lane per key: every key asked for runs once, in the order asked
            self.worker().submit(metric_job(key, lambda k: k in self._wanted), lane=key)
        return None

    def worker(self) -> Worker:
        """The one thread computing the metrics (stopped with the panel)."""
        if self._worker is None:
            self._worker = Worker()
            self._worker.done.connect(lambda _rid, result: self._on_metric(*result))
            self.destroyed.connect(self._worker.retire)
        return self._worker

    def _on_metric(self, key, value: float, error: str) -> None:
        self._pending.discard(key)
        if error == "superseded":
            if key in self._wanted:  # wanted again since the job looked: ask once more
                self._update_try()
            return
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[key] = (value, error)
        self._update_try()

    def _update_try(self) -> None:
        ch, w = self.chapter(), self.host
        exp = ch.expect if ch is not None else None
        if ch is not None and w is not None and not exp and self._outside_task(ch) is not None:
            self._wanted = set()
            self._update_outside(ch)
            return
        if ch is None or not exp or w is None or self.needs_model(ch):
            self._wanted = set()
            self._set_holds(None)
            self.metric_label.setText("")
            self.metric_label.setVisible(False)
            return
        metric = exp["metric"]
        config = self.app_state.config
        progress = self.progress()
        started = progress.started or config == ch.config  # (the preset reached by hand)
        # the task's own fields must have moved (not, say, only the seed)
        changed = any(getattr(config, k) != getattr(ch.config, k) for k in ch.try_changes)
        tracking = started and changed
        # one rebinding, never a cleared set in between: the worker thread reads it
        head = int(ch.selection.get("head", 0))
        self._wanted = ({(ch.config, metric, head), (config, metric, head)} if tracking
                        else {(ch.config, metric, head)})
        before = self._value(ch.config, metric)
        now = self._value(config, metric) if tracking else None
        self.metric_label.setVisible(True)
        fmt = self._format
        name = self._metric_name(metric, head)
        b_txt = "…" if before is None else fmt(metric, before)
        n_txt = "…" if now is None else fmt(metric, now)
        holds = None
        if before is not None and now is not None and not (math.isnan(before[0]) or math.isnan(now[0])):
            holds = expect_holds(exp, before[0], now[0])
        muted = self.theme.muted
        if not started:
            line = self.tr("{metric}: {value} at the preset. Apply the preset, then make the change.").format(
                metric=f"<b>{name}</b>", value=b_txt)
        elif not tracking:
            line = self.tr("{metric}: {value} at the preset").format(metric=f"<b>{name}</b>", value=b_txt)
        else:
            line = self.tr("{metric}: {before} at the preset → {now} now").format(
                metric=f"<b>{name}</b>", before=b_txt, now=f"<b>{n_txt}</b>")
        achieved = progress.achieved or bool(holds and tracking)
        self.metric_label.setText(
            f"{line}<br><span style='color:{muted}'>{self._expect_text(exp)}</span>")
        self._set_holds(True if achieved else holds)
        if (started, achieved) != (progress.started, progress.achieved):
            self._set_progress(started=started, achieved=achieved)  # (follows: _update_try again)

    def _outside_task(self, ch: Chapter) -> tuple[bool, str] | None:
        """(done, text) of a chapter checked outside the panel, None for a config task."""
        if ch.key in self._outside:
            return self._outside[ch.key]
        if self.needs_model(ch):
            return False, self.tr("The ✓ comes once you run a deletion test: click a token in "
                                  "“Model: one head and the deletion test”.")
        return None

    def _update_outside(self, ch: Chapter) -> None:
        """The box of a chapter checked outside: its line, and the ✓ once done (kept)."""
        done, text = self._outside_task(ch)
        progress = self.progress()
        achieved = progress.achieved or done
        self.metric_label.setVisible(bool(text))
        self.metric_label.setText(text)
        self._set_holds(True if achieved else None)
        if achieved and not progress.achieved:
            self._set_progress(started=True, achieved=True)  # (follows: _update_try again)

    def _set_holds(self, holds: bool | None) -> None:
        self.check_label.setVisible(bool(holds))
        ch = self.chapter()
        compared = holds and ch is not None and ch.compare and self.app_state.reference is not None
        self.check_label.setToolTip(
            self.tr("The change happened as the text says; the panels show it as B − A (A: the preset)")
            if compared else self.tr("The change happened as the text says") if holds else "")
        if holds != self.try_holds:
            self.try_holds = holds
            self.try_changed.emit(holds)

    @staticmethod
    def _format(metric: str, value: tuple[float, str]) -> str:
        v, error = value
        if error or math.isnan(v):
            return "—"
        if metric in _BYTES:
            return human_bytes(v)
        if metric in _COUNTS:
            return f"{v:.0f}"
        if metric in _SHARES:
            return fmt_percent(v)
        return fmt_number(v)  # as the panels print it

    def _metric_name(self, metric: str, head: int = 0) -> str:
        names = {
            "mean_entropy": self.tr("mean entropy (nats)"),
            "mean_jacobian": self.tr("mean softmax gradient"),
            "score_std": self.tr("std of Q·Kᵀ, head {h}").format(h=head),
            "nan_rows": self.tr("NaN weight rows"),
            "inf_scores_raw": self.tr("Q·Kᵀ entries overflowed to ±inf"),
            "future_mass": self.tr("weight on future keys"),  # a share of each row, in %
            "first_query_keys": self.tr("keys the first query sees"),
            "identical_rows": self.tr("pairs of identical weight rows"),
            "head_entropy_spread": self.tr("spread of the entropy across heads"),
            "kv_cache_bytes": self.tr("KV cache (32 layers, 8192 tokens)"),
            "score_grid_bytes": self.tr("S×Skv score grid"),
            "backend_max_abs_diff": self.tr("max |Δ| vs eager"),
            "tiles_skipped": self.tr("masked tiles skipped"),
            "output_rel_error": self.tr("output error vs full softmax"),
        }
        return names.get(metric, metric)

    def _expect_text(self, exp: dict) -> str:
        change = exp.get("change")
        if change == "ratio":
            return self.tr("expected: {ratio}× the preset value").format(ratio=f"{exp.get('value', 1.0):g}")
        return {
            "increase": self.tr("expected: it increases"),
            "decrease": self.tr("expected: it decreases"),
            "becomes_zero": self.tr("expected: it drops to 0"),
            "becomes_positive": self.tr("expected: it rises above 0"),
        }.get(change, str(change))

    # ---- texts -------------------------------------------------------------------------
    def _show_texts(self) -> None:
        ch = self.chapter()
        lang = i18n.lesson_language()
        if ch is None:
            self.title_label.setText(self.tr("No lessons"))
            self.text.setPlainText(self.load_error or self.tr("assets/lessons/ has no chapters."))
            for b in (self.prev_button, self.next_button, self.apply_button, self.do_button):
                b.setEnabled(False)
            self.try_box.hide()
            return
        n = len(self.chapters)
        self.title_label.setText(f"{self.index + 1}. {ch.title(lang)}")
        self.text.setMarkdown(ch.body(lang))
        self.position_label.setText(self.tr("{i} of {n}").format(i=self.index + 1, n=n))
        self.prev_button.setEnabled(self.index > 0)
        self.next_button.setEnabled(self.index < n - 1)
        self.try_text.setText(ch.try_text(lang))
        self.try_box.show()
        needs_model = self.needs_model(ch)
        if needs_model and "model_grid" not in PANELS:
            self.notice.setText(self.tr(
                "This chapter needs the model panels (model grid and model head), which this build "
                "does not include yet. Once they are installed, open a model, e.g. with "
                "<code>attention-explorer gui --model all-MiniLM-L6-v2</code>, and come back here."))
        elif needs_model and not self.model_panels_shown():
            self.notice.setText(self.tr(
                "Open a model first: File ▸ Open demo model (the bundled all-MiniLM-L6-v2) or "
                "File ▸ Open model…, or start the explorer with <code>--model all-MiniLM-L6-v2</code>; "
                "the model panels then appear and this chapter marks them."))
        else:
            self.notice.setText("")
        self.notice.setVisible(bool(self.notice.text()))
        demo = needs_model and not self.model_panels_shown() and self._demo_action() is not None
        self.apply_button.setText(self.tr("Open the demo model") if demo else self.tr("Apply preset"))
        self._fit_nav()
        self.apply_button.setEnabled(not needs_model or self.model_panels_shown() or demo)
        self.do_button.setEnabled(bool(ch.try_changes) and not needs_model)
        self.do_button.setToolTip(
            self.tr("Applies the preset with: {changes}").format(
                changes=", ".join(f"{k} = {v!r}" for k, v in ch.try_changes.items()))
            if ch.try_changes else "")

    def _fit_nav(self) -> None:
        """Apply preset beside Previous / Next when the row has room for all their texts,
        else on the row under them."""
        nav = self._nav
        parts = (self.prev_button, self.position_label, self.next_button, self.apply_button)
        need = (sum(w.sizeHint().width() for w in parts) + nav.spacing() * (len(parts) + 1)
                + 16 + 8)  # (the body's margins, a little air)
        wrap = self.width() < need
        if wrap == (self._nav2.indexOf(self.apply_button) >= 0):
            return
        (nav if wrap else self._nav2).removeWidget(self.apply_button)
        (self._nav2 if wrap else nav).addWidget(self.apply_button)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_nav()

    def retranslate_ui(self) -> None:
        self.prev_button.setText(self.tr("◀ Previous"))
        self.next_button.setText(self.tr("Next ▶"))
        self.apply_button.setText(self.tr("Apply preset"))
        self.apply_button.setToolTip(self.tr("Set the chapter's configuration and selection in the window"))
        self.do_button.setText(self.tr("Do it for me"))
        self.try_box.setTitle(self.tr("Try this"))
        self.chapter_list.setToolTip(self.tr("Chapters: click one to read it"))
        lang = i18n.lesson_language()
        self.chapter_list.blockSignals(True)
        self.chapter_list.clear()
        for i, ch in enumerate(self.chapters):
            self.chapter_list.addItem(f"{i + 1}. {ch.title(lang)}")
        if self.chapters:
            self.chapter_list.setCurrentRow(self.index)
        self.chapter_list.blockSignals(False)
        self._show_texts()
        self._update_try()

    # ---- Panel -------------------------------------------------------------------------
    def draw_frame(self, frame) -> None:
        pass  # the texts do not depend on the frame; the check follows config_changed

    def draw_selection(self) -> None:
        pass

    def apply_theme(self, theme: Theme) -> None:
        super().apply_theme(theme)
        self.check_label.setStyleSheet(f"color: {theme.ok};")
        self.notice.setStyleSheet(f"color: {theme.warning};")
        if self.chapters:
            self._update_try()
