"""The training lab in the window: Lessons ▸ Training lab…, File ▸ Export heads forming…,
File ▸ Save training run…, the lab's dock, a lesson's Apply preset (chapters 12–14) opening
the lab with its experiment, and the question when the window closes with a run unsaved.

    install_training(window) -> TrainingLab   # the lab and its menu entries (idempotent)
    show_training(window) -> TrainingPanel    # the panel's dock, made the first time
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QPushButton

from ..feature import Feature
from ..host import host_of
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

    def __init__(self, state, host) -> None:
        super().__init__(state, host)
        from . import panel  # noqa: F401 (registers the "training" panel)

        if self.state.training_lab is None:
            self.state.training_lab = TrainingLab(models=self.state.models)
        self.lab = self.state.training_lab
        self.lab.models = self.state.models
        self.destroyed.connect(self.lab.worker.stop)  # (a Qt child of the window: deleted with it)
        self.lab.saved.connect(self._on_saved)
        self.interactive = QGuiApplication.platformName() != "offscreen"
        parent = host.parent_widget()
        self.action = QAction(parent)
        self.action.setObjectName("action_training_lab")
        self.action.setShortcut(QKeySequence("Ctrl+Shift+T"))
        self.action.triggered.connect(lambda: show_training(host))
        host.menu("lessons").addSeparator()
        host.add_action("lessons", self.action)
        # File ▸ Export heads forming (GIF/MP4)…, after File ▸ Export figure… (and the
        # sweep animation, which install_animation puts right after the figure)
        self.forming_action = QAction(parent)
        self.forming_action.setObjectName("action_export_heads_forming")
        self.forming_action.triggered.connect(lambda: _export_forming(host))
        host.feature("export").add_after_figure(self.forming_action)
        # File ▸ Save training run…, after Save session as…
        self.save_action = QAction(parent)
        self.save_action.setObjectName("action_save_training_run")
        self.save_action.triggered.connect(lambda: save_run_dialog(host.parent_widget(), self.lab))
        host.add_action("file", self.save_action, after=host.feature("sessions").act_save_as)
        host.menu("file").aboutToShow.connect(self._sync_save_action)
        host.dock_added.connect(self._on_dock_added)  # a lesson panel's dock being added
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
        answer = ask_unsaved(self.host.parent_widget(), run)
        if answer != "save":
            return answer == "discard"
        self.lab.set_view_run(None)  # the current run is the one asked about
        self._closing = save_run_dialog(self.host.parent_widget(), self.lab)
        return False

    def _on_saved(self, folder: str, error: str) -> None:
        if not self._closing:
            return
        self._closing = False
        if error:
            show_training(self.host)  # its message line says why
        else:
            QTimer.singleShot(0, self.host.parent_widget().close)

    def shutdown(self) -> None:
        """The window closes: stop the training thread, delete the inspector's temporary folders."""
        self.lab.shutdown()

    def _on_dock_added(self, name: str) -> None:
        if name == "lesson":
            self.hook_lessons()

    def hook_lessons(self) -> None:
        """Once the window has its lesson panel: Apply preset on a training chapter (12–14)
        opens the lab with the chapter's experiment (explorer.training.lessons)."""
        w = self.host
        if self._lesson_hooked is not None or "lesson" not in w.panel_names():
            return
        self._lesson_hooked = w.panel("lesson")
        connect_lesson_panel(w, self._lesson_hooked, show_training)


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
    """The window's training lab (made with the feature `MainWindow.features["training"]`)."""
    return host_of(window).state.training_lab


def show_training(window):
    """Open (or raise) the training panel (its dock made the first time, floating over the
    window beside the lesson and the configuration: the lab needs more room than a tab of the
    panel grid gives). Returns the panel. `window`: the window or its host."""
    window = host_of(window)
    new = "training" not in window.panel_names()
    panel = window.add_panel("training", dock_area=False)
    dock = window.dock("training")
    if new:
        _add_forming_button(window, panel)
        window.float_panel("training")
        window.add_view_entry("training")
    dock.show()
    dock.raise_()
    return panel
