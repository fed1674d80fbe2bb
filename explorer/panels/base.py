"""The panel base class and the registry of panels by name.

A panel is built from the window's `AppState` (explorer.state; an export's
figure gets a copy) and mirrors two things: the latest Frame (what the engine
computed) and the state's Selection (head, query, key). `show_frame` is called by the window when a
new frame arrives while the panel is visible; the panel follows the selection's and the
reference's events itself (`explorer.subscribe.follow`). A selection change is drawn only on
a frame of its shape: a panel still holding an older frame (hidden, or not yet given the
new one) draws it when that frame arrives. Panels never talk to each other.

Later panels (e.g. `model_grid`, `model_head`) register the same way with
`@register_panel` and `requires_model = True`; the window adds their docks
when a model is loaded.
"""

from __future__ import annotations

from typing import ClassVar

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, Signal
from PySide6.QtWidgets import QGraphicsScene, QHBoxLayout, QToolButton, QVBoxLayout, QWidget

from ..figures.context_menu import FigureMenu
from ..figures.heatmap import Heatmap
from ..figures.plots import cache_static_items
from ..figures.themes import DARK, Theme
from ..frame import Frame
from ..guard import contained
from ..selection import HoverLink, Selection
from ..state import AppState
from ..subscribe import follow

#: name → Panel subclass, in registration order (the default dock order).
PANELS: dict[str, type[Panel]] = {}


def register_panel(cls: type[Panel]) -> type[Panel]:
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no panel name")
    PANELS[cls.name] = cls
    return cls


class Panel(QWidget):
    """A dockable view of the current frame; the plots live in `self.graphics`."""

    help_requested = Signal(str)  # the panel's name: its "?" was pressed
    #: (the panel's name, "copy" | "export"): its right-click menu's Copy as image / Export…
    figure_requested = Signal(str, str)

    name: ClassVar[str] = ""
    #: English; mark it with QT_TRANSLATE_NOOP("Panel", ...) so display_title() can translate it
    title: ClassVar[str] = ""
    requires_model: ClassVar[bool] = False
    #: False for panels that are not figures (the lesson panel): exports leave them out
    exportable: ClassVar[bool] = True
    #: False for a panel that does not draw the sliders' layer (the training lab's own model):
    #: beside a loaded model, the others' dock titles say they show the sliders' layer
    draws_the_sliders: ClassVar[bool] = True
    #: (width, height) px below which the panel's plots or texts are cut: its dock in the
    #: window never gets smaller while in front (explorer/window.py, "readable sizes"); exports ignore it
    readable_size: ClassVar[tuple[int, int]] = (300, 130)
    #: (width, height) px a lesson naming the panel asks for its dock, where the window has room
    #: (its readouts are longer there: a pinned A, float16's limits); None: nothing more
    lesson_size: ClassVar[tuple[int, int] | None] = None

    @classmethod
    def display_title(cls) -> str:
        """The title in the interface language (dock titles, the export dialog)."""
        return QCoreApplication.translate("Panel", cls.title) if cls.title else cls.name

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"panel_{self.name}")
        #: the window's state (a figure's copy for an export's panel): what the panel draws from
        self.app_state = state
        # a model panel follows the model's selection (layer, head, query, key)
        self.selection: Selection = state.model_selection if self.requires_model else state.selection
        self.hover: HoverLink = state.model_hover if self.requires_model else state.hover
        self.frame: Frame | None = None
        self.reference: Frame | None = None  # the pinned state A (MainWindow.pin_reference)
        self.theme: Theme = DARK
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.toolbar = QHBoxLayout()
        self.toolbar.setContentsMargins(6, 2, 6, 0)
        layout.addLayout(self.toolbar)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.ci.setContentsMargins(4, 4, 4, 4)
        self.graphics.ci.setSpacing(6)
        # items move, resize and change every frame: a BSP index would be rebuilt for each of
        # those; a linear walk over a panel's ~100 items is cheaper (Qt's advice for dynamic scenes)
        self.graphics.scene().setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        layout.addWidget(self.graphics, 1)
        # right click: the app's menu, never pyqtgraph's (explorer/figures/context_menu.py)
        self.figure_menu = FigureMenu(self.graphics, self._fill_figure_menu)
        self._selection_stale = False
        self._following = None  # the callback following self.selection.changed
        self.follow_selection(self.selection)
        self._reference_cb = follow(state.reference_changed, self.set_reference)
        # the window's theme: from the state's event, at once if shown, else when next shown
        self._theme_pending: Theme | None = None
        follow(state.theme_changed, self.restyle)
        # "?" in the top-right corner, over the plots (no row of its own): what this panel shows
        self.help_button = QToolButton(self)
        self.help_button.setObjectName("panel_help")
        self.help_button.setText("?")
        self.help_button.setAutoRaise(True)
        self.help_button.setFixedSize(20, 20)
        self.help_button.clicked.connect(lambda: self.help_requested.emit(self.name))
        self._retranslate_help()

    # ---- driven by the window ---------------------------------------------
    def show_frame(self, frame: Frame) -> None:
        """Draw a new frame and the current selection on it."""
        self.frame = frame
        self.draw_frame(frame)
        self.draw_selection()
        self._selection_stale = False

    def redraw(self) -> None:
        """Draw the frame held again (a new theme, language or reference A); a frame of
        another shape than the selection's is left for the window to replace."""
        if self.frame is not None and self.selection_fits():
            self.show_frame(self.frame)

    def follow_selection(self, selection: Selection) -> None:
        """Follow `selection` (a model panel: the model controller's) instead of the one before."""
        if self._following is not None:
            self.selection.changed.disconnect(self._following)
        self.selection = selection
        self._following = follow(selection.changed, self._on_selection_changed)

    def selection_fits(self) -> bool:
        """Whether the selection indexes into the frame this panel holds (a frame of another
        shape than the state's: the selection is for the new one)."""
        f = self.frame
        if f is None:
            return False
        if self.requires_model or getattr(f, "config", None) is None:
            return True
        s, cfg = self.selection, f.config
        return s.head < cfg.n_heads and s.query < cfg.seq_len and s.key < cfg.key_len

    def _on_selection_changed(self) -> None:
        if self.frame is None:
            return
        if not (self.requires_model or self.frame is self.app_state.frame):
            # an older frame than the state's (the window is about to draw the new one, or the
            # panel is hidden): the selection is drawn with the new frame
            self._selection_stale = True
            return
        if self.isVisible():
            self.draw_selection()
        else:
            self._selection_stale = True

    def refresh(self) -> None:
        """Redraw the selection if it changed while hidden."""
        if self._selection_stale and self.selection_fits():
            self.draw_selection()
            self._selection_stale = False

    def detach(self) -> None:
        """Stop following the shared state (an export's figure panel, before it is deleted)."""
        if self._following is not None:
            self.selection.changed.disconnect(self._following)
            self._following = None
        if self._reference_cb is not None:
            self.app_state.reference_changed.disconnect(self._reference_cb)
            self._reference_cb = None

    def reset_view(self) -> None:
        """Forget what earlier frames left: zooms and the remembered (sticky) axis ranges and
        colour levels, so the next frame is framed as in a new window (Reset does this)."""
        for hm in self.heatmaps():
            hm.reset_view()

    def _fill_figure_menu(self, menu) -> None:
        menu.addAction(QCoreApplication.translate("Panel", "Copy as image"),
                       lambda: self.figure_requested.emit(self.name, "copy"))
        menu.addAction(QCoreApplication.translate("Panel", "Export…"),
                       lambda: self.figure_requested.emit(self.name, "export"))
        menu.addSeparator()
        menu.addAction(QCoreApplication.translate("Panel", "Reset view"), self._reset_view_now)

    def _reset_view_now(self) -> None:
        """The right-click menu's Reset view: this panel framed as in a new window."""
        self.reset_view()
        if self.frame is not None:
            self.show_frame(self.frame)

    def set_reference(self, frame: Frame | None) -> None:
        """The pinned reference A (None: unpinned); panels that compare redraw with it (a
        panel holding a frame of another shape than the selection's waits for the new one)."""
        if frame is self.reference:
            return
        self.reference = frame
        self.redraw()

    def set_backends(self, result: dict) -> None:
        """The backend comparison for the current frame (only diagnostics uses it)."""

    def set_model(self, model) -> None:
        """A loaded model (only model panels use it)."""

    def copy_choices(self, source: Panel) -> None:
        """An export's figure of `source`: take the choices `source` holds beyond its controls
        (whose values the exporter copies); default none."""

    def figure_room(self) -> int:
        """An export's figure: how many px taller it must be for what is not a plot (a table's
        rows; plots are grown by the exporter until none is cut); default 0."""
        return 0

    def fit_figure(self) -> None:
        """An export's figure, grown by `figure_room`: give that room to what asked for it."""

    # ---- for subclasses -------------------------------------------------------
    def draw_frame(self, frame: Frame) -> None:
        raise NotImplementedError

    def draw_selection(self) -> None:
        raise NotImplementedError

    def heatmaps(self) -> list[Heatmap]:
        """The panel's heatmaps (the window links zoom between equal shapes)."""
        return []

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.graphics.setBackground(theme.background)
        for hm in self.heatmaps():
            hm.apply_theme(theme)
        cache_static_items(self.graphics.scene())
        self.redraw()

    def restyle(self, theme: Theme) -> None:
        """`state.theme_changed` (and the same theme again after a language switch, whose
        fonts measure differently): a shown panel is restyled and redrawn now; a hidden one
        (behind a tab, closed) when it is shown next (`showEvent`), so a switch costs what is
        on screen, not every panel."""
        if self.isVisible():
            self._theme_pending = None
            self.apply_theme(theme)
        else:
            self._theme_pending = theme

    def showEvent(self, event) -> None:
        super().showEvent(event)
        theme, self._theme_pending = self._theme_pending, None
        if theme is not None:
            self.apply_theme(theme)

    def scene(self):
        """The QGraphicsScene with every plot of the panel (for pyqtgraph exporters)."""
        return self.graphics.scene()

    # ---- language ---------------------------------------------------------------
    def _retranslate_help(self) -> None:
        self.help_button.setToolTip(QCoreApplication.translate("Panel", "What this panel shows, how to read it (F1)"))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.help_button.move(self.width() - self.help_button.width() - 2, 2)
        self.help_button.raise_()

    def retranslate_ui(self) -> None:
        """Re-set fixed texts (axis labels, toolbar) in the current language and redraw the
        frame, whose titles and readouts are formatted with tr() as they are drawn."""
        self._retranslate_help()
        self.redraw()

    @contained  # an exception here must not reach Qt (explorer/guard.py)
    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)
