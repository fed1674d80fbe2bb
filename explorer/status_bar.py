"""The status bar feature: the config summary, compute and render times, the backend, a long
frame's progress with Cancel, the hover readout, a selection's readout.

Made from the state and the host (explorer.host): it follows the host's frame signals
(requested, rendered, failed, cancelled, progress) and the state's hover and selection.
Texts are translated in the "MainWindow" context, like the rest of the window.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QTimer
from PySide6.QtWidgets import QLabel

from engine import AttentionConfig

from .feature import Feature
from .frame import Frame
from .frame_progress import FrameProgress
from .sizing import OpaqueLabel, hold_size, release_size
from .subscribe import follow

#: A compute taking longer than this shows "computing…" in the status bar.
BUSY_AFTER_MS = 120


def set_status_text(label: QLabel, text: str) -> None:
    """A status-bar label's text; its size is held (see sizing.py): these change every frame."""
    if text != label.text():
        label.setText(text)
        hold_size(label)


#: The worded templates of `AttentionConfig.summary_parts`, marked for lupdate (the
#: "MainWindow" context); `config_line` translates them when the line is made.
SUMMARY_WORDS = (
    QT_TRANSLATE_NOOP("MainWindow", "heads={n}"), QT_TRANSLATE_NOOP("MainWindow", "kv={n} ({kind})"),
    QT_TRANSLATE_NOOP("MainWindow", "causal"), QT_TRANSLATE_NOOP("MainWindow", "window={w}"),
    QT_TRANSLATE_NOOP("MainWindow", "pad={p}"), QT_TRANSLATE_NOOP("MainWindow", "mask={masks}"),
    QT_TRANSLATE_NOOP("MainWindow", "none"), QT_TRANSLATE_NOOP("MainWindow", "scale=1/√d_k"),
    QT_TRANSLATE_NOOP("MainWindow", "scale={s}"), QT_TRANSLATE_NOOP("MainWindow", "prescale Q"),
    QT_TRANSLATE_NOOP("MainWindow", "pos={p}"), QT_TRANSLATE_NOOP("MainWindow", "sinusoidal"),
    QT_TRANSLATE_NOOP("MainWindow", "learned"),
    QT_TRANSLATE_NOOP("MainWindow", "global={n}"), QT_TRANSLATE_NOOP("MainWindow", "kernel={kernel}"),
    QT_TRANSLATE_NOOP("MainWindow", "kernel={kernel} m={m}"), QT_TRANSLATE_NOOP("MainWindow", "summary_block={b}"),
)


def config_line(config: AttentionConfig) -> str:
    """The status bar's config line: `config.summary_parts()` in the current language (in
    English, the summary's words), its fields joined by " · "."""
    return " · ".join(config.summary_parts(lambda w: QCoreApplication.translate("MainWindow", w)))


class StatusFeature(Feature):
    """See the module docstring."""

    name = "status"

    def __init__(self, state, host) -> None:
        super().__init__(state, host)
        sb = host.status_bar()
        # opaque, in the status bar's own colour: a new text every frame repaints the label,
        # not the status bar and the window beneath it
        self.status_config = OpaqueLabel()
        self.status_compute = OpaqueLabel()
        self.status_render = OpaqueLabel()
        self.status_backend = OpaqueLabel()
        for w in self.labels():
            sb.addPermanentWidget(w)
        self.frame_progress = FrameProgress()  # a long frame's heads under way, and Cancel
        sb.addPermanentWidget(self.frame_progress)
        self.frame_progress.cancel_requested.connect(host.cancel_frame)
        host.frame_progressed.connect(self.frame_progress.report)
        # "computing…" only for a compute the user would notice: a quick frame replaces the
        # summary directly (no flicker, no status-bar relayout twice a frame)
        self._busy = QTimer(self)
        self._busy.setSingleShot(True)
        self._busy.setInterval(BUSY_AFTER_MS)
        self._busy.timeout.connect(lambda: set_status_text(self.status_config, QCoreApplication.translate("MainWindow", "computing…")))
        self._labels_aside = False
        self._hover_text = ""  # the readout the hover last put in the status bar
        host.frame_requested.connect(self._on_requested)
        host.frame_shown.connect(self._on_shown)
        host.compute_failed.connect(self._on_failed)
        host.frame_cancelled.connect(self._on_cancelled)
        follow(state.hover.described, self._on_hover_text)
        follow(state.selection.changed, self._on_selection_changed)

    def labels(self) -> tuple[QLabel, ...]:
        return (self.status_config, self.status_compute, self.status_render, self.status_backend)

    def retranslate_ui(self) -> None:
        for label in self.labels():
            release_size(label)  # the texts of another language size the labels afresh
        self.status_compute.setToolTip(QCoreApplication.translate("MainWindow", "Engine time in the worker thread (run + derived panel data)"))
        self.status_render.setToolTip(QCoreApplication.translate("MainWindow", "UI-thread time to update and repaint the visible panels; "
                                         "latency = set_config → repainted"))
        self.status_backend.setToolTip(QCoreApplication.translate("MainWindow", "The implementation that actually produced the output"))
        self.host.status_bar().clearMessage()  # a transient message in the old language
        if self.state.frame is not None:
            self._update_status(self.state.frame)
        else:
            set_status_text(self.status_compute, QCoreApplication.translate("MainWindow", "compute –"))
            set_status_text(self.status_render, QCoreApplication.translate("MainWindow", "render –"))
            set_status_text(self.status_backend, QCoreApplication.translate("MainWindow", "backend –"))

    # ---- the frame's life -----------------------------------------------------------------------
    def _on_requested(self, _config) -> None:
        self._busy.start()

    def _on_shown(self, frame) -> None:
        self._busy.stop()
        self.frame_progress.finish()
        self._update_status(frame)

    def _on_failed(self, _config, _message: str) -> None:
        self.frame_progress.finish()
        self._busy.stop()
        set_status_text(self.status_config, QCoreApplication.translate("MainWindow", "error"))

    def _on_cancelled(self, _config) -> None:
        self.frame_progress.finish()
        self._busy.stop()
        set_status_text(self.status_config, QCoreApplication.translate("MainWindow", "cancelled"))

    def _on_selection_changed(self) -> None:
        s, f = self.state.selection, self.state.frame
        if f is None:
            return
        q = f.query_labels[s.query] if s.query < len(f.query_labels) else ""
        k = f.key_labels[s.key] if s.key < len(f.key_labels) else ""
        self.host.show_status(QCoreApplication.translate("MainWindow", "selected: head {head} · query {query} ‘{q}’ · key {key} ‘{k}’").format(
            head=s.head, query=s.query, q=q, key=s.key, k=k), 4000)

    def _on_hover_text(self, text: str) -> None:
        """The hover readout in the status bar, whole: when it is wider than the room the
        config, timing and backend labels leave, they step aside until the hover ends. The
        hover's end takes away only its own readout."""
        bar = self.host.status_bar()
        labels = self.labels()
        if text:
            room = bar.width() - sum(label.sizeHint().width() + 12 for label in labels) - 24
            aside = bar.fontMetrics().horizontalAdvance(text) > room
            bar.showMessage(text)
        else:
            aside = False
            self.host.take_back_status(self._hover_text)
        self._hover_text = text
        if self._labels_aside != aside:  # (toggled only when it changes: no relayout per move)
            self._labels_aside = aside
            for label in labels:
                label.setVisible(not aside)

    def _update_status(self, frame: Frame) -> None:
        set_status = set_status_text
        render_ms, latency_ms = self.host.timings()
        set_status(self.status_config, config_line(frame.config))
        set_status(self.status_compute, QCoreApplication.translate("MainWindow", "compute {ms} ms").format(ms=f"{frame.compute_ms:.1f}"))
        if math.isnan(latency_ms):
            set_status(self.status_render, QCoreApplication.translate("MainWindow", "render {ms} ms").format(ms=f"{render_ms:.1f}"))
        else:
            set_status(self.status_render, QCoreApplication.translate("MainWindow", "render {ms} ms · latency {latency} ms").format(
                ms=f"{render_ms:.1f}", latency=f"{latency_ms:.1f}"))
        diff = frame.trace.backend_max_abs_diff
        if diff is None:
            set_status(self.status_backend, QCoreApplication.translate("MainWindow", "backend {impl}").format(impl=frame.backend_impl))
        else:
            set_status(self.status_backend, QCoreApplication.translate("MainWindow", "backend {impl} (max |Δ| vs eager {diff})").format(
                impl=frame.backend_impl, diff=f"{diff:.1e}"))
