"""The main window: controls dock, panel docks, one selection, one compute thread.

Data flow (one way; the state, explorer.state.AppState, owns the config):

    control / lesson / undo / session / script ─→ state.set_config
        ─config_changed→ MainWindow._on_config_changed ─request→ ComputeWorker
                       → UndoHistory (a step), ConfigControls (mirror), the formula strip
        ─frame_ready→ MainWindow._on_frame_ready (drop if stale) → state.set_frame (the
        selection clamped to its shape) → panels.show_frame → synchronous repaint
        → frame_rendered(config)

Clicks on any panel set the Selection; every panel redraws from it. Panels and features are
built from `self.state` (explorer.state.AppState); the features are made in `_create_features`.
The class is split by job into mixins: window_menus (actions, menus, undo, the reference A),
window_status (status bar, title), window_sessions (sessions, recent files, geometry),
window_lessons (the lesson dock, marked panels), window_help (language, help); this file keeps
the docks, the panels and the render loop.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFrame,
    QMainWindow,
    QScrollArea,
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
from .formula import FormulaStrip
from .frame import Frame, build_frame, measure_backends
from .history import UndoHistory
from .models.controller import ModelController, install_model_support
from .panels import CORE_PANELS, PANELS, TABBED_PANELS, Panel
from .profile.feature import ProfileActions
from .selection import HoverLink, ModelSelection, Selection
from .session import Session, load_session
from .snapshots import SnapshotList, SnapshotsFeature
from .state import AppState
from .subscribe import follow
from .training.feature import TrainingActions
from .window_focus import FocusMixin
from .window_help import HelpMixin
from .window_lessons import LessonsMixin
from .window_menus import MenusMixin
from .window_sessions import SessionsMixin, make_settings
from .window_status import StatusMixin, set_status_text
from .work.compute import ComputeWorker


class MainWindow(MenusMixin, StatusMixin, SessionsMixin, LessonsMixin, HelpMixin, FocusMixin, QMainWindow):
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
        self._session_path: Path | None = None
        self.model_info: dict[str, Any] | None = None
        self._dirty: set[str] = set()
        self._requested_at: dict[int, float] = {}
        self.render_ms = 0.0
        self.latency_ms = 0.0
        self.stale_dropped = 0
        self.theme = theme
        #: what every panel and feature draws from, the one owner of the config (explorer.state)
        self.state = AppState(theme=theme)
        #: the features, made from the window and its state (`_create_features`), by name
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
        self.destroyed.connect(self.worker.stop)
        self.worker.frame_ready.connect(self._on_frame_ready)
        self.worker.failed.connect(self._on_failed)
        self.worker.backends_ready.connect(self._on_backends)
        self.worker.cancelled.connect(self._on_cancelled)

        self._panels: dict[str, Panel] = {}
        self._docks: dict[str, QDockWidget] = {}
        self._dock_in_front: dict[QDockWidget, bool] = {}  # window_menus._follow_dock_tab
        # every config change is a step to undo; clean = as saved (the title's "*" otherwise)
        self.history = UndoHistory(self.state, self)
        self.undo_stack = self.history.stack
        follow(self.state.reference_changed, self._on_reference_changed)
        follow(self.state.theme_changed, self._on_theme_changed)
        follow(self.state.marked_panels_changed, self._on_marked_panels)
        self.banner = add_banner(self)  # the messages' bar under the menu bar
        self.banner_bar = self.banner.bar
        self._create_formula()
        self._create_controls()
        self._create_panels()
        self._create_actions()
        self._create_menus()
        self._create_status_bar()
        self._create_features()
        self.retranslate_ui()
        follow(self.selection.changed, self._on_selection_changed)
        follow(self.hover.described, self._on_hover_text)
        self.resize(*self.opening_size())
        self._restore_settings()
        self.apply_theme(theme)

        self.worker.start()
        if session is not None:
            # SessionError propagates: create_window refuses a malformed session
            s = session if isinstance(session, Session) else load_session(session)
            self._session_path = Path(session) if isinstance(session, str | os.PathLike) else None
            self._apply_session(s)
        if not self._requested_at:  # (a session of the default config changed nothing)
            self._request(self.state.config)
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
        self.model_controller.session_model_failed.connect(self._on_session_model_failed)

    @property
    def model_controller(self) -> ModelController:
        """The loaded model, its trace and selection (explorer.models.controller)."""
        return self.state.models

    @property
    def model_selection(self) -> ModelSelection:
        """The model panels' selection: layer, head, query, key."""
        return self.state.model_selection

    @property
    def snapshots(self) -> SnapshotList:
        """The pinned states (explorer.snapshots; Edit ▸ Snapshots…)."""
        return self.state.snapshots

    @property
    def compare_status(self) -> CompareStatus:
        """The status bar's line saying which comparison with A the panels show."""
        return self.features["compare"]

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
        """Bring panel `name`'s dock to the front (reopened if closed) and give it the focus."""
        dock = self._docks.get(name)
        if dock is None:
            return
        dock.show()
        dock.raise_()
        self._panels[name].setFocus()

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
        self._watch_title_clicks(dock)
        self._keep_readable(name, False, panel)  # its minimum once shown in front
        if dock_area:
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self._panels[name] = panel
        self._docks[name] = dock
        panel.help_requested.connect(self.show_help)
        if self.state.reference is not None:
            panel.reference = self.state.reference
        if self.state.frame is not None:
            panel.show_frame(self.state.frame)
        return panel

    # ---- language -------------------------------------------------------------------
    def retranslate_ui(self) -> None:
        """Every text the window itself owns, in the current language (children do their own)."""
        self.banner_bar.setWindowTitle(self.tr("Messages"))
        self.formula_bar.setWindowTitle(self.tr("Formula"))
        self.formula.retranslate(self.state.config, self.selection.head)
        self._formula_shown = (self.state.config, self.selection.head)
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
        try:
            return self._panels[name]
        except KeyError:
            raise KeyError(f"no panel {name!r}; panels: {', '.join(self._panels)}") from None

    def panel_names(self) -> list[str]:
        return list(self._panels)

    def dock(self, name: str) -> QDockWidget:
        return self._docks[name]

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
        self._busy.start()

    @property
    def training_lab(self):
        """The window's training lab (explorer.training.lab.TrainingLab; None until made)."""
        return self.state.training_lab

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
        self._busy.stop()
        self.frame_progress.finish()
        cfg = frame.config
        # the selection clamped to the frame's shape (and a lesson's or session's pending
        # selection applied) before any panel draws it; panels still holding an older frame
        # draw the new selection with the new frame
        self.state.set_frame(frame)
        self._show_formula(cfg, self.selection.head)
        if self.banner.kind in ("error", "cancelled"):
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
        self._update_status(frame)
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
        shown = self.state.frame.config.summary() if self.state.frame is not None else ""
        self.banner.show_message(lambda: self.tr(
            "Cancelled: the panels still show the last complete configuration ({shown}), not the "
            "controls' values").format(shown=shown), kind="cancelled")
        set_status_text(self.status_config, self.tr("cancelled"))

    def _on_failed(self, rid: int, config: AttentionConfig, message: str) -> None:
        if rid != self.worker.latest_id:
            return
        self.frame_progress.finish()
        self.banner.show_message(
            lambda: self.tr("The engine refused this configuration: {message}").format(message=message))
        self._busy.stop()
        set_status_text(self.status_config, self.tr("error"))
        self.compute_failed.emit(config, message)

    def _on_backends(self, rid: int, result: dict) -> None:
        frame = self.state.frame
        if frame is None or frame.request_id != rid:
            return
        frame.backends = result
        self._panels["diagnostics"].set_backends(result)
        self.backends_measured.emit(result)

    def _on_dock_visible(self, name: str, visible: bool) -> None:
        self._keep_readable(name, visible)
        if name == "diagnostics":  # the backend comparison is for its card only: not while hidden
            self.worker.set_extras_wanted(visible)
        if not visible or self.state.frame is None:
            return
        panel = self._panels[name]
        if name in self._dirty:
            self._dirty.discard(name)
            panel.show_frame(self.state.frame)
            link_views([hm for p in self._panels.values() for hm in p.heatmaps()])
        else:
            panel.refresh()

    # ---- selection, status --------------------------------------------------------------
    def _on_selection_changed(self) -> None:
        s = self.selection
        self._show_formula(self.state.config, s.head)
        f = self.state.frame
        if f is None:
            return
        q = f.query_labels[s.query] if s.query < len(f.query_labels) else ""
        k = f.key_labels[s.key] if s.key < len(f.key_labels) else ""
        self.statusBar().showMessage(
            self.tr("selected: head {head} · query {query} ‘{q}’ · key {key} ‘{k}’").format(
                head=s.head, query=s.query, q=q, key=s.key, k=k), 4000)

    # ---- theme, help ---------------------------------------------------------------------
    def apply_theme(self, theme: Theme) -> None:
        """The window in `theme` (the same as `state.set_theme(theme)`); applied again when
        it is the theme already (a new language's fonts measure the style sheets afresh)."""
        if theme == self.state.theme:
            self._on_theme_changed(theme)
        else:
            self.state.set_theme(theme)

    def _on_theme_changed(self, theme: Theme) -> None:
        self.theme = theme
        app = QApplication.instance()
        if app is not None:
            apply_app_theme(app, theme)
        for panel in self._panels.values():
            panel.apply_theme(theme)
        if self.state.marked_panels:
            self._on_marked_panels(self.state.marked_panels)  # the accent of the new theme
        self.act_dark.blockSignals(True)
        self.act_dark.setChecked(theme.dark)
        self.act_dark.blockSignals(False)

    # ---- shutdown ------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop the compute thread (idempotent)."""
        if self.worker.isRunning():
            self.worker.stop()
        self.model_controller.shutdown()
        for feature in self.features.values():
            feature.shutdown()

    def eventFilter(self, obj, event) -> bool:
        return self._title_double_clicked(obj, event) or super().eventFilter(obj, event)

    def closeEvent(self, event) -> None:
        if not all(feature.may_close() for feature in self.features.values()):
            event.ignore()  # a feature's question was answered Cancel (or it closes the window later)
            return
        self.unfocus_panel()  # the layout saved is never the focused one
        self._save_settings()
        self.shutdown()
        super().closeEvent(event)


__all__ = ["MainWindow", "make_settings"]
