"""The training lab in the window: Lessons ▸ Training lab…, File ▸ Export heads forming…,
File ▸ Save training run…, the lab's dock, a lesson's Apply preset (chapters 12–14) opening
the lab with its experiment, and the question when the window closes with a run unsaved.

    install_training(window) -> TrainingLab   # the lab and its menu entries (idempotent)
    show_training(window) -> TrainingPanel    # the panel's dock, made the first time
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QPushButton

from ..feature import Feature
from .lab import TrainingLab
from .lessons import connect_lesson_panel
from .saving import ask_unsaved, save_run_dialog


class TrainingActions(Feature):
    """The window's training lab (`state.training_lab`; its thread stops when the window
    closes), Lessons ▸ Training lab…, File ▸ Export heads forming… and Save training run…,
    the lesson panel's Apply preset on a training chapter, and Save / Discard / Cancel when
    the window closes with a run trained here and not saved (`may_close`; asked only where a
    person can answer: `interactive`, False offscreen)."""

    name = "training"
    _lesson_hooked = None
    _closing = False  # Save on close: the window closes once the save is done

    def __init__(self, window) -> None:
        super().__init__(window)
        from . import panel  # noqa: F401 (registers the "training" panel)

        if self.state.training_lab is None:
            self.state.training_lab = TrainingLab(models=self.state.models)
        self.lab = self.state.training_lab
        self.lab.models = self.state.models
        window.destroyed.connect(self.lab.worker.stop)
        self.lab.saved.connect(self._on_saved)
        self.interactive = QGuiApplication.platformName() != "offscreen"
        self.action = QAction(window)
        self.action.setObjectName("action_training_lab")
        self.action.setShortcut(QKeySequence("Ctrl+Shift+T"))
        self.action.triggered.connect(lambda: show_training(window))
        window.addAction(self.action)
        window.menu_lessons.addSeparator()
        window.menu_lessons.addAction(self.action)
        # File ▸ Export heads forming (GIF/MP4)…, after File ▸ Export figure… (and the
        # sweep animation, which install_animation puts right after the figure)
        self.forming_action = QAction(window)
        self.forming_action.setObjectName("action_export_heads_forming")
        self.forming_action.triggered.connect(lambda: _export_forming(window))
        window.features["export"].add_after_figure(self.forming_action)
        # File ▸ Save training run…, after Save session as…
        self.save_action = QAction(window)
        self.save_action.setObjectName("action_save_training_run")
        self.save_action.triggered.connect(lambda: save_run_dialog(window, self.lab))
        _insert_after(window.menu_file, window.act_save_as, self.save_action)
        window.menu_file.aboutToShow.connect(self._sync_save_action)
        window.installEventFilter(self)  # a lesson panel's dock being added
        self.retranslate_ui()
        self.hook_lessons()  # a lesson panel made before the lab (else: when it is made)

    def retranslate_ui(self) -> None:
        self.forming_action.setText(QCoreApplication.translate("TrainingActions", "Export heads &forming (GIF/MP4)…"))
        self.forming_action.setStatusTip(QCoreApplication.translate(
            "TrainingActions", "The training lab's heads at every snapshot of its run, as an animation"))
        self.save_action.setText(QCoreApplication.translate("TrainingActions", "Save training &run…"))
        self.save_action.setStatusTip(QCoreApplication.translate(
            "TrainingActions", "Keep the training lab's run (its model, optimiser and history) in a folder"))
        self.action.setText(QCoreApplication.translate("TrainingActions", "&Training lab…"))
        self.action.setStatusTip(QCoreApplication.translate(
            "TrainingActions", "Train a tiny transformer and watch its heads form"))

    def _sync_save_action(self) -> None:
        self.save_action.setEnabled(self.lab.can_save())

    # ---- closing ------------------------------------------------------------------------------
    def may_close(self) -> bool:
        """No run trained here unsaved, or Discard: close. Cancel, or a folder dialog
        cancelled: stay open. Save: stay open until the save is done, then close (a failed
        save: the lab shows why, the window stays)."""
        if self._closing:
            return False  # the save asked for is still under way
        run = self.lab.unsaved_run()
        if run is None or not self.interactive:
            return True
        answer = ask_unsaved(self.window, run)
        if answer != "save":
            return answer == "discard"
        self.lab.set_view_run(None)  # the current run is the one asked about
        self._closing = save_run_dialog(self.window, self.lab)
        return False

    def _on_saved(self, folder: str, error: str) -> None:
        if not self._closing:
            return
        self._closing = False
        if error:
            show_training(self.window)  # its message line says why
        else:
            QTimer.singleShot(0, self.window.close)

    def shutdown(self) -> None:
        """The window closes: stop the training thread, delete the inspector's temporary folders."""
        self.lab.shutdown()

    def eventFilter(self, obj, event) -> bool:
        if obj is self.window and event.type() == QEvent.Type.ChildAdded and self._lesson_hooked is None:
            QTimer.singleShot(0, self.hook_lessons)  # a dock was added: the lesson panel, maybe
        return False

    def hook_lessons(self) -> None:
        """Once the window has its lesson panel: Apply preset on a training chapter (12–14)
        opens the lab with the chapter's experiment (explorer.training.lessons)."""
        w = self.window
        if self._lesson_hooked is not None or "lesson" not in w.panel_names():
            return
        self._lesson_hooked = w.panel("lesson")
        connect_lesson_panel(w, self._lesson_hooked, show_training)


def _insert_after(menu, anchor, action) -> None:
    actions = menu.actions()
    at = actions.index(anchor) + 1 if anchor in actions else len(actions)
    menu.insertAction(actions[at] if at < len(actions) else None, action)


def _export_forming(window) -> None:
    from .forming import export_forming_dialog

    export_forming_dialog(window)


def _add_forming_button(window, panel) -> None:
    """The panel's toolbar button for File ▸ Export heads forming…, after Open in inspector
    and Save run…."""
    button = QPushButton(panel)
    button.setObjectName("training_export_forming")
    button.clicked.connect(lambda: _export_forming(window))
    tb = panel.toolbar
    at = tb.indexOf(panel.save_button)
    tb.insertWidget(at + 1 if at >= 0 else tb.count(), button)

    class _Texts(QObject):
        def retranslate(self) -> None:
            button.setText(QCoreApplication.translate("TrainingActions", "Export heads forming…"))
            button.setToolTip(QCoreApplication.translate(
                "TrainingActions", "The heads at every snapshot of this run, as a GIF or MP4"))

        def eventFilter(self, obj, event) -> bool:
            if event.type() == QEvent.Type.LanguageChange:
                self.retranslate()
            return False

    texts = _Texts(button)
    texts.retranslate()
    panel.installEventFilter(texts)
    panel.forming_button = button


def install_training(window):
    """The window's training lab (the feature is made once: `MainWindow.features["training"]`)."""
    if "training" not in window.features:
        window.features["training"] = TrainingActions(window)
    return window.state.training_lab


def _place(window, dock) -> None:
    """A new lab dock floats over the window's panels, beside the lesson and the configuration
    (never over them: lessons 12–14 are read while the lab trains): the lab needs more
    room than a tab of the panel grid gives. With no room beside them (a narrow window) it
    floats centred at 85 % of the window. A double click on its title docks it."""
    dock.setFloating(True)
    geo = window.geometry()
    left = geo.x()
    lesson = window.dock("lesson") if "lesson" in window.panel_names() else None
    for side in (window.controls_dock, lesson):
        if side is not None and side.isVisible() and not side.isFloating():
            left = max(left, side.mapToGlobal(side.rect().topRight()).x() + 6)
    top = window.mapToGlobal(window.menuBar().geometry().bottomLeft()).y() + 2
    if geo.right() - left >= 900:
        dock.resize(geo.right() - left, max(geo.bottom() - top, 640))
        dock.move(left, top)
        return
    w, h = int(geo.width() * 0.85), int(geo.height() * 0.85)
    dock.resize(max(w, 900), max(h, 640))
    dock.move(geo.x() + (geo.width() - dock.width()) // 2, geo.y() + (geo.height() - dock.height()) // 2)


def show_training(window):
    """Open (or raise) the training panel (its dock made the first time, floating over the
    window). Returns the panel."""
    install_training(window)
    new = "training" not in window.panel_names()
    panel = window.add_panel("training", dock_area=False)
    dock = window.dock("training")
    if new:
        _add_forming_button(window, panel)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        _place(window, dock)
        window.menu_view.addAction(dock.toggleViewAction())
    dock.show()
    dock.raise_()
    return panel
