"""The main window: the host that composes the features and lays out their panels.

    state = AppState()     the one owner of the config, frame, selection, reference, theme, lesson
    MainWindow             docks and panels, the render loop, the host interface (explorer.host)
    features               made from (state, host) in `_create_features`: sessions, menus, help and
                           language, focus, lessons, status, export, models, training, profile,
                           animation, snapshots, compare

Data flow (one way; the state owns the config):

    control / lesson / undo / session / script ─→ state.set_config
        ─config_changed→ MainWindow._on_config_changed ─request→ ComputeWorker
                       → UndoHistory (a step), ConfigControls (mirror), the formula strip
        ─frame_ready→ MainWindow._on_frame_ready (drop if stale) → state.set_frame (the
        selection clamped to its shape) → panels.show_frame → synchronous repaint
        → frame_rendered(config)

MainWindow has no base class of the project's own: a feature is an object with its own
actions and texts, asking the window only through `WindowHost` (the Host protocol). The
public names of the contract (docs/contract.md, "explorer") and the entry points tests and scripts
use (`open_session`, `show_lessons`, `set_language`, `undo`, ...) are one-line delegations to
the feature that owns them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QByteArray,
    QCoreApplication,
    QEvent,
    QSettings,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFrame,
    QMainWindow,
    QMenu,
    QScrollArea,
    QStatusBar,
    QToolBar,
    QWidget,
)

import explorer.i18n as i18n
from engine import AttentionConfig

from .banner import add_banner
from .compare import CompareStatus
from .controls import ConfigControls
from .export.animation_dialog import AnimationActions
from .export.dialog import ExportActions
from .feature import Feature
from .figures.heatmap import link_views
from .figures.themes import DARK, Theme, apply_app_theme
from .focus import FocusFeature
from .formula import FormulaStrip
from .frame import Frame, build_frame, measure_backends
from .help_menu import HelpFeature
from .history import UndoHistory
from .host import MENUS
from .layout import Perspective
from .layout.docks import DockLayout
from .lesson_dock import LessonsFeature
from .menus import MenusFeature
from .models.controller import ModelController, install_model_support
from .panels import CORE_PANELS, PANELS, TABBED_PANELS, Panel
from .profile.feature import ProfileActions
from .selection import HoverLink, ModelSelection, Selection
from .session import Session, load_session
from .sessions import SessionsFeature
from .settings import make_settings
from .snapshots import SnapshotList, SnapshotsFeature
from .state import AppState
from .status_bar import StatusFeature
from .subscribe import follow
from .training.feature import TrainingActions
from .work.compute import ComputeWorker

#: every feature, in the order made (a later one places its menu entries relative to an
#: earlier one's): name → class, made as `cls(state, host)`
FEATURES: tuple[tuple[str, Any], ...] = (
    ("sessions", SessionsFeature), ("menus", MenusFeature), ("help", HelpFeature),
    ("focus", FocusFeature), ("lessons", LessonsFeature), ("status", StatusFeature),
    ("export", ExportActions), ("models", install_model_support), ("training", TrainingActions),
    ("profile", ProfileActions), ("animation", AnimationActions), ("snapshots", SnapshotsFeature),
    ("compare", CompareStatus),
)


class WindowHost:
    """The host interface (explorer.host.Host) of one MainWindow: what a feature may ask."""

    def __init__(self, window: MainWindow) -> None:
        self._w = window
        self.state = window.state
        self.history = window.history
        self.settings = window.settings
        for name in ("frame_rendered", "frame_shown", "frame_requested", "frame_progressed", "compute_failed",
                     "frame_cancelled", "dock_added"):
            setattr(self, name, getattr(window, name))

    # ---- widgets ----------------------------------------------------------------------------
    def parent_widget(self) -> QMainWindow:
        return self._w

    def menu(self, key: str) -> QMenu:
        return self._w.menus[key]

    def add_action(self, menu: str | None, action: QAction, *, after: QAction | None = None,
                   before: QAction | None = None) -> None:
        self._w.addAction(action)  # its shortcut works anywhere in the window
        if menu is None:
            return
        m = self._w.menus[menu]
        actions = m.actions()
        if after is not None and after in actions:
            at = actions.index(after) + 1
            before = actions[at] if at < len(actions) else None
        if before is not None and before in actions:
            m.insertAction(before, action)
        else:
            m.addAction(action)

    def feature(self, name: str) -> Any:
        return self._w.features[name]

    def status_bar(self) -> QStatusBar:
        return self._w.statusBar()

    def set_menu_corner_widget(self, widget: QWidget) -> None:
        self._w.menuBar().setCornerWidget(widget, Qt.Corner.TopRightCorner)

    def formula_action(self) -> QAction:
        """View ▸ Formula: shows or hides the formula strip."""
        return self._w.formula_bar.toggleViewAction()

    def set_window_title(self, text: str) -> None:
        self._w.setWindowTitle(text)

    def set_window_modified(self, modified: bool) -> None:
        self._w.setWindowModified(modified)

    # ---- panels and docks -------------------------------------------------------------------
    def add_panel(self, name: str, dock_area: bool = True) -> Panel:
        return self._w.add_panel(name, dock_area)

    def panel(self, name: str) -> QWidget:
        return self._w.panel(name)

    def panel_names(self, *, made: bool = False) -> list[str]:
        return self._w.panel_names(made=made)

    def dock(self, name: str) -> QDockWidget:
        return self._w.dock(name)

    def docks(self) -> list[QDockWidget]:
        return self._w.docks()

    def show_panel(self, name: str) -> None:
        self._w.show_panel(name)

    def add_view_entry(self, name: str) -> QAction:
        return self._w.add_view_entry(name)

    def reset_layout(self) -> None:
        self._w.reset_layout()

    def highlight_panels(self, names: Iterable[str]) -> None:
        self._w.highlight_panels(names)

    def place_beside_controls(self, name: str) -> None:
        self._w.place_beside_controls(name)

    def tabify(self, beside: str, name: str) -> None:
        """Panel `name`'s dock in a tab beside panel `beside`'s."""
        self._w.tabifyDockWidget(self._w.dock(beside), self._w.dock(name))

    def add_dock(self, dock: QDockWidget, floating: bool = False) -> None:
        """A feature's own dock (not a panel's) into the window, floating if asked."""
        self._w.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        dock.setFloating(floating)

    def float_panel(self, name: str) -> None:
        self._w.float_panel(name)

    def save_layout(self) -> QByteArray:
        return self._w.saveState()

    def restore_layout(self, saved: QByteArray) -> None:
        self._w.restore_layout(saved)

    # ---- the frame --------------------------------------------------------------------------
    def timings(self) -> tuple[float, float]:
        """(render ms, latency ms) of the frame just shown (latency NaN: not requested)."""
        return self._w.render_ms, self._w.latency_ms

    def cancel_frame(self) -> bool:
        return self._w.cancel_frame()

    def render_sync(self, config: AttentionConfig | None = None, *, all_panels: bool = True) -> Frame:
        return self._w.render_sync(config, all_panels=all_panels)

    def apply_theme(self, theme: Theme) -> None:
        self._w.apply_theme(theme)

    def flush_controls(self) -> None:
        self._w.controls.flush()

    # ---- messages ---------------------------------------------------------------------------
    def show_status(self, text: str, ms: int = 0) -> None:
        self._w.statusBar().showMessage(text, ms)

    def take_back_status(self, text: str) -> None:
        if self._w.statusBar().currentMessage() == text:
            self._w.statusBar().clearMessage()

    def show_banner(self, text: Any, kind: str = "error") -> None:
        self._w.banner.show_message(text, kind=kind)

    def hide_banner(self) -> None:
        self._w.banner.hide_message()

    def banner_kind(self) -> str | None:
        return self._w.banner.kind


class MainWindow(QMainWindow):
    """The explorer window (see docs/contract.md, "explorer")."""

    frame_rendered = Signal(object)  # AttentionConfig now shown by every visible panel
    frame_shown = Signal(object)  # the Frame now shown (after frame_rendered's repaint)
    frame_requested = Signal(object)  # a config asked of the compute worker
    frame_progressed = Signal(int, int, int)  # request id, heads done, heads in all (a long frame)
    frame_cancelled = Signal(object)  # the config whose frame was cancelled
    compute_failed = Signal(object, str)  # config, message (shown in the banner)
    backends_measured = Signal(object)  # {backend: {...}} for the shown frame
    config_changed = Signal(object)  # the requested config changed
    reference_changed = Signal(object)  # the pinned reference frame A, or None
    dock_added = Signal(str)  # a panel's dock was made (its name)

    def __init__(self, session: str | os.PathLike | Mapping | Session | None = None, *,
                 settings: QSettings | None = None, theme: Theme = DARK) -> None:
        super().__init__()
        self.setWindowTitle("Attention Explorer")
        self.setObjectName("AttentionExplorer")
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowNestedDocks
                            | QMainWindow.DockOption.AllowTabbedDocks)
        self._dirty: set[str] = set()
        self._requested_at: dict[int, float] = {}
        self.render_ms = 0.0
        self.latency_ms = 0.0
        self.stale_dropped = 0
        self.theme = theme
        #: what every panel and feature draws from, the one owner of the config (explorer.state)
        self.state = AppState(theme=theme)
        #: the features, made from the state and the host (`_create_features`), by name
        self.features: dict[str, Feature] = {}
        self._rendering_sync = False  # render_sync computes the config itself: no request
        # first: the frame is asked for before anything else follows the new config
        follow(self.state.config_changed, self._on_config_changed, priority=10)
        self.selection: Selection = self.state.selection
        self.hover: HoverLink = self.state.hover
        self.settings = settings if settings is not None else make_settings()
        i18n.setup(self.settings)  # the bundled CJK font; the language, once per process
        self.state.set_language(i18n.current_language())

        # not a Qt child of the window: deleting the window must not delete a running
        # thread (Qt aborts on that); the thread is stopped on close, on destruction
        # of the window, and at interpreter exit
        self.worker = ComputeWorker()
        self.destroyed.connect(self.worker.retire)
        self.worker.frame_ready.connect(self._on_frame_ready)
        self.worker.failed.connect(self._on_failed)
        self.worker.backends_ready.connect(self._on_backends)
        self.worker.cancelled.connect(self._on_cancelled)
        self.worker.progress.connect(
            lambda rid, done, total: self.frame_progressed.emit(rid, done, total)
            if rid == self.worker.latest_id else None)

        self._panels: dict[str, Panel] = {}
        self._docks: dict[str, QDockWidget] = {}
        # every config change is a step to undo; clean = as saved (the title's "*" otherwise)
        self.history = UndoHistory(self.state, self)
        self.undo_stack = self.history.stack
        follow(self.state.reference_changed, self._on_reference_changed)
        follow(self.state.theme_changed, self._on_theme_changed)
        follow(self.state.marked_panels_changed, self._on_marked_panels)
        follow(self.selection.changed, self._on_selection_changed)
        # the dock layer (explorer/layout): made before any dock, so it follows every one
        self.dock_layout = DockLayout(self, default_sizes=lambda _layout: self._apply_default_sizes())
        self.banner = add_banner(self)  # the messages' bar under the menu bar
        self.banner_bar = self.banner.bar
        self._create_formula()
        self._create_controls()
        self._create_panels()
        self._create_menus()
        self.host = WindowHost(self)
        self._create_features()
        self.retranslate_ui()
        self.resize(*self.opening_size())
        self.dock_layout.capture_default()  # View ▸ Reset layout's layout, before the user's
        self._restore_settings()
        # the application in the state's theme (each panel took it when it was made): a new
        # window in the theme the application wears re-polishes nothing
        self._on_theme_changed(theme)

        self.worker.start()
        if session is not None:
            # SessionError propagates: create_window refuses a malformed session
            s = session if isinstance(session, Session) else load_session(session)
            self.sessions.session_path = Path(session) if isinstance(session, str | os.PathLike) else None
            self.sessions.apply_session(s)
        if not self._requested_at:  # (a session of the default config changed nothing)
            self._request(self.state.config)
        self.sessions.update_title()

    # ---- construction ------------------------------------------------------------
    def _create_menus(self) -> None:
        """The menu bar's menus, empty: the features fill them (`WindowHost.add_action`)."""
        mb = self.menuBar()
        self.menus: dict[str, QMenu] = {}
        for key in MENUS:
            m = mb.addMenu("")
            m.setObjectName(f"menu_{key}")  # found by name, whatever the language (export_dialog)
            self.menus[key] = m

    def _create_features(self) -> None:
        """Every feature, made here from the state and the host, in FEATURES' order;
        `self.features[name]`."""
        for name, make in FEATURES:
            self.features[name] = make(self.state, self.host)
            if name == "focus":  # View ▸ the panels (Ctrl+1…) after the window's own View entries
                self.features["menus"].add_panel_entries()
        self.model_controller.model_changed.connect(self._retitle_docks)

    @property
    def model_controller(self) -> ModelController:
        """The loaded model, its trace and selection (explorer.models.controller)."""
        return self.state.models

    @property
    def model_selection(self) -> ModelSelection:
        """The model panels' selection: layer, head, query, key."""
        return self.state.model_selection

    @property
    def model_info(self) -> dict | None:
        """The session's model entry (what Save writes as "model")."""
        return self.state.model_info

    @property
    def snapshots(self) -> SnapshotList:
        """The pinned states (explorer.snapshots; Edit ▸ Snapshots…)."""
        return self.state.snapshots

    @property
    def compare_status(self) -> CompareStatus:
        """The status bar's line saying which comparison with A the panels show."""
        return self.features["compare"]

    @property
    def training_lab(self):
        """The window's training lab (explorer.training.lab.TrainingLab; None until made)."""
        return self.state.training_lab

    def _create_formula(self) -> None:
        """The formula strip under the menu bar: the pipeline with today's shapes, a step a
        click away from its panel (View ▸ Formula hides it)."""
        self.formula = FormulaStrip()
        self._formula_shown: tuple[AttentionConfig, int] | None = None  # what the strip shows
        self.formula.panel_requested.connect(self.show_panel)
        bar = QToolBar()
        bar.setObjectName("formula_bar")
        bar.setMovable(False)
        bar.addWidget(self.formula)
        self.addToolBarBreak(Qt.ToolBarArea.TopToolBarArea)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self.formula_bar = bar

    def _show_formula(self, config: AttentionConfig, head: int) -> None:
        """The formula strip for `config` and `head`, unless it shows them already (set_config
        and the frame it brings both ask, and the strip's pipeline is rebuilt to compare)."""
        if (config, head) != self._formula_shown:
            self._formula_shown = (config, head)
            self.formula.set_config(config, head)

    def show_panel(self, name: str) -> None:
        """Bring panel `name`'s dock to the front (reopened if closed) at no less than its
        readable size, and give it the focus (View ▸ a panel; never hides a visible one)."""
        if name in self._docks and self.dock_layout.show_panel(name):
            self._panels[name].setFocus()

    def add_view_entry(self, name: str) -> QAction:
        """View ▸ panel `name` (or "controls"): shows it, never closes it (explorer.layout)."""
        dock = self.controls_dock if name == "controls" else self._docks[name]
        for a in self.menus["view"].actions():
            if a.objectName() == f"act_view_{name}":
                return a
        a = self.dock_layout.view_action(dock)
        self.menus["view"].addAction(a)
        self.addAction(a)  # its shortcut works wherever the focus is
        return a

    def reset_layout(self) -> None:
        """View ▸ Reset layout: the default docks at their default sizes for this window."""
        self.dock_layout.reset()

    def _create_controls(self) -> None:
        self.controls = ConfigControls(self.state)
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
        self.dock_layout.follow(dock)  # (the left column's width is held through resizes)

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
            self._add_dock(name, dock_area=False, make=False)  # its panel made when first shown
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
                self.dock_layout.lay_out_default()  # now and again once laid out
            else:  # a remembered layout that leaves a panel cramped here: the default instead
                QTimer.singleShot(0, self._drop_cramped_layout)

    def _drop_cramped_layout(self) -> None:
        if self.dock_layout.cramped():
            self.settings.remove("window_state")
            self.dock_layout.reset()

    def add_panel(self, name: str, dock_area: bool = True) -> Panel:
        """Create the registered panel `name` in its own dock (for later, model panels too).

        dock_area=False leaves the dock for the caller to place (splitDockWidget).
        """
        if name not in self._docks:
            self._add_dock(name, dock_area, make=True)
        return self.panel(name)

    def _add_dock(self, name: str, dock_area: bool, *, make: bool) -> QDockWidget:
        """Panel `name`'s dock; its panel made now (`make`) or when the dock is first shown or
        the panel first asked for (`panel`): a panel closed at start costs a new window
        nothing (the five of TABBED_PANELS were ~0.6 s of its 1.4 s)."""
        dock = QDockWidget(self._dock_title(name), self)
        dock.setObjectName(f"dock_{name}")
        self._docks[name] = dock
        if make:
            self._make_panel(name)
        # (before the dock layer's own handler: a dock shown for the first time has its panel)
        dock.visibilityChanged.connect(lambda visible, n=name: self._on_dock_visible(n, visible))
        self.dock_layout.follow(dock)  # its readable size as its minimum once shown in front
        if dock_area:
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self.dock_added.emit(name)
        return dock

    def _make_panel(self, name: str) -> Panel:
        """Make the panel of dock `name`, in the state's theme, reference and frame."""
        cls = PANELS[name]
        panel = cls(self.state)  # a model panel follows the model's selection (layer, head, …)
        if cls.requires_model:
            panel.set_model(self.model_controller)
        panel.apply_theme(self.state.theme)  # later themes: the panel follows the state's event
        dock = self._docks[name]
        dock.setWidget(panel)
        self._panels[name] = panel
        panel.help_requested.connect(self.show_help)
        panel.figure_requested.connect(lambda n, what: self.features["export"].figure(n, what))
        if self.state.reference is not None:
            panel.reference = self.state.reference
        if self.state.frame is not None:
            panel.show_frame(self.state.frame)
        return panel

    # ---- language -------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        """Every text the window itself owns, in the current language (the features and the
        children do their own)."""
        self.banner_bar.setWindowTitle(self.tr("Messages"))
        self.formula_bar.setWindowTitle(self.tr("Formula"))
        self.formula.retranslate(self.state.config, self.selection.head)
        self._formula_shown = (self.state.config, self.selection.head)
        self.controls_dock.setWindowTitle(self.tr("Configuration"))
        for name in self._docks:
            self._docks[name].setWindowTitle(self._dock_title(name))
        for key, title in (("file", self.tr("&File")), ("edit", self.tr("&Edit")), ("view", self.tr("&View")),
                           ("selection", self.tr("&Selection")), ("lessons", self.tr("&Lessons")),
                           ("help", self.tr("&Help"))):
            self.menus[key].setTitle(title)
        for feature in self.features.values():
            feature.retranslate_ui()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    # ---- the contract ---------------------------------------------------------------
    @property
    def config(self) -> AttentionConfig:
        """The current (most recently requested) configuration: the state's."""
        return self.state.config

    @property
    def frame(self) -> Frame | None:
        """The frame the panels show: the state's."""
        return self.state.frame

    def panel(self, name: str) -> QWidget:
        """The panel widget `name` (qkv, scores, softmax_grad, heads, diagnostics, ...)."""
        panel = self._panels.get(name)
        if panel is None:
            if name not in self._docks:
                raise KeyError(f"no panel {name!r}; panels: {', '.join(self._docks)}")
            panel = self._make_panel(name)  # a panel closed since the window opened: made now
        return panel

    def panel_names(self, *, made: bool = False) -> list[str]:
        """The window's panels in the order their docks were made; `made`: only those made so
        far (a panel closed at start is made when first shown or asked for)."""
        return list(self._panels if made else self._docks)

    def dock(self, name: str) -> QDockWidget:
        return self._docks[name]

    def docks(self) -> list[QDockWidget]:
        """Every dock: the configuration's first, then each panel's in the order made."""
        return [self.controls_dock, *self._docks.values()]

    def set_config(self, config: AttentionConfig) -> None:
        """Show `config`: the same as `state.set_config(config)` (the window follows the
        state: the frame is computed off the UI thread, the controls and the undo history
        follow). `frame_rendered(config)` follows once the visible panels are repainted (or
        `compute_failed(config, message)` if the engine refuses it). The state's config again
        while the panels show another frame (a refused or cancelled one): computed again."""
        frame = self.state.frame
        if config == self.state.config and (frame is None or frame.config != config):
            self._request(config)  # (no change for the state: nothing else follows)
        self.state.set_config(config)

    def _on_config_changed(self, config: AttentionConfig) -> None:
        """The state has a new config: ask the worker for its frame (first: the worker computes
        it while this thread's other listeners follow; its outcome is queued to this thread)."""
        if not self._rendering_sync:
            self._request(config)
        self._show_formula(config, self.selection.head)
        self.config_changed.emit(config)

    def _request(self, config: AttentionConfig) -> None:
        rid = self.worker.request(config)
        self._requested_at = {rid: time.perf_counter()}
        self.frame_requested.emit(config)

    # ---- synchronous path (selftest, export, scripts) -------------------------------
    def render_sync(self, config: AttentionConfig | None = None, *, all_panels: bool = True) -> Frame:
        """Compute `config` (default: the current one) in this thread and draw it now.

        Draws every panel (visible or not) when all_panels is set: what exports need.
        Raises the engine's ConfigError / BackendUnavailable.
        """
        config = self.state.config if config is None else config
        self._rendering_sync = True
        try:
            self.state.set_config(config)
        finally:
            self._rendering_sync = False
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
        frame = self.state.frame
        if frame is None:
            raise RuntimeError("no frame shown yet")
        result = measure_backends(frame.config)
        frame.backends = result
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
        cfg = frame.config
        # the selection clamped to the frame's shape (and a lesson's or session's pending
        # selection applied) before any panel draws it; panels still holding an older frame
        # draw the new selection with the new frame
        self.state.set_frame(frame)
        self._show_formula(cfg, self.selection.head)
        if self.banner.cause == "frame":  # its cause is gone; "Could not open X" stays
            self.banner.hide_message()
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
        self.frame_shown.emit(frame)  # (the status bar follows it)
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
        shown = self.state.frame.config.summary() if self.state.frame is not None else ""
        self.banner.show_message(lambda: self.tr(
            "Cancelled: the panels still show the last complete configuration ({shown}), not the "
            "controls' values").format(shown=shown), kind="cancelled", cause="frame")
        self.frame_cancelled.emit(config)

    def _on_failed(self, rid: int, config: AttentionConfig, message: str) -> None:
        if rid != self.worker.latest_id:
            return
        self.banner.show_message(
            lambda: self.tr("The engine refused this configuration: {message}").format(message=i18n.engine_text(message)),
            cause="frame")
        self.compute_failed.emit(config, message)

    def _on_backends(self, rid: int, result: dict) -> None:
        frame = self.state.frame
        if frame is None or frame.request_id != rid:
            return
        frame.backends = result
        self._panels["diagnostics"].set_backends(result)
        self.backends_measured.emit(result)

    def _on_dock_visible(self, name: str, visible: bool) -> None:
        if name == "diagnostics":  # the backend comparison is for its card only: not while hidden
            self.worker.set_extras_wanted(visible)
        if not visible:
            return
        if name not in self._panels:  # shown for the first time: made now, with the frame
            panel = self._make_panel(name)
            panel.show()  # (a widget put into a shown dock is shown at the next event loop)
            link_views([hm for p in self._panels.values() for hm in p.heatmaps()])
            return
        if self.state.frame is None:
            return
        panel = self._panels[name]
        if name in self._dirty:
            self._dirty.discard(name)
            panel.show_frame(self.state.frame)
            link_views([hm for p in self._panels.values() for hm in p.heatmaps()])
        else:
            panel.refresh()

    # ---- selection, reference, theme -------------------------------------------------------
    def _on_reference_changed(self, frame: Frame | None) -> None:
        self.reference_changed.emit(frame)

    def _on_selection_changed(self) -> None:
        self._show_formula(self.state.config, self.selection.head)

    def apply_theme(self, theme: Theme) -> None:
        """The window in `theme` (the same as `state.set_theme(theme)`, whose event the panels
        follow); applied again when it is the theme already (after a language switch: its
        fonts measure the style sheets and the plots' texts afresh), with no event."""
        if theme == self.state.theme:
            self._on_theme_changed(theme, repolish=True)
            for panel in self._panels.values():
                panel.restyle(theme)
        else:
            self.state.set_theme(theme)

    def _on_theme_changed(self, theme: Theme, *, repolish: bool = False) -> None:
        self.theme = theme
        app = QApplication.instance()
        if app is not None:
            # the panels follow state.theme_changed (panels/base.py)
            apply_app_theme(app, theme, repolish=repolish)
        if self.state.marked_panels:
            self._on_marked_panels(self.state.marked_panels)  # the accent of the new theme

    # ---- the docks' titles and marks (a lesson's panels) ---------------------------------
    def _dock_title(self, name: str) -> str:
        cls = PANELS[name]
        title = cls.display_title()
        ctl = self.state.models
        if ctl is not None and ctl.loaded is not None and cls.draws_the_sliders and not cls.requires_model and cls.exportable:
            # beside a real model's panels: say these show the sliders' layer, not the model
            title += self.tr(" · the sliders' layer, not the model")
        return f"★ {title}" if name in self.state.marked_panels else title

    def _retitle_docks(self, *_args) -> None:
        for name, dock in self._docks.items():
            dock.setWindowTitle(self._dock_title(name))

    def highlight_panels(self, names: Iterable[str]) -> None:
        """Mark the docks of `names` (accent title bar, ★) and bring them to the front;
        an empty list clears the marks (`state.marked_panels`)."""
        names = tuple(n for n in names if n in self._docks and n != "lesson")
        if names == self.state.marked_panels:
            self._on_marked_panels(names)  # marked already: brought to the front again
        else:
            self.state.set_marked_panels(names)

    def _on_marked_panels(self, names: tuple[str, ...]) -> None:
        names = tuple(n for n in names if n in self._docks and n != "lesson")
        th = self.theme
        css = f"QDockWidget::title {{ background: {th.accent2}; padding: 4px 6px; }}"
        for n, dock in self._docks.items():
            dock.setStyleSheet(css if n in names else "")
            dock.setWindowTitle(self._dock_title(n))
        # the lesson's perspective: each panel in front at no less than its readable size
        self.dock_layout.apply(Perspective("lesson", names))
        # a panel whose readouts are longer in a lesson asks for its lesson height: taken from
        # the docks beside it down to their readable sizes, never by growing the window
        tall = [(self._docks[n], size) for n in names if n in self._panels
                for size in [PANELS[n].lesson_size] if size is not None]
        if tall:
            self.resizeDocks([dock for dock, _ in tall],
                             [self._scaled(*size).height() + max(0, dock.height() - dock.widget().height())
                              for dock, size in tall], Qt.Orientation.Vertical)

    def highlighted_panels(self) -> tuple[str, ...]:
        return self.state.marked_panels

    # ---- placing a feature's dock -----------------------------------------------------------
    def place_beside_controls(self, name: str) -> None:
        """Panel `name`'s dock where it was last (a remembered layout), else under the
        configuration (beside it, the panels were squeezed unreadable)."""
        dock = self._docks[name]
        if self.restoreDockWidget(dock):
            return
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        if not self.controls_dock.isFloating() and self.controls_dock.isVisible():
            self.splitDockWidget(self.controls_dock, dock, Qt.Orientation.Vertical)
            self.resizeDocks([self.controls_dock, dock], [4, 6], Qt.Orientation.Vertical)
        self.resizeDocks([dock], [380], Qt.Orientation.Horizontal)

    def float_panel(self, name: str) -> None:
        """Panel `name`'s dock floats over the window's panels, beside the lesson and the
        configuration (never over them: lessons 12–14 are read while the lab trains); with no
        room beside them (a narrow window) centred at 85 % of the window. A double click on
        its title docks it."""
        dock = self._docks[name]
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        dock.setFloating(True)
        geo = self.geometry()
        left = geo.x()
        for side in (self.controls_dock, self._docks.get("lesson")):
            if side is not None and side.isVisible() and not side.isFloating():
                left = max(left, side.mapToGlobal(side.rect().topRight()).x() + 6)
        top = self.mapToGlobal(self.menuBar().geometry().bottomLeft()).y() + 2
        if geo.right() - left >= 900:
            dock.resize(geo.right() - left, max(geo.bottom() - top, 640))
            dock.move(left, top)
            return
        w, h = int(geo.width() * 0.85), int(geo.height() * 0.85)
        dock.resize(max(w, 900), max(h, 640))
        dock.move(geo.x() + (geo.width() - dock.width()) // 2, geo.y() + (geo.height() - dock.height()) // 2)

    def restore_layout(self, saved: QByteArray) -> None:
        """A dock layout saved before (`saveState`); the banner shows what it says now."""
        self.restoreState(saved)
        if self.banner.bar is not None:
            self.banner.bar.setVisible(self.banner.kind is not None)

    # ---- readable sizes -------------------------------------------------------------------------
    # Panel.readable_size (w, h) px: below it a panel's charts have no height or its texts are
    # cut. A dock in front (shown, not behind a tab) has its panel's minimum size set to it, so
    # Qt's dock layout gives it that room (taking it from the other docks, down to their own
    # minimums) and a splitter cannot squash it; a dock behind a tab or closed asks nothing,
    # not even its layout's size hint (it would hold its tab group open). On a screen lower
    # than the default window, every minimum shrinks in proportion so the window still fits.
    def readable_size(self, name: str) -> QSize:
        """Panel `name`'s minimum readable size here (scaled down on a low screen)."""
        return self.dock_layout.readable(name)

    def _scaled(self, w: int, h: int) -> QSize:
        k = self.dock_layout.scale()
        return QSize(int(w * k), int(h * k))

    # ---- geometry and layout remembered --------------------------------------------------------
    @staticmethod
    def opening_size(available=None) -> tuple[int, int]:
        """1600×1000, or less so the window fits `available` (the screen's free area, a QRect;
        default the primary screen's): a 1366×768 classroom laptop opened it larger than its
        screen. Offscreen (tests, exports) it is 1600×1000: that "screen" is a fixed 800×600."""
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
            # another version's layout (other panels, other sizes) is dropped, not forced
            self._restored_state = self.dock_layout.restore(QByteArray(state))
            if not self._restored_state:
                self.settings.remove("window_state")

    def _save_settings(self) -> None:
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window_state", self.dock_layout.save())
        self.settings.sync()

    # ---- shutdown ------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop the compute thread (idempotent)."""
        if self.worker.isRunning():
            self.worker.stop()
        self.model_controller.shutdown()
        for feature in self.features.values():
            feature.shutdown()

    def closeEvent(self, event) -> None:
        if not all(feature.may_close() for feature in self.features.values()):
            event.ignore()  # a feature's question was answered Cancel (or it closes the window later)
            return
        for feature in self.features.values():
            feature.closing()
        self._save_settings()
        self.shutdown()
        super().closeEvent(event)

    # ---- entry points of the features (scripts, tests, the CLI) ----------------------------
    @property
    def sessions(self) -> SessionsFeature:
        return self.features["sessions"]

    @property
    def menus_feature(self) -> MenusFeature:
        return self.features["menus"]

    @property
    def status(self) -> StatusFeature:
        return self.features["status"]

    def open_session(self, path: str | os.PathLike | None = None) -> bool:
        return self.sessions.open_session(path)

    def save_session(self, path: str | os.PathLike | None = None) -> bool:
        return self.sessions.save_session(path)

    def set_session_path(self, path: str | os.PathLike | None) -> None:
        self.sessions.set_session_path(path)

    def recent_files(self) -> list[str]:
        return self.sessions.recent_files()

    def undo(self) -> None:
        self.menus_feature.undo()

    def redo(self) -> None:
        self.menus_feature.redo()

    def reset(self) -> None:
        self.menus_feature.reset()

    @property
    def reference(self) -> Frame | None:
        """The pinned frame A the panels compare the current one (B) with, or None."""
        return self.state.reference

    def pin_reference(self, frame: Frame | None = None) -> Frame | None:
        return self.menus_feature.pin_reference(frame)

    def clear_reference(self) -> None:
        self.state.set_reference(None)

    def show_lessons(self, chapter: int | None = None) -> QWidget:
        return self.features["lessons"].show_lessons(chapter)

    def set_state(self, config: AttentionConfig, selection: Mapping[str, int] | None = None) -> None:
        """set_config, then select (head, query, key) once the new shape is shown (lesson presets)."""
        self.features["lessons"].set_state(config, selection)

    def language(self) -> str:
        """The interface language now shown: "en" or "zh_CN"."""
        return i18n.current_language()

    def set_language(self, lang: str) -> bool:
        return self.features["help"].set_language(lang)

    def show_help(self, name: str = "overview"):
        return self.features["help"].show_help(name)

    def focus_panel(self, name: str | None = None) -> bool:
        return self.features["focus"].focus_panel(name)

    def unfocus_panel(self) -> None:
        self.features["focus"].unfocus_panel()

    def focused_panel(self) -> str | None:
        return self.features["focus"].focused_panel()


__all__ = ["MainWindow", "WindowHost", "make_settings"]
