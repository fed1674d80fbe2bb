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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QCoreApplication, QEvent, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
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

from engine import AttentionConfig

from .controls import ConfigControls
from .frame import Frame, build_frame, measure_backends
from .panels import CORE_PANELS, PANELS, Panel
from .panels.heatmap import link_views
from .selection import HoverLink, Selection
from .session import Session, SessionError, load_session, save_session
from .themes import DARK, LIGHT, Theme, apply_app_theme
from .worker import ComputeWorker

MAX_RECENT = 8
#: Environment variable naming an INI file to use instead of the platform settings (tests).
SETTINGS_ENV = "ATTN_EXPLORER_SETTINGS"


def make_settings() -> QSettings:
    """QSettings for geometry and recent files only."""
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
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide_message)
        lay.addWidget(self.icon)
        lay.addWidget(self.text, 1)
        lay.addWidget(close)
        self.kind: str | None = None
        self.bar: QToolBar | None = None

    def show_message(self, text: str, kind: str = "error") -> None:
        self.kind = kind
        self.icon.setText("⚠" if kind == "error" else "ℹ")
        self.text.setText(text)
        if self.bar is not None:
            self.bar.show()

    def hide_message(self) -> None:
        self.kind = None
        self.text.setText("")
        if self.bar is not None:
            self.bar.hide()

    def message(self) -> str:
        return self.text.text() if self.kind else ""


class MainWindow(QMainWindow):
    """The explorer window (see DESIGN.md, "explorer")."""

    frame_rendered = Signal(object)  # AttentionConfig now shown by every visible panel
    compute_failed = Signal(object, str)  # config, message (shown in the banner)
    backends_measured = Signal(object)  # {backend: {...}} for the shown frame
    config_changed = Signal(object)  # the requested config changed

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
        self.selection = Selection(self)
        self.hover = HoverLink(self)
        self.settings = settings if settings is not None else make_settings()

        # not a Qt child of the window: deleting the window must not delete a running
        # thread (Qt aborts on that); the thread is stopped on close, on destruction
        # of the window, and at interpreter exit
        self.worker = ComputeWorker()
        self.destroyed.connect(self.worker.stop)
        self.worker.frame_ready.connect(self._on_frame_ready)
        self.worker.failed.connect(self._on_failed)
        self.worker.backends_ready.connect(self._on_backends)

        self._panels: dict[str, Panel] = {}
        self._docks: dict[str, QDockWidget] = {}
        self._create_banner()
        self._create_controls()
        self._create_panels()
        self._create_actions()
        self._create_menus()
        from .export_dialog import install_export_actions

        install_export_actions(self)
        self._create_status_bar()
        self.selection.changed.connect(self._on_selection_changed)
        self.hover.described.connect(self._on_hover_text)
        self.resize(1600, 1000)
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
    def _create_banner(self) -> None:
        self.banner = Banner()
        bar = QToolBar("Messages")
        bar.setObjectName("banner_bar")
        bar.setMovable(False)
        bar.setFloatable(False)
        bar.addWidget(self.banner)
        bar.toggleViewAction().setVisible(False)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self.banner.bar = bar
        bar.hide()
        central = QWidget()
        central.setMaximumSize(0, 0)
        self.setCentralWidget(central)
        central.hide()

    def _create_controls(self) -> None:
        self.controls = ConfigControls()
        self.controls.config_requested.connect(self.set_config)
        self.controls.reset_requested.connect(self.reset)
        scroll = QScrollArea()
        scroll.setWidget(self.controls)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setMinimumWidth(330)
        dock = QDockWidget("Configuration", self)
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
        panel = cls(self.selection, self.hover)
        panel.apply_theme(self.theme)
        dock = QDockWidget(cls.title, self)
        dock.setObjectName(f"dock_{name}")
        dock.setWidget(panel)
        dock.visibilityChanged.connect(lambda visible, n=name: self._on_dock_visible(n, visible))
        if dock_area:
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self._panels[name] = panel
        self._docks[name] = dock
        if self._frame is not None:
            panel.show_frame(self._frame)
        return panel

    def _create_actions(self) -> None:
        def act(text: str, slot, shortcut=None, tip: str = "") -> QAction:
            a = QAction(text, self)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            if tip:
                a.setStatusTip(tip)
            a.triggered.connect(slot)
            self.addAction(a)
            return a

        self.act_open = act("&Open session…", lambda: self.open_session(), QKeySequence.StandardKey.Open,
                            "Open a session file (.json)")
        self.act_save = act("&Save session", lambda: self.save_session(self._session_path),
                            QKeySequence.StandardKey.Save, "Save the configuration and selection")
        self.act_save_as = act("Save session &as…", lambda: self.save_session(None), "Ctrl+Shift+S")
        self.act_reset = act("&Reset to defaults", self.reset, "Ctrl+R", "Back to the default configuration")
        self.act_quit = act("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.act_dark = act("&Dark theme", lambda checked=False: self.apply_theme(DARK if checked else LIGHT),
                            "Ctrl+T", "Switch between the dark and the light theme")
        self.act_dark.setCheckable(True)
        self.act_next_head = act("Next head", lambda: self.selection.step(head=1), "]")
        self.act_prev_head = act("Previous head", lambda: self.selection.step(head=-1), "[")
        self.act_query_down = act("Next query", lambda: self.selection.step(query=1), "Alt+Down")
        self.act_query_up = act("Previous query", lambda: self.selection.step(query=-1), "Alt+Up")
        self.act_key_right = act("Next key", lambda: self.selection.step(key=1), "Alt+Right")
        self.act_key_left = act("Previous key", lambda: self.selection.step(key=-1), "Alt+Left")
        self.act_shortcuts = act("&Keyboard shortcuts", self._show_shortcuts, "F1")
        self.act_about = act("&About", self._show_about)

    def _create_menus(self) -> None:
        mb = self.menuBar()
        m = mb.addMenu("&File")
        m.addAction(self.act_open)
        self.recent_menu = m.addMenu("Open &recent")
        m.addSeparator()
        m.addAction(self.act_save)
        m.addAction(self.act_save_as)
        m.addSeparator()
        m.addAction(self.act_reset)
        m.addSeparator()
        m.addAction(self.act_quit)
        v = mb.addMenu("&View")
        v.addAction(self.act_dark)
        v.addSeparator()
        for i, dock in enumerate([self.controls_dock, *self._docks.values()]):
            a = dock.toggleViewAction()
            a.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
            v.addAction(a)
        s = mb.addMenu("&Selection")
        for a in (self.act_next_head, self.act_prev_head, self.act_query_down, self.act_query_up,
                  self.act_key_right, self.act_key_left):
            s.addAction(a)
        h = mb.addMenu("&Help")
        h.addAction(self.act_shortcuts)
        h.addAction(self.act_about)
        self._update_recent_menu()

    def _create_status_bar(self) -> None:
        sb = self.statusBar()
        self.status_config = QLabel()
        self.status_compute = QLabel("compute –")
        self.status_render = QLabel("render –")
        self.status_backend = QLabel("backend –")
        self.status_compute.setToolTip("Engine time in the worker thread (run + derived panel data)")
        self.status_render.setToolTip("UI-thread time to update and repaint the visible panels; "
                                      "latency = set_config → repainted")
        self.status_backend.setToolTip("The implementation that actually produced the output")
        for w in (self.status_config, self.status_compute, self.status_render, self.status_backend):
            sb.addPermanentWidget(w)

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
        self._config = config
        self.controls.set_config(config)
        rid = self.worker.request(config)
        self._requested_at = {rid: time.perf_counter()}
        self.status_config.setText("computing…")
        if changed:
            self.config_changed.emit(config)

    def reset(self) -> None:
        """Back to the default configuration (selection to 0, 0, 0)."""
        self._pending_selection = (0, 0, 0)
        self.set_config(AttentionConfig())

    # ---- synchronous path (selftest, export, scripts) -------------------------------
    def render_sync(self, config: AttentionConfig | None = None, *, all_panels: bool = True) -> Frame:
        """Compute `config` (default: the current one) in this thread and draw it now.

        Draws every panel (visible or not) when all_panels is set: what exports need.
        Raises the engine's ConfigError / BackendUnavailable.
        """
        config = self._config if config is None else config
        self._config = config
        self.controls.set_config(config)
        rid = self.worker.request(config)  # supersede anything in flight
        frame = build_frame(config, rid)
        self._render(frame, force_all=all_panels)
        return frame

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
        self._frame = frame
        cfg = frame.config
        if self.banner.kind == "error":
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

    def _on_failed(self, rid: int, config: AttentionConfig, message: str) -> None:
        if rid != self.worker.latest_id:
            return
        self.banner.show_message(f"The engine refused this configuration: {message}")
        self.status_config.setText("error")
        self.compute_failed.emit(config, message)

    def _on_backends(self, rid: int, result: dict) -> None:
        if self._frame is None or self._frame.request_id != rid:
            return
        self._frame.backends = result
        self._panels["diagnostics"].set_backends(result)
        self.backends_measured.emit(result)

    def _on_dock_visible(self, name: str, visible: bool) -> None:
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
        f = self._frame
        if f is None:
            return
        q = f.query_labels[s.query] if s.query < len(f.query_labels) else ""
        k = f.key_labels[s.key] if s.key < len(f.key_labels) else ""
        self.statusBar().showMessage(f"selected: head {s.head} · query {s.query} ‘{q}’ · key {s.key} ‘{k}’", 4000)

    def _on_hover_text(self, text: str) -> None:
        if text:
            self.statusBar().showMessage(text)
        else:
            self.statusBar().clearMessage()

    def _update_status(self, frame: Frame) -> None:
        self.status_config.setText(frame.config.summary().replace("  ", " · "))
        self.status_compute.setText(f"compute {frame.compute_ms:.1f} ms")
        latency = "" if math.isnan(self.latency_ms) else f" · latency {self.latency_ms:.1f} ms"
        self.status_render.setText(f"render {self.render_ms:.1f} ms{latency}")
        diff = frame.trace.backend_max_abs_diff
        extra = "" if diff is None else f" (max |Δ| vs eager {diff:.1e})"
        self.status_backend.setText(f"backend {frame.backend_impl}{extra}")

    def _update_title(self) -> None:
        name = self._session_path.name if self._session_path else "untitled"
        self.setWindowTitle(f"Attention Explorer — {name}")

    # ---- sessions ---------------------------------------------------------------------------
    def _apply_session(self, s) -> None:
        self.model_info = s.model
        self._pending_selection = (s.head, s.query, s.key)
        self.set_config(s.config)
        if s.model is not None:
            src = s.model.get("source", "a model")
            self.banner.show_message(
                f"This session refers to {src}; the model panels are not part of this build yet, "
                "so only the configuration was restored.", kind="info")

    def set_session_path(self, path: str | os.PathLike | None) -> None:
        """The file that Save writes to (and the window title shows)."""
        self._session_path = None if path is None else Path(path)
        self._update_title()

    def open_session(self, path: str | os.PathLike | None = None) -> bool:
        """Open a session file (a dialog when path is None); a refused file shows in the banner."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open session", self._dialog_dir(),
                                                  "Sessions (*.json);;All files (*)")
            if not path:
                return False
        try:
            s = load_session(path)
        except SessionError as exc:
            self.banner.show_message(f"Could not open {Path(path).name}: {exc}")
            return False
        self._session_path = Path(path)
        self._apply_session(s)
        self._add_recent(path)
        self._update_title()
        return True

    def save_session(self, path: str | os.PathLike | None = None) -> bool:
        """Save config + selection (a dialog when path is None); errors show in the banner."""
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Save session", self._dialog_dir("session.json"),
                                                  "Sessions (*.json)")
            if not path:
                return False
            if not path.endswith(".json"):
                path += ".json"
        cfg = self._config
        sel = self.selection
        selection = {"head": min(sel.head, cfg.n_heads - 1), "query": min(sel.query, cfg.seq_len - 1),
                     "key": min(sel.key, cfg.key_len - 1)}
        try:
            save_session(path, cfg, selection, self.model_info)
        except (OSError, SessionError) as exc:
            self.banner.show_message(f"Could not save {Path(path).name}: {exc}")
            return False
        self._session_path = Path(path)
        self._add_recent(path)
        self._update_title()
        self.statusBar().showMessage(f"saved {path}", 4000)
        return True

    def _dialog_dir(self, name: str = "") -> str:
        recent = self.recent_files()
        base = Path(recent[0]).parent if recent else Path.home()
        return str(base / name) if name else str(base)

    # ---- settings: geometry and recent files only ------------------------------------------
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
            a = self.recent_menu.addAction("(none)")
            a.setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list", self._clear_recent)

    def _clear_recent(self) -> None:
        self.settings.setValue("recent_files", [])
        self._update_recent_menu()

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
        app = QApplication.instance()
        if app is not None:
            apply_app_theme(app, theme)
        for panel in self._panels.values():
            panel.apply_theme(theme)
        self.act_dark.blockSignals(True)
        self.act_dark.setChecked(theme.dark)
        self.act_dark.blockSignals(False)

    def _show_shortcuts(self) -> None:
        rows = [(a.text().replace("&", ""), a.shortcut().toString(QKeySequence.SequenceFormat.NativeText))
                for a in self.actions() if not a.shortcut().isEmpty()]
        rows += [(d.windowTitle(), d.toggleViewAction().shortcut().toString())
                 for d in [self.controls_dock, *self._docks.values()]]
        text = "".join(f"<tr><td>{t}</td><td><b>{k}</b></td></tr>" for t, k in rows)
        QMessageBox.information(self, "Keyboard shortcuts", f"<table cellpadding='3'>{text}</table>")

    def _show_about(self) -> None:
        QMessageBox.about(self, "Attention Explorer",
                          "Change the architecture of an attention layer and watch it recompute.<br>"
                          "Click any cell to select a head, query and key in every panel.")

    # ---- shutdown ------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop the compute thread (idempotent)."""
        if self.worker.isRunning():
            self.worker.stop()

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
