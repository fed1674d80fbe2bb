"""File ▸ Export animation…: the sweep dialog and the progress bar that runs the export.

    install_animation(window) -> QAction        # File ▸ Export animation… (Ctrl+Shift+E)
    start_animation(window, request) -> AnimationProgress   # what the dialog's Export does

The dialog picks the field, START / STOP / STEP (the values it gives are listed as they are
typed, or the reason they cannot be used), the panels, the width, GIF or MP4, the frame rate
and the folder. The export runs in the window's status bar: a progress bar with Cancel,
driven by a zero-interval timer, one panel frame per turn of the event loop
(`explorer.export.animation.AnimationJob`), so the window stays usable; a cancel or a failure
leaves no file behind, a failure is said in the window's banner.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..feature import Feature
from ..host import host_of
from ..panels import PANELS
from .animation import DEFAULT_FPS, FORMATS, FPS_RANGE, AnimationJob, AnimationRequest
from .files import panel_names
from .options import MAX_WIDTH, MIN_WIDTH, MODEL_PANEL_NAMES, ExportError
from .sweep import FIELDS, SweepError, format_value

#: What the dialog offers first for each field (START, STOP, STEP).
DEFAULT_RANGES = {
    "d_model": ("16", "128", "16"), "head_dim": ("8", "512", "x2"), "n_heads": ("1", "8", "x2"),
    "n_kv_heads": ("1", "4", "x2"), "seq_len": ("8", "64", "8"), "kv_len": ("8", "64", "8"),
    "window": ("1", "8", "1"), "pad": ("0", "7", "1"), "scale": ("0.1", "2", "0.1"),
    "init_std": ("0.1", "2", "0.1"), "seed": ("0", "7", "1"),
}


#: FIELDS' descriptions, for the translator (explorer.export.sweep is Qt-free)
_FIELD_WHAT = {
    "model width": QT_TRANSLATE_NOOP("AnimationDialog", "model width"),
    "d_k = d_model / heads (d_model follows)": QT_TRANSLATE_NOOP("AnimationDialog", "d_k = d_model / heads (d_model follows)"),
    "query heads": QT_TRANSLATE_NOOP("AnimationDialog", "query heads"),
    "KV heads (GQA)": QT_TRANSLATE_NOOP("AnimationDialog", "KV heads (GQA)"),
    "query length S": QT_TRANSLATE_NOOP("AnimationDialog", "query length S"),
    "key length Skv": QT_TRANSLATE_NOOP("AnimationDialog", "key length Skv"),
    "sliding window": QT_TRANSLATE_NOOP("AnimationDialog", "sliding window"),
    "padded keys": QT_TRANSLATE_NOOP("AnimationDialog", "padded keys"),
    "multiplier of QKᵀ": QT_TRANSLATE_NOOP("AnimationDialog", "multiplier of QKᵀ"),
    "std of W_Q, W_K, W_V": QT_TRANSLATE_NOOP("AnimationDialog", "std of W_Q, W_K, W_V"),
    "random seed": QT_TRANSLATE_NOOP("AnimationDialog", "random seed"),
}


def _tr(text: str) -> str:
    return QCoreApplication.translate("AnimationDialog", text)


class AnimationDialog(QDialog):
    """Choose the sweep and the output; `request()` is the choice (SweepError / ExportError
    say what is wrong)."""

    def __init__(self, window, parent: QWidget | None = None) -> None:
        window = host_of(window)  # (the window or its host)
        super().__init__(parent if parent is not None else window.parent_widget())
        self.setWindowTitle(QCoreApplication.translate("AnimationDialog", "Export animation"))
        self.host_ = window

        self.field_combo = QComboBox()
        for name, f in FIELDS.items():
            self.field_combo.addItem(f"{name}  ({_tr(f.what)})", name)
        self.start_edit, self.stop_edit, self.step_edit = QLineEdit(), QLineEdit(), QLineEdit()
        self.step_edit.setToolTip(QCoreApplication.translate("AnimationDialog", "A number, or a factor such as x2 (8, 16, 32, …)"))
        range_row = QHBoxLayout()
        for label, edit in ((QCoreApplication.translate("AnimationDialog", "from"), self.start_edit), (QCoreApplication.translate("AnimationDialog", "to"), self.stop_edit),
                            (QCoreApplication.translate("AnimationDialog", "step"), self.step_edit)):
            range_row.addWidget(QLabel(label))
            range_row.addWidget(edit, 1)
        self.values_label = QLabel()
        self.values_label.setWordWrap(True)
        self.values_label.setObjectName("hint")

        self.panel_boxes: dict[str, QCheckBox] = {}
        grid = QGridLayout()
        names = [n for n in panel_names(window) if n not in MODEL_PANEL_NAMES]
        for i, n in enumerate(names):
            box = QCheckBox(str(PANELS[n].display_title()))  # (a closed panel is not made for it)
            box.setChecked(n == "heads")
            self.panel_boxes[n] = box
            grid.addWidget(box, i // 2, i % 2)

        self.format_combo = QComboBox()
        self.format_combo.addItem(QCoreApplication.translate("AnimationDialog", "GIF (slides, web pages)"), "gif")
        self.format_combo.addItem(QCoreApplication.translate("AnimationDialog", "MP4 video (H.264)"), "mp4")
        assert tuple(self.format_combo.itemData(i) for i in range(2)) == FORMATS
        self.width_spin = QSpinBox()
        self.width_spin.setRange(MIN_WIDTH, MAX_WIDTH)
        self.width_spin.setSingleStep(160)
        self.width_spin.setValue(1280)
        self.width_spin.setSuffix(" px")
        self.fps_spin = QDoubleSpinBox()
        self.fps_spin.setRange(*FPS_RANGE)
        self.fps_spin.setDecimals(1)
        self.fps_spin.setSingleStep(0.5)
        self.fps_spin.setValue(DEFAULT_FPS)
        self.fps_spin.setSuffix(QCoreApplication.translate("AnimationDialog", " frames/s"))

        self.folder_edit = QLineEdit(str(self._default_folder()))
        browse = QPushButton(QCoreApplication.translate("AnimationDialog", "Browse…"))
        browse.setAutoDefault(False)
        browse.clicked.connect(self._browse)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder_edit, 1)
        folder_row.addWidget(browse)
        self.files_label = QLabel()
        self.files_label.setObjectName("hint")

        form = QFormLayout()
        form.addRow(QCoreApplication.translate("AnimationDialog", "Sweep"), self.field_combo)
        form.addRow(QCoreApplication.translate("AnimationDialog", "Values"), range_row)
        form.addRow("", self.values_label)
        form.addRow(QCoreApplication.translate("AnimationDialog", "Panels"), grid)
        form.addRow(QCoreApplication.translate("AnimationDialog", "Format"), self.format_combo)
        form.addRow(QCoreApplication.translate("AnimationDialog", "Width"), self.width_spin)
        form.addRow(QCoreApplication.translate("AnimationDialog", "Speed"), self.fps_spin)
        form.addRow(QCoreApplication.translate("AnimationDialog", "Save into"), folder_row)
        form.addRow("", self.files_label)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = buttons.addButton(QCoreApplication.translate("AnimationDialog", "Export"), QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self._on_export)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

        self.field_combo.currentIndexChanged.connect(self._field_changed)
        for edit in (self.start_edit, self.stop_edit, self.step_edit, self.folder_edit):
            edit.textChanged.connect(self._update)
        self.format_combo.currentIndexChanged.connect(self._update)
        for box in self.panel_boxes.values():
            box.toggled.connect(self._update)
        self.progress: AnimationProgress | None = None
        self._field_changed()

    def _default_folder(self) -> Path:
        saved = self.host_.settings.value("export_folder", "")
        return Path(saved) if saved and Path(saved).is_dir() else Path.home()

    def _field_changed(self) -> None:
        start, stop, step = DEFAULT_RANGES[self.field_combo.currentData()]
        for edit, text in ((self.start_edit, start), (self.stop_edit, stop), (self.step_edit, step)):
            edit.blockSignals(True)
            edit.setText(text)
            edit.blockSignals(False)
        self._update()

    def sweep_text(self) -> str:
        return (f"{self.field_combo.currentData()}={self.start_edit.text().strip()}:"
                f"{self.stop_edit.text().strip()}:{self.step_edit.text().strip()}")

    def panels(self) -> tuple[str, ...]:
        return tuple(n for n, b in self.panel_boxes.items() if b.isChecked())

    def request(self) -> AnimationRequest:
        from .sweep import parse_sweep

        spec = parse_sweep(self.sweep_text())
        names = self.panels()
        if not names:
            raise ExportError(QCoreApplication.translate("AnimationDialog", "choose at least one panel"))
        folder = self.folder_edit.text().strip()
        if not folder:
            raise ExportError(QCoreApplication.translate("AnimationDialog", "choose where to save"))
        return AnimationRequest(spec, names, self.format_combo.currentData(), Path(os.path.expanduser(folder)),
                                width=self.width_spin.value(), fps=self.fps_spin.value())

    def _update(self) -> None:
        """List the values (or say why they cannot be used) and the files it will write."""
        try:
            req = self.request()
            # every value through the config, the targets checked (existing ones are asked about)
            job = AnimationJob(self.host_, replace(req, force=True))
        except (SweepError, ExportError) as exc:
            self.values_label.setText(f"⚠ {exc}")
            self.export_button.setEnabled(False)
            self.files_label.setText("")
            return
        values = job.spec.values  # (a head sweep: the counts that divide)
        shown = ", ".join(format_value(v) for v in values[:12]) + (" …" if len(values) > 12 else "")
        self.values_label.setText(QCoreApplication.translate("AnimationDialog", "{n} frames: {values}").format(n=len(values), values=shown))
        self.files_label.setText(", ".join(req.path(n).name for n in req.names))
        self.export_button.setEnabled(True)

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, QCoreApplication.translate("AnimationDialog", "Export animation into folder"), self.folder_edit.text())
        if path:
            self.folder_edit.setText(path)

    def _on_export(self) -> None:
        try:
            req = self.request()
            existing = [req.path(n) for n in req.names if req.path(n).exists()]
            if existing:
                answer = QMessageBox.question(
                    self, QCoreApplication.translate("AnimationDialog", "Replace files?"),
                    QCoreApplication.translate("AnimationDialog", "These files already exist:\n{names}\n\nReplace them?").format(
                        names="\n".join(str(p) for p in existing)),
                    QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
                if answer != QMessageBox.StandardButton.Yes:
                    return
                req = replace(req, force=True)
            self.progress = start_animation(self.host_, req)
        except (SweepError, ExportError) as exc:
            QMessageBox.warning(self, QCoreApplication.translate("AnimationDialog", "Export animation"), str(exc))
            return
        self.host_.settings.setValue("export_folder", str(req.out_dir))
        self.accept()


# ---- running it in the window ---------------------------------------------------------------


class AnimationProgress(QWidget):
    """The status bar's progress bar and Cancel for one running sweep export; removes itself
    at the end. `job` is the AnimationJob; `finished(paths)` / `failed(message)` after it."""

    def __init__(self, window, job: AnimationJob) -> None:
        window = host_of(window)  # (the window or its host)
        super().__init__(window.parent_widget())
        self.host_, self.job = window, job
        label = getattr(job, "progress_label", None)  # another animation job names itself (the heads forming)
        self.label = QLabel(label or QCoreApplication.translate("AnimationDialog", "Animation {field}").format(field=job.request.spec.field))
        self.bar = QProgressBar()
        self.bar.setRange(0, job.total)
        self.bar.setFormat(QCoreApplication.translate("AnimationDialog", "%v of %m frames"))
        self.bar.setMaximumWidth(220)
        self.cancel_button = QPushButton(QCoreApplication.translate("AnimationDialog", "Cancel"))
        self.cancel_button.setToolTip(QCoreApplication.translate("AnimationDialog", "Stop the animation export; nothing is written"))
        self.cancel_button.clicked.connect(self.cancel)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label)
        row.addWidget(self.bar)
        row.addWidget(self.cancel_button)
        self.result: list[Path] | None = None
        self.error: str | None = None
        self.cancelled = False
        self.timer = QTimer(self)
        self.timer.setInterval(0)
        self.timer.timeout.connect(self._tick)
        window.status_bar().addPermanentWidget(self)
        self._running, self._ended = True, False
        self.timer.start()

    @property
    def running(self) -> bool:
        """Until the export is written, failed or cancelled (readable after the widget is gone)."""
        return self._running

    def _tick(self) -> None:
        if not self._running:  # a tick queued before a cancel
            return
        try:
            more = self.job.step()
        except (ExportError, SweepError) as exc:
            self.error = str(exc)
            self._end()
            self.host_.show_banner(QCoreApplication.translate(
                "AnimationDialog", "The animation was not written: {reason}").format(reason=exc))
            return
        self.bar.setValue(self.job.done)
        if not more:
            self.result = list(self.job.written)
            self._end()
            folder = self.result[0].parent if self.result else Path(self.job.request.out_dir)
            n = len(self.result)
            text = (QCoreApplication.translate("AnimationDialog", "wrote 1 animation to {folder}") if n == 1
                    else QCoreApplication.translate("AnimationDialog", "wrote {n} animations to {folder}")).format(n=n, folder=folder)
            self.host_.show_status(text, 8000)

    def cancel(self) -> None:
        """Stop now; every temporary file is removed and nothing is written."""
        if not self.running:
            return
        self.cancelled = True
        self._end()  # first: cleaning up lets the event loop run, and no tick may follow
        self.job.cancel()
        self.host_.show_status(QCoreApplication.translate("AnimationDialog", "animation export cancelled; nothing was written"), 6000)

    def _end(self) -> None:
        if self._ended:
            return
        self._ended = True
        self._running = False
        self.timer.stop()
        self.host_.status_bar().removeWidget(self)
        self.hide()
        self.deleteLater()


def start_animation(window, request: AnimationRequest) -> AnimationProgress:
    """Start a sweep export in `window` (checked first: SweepError / ExportError); one at a time."""
    window = host_of(window)
    feature = window.feature("animation")
    feature.check_idle()
    return feature.begin(AnimationProgress(window, AnimationJob(window, request)))


def show_animation_dialog(window) -> AnimationDialog:
    dlg = AnimationDialog(window)
    dlg.open()
    return dlg


class AnimationActions(Feature):
    """File ▸ Export animation… (Ctrl+Shift+E), right after File ▸ Export figure…, and the one
    animation export that may run at a time (`progress`: a sweep, or the training lab's heads
    forming), cancelled when the window closes."""

    name = "animation"

    def __init__(self, state, host) -> None:
        super().__init__(state, host)
        self.progress: AnimationProgress | None = None
        self.action = QAction(host.parent_widget())
        self.action.setShortcut(QKeySequence("Ctrl+Shift+E"))
        self.action.triggered.connect(lambda: show_animation_dialog(host))
        host.feature("export").add_after_figure(self.action)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        self.action.setText(QCoreApplication.translate("AnimationDialog", "Export &animation…"))
        self.action.setStatusTip(QCoreApplication.translate(
            "AnimationDialog", "Sweep a setting and save each panel as a GIF or MP4, a frame per value"))

    def check_idle(self) -> None:
        """ExportError when an animation export is running (one at a time)."""
        if self.progress is not None and self.progress.running:
            raise ExportError(QCoreApplication.translate("AnimationDialog", "an animation export is already running"))

    def begin(self, progress: AnimationProgress) -> AnimationProgress:
        """`progress` (just made, running) is the window's animation export until it ends."""
        self.check_idle()
        self.progress = progress
        progress.destroyed.connect(lambda *_: self._ended(progress))
        return progress

    def _ended(self, progress) -> None:
        if self.progress is progress:
            self.progress = None

    def shutdown(self) -> None:
        if self.progress is not None and self.progress.running:
            self.progress.cancel()


def install_animation(window) -> AnimationActions:
    """The window's animation feature (made once; `MainWindow.features["animation"]`)."""
    return window.features.get("animation") or AnimationActions(window.state, window.host)


__all__ = ["AnimationDialog", "AnimationProgress", "install_animation", "start_animation"]
