"""The window's status bar: the config summary, compute and render times, the backend, a long
frame's progress with Cancel, the hover readout; and the window title.

A part of `MainWindow` (explorer.window), in a file of its own: the methods read the window's
attributes. Texts are translated in the "MainWindow" context, like the rest of the window.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QTimer
from PySide6.QtWidgets import QLabel

from engine import AttentionConfig

from .frame import Frame
from .sizing import OpaqueLabel, hold_size, release_size

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
)


def config_line(config: AttentionConfig) -> str:
    """The status bar's config line: `config.summary_parts()` in the current language (in
    English, the summary's words), its fields joined by " · "."""
    return " · ".join(config.summary_parts(lambda w: QCoreApplication.translate("MainWindow", w)))


class StatusMixin:
    """See the module docstring (mixed into MainWindow)."""

    def _create_status_bar(self) -> None:
        sb = self.statusBar()
        # opaque, in the status bar's own colour: a new text every frame repaints the label,
        # not the status bar and the window beneath it
        self.status_config = OpaqueLabel()
        self.status_compute = OpaqueLabel()
        self.status_render = OpaqueLabel()
        self.status_backend = OpaqueLabel()
        for w in (self.status_config, self.status_compute, self.status_render, self.status_backend):
            sb.addPermanentWidget(w)
        from .frame_progress import FrameProgress

        self.frame_progress = FrameProgress()  # a long frame's heads under way, and Cancel
        sb.addPermanentWidget(self.frame_progress)
        self.frame_progress.cancel_requested.connect(self.cancel_frame)
        self.worker.progress.connect(
            lambda rid, done, total: self.frame_progress.report(rid, done, total)
            if rid == self.worker.latest_id else None)
        # "computing…" only for a compute the user would notice: a quick frame replaces the
        # summary directly (no flicker, no status-bar relayout twice a frame)
        self._busy = QTimer(self)
        self._busy.setSingleShot(True)
        self._busy.setInterval(BUSY_AFTER_MS)
        self._busy.timeout.connect(lambda: set_status_text(self.status_config, QCoreApplication.translate("MainWindow", "computing…")))

    def _retranslate_status_bar(self) -> None:
        for label in (self.status_config, self.status_compute, self.status_render, self.status_backend):
            release_size(label)  # the texts of another language size the labels afresh
        self.status_compute.setToolTip(QCoreApplication.translate("MainWindow", "Engine time in the worker thread (run + derived panel data)"))
        self.status_render.setToolTip(QCoreApplication.translate("MainWindow", "UI-thread time to update and repaint the visible panels; "
                                              "latency = set_config → repainted"))
        self.status_backend.setToolTip(QCoreApplication.translate("MainWindow", "The implementation that actually produced the output"))
        if self.state.frame is not None:
            self._update_status(self.state.frame)
        else:
            set_status_text(self.status_compute, QCoreApplication.translate("MainWindow", "compute –"))
            set_status_text(self.status_render, QCoreApplication.translate("MainWindow", "render –"))
            set_status_text(self.status_backend, QCoreApplication.translate("MainWindow", "backend –"))

    def _on_hover_text(self, text: str) -> None:
        """The hover readout in the status bar, whole: when it is wider than the room the
        config, timing and backend labels leave, they step aside until the hover ends."""
        bar = self.statusBar()
        labels = (self.status_config, self.status_compute, self.status_render, self.status_backend)
        if text:
            room = bar.width() - sum(label.sizeHint().width() + 12 for label in labels) - 24
            aside = bar.fontMetrics().horizontalAdvance(text) > room
            bar.showMessage(text)
        else:
            aside = False
            bar.clearMessage()
        if self._labels_aside != aside:  # (toggled only when it changes: no relayout per move)
            self._labels_aside = aside
            for label in labels:
                label.setVisible(not aside)

    _labels_aside = False

    def _update_status(self, frame: Frame) -> None:
        set_status = set_status_text
        set_status(self.status_config, config_line(frame.config))
        set_status(self.status_compute, QCoreApplication.translate("MainWindow", "compute {ms} ms").format(ms=f"{frame.compute_ms:.1f}"))
        if math.isnan(self.latency_ms):
            set_status(self.status_render, QCoreApplication.translate("MainWindow", "render {ms} ms").format(ms=f"{self.render_ms:.1f}"))
        else:
            set_status(self.status_render, QCoreApplication.translate("MainWindow", "render {ms} ms · latency {latency} ms").format(
                ms=f"{self.render_ms:.1f}", latency=f"{self.latency_ms:.1f}"))
        diff = frame.trace.backend_max_abs_diff
        if diff is None:
            set_status(self.status_backend, QCoreApplication.translate("MainWindow", "backend {impl}").format(impl=frame.backend_impl))
        else:
            set_status(self.status_backend, QCoreApplication.translate("MainWindow", "backend {impl} (max |Δ| vs eager {diff})").format(
                impl=frame.backend_impl, diff=f"{diff:.1e}"))

    def _update_title(self) -> None:
        name = self._session_path.name if self._session_path else QCoreApplication.translate("MainWindow", "untitled")
        # "[*]": Qt shows "*" there while windowModified (changes since the session was saved)
        self.setWindowTitle(QCoreApplication.translate("MainWindow", "Attention Explorer — {name}").format(name=name) + "[*]")
