"""Exporting from the window: the Export dialog, Copy panel, and the menu actions for both.

    ExportActions(state, host): the feature (MainWindow.features["export"])

adds "Export figure…" (Ctrl+E) to the window's File menu and "Copy panel as
image" (Ctrl+Shift+C) to its Edit menu (each menu found by its title, created
when missing). The dialog picks what (the current panel, all panels, or
the whole window), the format, the pixel width or DPI, the theme and the
caption; an existing file is replaced only after the user agrees.
"""

from __future__ import annotations

import atexit
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QMimeData, Qt
from PySide6.QtGui import QAction, QImage, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..feature import Feature
from ..host import host_of
from ..panels import PANELS
from .files import export_panels, export_widget, is_shown, panel_names, write_atomic
from .fresh import render_panel, render_panels
from .options import FORMATS, MAX_DPI, MAX_WIDTH, MIN_DPI, MIN_WIDTH, ExportError, ExportOptions

WHAT_PANEL, WHAT_ALL, WHAT_WINDOW = "panel", "all", "window"
_FORMAT_LABELS = {"png": QT_TRANSLATE_NOOP("ExportDialog", "PNG image"),
                  "svg": QT_TRANSLATE_NOOP("ExportDialog", "SVG (vector)"),
                  "pdf": QT_TRANSLATE_NOOP("ExportDialog", "PDF (vector)")}
_THEME_LABELS = {"slides": QT_TRANSLATE_NOOP("ExportDialog", "Slides: light, large text, thick lines"),
                 "screen": QT_TRANSLATE_NOOP("ExportDialog", "Screen: as the window shows it")}


def _tr(text: str) -> str:
    return QCoreApplication.translate("ExportDialog", text)


@dataclass(frozen=True)
class ExportRequest:
    """What the dialog asks for. path: a file (panel, window) or a folder (all panels)."""

    what: str
    panel: str | None
    fmt: str
    options: ExportOptions
    path: Path


def current_panel_name(window) -> str | None:
    """The panel holding the keyboard focus, else the first one on screen (`window`: the
    window or its host)."""
    window = host_of(window)
    names = panel_names(window)
    made = [n for n in window.panel_names(made=True) if n in names]  # (one not made is not shown)
    focus = QApplication.focusWidget()
    for n in made:
        p = window.panel(n)
        if focus is not None and (focus is p or p.isAncestorOf(focus)):
            return n
    for n in made:
        if is_shown(window.panel(n)):
            return n
    return names[0] if names else None


def targets(window, request: ExportRequest) -> list[tuple[str | None, str, Path]]:
    """(panel name, or None for the whole window; title; file) for each figure the request
    writes. "All panels" means every panel, shown, behind a tab or closed."""
    window = host_of(window)
    if request.what == WHAT_WINDOW:
        return [(None, QCoreApplication.translate("ExportDialog", "Attention Explorer"), request.path)]
    if request.what == WHAT_PANEL:
        return [(request.panel, request.panel, request.path)]
    return [(n, n, request.path / f"{n}.{request.fmt}") for n in panel_names(window)]


def run_export(window, request: ExportRequest,
               confirm_overwrite: Callable[[list[Path]], bool] = lambda paths: False) -> list[Path]:
    """Write the figures of `request`; existing files are replaced only when
    `confirm_overwrite(existing)` says yes (otherwise ExportError, nothing written).
    `window`: the window or its host."""
    window = host_of(window)
    todo = targets(window, request)
    if not todo:
        raise ExportError(QCoreApplication.translate("ExportDialog", "there is no panel to export"))
    if request.what == WHAT_ALL:
        request.path.mkdir(parents=True, exist_ok=True)
    existing = [p for _, _, p in todo if p.exists()]
    force = False
    if existing:
        if not confirm_overwrite(existing):
            raise ExportError(QCoreApplication.translate(
                "ExportDialog", "{path} already exists; nothing was written").format(path=existing[0]))
        force = True
    if request.what == WHAT_WINDOW:
        options = replace(request.options, include_controls=True)
        return [export_widget(window.parent_widget(), request.path, options, config=window.state.config, force=force,
                              fmt=request.fmt, title=todo[0][1])]
    if request.what == WHAT_PANEL:
        data = render_panel(window, request.panel, request.fmt, request.options)
        return [write_atomic(request.path, data, force=force)]
    return export_panels(window, request.path, [n for n, _, _ in todo], [request.fmt], request.options,
                         force=force)


def copy_panel(window, name: str | None = None, options: ExportOptions | None = None) -> QMimeData:
    """Put panel `name` (default: the current one) on the clipboard as a PNG image, with its
    SVG alongside for applications that take vectors where that SVG is quick to write
    (`fresh.svg_is_quick`; `mime.formats()` says which); returns the mime data. The
    figure is one fresh panel, drawn once for both, at the size the panel has on screen (in
    the window's theme by default)."""
    window = host_of(window)
    name = name or current_panel_name(window)
    if name is None:
        raise ExportError(QCoreApplication.translate("ExportDialog", "no panel to copy"))
    widget = window.panel(name)
    size = (max(widget.width(), 480), max(widget.height(), 300))
    if options is None:  # twice the on-screen size: sharp when pasted into a slide
        options = ExportOptions(width=max(MIN_WIDTH, min(MAX_WIDTH, 2 * size[0])), theme="screen")
    out = render_panels(window, [name], ["png", "svg"], options, size=size, quick_svg_only=True)
    img = QImage()
    img.loadFromData(out[(name, "png")], "PNG")
    mime = QMimeData()
    mime.setImageData(img)
    if (name, "svg") in out:
        mime.setData("image/svg+xml", out[(name, "svg")])
    QApplication.clipboard().setMimeData(mime)
    _clear_clipboard_at_exit()
    return mime


@functools.cache
def _clear_clipboard_at_exit() -> None:
    """Empty our clipboard while Python still runs.

    The clipboard owns the QMimeData we made; left there, Qt deletes it from a
    static destructor after the interpreter is gone and shiboken crashes the
    process on its way out (seen: exit status 139 after the tests passed).
    """

    def clear() -> None:
        app = QApplication.instance()
        if app is not None:
            app.clipboard().clear()

    atexit.register(clear)


class ExportDialog(QDialog):
    """Choose what to export, how, and where; `request()` is the choice."""

    def __init__(self, window, parent: QWidget | None = None, panel: str | None = None) -> None:
        window = host_of(window)  # (the window or its host)
        super().__init__(parent if parent is not None else window.parent_widget())
        self.setWindowTitle(self.tr("Export figure"))
        self.host_ = window
        names = panel_names(window)
        current = panel or current_panel_name(window)

        self.what_panel = QRadioButton(self.tr("Panel"))
        self.panel_combo = QComboBox()
        for n in names:
            title = PANELS[n].display_title()  # (a panel closed since the window opened: not made)
            self.panel_combo.addItem(str(title or n), n)
        if current in names:
            self.panel_combo.setCurrentIndex(names.index(current))
        self.what_all = QRadioButton(self.tr("All panels (one file each, into a folder)"))
        self.what_window = QRadioButton(self.tr("The whole window"))
        self.what_group = QButtonGroup(self)
        for b in (self.what_panel, self.what_all, self.what_window):
            self.what_group.addButton(b)
        self.what_panel.setChecked(True)
        row = QHBoxLayout()
        row.addWidget(self.what_panel)
        row.addWidget(self.panel_combo, 1)

        self.format_combo = QComboBox()
        for f in FORMATS:
            self.format_combo.addItem(_tr(_FORMAT_LABELS[f]), f)

        self.by_width = QRadioButton(self.tr("Width"))
        self.width_spin = QSpinBox()
        self.width_spin.setRange(MIN_WIDTH, MAX_WIDTH)
        self.width_spin.setSingleStep(160)
        self.width_spin.setValue(1920)
        self.width_spin.setSuffix(" px")
        self.by_dpi = QRadioButton(self.tr("DPI"))
        self.dpi_spin = QSpinBox()
        self.dpi_spin.setRange(MIN_DPI, MAX_DPI)
        self.dpi_spin.setValue(192)
        self.dpi_spin.setToolTip(self.tr("Relative to the panel's size on screen at 96 dpi: 192 = twice as many pixels"))
        self.by_width.setChecked(True)
        size_group = QButtonGroup(self)
        size_group.addButton(self.by_width)
        size_group.addButton(self.by_dpi)
        size_row = QHBoxLayout()
        size_row.addWidget(self.by_width)
        size_row.addWidget(self.width_spin)
        for preset, name in ((1920, "HD"), (3840, "4K")):
            b = QPushButton(f"{preset} ({name})")
            b.setAutoDefault(False)
            b.clicked.connect(lambda _=False, v=preset: (self.width_spin.setValue(v), self.by_width.setChecked(True)))
            size_row.addWidget(b)
        size_row.addSpacing(12)
        size_row.addWidget(self.by_dpi)
        size_row.addWidget(self.dpi_spin)
        size_row.addStretch(1)
        self.size_note = QLabel(self.tr("SVG and PDF are vectors: the size sets only PNG pixels."))
        self.size_note.setObjectName("hint")

        self.theme_combo = QComboBox()
        for t, label in _THEME_LABELS.items():
            self.theme_combo.addItem(_tr(label), t)
        self.caption_box = QCheckBox(self.tr("Add a caption (the configuration; for a model panel: model, layer, head, text)"))

        self.path_edit = QLineEdit()
        browse = QPushButton(self.tr("Browse…"))
        browse.setAutoDefault(False)
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(browse)

        form = QFormLayout()
        form.addRow(self.tr("Export"), row)
        form.addRow("", self.what_all)
        form.addRow("", self.what_window)
        form.addRow(self.tr("Format"), self.format_combo)
        form.addRow(self.tr("Size"), size_row)
        form.addRow("", self.size_note)
        form.addRow(self.tr("Theme"), self.theme_combo)
        form.addRow("", self.caption_box)
        form.addRow(self.tr("Save to"), path_row)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = buttons.addButton(self.tr("Export"), QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self._on_export)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

        self._folder = self._default_folder()
        self.what_group.buttonToggled.connect(self._update_path)
        self.panel_combo.currentIndexChanged.connect(self._update_path)
        self.format_combo.currentIndexChanged.connect(self._update_path)
        self.format_combo.currentIndexChanged.connect(self._update_enabled)
        self.by_width.toggled.connect(self._update_enabled)
        self._update_path()
        self._update_enabled()
        self.written: list[Path] = []

    # ---- state --------------------------------------------------------------------
    def _default_folder(self) -> Path:
        saved = self.host_.settings.value("export_folder", "")
        return Path(saved) if saved and Path(saved).is_dir() else Path.home()

    def what(self) -> str:
        if self.what_all.isChecked():
            return WHAT_ALL
        if self.what_window.isChecked():
            return WHAT_WINDOW
        return WHAT_PANEL

    def fmt(self) -> str:
        return self.format_combo.currentData()

    def options(self) -> ExportOptions:
        return ExportOptions(
            width=self.width_spin.value(),
            dpi=float(self.dpi_spin.value()) if self.by_dpi.isChecked() else None,
            theme=self.theme_combo.currentData(),
            caption=self.caption_box.isChecked(),
            include_controls=self.what() == WHAT_WINDOW,
        )

    def request(self) -> ExportRequest:
        text = self.path_edit.text().strip()
        if not text:
            raise ExportError(self.tr("choose where to save"))
        return ExportRequest(self.what(), self.panel_combo.currentData(), self.fmt(), self.options(),
                             Path(os.path.expanduser(text)))

    def _update_enabled(self) -> None:
        png = self.fmt() == "png"
        self.width_spin.setEnabled(self.by_width.isChecked())
        self.dpi_spin.setEnabled(self.by_dpi.isChecked())
        self.size_note.setVisible(not png)
        self.panel_combo.setEnabled(self.what_panel.isChecked())

    def _update_path(self) -> None:
        self._update_enabled()
        text = self.path_edit.text().strip()
        folder = self._folder
        if text:
            p = Path(text).expanduser()
            folder = p.parent if p.suffix.lower().lstrip(".") in FORMATS else p
        if self.what() == WHAT_ALL:
            self.path_edit.setText(str(folder))
        else:
            stem = "window" if self.what() == WHAT_WINDOW else (self.panel_combo.currentData() or "figure")
            self.path_edit.setText(str(folder / f"{stem}.{self.fmt()}"))

    def _browse(self) -> None:
        if self.what() == WHAT_ALL:
            path = QFileDialog.getExistingDirectory(self, self.tr("Export into folder"), self.path_edit.text())
        else:
            f = self.fmt()
            path, _ = QFileDialog.getSaveFileName(
                self, self.tr("Export figure"), self.path_edit.text(), f"{_tr(_FORMAT_LABELS[f])} (*.{f})",
                options=QFileDialog.Option.DontConfirmOverwrite)  # we ask ourselves, once
            if path and not path.lower().endswith(f".{f}"):
                path += f".{f}"
        if path:
            self.path_edit.setText(path)

    # ---- doing it ---------------------------------------------------------------------
    def _confirm(self, existing: list[Path]) -> bool:
        names = "\n".join(str(p) for p in existing[:8]) + ("\n…" if len(existing) > 8 else "")
        answer = QMessageBox.question(
            self, self.tr("Replace files?"),
            self.tr("These files already exist:\n{names}\n\nReplace them?").format(names=names),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def _on_export(self) -> None:
        try:
            req = self.request()
            req.options.validate()
            QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
            try:
                self.written = run_export(self.host_, req, self._confirm)
            finally:
                QApplication.restoreOverrideCursor()
        except ExportError as exc:
            QMessageBox.warning(self, self.tr("Export failed"), str(exc))
            return
        folder = req.path if req.what == WHAT_ALL else req.path.parent
        self.host_.settings.setValue("export_folder", str(folder))
        n = len(self.written)
        text = (self.tr("exported 1 figure to {folder}") if n == 1
                else self.tr("exported {n} figures to {folder}"))
        self.host_.show_status(text.format(n=n, folder=folder), 6000)
        self.accept()


def show_export_dialog(window, panel: str | None = None) -> ExportDialog:
    """The Export dialog, opened (window-modal); `panel` chosen (default: the current one)."""
    dlg = ExportDialog(window, panel=panel)
    dlg.open()
    return dlg


class ExportActions(Feature):
    """File ▸ Export figure… (Ctrl+E), before Reset, and Edit ▸ Copy panel as image
    (Ctrl+Shift+C). `export_action`, `copy_action`; `acts["export"]` reads them too."""

    name = "export"

    def __init__(self, state, host) -> None:
        super().__init__(state, host)
        parent = host.parent_widget()
        self.export_action = QAction(parent)
        self.export_action.setShortcut(QKeySequence("Ctrl+E"))
        self.export_action.triggered.connect(lambda: show_export_dialog(host))
        self.copy_action = QAction(parent)
        self.copy_action.setShortcut(QKeySequence("Ctrl+Shift+C"))
        self.copy_action.triggered.connect(lambda: self._copy())
        reset = host.feature("menus").act_reset
        host.add_action("file", self.export_action, before=reset)  # before Reset, with a separator
        if reset in host.menu("file").actions():
            host.menu("file").insertSeparator(reset)
        host.add_action("edit", self.copy_action)
        self.retranslate_ui()

    def add_after_figure(self, action: QAction) -> None:
        """Put `action` in the File menu right after Export figure… (the animation exports)."""
        self.host.add_action("file", action, after=self.export_action)

    def __getitem__(self, key: str) -> QAction:
        return {"export": self.export_action, "copy": self.copy_action}[key]

    def figure(self, name: str, what: str) -> None:
        """A panel's right-click menu: "copy" (Copy as image) or "export" (Export…) panel `name`."""
        if what == "export":
            show_export_dialog(self.host, panel=name)
        else:
            self._copy(name)

    def _copy(self, name: str | None = None) -> None:
        try:
            mime = copy_panel(self.host, name)
        except ExportError as exc:
            QMessageBox.warning(self.host.parent_widget(), QCoreApplication.translate("ExportDialog", "Copy panel"), str(exc))
            return
        if mime.hasFormat("image/svg+xml"):
            text = QCoreApplication.translate("ExportDialog", "panel copied to the clipboard")
        else:
            text = QCoreApplication.translate(
                "ExportDialog", "panel copied to the clipboard as an image (too many points for a vector copy: "
                "File ▸ Export figure… writes its SVG)")
        self.host.show_status(text, 6000)

    def retranslate_ui(self) -> None:
        self.export_action.setText(QCoreApplication.translate("ExportDialog", "&Export figure…"))
        self.export_action.setStatusTip(QCoreApplication.translate(
            "ExportDialog", "Save a panel, all panels or the window as PNG, SVG or PDF"))
        self.copy_action.setText(QCoreApplication.translate("ExportDialog", "&Copy panel as image"))
        self.copy_action.setStatusTip(QCoreApplication.translate(
            "ExportDialog", "Copy the current panel to the clipboard (PNG, with SVG alongside where it is small)"))


def install_export_actions(window) -> ExportActions:
    """The window's export feature (made once; `MainWindow.features["export"]`)."""
    return window.features.get("export") or ExportActions(window.state, window.host)


