"""The main window: controls dock, panel docks, one selection, one compute thread.

Data flow (one way):

    control ─config_requested→ MainWindow.set_config ─request→ ComputeWorker
        ─frame_ready→ MainWindow._on_frame_ready (drop if stale) → panels.show_frame
        → synchronous repaint → frame_rendered(config)

Clicks on any panel set the Selection; every panel redraws from it.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QCoreApplication, QEvent, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QToolBar,
    QToolButton,
    QWidget,
)

import explorer.i18n as i18n
from engine import AttentionConfig

from .compare import CompareStatus
from .controls import ConfigControls
from .export.animation_dialog import AnimationActions
from .export.dialog import ExportActions
from .feature import Feature
from .figures.heatmap import link_views
from .figures.themes import DARK, LIGHT, Theme, apply_app_theme
from .formula import FormulaStrip
from .frame import Frame, build_frame, measure_backends
from .history import UNDO_LIMIT, ConfigChange
from .models.controller import install_model_support
from .panels import CORE_PANELS, PANELS, TABBED_PANELS, Panel
from .profile.feature import ProfileActions
from .selection import HoverLink, Selection
from .session import Session, SessionError, load_session, save_session
from .sizing import hold_size, release_size
from .snapshots import SnapshotList, SnapshotsFeature
from .state import AppState
from .training.feature import TrainingActions
from .work.compute import ComputeWorker

MAX_RECENT = 8
#: A compute taking longer than this shows "computing…" in the status bar.
BUSY_AFTER_MS = 120
#: Environment variable naming an INI file to use instead of the platform settings (tests).
SETTINGS_ENV = "ATTN_EXPLORER_SETTINGS"


def _set_status_text(label: QLabel, text: str) -> None:
    """A status-bar label's text; its size is held (see sizing.py): these change every frame."""
    if text != label.text():
        label.setText(text)
        hold_size(label)


def make_settings() -> QSettings:
    """QSettings for geometry, recent files and the interface language only."""
    path = os.environ.get(SETTINGS_ENV)
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings("AttentionExplorer", "Attention Explorer")


class Banner(QFrame):
    """A message shown in place above the panels (errors the engine raised, refused files)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 5, 6, 5)
        self.icon = QLabel("⚠")
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(self.hide_message)
        self.close_button = close
        lay.addWidget(self.icon)
        lay.addWidget(self.text, 1)
        lay.addWidget(close)
        self.kind: str | None = None
        self.bar: QToolBar | None = None
        self._make_text: Callable[[], str] | None = None
        self.retranslate_ui()

    def show_message(self, text: str | Callable[[], str], kind: str = "error") -> None:
        """Show `text`; a callable (returning self.tr()-ed text) is asked again when the language changes."""
        self.kind = kind
        self._make_text = text if callable(text) else None
        self.icon.setText("⚠" if kind == "error" else "ℹ")
        self.text.setText(text() if callable(text) else text)
        if self.bar is not None:
            self.bar.show()
        self._fit_height()

    def _fit_height(self) -> None:
        """As many lines as the text needs at the banner's width (a toolbar does not ask a
        wrapping label for its height at its width: one line came out ~70 px tall)."""
        lay = self.layout()
        m = lay.contentsMargins()
        others = self.icon.sizeHint().width() + self.close_button.sizeHint().width() + 2 * lay.spacing()
        width = max(200, self.width() - m.left() - m.right() - others)
        height = self.text.heightForWidth(width)
        if height > 0 and height != self.text.maximumHeight():
            self.text.setFixedHeight(height)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def hide_message(self) -> None:
        self.kind = None
        self._make_text = None
        self.text.setText("")
        if self.bar is not None:
            self.bar.hide()

    def retranslate_ui(self) -> None:
        self.close_button.setToolTip(self.tr("Dismiss"))
        if self.kind and self._make_text is not None:
            self.text.setText(self._make_text())
            self._fit_height()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def message(self) -> str:
        return self.text.text() if self.kind else ""


class MainWindow(QMainWindow):
    """The explorer window (see DESIGN.md, "explorer")."""

    frame_rendered = Signal(object)  # AttentionConfig now shown by every visible panel
    compute_failed = Signal(object, str)  # config, message (shown in the banner)
    backends_measured = Signal(object)  # {backend: {...}} for the shown frame
    config_changed = Signal(object)  # the requested config changed
    reference_changed = Signal(object)  # the pinned reference frame A, or None

    def __init__(self, session: str | os.PathLike | Mapping | Session | None = None, *,
                 settings: QSettings | None = None, theme: Theme = DARK) -> None:
        super().__init__()
        self.setWindowTitle("Attention Explorer")
        self.setObjectName("AttentionExplorer")
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowNestedDocks
                            | QMainWindow.DockOption.AllowTabbedDocks)
        self._config = AttentionConfig()
        self._frame: Frame | None = None
        self._session_path: Path | None = None
        self.model_info: dict[str, Any] | None = None
        self._pending_selection: tuple[int, int, int] | None = None
        self._dirty: set[str] = set()
        self._requested_at: dict[int, float] = {}
        self.render_ms = 0.0
        self.latency_ms = 0.0
        self.stale_dropped = 0
        self.theme = theme
        #: what every panel and feature draws from (explorer.state)
        self.state = AppState(self, theme=theme)
        #: the features, made from the window and its state (`_create_features`), by name
        self.features: dict[str, Feature] = {}
        self.state.config_requested.connect(self.set_config)
        self.selection: Selection = self.state.selection
        self.hover: HoverLink = self.state.hover
        self.settings = settings if settings is not None else make_settings()
        i18n.setup(self.settings)  # the bundled CJK font; the language, once per process
        self._highlighted: tuple[str, ...] = ()

        # not a Qt child of the window: deleting the window must not delete a running
        # thread (Qt aborts on that); the thread is stopped on close, on destruction
        # of the window, and at interpreter exit
        self.worker = ComputeWorker()
        self.destroyed.connect(self.worker.stop)
        self.worker.frame_ready.connect(self._on_frame_ready)
        self.worker.failed.connect(self._on_failed)
        self.worker.backends_ready.connect(self._on_backends)
        self.worker.cancelled.connect(self._on_cancelled)

        self._panels: dict[str, Panel] = {}
        self._docks: dict[str, QDockWidget] = {}
        # every config change is a step to undo; clean = as saved (the title's "*" otherwise)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.setUndoLimit(UNDO_LIMIT)
        self._replaying = False  # set_config from undo/redo or a session: not a new step
        self._whole_step = False  # the next change is a step of its own (Reset, a lesson preset)
        self._create_banner()
        self._create_formula()
        self._create_controls()
        self._create_panels()
        self._create_actions()
        self._create_menus()
        self._create_status_bar()
        self._create_features()
        self.retranslate_ui()
        self.selection.changed.connect(self._on_selection_changed)
        self.hover.described.connect(self._on_hover_text)
        self.resize(*self.opening_size())
        self._restore_settings()
        self.apply_theme(theme)

        self.worker.start()
        if session is not None:
            # SessionError propagates: create_window refuses a malformed session
            s = session if isinstance(session, Session) else load_session(session)
            self._session_path = Path(session) if isinstance(session, str | os.PathLike) else None
            self._apply_session(s)
        else:
            self.set_config(self._config)
        self._update_title()

    # ---- construction ------------------------------------------------------------
    def _create_features(self) -> None:
        """Every feature, made here from the window and its state, in this order (a later one
        may place its menu entry after an earlier one's); `self.features[name]`."""
        for name, make in (("export", ExportActions), ("models", install_model_support),
                           ("training", TrainingActions), ("profile", ProfileActions),
                           ("animation", AnimationActions), ("snapshots", SnapshotsFeature),
                           ("compare", CompareStatus)):
            self.features[name] = make(self)
        self.model_controller.model_changed.connect(self._retitle_docks)

    @property
    def snapshots(self) -> SnapshotList:
        """The pinned states (explorer.snapshots; Edit ▸ Snapshots…)."""
        return self.state.snapshots

    @property
    def compare_status(self) -> CompareStatus:
        """The status bar's line saying which comparison with A the panels show."""
        return self.features["compare"]

    def _create_banner(self) -> None:
        self.banner = Banner()
        bar = QToolBar()
        bar.setObjectName("banner_bar")
        bar.setMovable(False)
        bar.setFloatable(False)
        bar.addWidget(self.banner)
        bar.toggleViewAction().setVisible(False)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self.banner.bar = bar
        self.banner_bar = bar
        bar.hide()
        central = QWidget()
        central.setMaximumSize(0, 0)
        self.setCentralWidget(central)
        central.hide()

    def _create_formula(self) -> None:
        """The formula strip under the menu bar: the pipeline with today's shapes, a step a
        click away from its panel (View ▸ Formula hides it)."""
        self.formula = FormulaStrip()
        self.formula.panel_requested.connect(self.show_panel)
        bar = QToolBar()
        bar.setObjectName("formula_bar")
        bar.setMovable(False)
        bar.addWidget(self.formula)
        self.addToolBarBreak(Qt.ToolBarArea.TopToolBarArea)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self.formula_bar = bar

    def show_panel(self, name: str) -> None:
        """Bring panel `name`'s dock to the front (reopened if closed) and give it the focus."""
        dock = self._docks.get(name)
        if dock is None:
            return
        dock.show()
        dock.raise_()
        self._panels[name].setFocus()

    def _create_controls(self) -> None:
        self.controls = ConfigControls()
        self.controls.config_requested.connect(self.set_config)
        self.controls.reset_requested.connect(self.reset)
        self.controls.message.connect(lambda text: self.statusBar().showMessage(text, 6000))
        scroll = QScrollArea()
        scroll.setWidget(self.controls)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setMinimumWidth(330)
        dock = QDockWidget(self)
        dock.setObjectName("dock_controls")
        dock.setWidget(scroll)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        self.controls_dock = dock

    def _create_panels(self) -> None:
        first = None
        for name in CORE_PANELS:
            self.add_panel(name, dock_area=first is None)
            first = first or self._docks[name]
        d = self._docks
        #   heads                 | qkv
        #   scores / softmax_grad | diagnostics
        self.splitDockWidget(d["heads"], d["scores"], Qt.Orientation.Vertical)
        self.splitDockWidget(d["heads"], d["qkv"], Qt.Orientation.Horizontal)
        self.splitDockWidget(d["scores"], d["diagnostics"], Qt.Orientation.Horizontal)
        self.splitDockWidget(d["scores"], d["softmax_grad"], Qt.Orientation.Vertical)
        for name, behind in TABBED_PANELS:  # closed at first: View ▸ opens it in a tab beside `behind`
            self.add_panel(name, dock_area=False)
            self.tabifyDockWidget(d[behind], d[name])
            d[name].hide()
            d[behind].raise_()
        self._default_layout_pending = True

    def _apply_default_sizes(self) -> None:
        d = self._docks
        w, h = self.width(), self.height()
        self.resizeDocks([self.controls_dock], [340], Qt.Orientation.Horizontal)
        rest = max(w - 340, 600)
        self.resizeDocks([d["heads"], d["qkv"]], [int(rest * 0.45), int(rest * 0.55)], Qt.Orientation.Horizontal)
        self.resizeDocks([d["scores"], d["diagnostics"]], [int(rest * 0.5), int(rest * 0.5)],
                         Qt.Orientation.Horizontal)
        avail = max(h - 90, 400)  # menu, status bar
        self.resizeDocks([d["heads"], d["scores"], d["softmax_grad"]],
                         [int(avail * 0.46), int(avail * 0.27), int(avail * 0.27)], Qt.Orientation.Vertical)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._default_layout_pending:
            self._default_layout_pending = False
            if not self._restored_state:
                self._apply_default_sizes()
                QTimer.singleShot(0, self._apply_default_sizes)  # again, once laid out

    def add_panel(self, name: str, dock_area: bool = True) -> Panel:
        """Create the registered panel `name` in its own dock (for later, model panels too).

        dock_area=False leaves the dock for the caller to place (splitDockWidget).
        """
        if name in self._panels:
            return self._panels[name]
        cls = PANELS[name]
        panel = cls(self.state)  # a model panel follows the model's selection (layer, head, …)
        if cls.requires_model:
            panel.set_model(self.model_controller)
        panel.apply_theme(self.theme)
        dock = QDockWidget(self._dock_title(name, cls), self)
        dock.setObjectName(f"dock_{name}")
        dock.setWidget(panel)
        dock.visibilityChanged.connect(lambda visible, n=name: self._on_dock_visible(n, visible))
        if dock_area:
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self._panels[name] = panel
        self._docks[name] = dock
        panel.help_requested.connect(self.show_help)
        if self.state.reference is not None:
            panel.reference = self.state.reference
        if self._frame is not None:
            panel.show_frame(self._frame)
        return panel

    def _create_actions(self) -> None:
        # texts and tips are set in _retranslate_actions (again on every language change)
        def act(slot, shortcut=None) -> QAction:
            a = QAction(self)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            a.triggered.connect(slot)
            self.addAction(a)
            return a

        self.act_open = act(lambda: self.open_session(), QKeySequence.StandardKey.Open)
        self.act_save = act(lambda: self.save_session(self._session_path), QKeySequence.StandardKey.Save)
        self.act_save_as = act(lambda: self.save_session(None), "Ctrl+Shift+S")
        self.act_reset = act(self.reset, "Ctrl+R")
        self.act_pin = act(lambda: self.pin_reference(), "Ctrl+P")
        self.act_unpin = act(self.clear_reference)
        self.act_unpin.setEnabled(False)
        self.act_undo = act(self.undo, QKeySequence.StandardKey.Undo)
        self.act_redo = act(self.redo, QKeySequence.StandardKey.Redo)
        self.undo_stack.indexChanged.connect(self._retranslate_history)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self.act_quit = act(self.close, QKeySequence.StandardKey.Quit)
        self.act_dark = act(lambda checked=False: self.apply_theme(DARK if checked else LIGHT), "Ctrl+T")
        self.act_dark.setCheckable(True)
        self.act_next_head = act(lambda: self.selection.step(head=1), "]")
        self.act_prev_head = act(lambda: self.selection.step(head=-1), "[")
        self.act_query_down = act(lambda: self.selection.step(query=1), "Alt+Down")
        self.act_query_up = act(lambda: self.selection.step(query=-1), "Alt+Up")
        self.act_key_right = act(lambda: self.selection.step(key=1), "Alt+Right")
        self.act_key_left = act(lambda: self.selection.step(key=-1), "Alt+Left")
        self.act_help = act(lambda: self.show_help(self._help_topic_here()), QKeySequence.StandardKey.HelpContents)
        self.act_shortcuts = act(self._show_shortcuts, "Ctrl+/")
        self.act_about = act(self._show_about)
        self.act_lessons = act(lambda: self.show_lessons(), "Ctrl+L")
        # each language is named in itself, never translated
        self.language_group = QActionGroup(self)
        self.language_group.setExclusive(True)
        self.act_languages: dict[str, QAction] = {}
        for code, name in i18n.LANGUAGES.items():
            a = QAction(name, self)
            a.setCheckable(True)
            a.setData(code)
            a.triggered.connect(lambda _checked=False, code=code: self.set_language(code))
            self.language_group.addAction(a)
            self.act_languages[code] = a

    def _on_clean_changed(self, clean: bool) -> None:
        snaps = self.state.snapshots  # snapshot edits are changes to save too
        self.setWindowModified(not clean or (snaps is not None and snaps.edited))

    def _retranslate_history(self, _index: int = 0) -> None:
        """Undo/Redo name the step they take back (enabled only when there is one)."""
        st = self.undo_stack
        self.act_undo.setEnabled(st.canUndo())
        self.act_redo.setEnabled(st.canRedo())
        self.act_undo.setText(self.tr("&Undo {change}").format(change=st.undoText()).strip()
                              if st.canUndo() else self.tr("&Undo"))
        self.act_redo.setText(self.tr("&Redo {change}").format(change=st.redoText()).strip()
                              if st.canRedo() else self.tr("&Redo"))

    def _retranslate_actions(self) -> None:
        for a, text, tip in (
            (self.act_open, self.tr("&Open session…"), self.tr("Open a session file (.json)")),
            (self.act_save, self.tr("&Save session"), self.tr("Save the configuration and selection")),
            (self.act_save_as, self.tr("Save session &as…"), ""),
            (self.act_reset, self.tr("&Reset to defaults"), self.tr("Back to the default configuration")),
            (self.act_pin, self.tr("&Pin as reference A"),
             self.tr("Keep what is shown now as A: the heads panel then shows A, the current B or B − A, "
                     "the diagnostics both")),
            (self.act_unpin, self.tr("&Clear the reference"), ""),
            (self.act_quit, self.tr("&Quit"), ""),
            (self.act_dark, self.tr("&Dark theme"), self.tr("Switch between the dark and the light theme")),
            (self.act_next_head, self.tr("Next head"), ""),
            (self.act_prev_head, self.tr("Previous head"), ""),
            (self.act_query_down, self.tr("Next query"), ""),
            (self.act_query_up, self.tr("Previous query"), ""),
            (self.act_key_right, self.tr("Next key"), ""),
            (self.act_key_left, self.tr("Previous key"), ""),
            (self.act_help, self.tr("&Help on this panel"),
             self.tr("What the panel under the mouse shows and how to read it, with today's numbers")),
            (self.act_shortcuts, self.tr("&Keyboard shortcuts"), ""),
            (self.act_about, self.tr("&About"), ""),
            (self.act_lessons, self.tr("Show &lessons"),
             self.tr("Step-by-step lessons: presets, explanations and a task to try in each chapter")),
        ):
            a.setText(text)
            a.setStatusTip(tip)
        self._retranslate_history()

    def _create_menus(self) -> None:
        mb = self.menuBar()

        def menu(parent, key: str):
            m = parent.addMenu("")
            m.setObjectName(f"menu_{key}")  # found by name, whatever the language (export_dialog)
            return m

        m = self.menu_file = menu(mb, "file")
        m.addAction(self.act_open)
        self.recent_menu = menu(m, "recent")
        m.addSeparator()
        m.addAction(self.act_save)
        m.addAction(self.act_save_as)
        m.addSeparator()
        m.addAction(self.act_reset)
        m.addSeparator()
        m.addAction(self.act_quit)
        e = self.menu_edit = menu(mb, "edit")  # (Copy panel joins it: export_dialog)
        e.addAction(self.act_undo)
        e.addAction(self.act_redo)
        e.addSeparator()
        e.addAction(self.act_pin)
        e.addAction(self.act_unpin)
        e.addSeparator()
        v = self.menu_view = menu(mb, "view")
        v.addAction(self.act_dark)
        self.language_menu = menu(v, "language")
        for a in self.language_group.actions():
            self.language_menu.addAction(a)
        v.addAction(self.formula_bar.toggleViewAction())
        v.addSeparator()
        for i, dock in enumerate([self.controls_dock, *self._docks.values()]):
            a = dock.toggleViewAction()
            # opened from the menu: in front, also when it shares a tab group
            a.triggered.connect(lambda checked, dock=dock: dock.raise_() if checked else None)
            a.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
            v.addAction(a)
        s = self.menu_selection = menu(mb, "selection")
        for a in (self.act_next_head, self.act_prev_head, self.act_query_down, self.act_query_up,
                  self.act_key_right, self.act_key_left):
            s.addAction(a)
        self.menu_lessons = menu(mb, "lessons")
        self.menu_lessons.addAction(self.act_lessons)
        self.menu_lessons.addSeparator()
        self._chapter_actions: list[QAction] = []
        h = self.menu_help = menu(mb, "help")
        h.addAction(self.act_help)
        h.addAction(self.act_shortcuts)
        h.addAction(self.act_about)
        # a Lessons button at the right end of the menu bar: found at a glance, costs no height
        self.lessons_button = QToolButton()
        self.lessons_button.setObjectName("lessons_button")
        self.lessons_button.setAutoRaise(True)
        self.lessons_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.lessons_button.clicked.connect(lambda: self.show_lessons())
        mb.setCornerWidget(self.lessons_button, Qt.Corner.TopRightCorner)
        self._sync_language_actions()

    def _update_chapter_menu(self) -> None:
        """One entry per chapter under Lessons (titles in the current language)."""
        from .lessons import LessonError, load_chapters

        for a in self._chapter_actions:
            self.menu_lessons.removeAction(a)
            a.deleteLater()
        self._chapter_actions = []
        try:
            chapters = load_chapters()
        except LessonError:
            return  # the lesson panel reports it when opened
        lang = i18n.lesson_language()
        for i, ch in enumerate(chapters):
            a = QAction(f"&{i + 1:d}  {ch.title(lang)}" if i < 9 else f"{i + 1:d}  {ch.title(lang)}", self)
            a.triggered.connect(lambda _checked=False, i=i: self.show_lessons(i))
            self.menu_lessons.addAction(a)
            self._chapter_actions.append(a)

    def _create_status_bar(self) -> None:
        sb = self.statusBar()
        self.status_config = QLabel()
        self.status_compute = QLabel()
        self.status_render = QLabel()
        self.status_backend = QLabel()
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
        self._busy.timeout.connect(lambda: _set_status_text(self.status_config, self.tr("computing…")))

    def _retranslate_status_bar(self) -> None:
        for label in (self.status_config, self.status_compute, self.status_render, self.status_backend):
            release_size(label)  # the texts of another language size the labels afresh
        self.status_compute.setToolTip(self.tr("Engine time in the worker thread (run + derived panel data)"))
        self.status_render.setToolTip(self.tr("UI-thread time to update and repaint the visible panels; "
                                              "latency = set_config → repainted"))
        self.status_backend.setToolTip(self.tr("The implementation that actually produced the output"))
        if self._frame is not None:
            self._update_status(self._frame)
        else:
            _set_status_text(self.status_compute, self.tr("compute –"))
            _set_status_text(self.status_render, self.tr("render –"))
            _set_status_text(self.status_backend, self.tr("backend –"))

    # ---- language -------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        """Every text the window itself owns, in the current language (children do their own)."""
        self.banner_bar.setWindowTitle(self.tr("Messages"))
        self.formula_bar.setWindowTitle(self.tr("Formula"))
        self.formula.retranslate(self._config, self.selection.head)
        self.controls_dock.setWindowTitle(self.tr("Configuration"))
        for name in self._docks:
            self._docks[name].setWindowTitle(self._dock_title(name))
        self._retranslate_actions()
        self.menu_file.setTitle(self.tr("&File"))
        self.recent_menu.setTitle(self.tr("Open &recent"))
        self.menu_view.setTitle(self.tr("&View"))
        self.language_menu.setTitle(self.tr("&Language"))
        self.menu_selection.setTitle(self.tr("&Selection"))
        self.menu_lessons.setTitle(self.tr("&Lessons"))
        self.menu_help.setTitle(self.tr("&Help"))
        self.menu_edit.setTitle(self.tr("&Edit"))
        for feature in self.features.values():
            if isinstance(feature, Feature):
                feature.retranslate_ui()
        self.lessons_button.setText(self.tr("Lessons"))
        self.lessons_button.setToolTip(self.tr("Open the lessons (Ctrl+L)"))
        self._update_chapter_menu()
        self._update_recent_menu()
        self.statusBar().clearMessage()  # a transient message in the old language
        self._retranslate_status_bar()
        self._sync_language_actions()
        self._update_title()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def _sync_language_actions(self) -> None:
        current = i18n.current_language()
        for code, a in self.act_languages.items():
            a.setChecked(code == current)

    def language(self) -> str:
        """The interface language now shown: "en" or "zh_CN"."""
        return i18n.current_language()

    def set_language(self, lang: str) -> bool:
        """Switch the interface language live and remember it (View ▸ Language).

        Every widget relabels itself on the LanguageChange event; delivered here
        before returning, so the window shows the new language when this returns.
        """
        ok = i18n.set_language(lang)
        self.settings.setValue(i18n.SETTINGS_KEY, i18n.current_language())
        # deliver now: the application posts LanguageChange to the windows, which pass it to their
        # children; the relabelled plots then post their layout requests. All of it is handled
        # before returning, so nothing of the switch is left pending (a window deleted with
        # such events queued crashed PySide's clean-up at exit)
        for _ in range(3):
            QCoreApplication.sendPostedEvents()
        # the language may have changed the UI font's lead family (i18n: Chinese measures lines
        # with the CJK font): style sheets measured dock titles with the old one until re-applied
        self.apply_theme(self.theme)
        QCoreApplication.sendPostedEvents()
        self._sync_language_actions()
        if not ok:
            self.banner.show_message(lambda: self.tr(
                "The Chinese translation is not built: run `make translations` (needs pyside6-lrelease)."),
                kind="info")
        return ok

    # ---- lessons ------------------------------------------------------------------------
    def _dock_title(self, name: str, cls: type[Panel] | None = None) -> str:
        cls = cls or type(self._panels[name])
        title = cls.display_title()
        ctl = getattr(self, "model_controller", None)
        if ctl is not None and ctl.loaded is not None and not cls.requires_model and cls.exportable:
            # beside a real model's panels: say these show the sliders' layer, not the model
            title += self.tr(" · the sliders' layer, not the model")
        return f"★ {title}" if name in self._highlighted else title

    def _retitle_docks(self, *_args) -> None:
        for name, dock in self._docks.items():
            dock.setWindowTitle(self._dock_title(name))

    def show_lessons(self, chapter: int | None = None) -> QWidget:
        """Open (or raise) the lesson panel in its own dock, at `chapter` (0-based) if given."""
        new = "lesson" not in self._panels
        panel = self.add_panel("lesson", dock_area=False)
        dock = self._docks["lesson"]
        if new:
            dock.visibilityChanged.connect(lambda visible: None if visible else panel.leave())
            if not self.restoreDockWidget(dock):
                # under the configuration: the learner reads the task and moves the controls, and
                # the panels keep their width (beside it, they were squeezed unreadable)
                self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
                if not self.controls_dock.isFloating() and self.controls_dock.isVisible():
                    self.splitDockWidget(self.controls_dock, dock, Qt.Orientation.Vertical)
                    self.resizeDocks([self.controls_dock, dock], [4, 6], Qt.Orientation.Vertical)
                self.resizeDocks([dock], [380], Qt.Orientation.Horizontal)
        dock.show()
        dock.raise_()
        if chapter is not None:
            panel.open_chapter(chapter)
        else:
            panel.enter()
        return panel

    def highlight_panels(self, names: Iterable[str]) -> None:
        """Mark the docks of `names` (accent title bar, ★) and bring them to the front;
        an empty list clears the marks."""
        names = tuple(n for n in names if n in self._docks and n != "lesson")
        self._highlighted = names
        th = self.theme
        css = f"QDockWidget::title {{ background: {th.accent2}; padding: 4px 6px; }}"
        for n, dock in self._docks.items():
            dock.setStyleSheet(css if n in names else "")
            dock.setWindowTitle(self._dock_title(n))
        for n in names:
            self._docks[n].show()
            self._docks[n].raise_()

    def highlighted_panels(self) -> tuple[str, ...]:
        return self._highlighted

    def set_state(self, config: AttentionConfig, selection: Mapping[str, int] | None = None) -> None:
        """set_config, then select (head, query, key) once the new shape is shown (lesson presets)."""
        if selection:
            sel = (int(selection.get("head", 0)), int(selection.get("query", 0)), int(selection.get("key", 0)))
            if self._frame is not None and self._frame.config == config:
                self.selection.set(*sel)  # this shape is on screen already
            else:
                self._pending_selection = sel
        self._whole_step = True
        self.set_config(config)

    # ---- the contract ---------------------------------------------------------------
    @property
    def config(self) -> AttentionConfig:
        """The current (most recently requested) configuration."""
        return self._config

    @property
    def frame(self) -> Frame | None:
        """The frame the panels show."""
        return self._frame

    def panel(self, name: str) -> QWidget:
        """The panel widget `name` (qkv, scores, softmax_grad, heads, diagnostics, ...)."""
        try:
            return self._panels[name]
        except KeyError:
            raise KeyError(f"no panel {name!r}; panels: {', '.join(self._panels)}") from None

    def panel_names(self) -> list[str]:
        return list(self._panels)

    def dock(self, name: str) -> QDockWidget:
        return self._docks[name]

    def set_config(self, config: AttentionConfig) -> None:
        """Show `config`: mirror it in the controls and compute it off the UI thread.

        `frame_rendered(config)` follows once the visible panels are repainted
        (or `compute_failed(config, message)` if the engine refuses it).
        """
        if not isinstance(config, AttentionConfig):
            raise TypeError(f"set_config needs an AttentionConfig, got {type(config).__name__}")
        changed = config != self._config
        self.formula.set_config(config, self.selection.head)
        if changed and not self._replaying:
            step = ConfigChange(self._config, config, self._replay, mergeable=not self._whole_step)
            self.undo_stack.push(step)
        self._whole_step = False
        self._config = config
        self.state.set_config(config)
        self.controls.set_config(config)
        rid = self.worker.request(config)
        self._requested_at = {rid: time.perf_counter()}
        self._busy.start()
        if changed:
            self.config_changed.emit(config)

    @property
    def training_lab(self):
        """The window's training lab (explorer.training.lab.TrainingLab; None until made)."""
        return self.state.training_lab

    # ---- the reference A -------------------------------------------------------------------
    @property
    def reference(self) -> Frame | None:
        """The pinned frame A the panels compare the current one (B) with, or None."""
        return self.state.reference

    def pin_reference(self, frame: Frame | None = None) -> Frame | None:
        """Pin `frame` (default: the one shown) as the reference A; returns it."""
        frame = self._frame if frame is None else frame
        if frame is None:
            return None
        self._set_reference(frame)
        self.statusBar().showMessage(self.tr("pinned as A: {config}").format(config=frame.config.summary()), 5000)
        return frame

    def clear_reference(self) -> None:
        self._set_reference(None)

    def _set_reference(self, frame: Frame | None) -> None:
        self.state.set_reference(frame)
        self.act_unpin.setEnabled(frame is not None)
        for panel in self._panels.values():
            panel.set_reference(frame)
        self.reference_changed.emit(frame)

    def _replay(self, config: AttentionConfig) -> None:
        """Show a config from the history (undo/redo) without recording a new step."""
        self._replaying = True
        try:
            self.set_config(config)
        finally:
            self._replaying = False

    def undo(self) -> None:
        """Edit ▸ Undo: the configuration before the last change."""
        self.controls.flush()  # a throttled slider value first: it is part of the last step
        self.undo_stack.undo()

    def redo(self) -> None:
        self.undo_stack.redo()

    def reset(self) -> None:
        """Back to the default configuration (selection to 0, 0, 0), framed as in a new window
        (zooms and remembered axis ranges forgotten). Undo brings the old config back."""
        self._pending_selection = (0, 0, 0)
        for panel in self._panels.values():
            panel.reset_view()
        self._whole_step = True
        self.set_config(AttentionConfig())

    # ---- synchronous path (selftest, export, scripts) -------------------------------
    def render_sync(self, config: AttentionConfig | None = None, *, all_panels: bool = True) -> Frame:
        """Compute `config` (default: the current one) in this thread and draw it now.

        Draws every panel (visible or not) when all_panels is set: what exports need.
        Raises the engine's ConfigError / BackendUnavailable.
        """
        config = self._config if config is None else config
        self._config = config
        self.state.set_config(config)
        self.controls.set_config(config)
        rid = self.worker.supersede()  # anything in flight is stale (and the worker does not compute this too)
        frame = build_frame(config, rid)
        self._render(frame, force_all=all_panels)
        return frame

    def export_figures(self, out_dir: str | os.PathLike, panels: Iterable[str] | None = None,
                       formats: Sequence[str] = ("png",), width: int | None = None, theme: str = "slides",
                       caption: bool = False) -> list[Path]:
        """What File ▸ Export does, for scripts: out_dir/NAME.FORMAT for each panel (default:
        every panel this window has, shown, behind a tab or closed) and format, each drawn
        afresh from the current state; the window is left exactly as it was. Existing files
        are replaced. Raises explorer.export.ExportError with a one-line reason."""
        from .export.files import export_panels
        from .export.options import ExportOptions

        options = ExportOptions(width=1920 if width is None else width, theme=theme, caption=caption)
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        return export_panels(self, out, list(panels) if panels is not None else None, list(formats), options,
                             force=True)

    def measure_backends_sync(self) -> dict:
        """Run every backend for the shown frame now and show the comparison."""
        if self._frame is None:
            raise RuntimeError("no frame shown yet")
        result = measure_backends(self._frame.config)
        self._frame.backends = result
        self._panels["diagnostics"].set_backends(result)
        self.backends_measured.emit(result)
        return result

    # ---- worker results -----------------------------------------------------------------
    def _on_frame_ready(self, frame: Frame) -> None:
        if frame.request_id != self.worker.latest_id:
            self.stale_dropped += 1
            return
        self._render(frame)

    def _panel_visible(self, name: str) -> bool:
        panel = self._panels[name]
        return panel.isVisible() and not panel.visibleRegion().isEmpty()

    def _render(self, frame: Frame, force_all: bool = False) -> None:
        t0 = time.perf_counter()
        self._busy.stop()
        self.frame_progress.finish()
        self._frame = frame
        cfg = frame.config
        self.formula.set_config(cfg, self.selection.head)
        if self.banner.kind in ("error", "cancelled"):
            self.banner.hide_message()
        before = self.selection.as_dict()
        with _Blocked(self.selection):
            self.selection.set_limits(cfg.n_heads, cfg.seq_len, cfg.key_len)
            if self._pending_selection is not None:
                self.selection.set(*self._pending_selection)
                self._pending_selection = None
        shown = []
        for name, panel in self._panels.items():
            if force_all or self._panel_visible(name):
                panel.show_frame(frame)
                shown.append(panel)
                self._dirty.discard(name)
            else:
                self._dirty.add(name)
        link_views([hm for p in shown for hm in p.heatmaps()])
        self._paint_now(shown)
        t1 = time.perf_counter()
        self.render_ms = (t1 - t0) * 1e3
        started = self._requested_at.get(frame.request_id)
        self.latency_ms = (t1 - started) * 1e3 if started is not None else float("nan")
        self._update_status(frame)
        if self.selection.as_dict() != before:
            self._on_selection_changed()
        self.frame_rendered.emit(cfg)

    @staticmethod
    def _paint_now(panels: list[Panel]) -> None:
        """Repaint what changed, now, so frame_rendered means "on screen".

        pyqtgraph items mark themselves dirty; the scene turns that into view
        updates through a queued call, and the widgets repaint on an
        UpdateRequest. Delivering those two posted events here runs Qt's own
        minimal repaint synchronously (QWidget.repaint() would not repaint
        the graphics views' viewports, and a full repaint costs more).
        """
        windows = []
        visible = [p for p in panels if p.isVisible()]
        for panel in visible:
            # pyqtgraph settles view ranges (and moves items) in prepareForPaint; doing it
            # before the flush keeps that from dirtying the views again mid-paint
            panel.graphics.scene().prepareForPaint()
        for panel in visible:
            QCoreApplication.sendPostedEvents(panel.graphics.scene(), QEvent.Type.MetaCall)
            w = panel.window()
            if w not in windows:
                windows.append(w)
        for w in windows:
            QCoreApplication.sendPostedEvents(w, QEvent.Type.UpdateRequest)

    def cancel_frame(self) -> bool:
        """Stop the frame under way (a long sequence's); the panels keep the last one. Returns
        whether one was under way."""
        return self.worker.cancel() is not None

    def _on_cancelled(self, rid: int, config: AttentionConfig) -> None:
        if rid != self.worker.latest_id:
            return
        self.frame_progress.finish()
        self._busy.stop()
        shown = self._frame.config.summary() if self._frame is not None else ""
        self.banner.show_message(lambda: self.tr(
            "Cancelled: the panels still show the last complete configuration ({shown}), not the "
            "controls' values").format(shown=shown), kind="cancelled")
        _set_status_text(self.status_config, self.tr("cancelled"))

    def _on_failed(self, rid: int, config: AttentionConfig, message: str) -> None:
        if rid != self.worker.latest_id:
            return
        self.frame_progress.finish()
        self.banner.show_message(
            lambda: self.tr("The engine refused this configuration: {message}").format(message=message))
        self._busy.stop()
        _set_status_text(self.status_config, self.tr("error"))
        self.compute_failed.emit(config, message)

    def _on_backends(self, rid: int, result: dict) -> None:
        if self._frame is None or self._frame.request_id != rid:
            return
        self._frame.backends = result
        self._panels["diagnostics"].set_backends(result)
        self.backends_measured.emit(result)

    def _on_dock_visible(self, name: str, visible: bool) -> None:
        if name == "diagnostics":  # the backend comparison is for its card only: not while hidden
            self.worker.set_extras_wanted(visible)
        if not visible or self._frame is None:
            return
        panel = self._panels[name]
        if name in self._dirty:
            self._dirty.discard(name)
            panel.show_frame(self._frame)
            link_views([hm for p in self._panels.values() for hm in p.heatmaps()])
        else:
            panel.refresh()

    # ---- selection, status --------------------------------------------------------------
    def _on_selection_changed(self) -> None:
        s = self.selection
        self.formula.set_config(self._config, s.head)
        f = self._frame
        if f is None:
            return
        q = f.query_labels[s.query] if s.query < len(f.query_labels) else ""
        k = f.key_labels[s.key] if s.key < len(f.key_labels) else ""
        self.statusBar().showMessage(
            self.tr("selected: head {head} · query {query} ‘{q}’ · key {key} ‘{k}’").format(
                head=s.head, query=s.query, q=q, key=s.key, k=k), 4000)

    def _on_hover_text(self, text: str) -> None:
        if text:
            self.statusBar().showMessage(text)
        else:
            self.statusBar().clearMessage()

    def _update_status(self, frame: Frame) -> None:
        set_status = _set_status_text
        set_status(self.status_config, frame.config.summary().replace("  ", " · "))
        set_status(self.status_compute, self.tr("compute {ms} ms").format(ms=f"{frame.compute_ms:.1f}"))
        if math.isnan(self.latency_ms):
            set_status(self.status_render, self.tr("render {ms} ms").format(ms=f"{self.render_ms:.1f}"))
        else:
            set_status(self.status_render, self.tr("render {ms} ms · latency {latency} ms").format(
                ms=f"{self.render_ms:.1f}", latency=f"{self.latency_ms:.1f}"))
        diff = frame.trace.backend_max_abs_diff
        if diff is None:
            set_status(self.status_backend, self.tr("backend {impl}").format(impl=frame.backend_impl))
        else:
            set_status(self.status_backend, self.tr("backend {impl} (max |Δ| vs eager {diff})").format(
                impl=frame.backend_impl, diff=f"{diff:.1e}"))

    def _update_title(self) -> None:
        name = self._session_path.name if self._session_path else self.tr("untitled")
        # "[*]": Qt shows "*" there while windowModified (changes since the session was saved)
        self.setWindowTitle(self.tr("Attention Explorer — {name}").format(name=name) + "[*]")

    # ---- sessions ---------------------------------------------------------------------------
    def _apply_session(self, s) -> None:
        self.model_info = s.model
        self._pending_selection = (s.head, s.query, s.key)
        self._replay(s.config)
        self.undo_stack.clear()  # an opened session starts a history of its own, unmodified
        # loads the session's model off the UI thread (its own code is never trusted from a file)
        self.model_controller.restore(s.model)
        self.snapshots.restore(s.snapshots)  # the one marked as reference becomes A

    def set_session_path(self, path: str | os.PathLike | None) -> None:
        """The file that Save writes to (and the window title shows)."""
        self._session_path = None if path is None else Path(path)
        self._update_title()

    def open_session(self, path: str | os.PathLike | None = None) -> bool:
        """Open a session file (a dialog when path is None); a refused file shows in the banner."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, self.tr("Open session"), self._dialog_dir(),
                                                  self.tr("Sessions (*.json);;All files (*)"))
            if not path:
                return False
        try:
            s = load_session(path)
        except SessionError as exc:
            self.banner.show_message(self.tr("Could not open {name}: {reason}").format(
                name=Path(path).name, reason=exc))
            return False
        self._session_path = Path(path)
        self._apply_session(s)
        self._add_recent(path)
        self._update_title()
        return True

    def save_session(self, path: str | os.PathLike | None = None) -> bool:
        """Save config + selection (a dialog when path is None); errors show in the banner."""
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, self.tr("Save session"), self._dialog_dir("session.json"),
                                                  self.tr("Sessions (*.json)"))
            if not path:
                return False
            if not path.endswith(".json"):
                path += ".json"
        cfg = self._config
        sel = self.selection
        selection = {"head": min(sel.head, cfg.n_heads - 1), "query": min(sel.query, cfg.seq_len - 1),
                     "key": min(sel.key, cfg.key_len - 1)}
        try:
            save_session(path, cfg, selection, self.model_info, self.snapshots.to_snapshots())
        except (OSError, SessionError) as exc:
            self.banner.show_message(self.tr("Could not save {name}: {reason}").format(
                name=Path(path).name, reason=exc))
            return False
        self._session_path = Path(path)
        self._add_recent(path)
        self.undo_stack.setClean()
        self.snapshots.mark_saved()
        self._update_title()
        self.statusBar().showMessage(self.tr("saved {path}").format(path=path), 4000)
        return True

    def _dialog_dir(self, name: str = "") -> str:
        recent = self.recent_files()
        base = Path(recent[0]).parent if recent else Path.home()
        return str(base / name) if name else str(base)

    # ---- settings: geometry and recent files (and the language, see set_language) -----------
    def recent_files(self) -> list[str]:
        v = self.settings.value("recent_files", [])
        if isinstance(v, str):
            v = [v]
        return [str(p) for p in (v or [])][:MAX_RECENT]

    def _add_recent(self, path) -> None:
        p = str(Path(path).resolve())
        files = [p] + [f for f in self.recent_files() if f != p]
        self.settings.setValue("recent_files", files[:MAX_RECENT])
        self._update_recent_menu()

    def _update_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for i, f in enumerate(files):
            a = self.recent_menu.addAction(f"&{i + 1} {Path(f).name}")
            a.setToolTip(f)
            a.triggered.connect(lambda _c=False, f=f: self.open_session(f))
        if not files:
            a = self.recent_menu.addAction(self.tr("(none)"))
            a.setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction(self.tr("Clear list"), self._clear_recent)

    def _clear_recent(self) -> None:
        self.settings.setValue("recent_files", [])
        self._update_recent_menu()

    @staticmethod
    def opening_size(available=None) -> tuple[int, int]:
        """1600×1000, or less so the window fits `available` (the screen's free area, a QRect;
        default the primary screen's): a 1366×768 classroom laptop opened it larger than its
        screen. Offscreen (tests, exports) it is 1600×1000: that "screen" is a fixed 800×600."""
        from PySide6.QtGui import QGuiApplication

        if available is None:
            screen = QGuiApplication.primaryScreen()
            if screen is None or QApplication.platformName() == "offscreen":
                return 1600, 1000
            available = screen.availableGeometry()
        return (min(1600, max(800, available.width() - 40)), min(1000, max(560, available.height() - 60)))

    def _restore_settings(self) -> None:
        self._restored_state = False
        geo = self.settings.value("geometry")
        if isinstance(geo, QByteArray | bytes) and geo:
            self.restoreGeometry(QByteArray(geo))
        state = self.settings.value("window_state")
        if isinstance(state, QByteArray | bytes) and state:
            self._restored_state = bool(self.restoreState(QByteArray(state)))

    def _save_settings(self) -> None:
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window_state", self.saveState())
        self.settings.sync()

    # ---- theme, help ---------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.state.set_theme(theme)
        app = QApplication.instance()
        if app is not None:
            apply_app_theme(app, theme)
        for panel in self._panels.values():
            panel.apply_theme(theme)
        if self._highlighted:
            self.highlight_panels(self._highlighted)  # the accent of the new theme
        self.act_dark.blockSignals(True)
        self.act_dark.setChecked(theme.dark)
        self.act_dark.blockSignals(False)

    def show_help(self, name: str = "overview"):
        """Open the help window on panel `name` ("controls", "overview" also); it follows the
        frames while open. Returns the dialog."""
        from .help_dialog import show_help

        return show_help(self, name)

    def _help_topic_here(self) -> str:
        """The panel under the mouse (else the one with the focus), the controls, or the overview."""
        from PySide6.QtGui import QCursor

        for w in (QApplication.widgetAt(QCursor.pos()), QApplication.focusWidget()):
            while w is not None:
                if isinstance(w, Panel):
                    return w.name
                if w is self.controls_dock:
                    return "controls"
                w = w.parentWidget()
        return "overview"

    def _show_shortcuts(self) -> None:
        rows = [(a.text().replace("&", ""), a.shortcut().toString(QKeySequence.SequenceFormat.NativeText))
                for a in self.actions() if not a.shortcut().isEmpty()]
        rows += [(d.windowTitle(), d.toggleViewAction().shortcut().toString())
                 for d in [self.controls_dock, *self._docks.values()]]
        text = "".join(f"<tr><td>{t}</td><td><b>{k}</b></td></tr>" for t, k in rows)
        QMessageBox.information(self, self.tr("Keyboard shortcuts"), f"<table cellpadding='3'>{text}</table>")

    def _show_about(self) -> None:
        QMessageBox.about(self, self.tr("Attention Explorer"),
                          self.tr("Change the architecture of an attention layer and watch it recompute.<br>"
                                  "Click any cell to select a head, query and key in every panel."))

    # ---- shutdown ------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop the compute thread (idempotent)."""
        if self.worker.isRunning():
            self.worker.stop()
        self.model_controller.shutdown()
        for feature in self.features.values():
            if isinstance(feature, Feature):
                feature.shutdown()

    def closeEvent(self, event) -> None:
        self._save_settings()
        self.shutdown()
        super().closeEvent(event)


class _Blocked:
    """Block a QObject's signals for a with-block."""

    def __init__(self, obj) -> None:
        self.obj = obj

    def __enter__(self):
        self._was = self.obj.blockSignals(True)
        return self.obj

    def __exit__(self, *exc) -> None:
        self.obj.blockSignals(self._was)


__all__ = ["MainWindow", "make_settings"]
