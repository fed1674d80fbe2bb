"""The dock layer of the main window: Qt's own `QDockWidget`s, held to readable sizes.

`DockLayout(window)` works on the window's docks through Qt's public API only: a panel's dock
is the `QDockWidget` named "dock_<panel name>" whose widget is the panel (the configuration's
is "dock_controls"). It owns:

    readable(name)      the panel's minimum readable size here: `Panel.readable_size` (px at a
                        1000 px high window), scaled down on a lower screen so the window still
                        fits (never below 0.7 of it: a 1280×800 window gets 0.8). The scale
                        follows the screen and the height the user gave the window, never a
                        height the docks' minimums pushed it to (that grew the sizes it asked
                        for, which grew the window again)
    keep_readable       a dock in front holds its panel's readable size as its minimum, so Qt's
                        dock layout takes the room from the docks beside it (down to their own
                        minimums) and no splitter squeezes it; a dock behind a tab asks nothing
    show_panel(name)    View ▸ a panel: shown (reopened where it was), brought to the front of
                        its tab group, at no less than its readable size; never hides a panel;
                        the window keeps the size the user gave it wherever the panels fit it
    fit_window          the window back at its user's size where the docks' minimums grew it
                        (a panel brought forward, a panel's text, a language): the docks that
                        hold it open give way, the one brought forward longest ago first
    apply(perspective)  the panels of a perspective (explorer.layout.perspectives) brought
                        forward the same way
    reset()             View ▸ Reset layout: the default layout as the window first made it,
                        laid out again for the window's present size
    save / restore      the user's layout across runs: `QMainWindow.saveState(LAYOUT_VERSION)`;
                        a layout saved by another version (other panels, other sizes) or one that
                        leaves a panel in front under its readable size is dropped, not forced
    tab bars            the tab bars Qt makes for tabbed docks never elide a title ("Ci…"):
                        full titles, scroll arrows when they do not fit (the overflow), each
                        tab's tooltip the full title
    side column         a window resize leaves the left column (configuration, lesson) as wide
                        as it was; Qt would otherwise share the new width out to it as well (a
                        1600 → 1280 → 1920 → 1600 cycle left it ~800 px wide)
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable

import shiboken6
from PySide6.QtCore import QByteArray, QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar

from ..panels.base import PANELS
from .perspectives import Perspective

#: the window height (px) the panels' readable sizes are for (the default window)
DESIGN_HEIGHT = 1000
#: readable sizes never shrink below this share on a low screen (texts would be cut)
MIN_SCALE = 0.7
#: bumped when the dock layer itself changes what a saved layout means
LAYOUT_SCHEMA = 3


def layout_version() -> int:
    """The version a saved layout is stamped with: the schema, every panel's name and readable
    size. A layout saved when the panels were others no longer restores (it is dropped)."""
    key = f"{LAYOUT_SCHEMA}|" + "|".join(f"{n}:{c.readable_size}" for n, c in sorted(PANELS.items()))
    return zlib.crc32(key.encode()) & 0x7FFFFFFF


def dock_name(dock: QDockWidget) -> str:
    """The panel name of a panel's dock ("dock_heads" → "heads"; "controls" for the controls)."""
    return dock.objectName().removeprefix("dock_")


class DockLayout(QObject):
    """See the module docstring. `default_sizes(layout)` lays the default docks out for the
    window's size (the window's own recipe); it is called by `reset()` and once at first show."""

    def __init__(self, window: QMainWindow, default_sizes: Callable[[DockLayout], None] | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.default_sizes = default_sizes
        self.version = layout_version()
        self._default_state: QByteArray | None = None
        self._default_shown: set[str] = set()
        self._tabs_pending = False
        self._side_width: int | None = None  # the left column's width as last set (px)
        self._window_size = window.size()
        self._side_pending = False
        #: the window's size as the user (or a script's resize) set it: a growth the docks'
        #: minimums forced is not counted (see `user_size`); None until the window is resized
        self._user_size: QSize | None = None
        self._scale_held = 1.0  # the scale the docks' minimums were last set at
        self._rescale_pending = False
        self._resizing = False  # the dock layer resizes the window itself: not the user's size
        self._fit_pending = False
        #: panel name → when `show_panel` last brought it forward (a count): the docks that
        #: give way for the window to fit are the ones brought forward longest ago
        self._brought: dict[str, int] = {}
        window.installEventFilter(self)
        for dock in self.docks():
            dock.installEventFilter(self)

    # ---- the docks ----------------------------------------------------------------------------
    def docks(self) -> list[QDockWidget]:
        """Every dock of the window (the configuration's, the panels')."""
        return [d for d in self.window.findChildren(QDockWidget) if d.objectName().startswith("dock_")]

    def dock(self, name: str) -> QDockWidget | None:
        return self.window.findChild(QDockWidget, f"dock_{name}")

    def in_front(self, dock: QDockWidget) -> bool:
        """Shown and not behind another tab (what a user can see of it)."""
        w = dock.widget()
        return dock.isVisible() and w is not None and w.isVisible() and not w.visibleRegion().isEmpty()

    # ---- readable sizes -----------------------------------------------------------------------
    def scale(self) -> float:
        """How much of the readable sizes this window's screen has room for (≤ 1)."""
        if not shiboken6.isValid(self.window):  # (a dock's signal while the window is deleted)
            return 1.0
        screen = self.window.screen() or QGuiApplication.primaryScreen()
        avail = screen.availableGeometry().height() - 60 if screen is not None else DESIGN_HEIGHT
        # (a window taller than its screen: offscreen, or a second monitor)
        return min(1.0, max(MIN_SCALE, max(avail, self.user_size().height(), 400) / DESIGN_HEIGHT))

    def user_size(self) -> QSize:
        """The window's size as its user set it (a drag of its edge, `resize`): a resize that
        only grew the window to its minimum size (a dock in front asked for more room than
        the window had) is not the user's, so the readable sizes do not grow with it."""
        return QSize(self._user_size) if self._user_size is not None else self.window.size()

    def _note_window_resize(self, old: QSize, new: QSize) -> None:
        """Keep the user's size: a resize the docks' minimums forced (the window grown to its
        minimum), or one the dock layer made (`fit_window` shrinking it back as far as the
        minimums let it), is not the user's; a forced growth is undone once Qt has laid out."""
        low = self.window.minimumSize()
        forced_w = new.width() > old.width() and new.width() <= low.width()
        forced_h = new.height() > old.height() and new.height() <= low.height()
        if self._user_size is None:
            self._user_size = QSize(old) if old.isValid() and old.width() > 0 else QSize(new)
        if not forced_w and not self._resizing:
            self._user_size.setWidth(new.width())
        if not forced_h and not self._resizing:
            self._user_size.setHeight(new.height())
        if (forced_w or forced_h) and not self._resizing:
            self.fit_window_later()
        if self.scale() != self._scale_held and not self._rescale_pending:
            self._rescale_pending = True
            QTimer.singleShot(0, self.rescale)

    def rescale(self) -> None:
        """The user resized the window to another scale: each dock in front that holds its
        readable size holds it at the new scale (not one that gave way to another)."""
        self._rescale_pending = False
        if not shiboken6.isValid(self.window):
            return
        self._scale_held = self.scale()
        for dock in self.docks():
            panel = dock.widget()
            if panel is not None and self.in_front(dock) and panel.minimumSize() != QSize(1, 1):
                self.keep_readable(dock, True)

    def fit_window_later(self) -> None:
        if not self._fit_pending:
            self._fit_pending = True
            QTimer.singleShot(0, self.fit_window)

    def fit_window(self) -> None:
        """The window back to the size its user gave it where the docks' minimums grew it (a
        panel brought forward, a panel's minimum grown with its text, a language's taller
        lines): the docks in front that hold the window open give way, the one brought
        forward longest ago first (a dock never brought forward, the default layout's, before
        any), never the one brought forward last. Each gives way only while the window is
        still larger than its user's size; the window is then shrunk as far as the minimums
        left let it (never grown)."""
        self._fit_pending = False
        if (self._user_size is None or not shiboken6.isValid(self.window) or not self.window.isVisible()
                or self.window.isMaximized() or self.window.isFullScreen()):
            return
        self.settle_layout()
        user = self._user_size
        latest = max(self._brought, key=self._brought.get) if self._brought else None
        while True:
            self._shrink_to(user)  # (as far as it goes: the docks that hold it are at their minimum)
            wide, tall = self.window.width() > user.width(), self.window.height() > user.height()
            if not (wide or tall):
                break
            holding = [d for d in self.docks() if self._holds_window(d, wide, tall) and dock_name(d) != latest]
            if not holding:
                break
            oldest = min(holding, key=lambda d: self._brought.get(dock_name(d), -1))
            oldest.widget().setMinimumSize(QSize(1, 1))  # (it holds its size again when next brought)
            self.settle_layout()

    def _holds_window(self, dock: QDockWidget, wide: bool, tall: bool) -> bool:
        """`dock` is docked in front, holds its panel's readable size and is at its minimum
        across (`wide`) or down (`tall`): one of the docks whose minimums make the window's."""
        panel = dock.widget()
        if (panel is None or not hasattr(panel, "readable_size") or dock.isFloating()
                or not self.in_front(dock) or panel.minimumSize() == QSize(1, 1)):
            return False
        low = dock.minimumSizeHint().expandedTo(dock.minimumSize())
        return (wide and dock.width() <= low.width() + 1) or (tall and dock.height() <= low.height() + 1)

    def _shrink_to(self, user: QSize) -> None:
        want = QSize(user).expandedTo(self.window.minimumSizeHint()).expandedTo(self.window.minimumSize())
        want = want.boundedTo(self.window.size())
        if want != self.window.size():
            self._resizing = True
            try:
                self.window.resize(want)
            finally:
                self._resizing = False
            self.settle_layout()

    def readable(self, name: str) -> QSize:
        """Panel `name`'s minimum readable size in this window (see the module docstring)."""
        dock = self.dock(name)
        return self._readable(dock.widget() if dock is not None else None, PANELS.get(name))

    def _readable(self, panel, cls=None) -> QSize:
        cls = type(panel) if panel is not None and hasattr(panel, "readable_size") else cls
        if cls is None:
            return QSize(0, 0)
        w, h = cls.readable_size
        k = self.scale()
        size = QSize(int(w * k), int(h * k))
        return size.expandedTo(panel.minimumSizeHint()) if panel is not None else size

    def keep_readable(self, dock: QDockWidget, in_front: bool) -> None:
        """`dock` came to the front (or went behind a tab, or closed): its panel's minimum."""
        panel = dock.widget()
        if panel is None or not hasattr(panel, "readable_size"):
            return
        if not in_front:  # (also while the window is being destroyed: ask nothing of it)
            panel.setMinimumSize(QSize(1, 1))  # (1: not its size hint)
            return
        self._scale_held = self.scale()
        panel.setMinimumSize(self._readable(panel))

    def follow(self, dock: QDockWidget) -> None:
        """Hold `dock`'s panel readable while it is in front (call once per dock made)."""
        dock.visibilityChanged.connect(lambda visible, d=dock: self.keep_readable(d, visible))
        dock.windowTitleChanged.connect(lambda _t: self.fix_tabs_later())
        dock.topLevelChanged.connect(lambda _f: self.fix_tabs_later())
        dock.installEventFilter(self)
        self.keep_readable(dock, self.in_front(dock))
        self.fix_tabs_later()

    # ---- bringing panels forward ----------------------------------------------------------------
    def show_panel(self, name: str) -> bool:
        """View ▸ a panel: shown, in front of its tab group, at no less than its readable size;
        False when the window has no such panel. A visible panel is never hidden."""
        dock = self.dock(name)
        if dock is None:
            return False
        if dock.isHidden():
            dock.show()
        dock.raise_()
        self._brought[name] = max(self._brought.values(), default=0) + 1
        self.keep_readable(dock, True)
        self.settle_layout()
        self.make_room([dock])
        self.settle_layout()
        self.fix_tabs()  # (now: the tab group it joined may have a new tab bar)
        if dock.isFloating():
            return True
        narrow, low = self.short_of(dock) or (False, False)
        # (Qt grows the window to fit a minimum it cannot meet: that too is a dock short of room)
        user, size = self.user_size(), self.window.size()
        narrow, low = narrow or size.width() > user.width(), low or size.height() > user.height()
        if narrow or low:
            self.give_way(dock, narrow, low)
            self.settle_layout()
            self.fit_window()  # (docks of other columns too, where they still hold it open)
            self.make_room([dock])
            self.settle_layout()
        return True

    def settle_layout(self) -> None:
        """Lay the docks out now (Qt would at its next layout pass), so sizes can be read."""
        layout = self.window.layout()
        if layout is not None and self.window.isVisible():
            for dock in self.docks():  # (a panel's new minimum reaches its dock's first)
                if dock.isVisible() and dock.layout() is not None:
                    dock.layout().activate()
            layout.activate()

    def short_of(self, dock: QDockWidget) -> tuple[bool, bool]:
        """(too narrow, too low): where `dock`'s panel is under its readable size."""
        w = dock.widget()
        if w is None:
            return (False, False)
        need = self.readable(dock_name(dock))
        narrow, low = w.width() < need.width(), w.height() < need.height()
        return (narrow, low) if (narrow or low) else ()

    def give_way(self, dock: QDockWidget, narrow: bool, low: bool) -> list[str]:
        """The docks beside `dock` in front (in its column when it is too `low`, in its row when
        too `narrow`) stop holding their readable size, so `dock` can have its own: the panel
        just asked for wins over the ones that were there (they hold theirs again when next
        brought forward). Returns their names."""
        g = dock.geometry()
        out = []
        for other in self.docks():
            if other is dock or other.isFloating() or not self.in_front(other) or other.widget() is None:
                continue
            o = other.geometry()
            # (a third of the narrower one in common: docks of two rows whose splitters do not
            # line up overlap by a few px, and are not one column)
            same_column = min(o.right(), g.right()) - max(o.left(), g.left()) > min(o.width(), g.width()) / 3
            same_row = min(o.bottom(), g.bottom()) - max(o.top(), g.top()) > min(o.height(), g.height()) / 3
            if (low and same_column) or (narrow and same_row):
                other.widget().setMinimumSize(QSize(1, 1))
                out.append(dock_name(other))
        return out

    def view_action(self, dock: QDockWidget) -> QAction:
        """View ▸ the dock's entry: ticked while the dock is open; choosing it shows the panel
        (`show_panel`), even when it is ticked: it never closes a panel (the dock's × does).
        Its text follows the dock's title; `shortcut` as Qt's toggle action had it."""
        name = dock_name(dock)
        act = QAction(dock.windowTitle(), self.window)
        act.setObjectName(f"act_view_{name}")
        act.setCheckable(True)
        act.setChecked(not dock.isHidden())
        toggle = dock.toggleViewAction()
        toggle.toggled.connect(act.setChecked)  # Qt keeps it ticked while the dock is open
        dock.windowTitleChanged.connect(act.setText)

        def chosen(_checked: bool = False) -> None:
            act.setChecked(True)
            self.show_panel(name)
            widget = dock.widget()
            if widget is not None:
                widget.setFocus()

        act.triggered.connect(chosen)
        return act

    def apply(self, perspective: Perspective) -> list[str]:
        """Bring `perspective`'s panels forward (the ones the window has); returns their names."""
        shown = [n for n in perspective.front if self.show_panel(n)]
        self.make_room([self.dock(n) for n in shown])
        return shown

    def make_room(self, docks: Iterable[QDockWidget | None]) -> None:
        """Grow each docked one of `docks` to its readable size where it is smaller (Qt takes the
        room from the docks beside it); a floating dock is resized itself."""
        widths, heights, wdocks, hdocks = [], [], [], []
        for dock in docks:
            if dock is None or dock.widget() is None:
                continue
            need = self.readable(dock_name(dock))
            extra_h = max(0, dock.height() - dock.widget().height())  # the title bar
            if dock.isFloating():
                dock.resize(dock.size().expandedTo(QSize(need.width(), need.height() + extra_h)))
                continue
            if dock.widget().width() < need.width():
                wdocks.append(dock)
                widths.append(need.width())
            if dock.widget().height() < need.height():
                hdocks.append(dock)
                heights.append(need.height() + extra_h)
        if wdocks:
            self.window.resizeDocks(wdocks, widths, Qt.Orientation.Horizontal)
        if hdocks:
            self.window.resizeDocks(hdocks, heights, Qt.Orientation.Vertical)

    # ---- the default layout, reset ----------------------------------------------------------------
    def capture_default(self) -> None:
        """Remember the layout as the window made it (before any saved layout is restored)."""
        self._default_state = self.window.saveState(self.version)
        self._default_shown = {dock_name(d) for d in self.docks() if not d.isHidden()}

    def reset(self) -> None:
        """View ▸ Reset layout: the default layout again, sized for the window as it is now;
        panels made since (a model's, the lab, the lesson) are closed, as in a new window."""
        if self._default_state is None:
            return
        for dock in self.docks():
            if dock.isFloating():
                dock.setFloating(False)
        self.window.restoreState(self._default_state, self.version)
        for dock in self.docks():
            dock.setVisible(dock_name(dock) in self._default_shown)
        self.lay_out_default()

    def lay_out_default(self) -> None:
        """The window's default sizes, now and again once Qt has laid the docks out."""
        if self.default_sizes is None:
            return
        self.default_sizes(self)
        QTimer.singleShot(0, lambda: self.default_sizes(self))

    # ---- remembered across runs -------------------------------------------------------------------
    def save(self) -> QByteArray:
        """The user's layout, stamped with this version (QSettings stores it as it is)."""
        return self.window.saveState(self.version)

    def restore(self, state) -> bool:
        """Restore a saved layout; False (nothing changed) when it is not this version's or it
        would leave a panel in front under its readable size (then the default stays)."""
        if not state:
            return False
        data = QByteArray(state) if not isinstance(state, QByteArray) else state
        before = self.window.saveState(self.version)
        if not self.window.restoreState(data, self.version):
            return False
        if self.cramped():
            self.window.restoreState(before, self.version)
            return False
        return True

    def cramped(self) -> list[str]:
        """The panels in front (docked) whose dock is under their readable size: a layout that
        does not hold. Judged from the docks' sizes once laid out (a hidden window: none)."""
        if not self.window.isVisible():
            return []
        out = []
        for dock in self.docks():
            name = dock_name(dock)
            if name == "controls" or dock.isFloating() or not self.in_front(dock):
                continue
            need, got = self.readable(name), dock.widget().size()
            if got.width() < need.width() or got.height() < need.height():
                out.append(name)
        return out

    # ---- tab bars ----------------------------------------------------------------------------------
    def fix_tabs_later(self) -> None:
        if not self._tabs_pending:
            self._tabs_pending = True
            QTimer.singleShot(0, self.fix_tabs)

    def fix_tabs(self) -> None:
        """Every tab bar of the window's tabbed docks: full titles (no eliding), scroll arrows
        when they do not fit, each tab's full title as its tooltip."""
        self._tabs_pending = False
        if not shiboken6.isValid(self.window):
            return
        titles = {d.windowTitle() for d in self.docks()}
        for bar in self.window.findChildren(QTabBar):
            if bar.parent() is not self.window:  # (a panel's own tabs are its business)
                continue
            bar.setElideMode(Qt.TextElideMode.ElideNone)
            bar.setUsesScrollButtons(True)
            bar.setExpanding(False)
            for i in range(bar.count()):
                text = bar.tabText(i)
                if text in titles and bar.tabToolTip(i) != text:
                    bar.setTabToolTip(i, text)

    # ---- the window's events ---------------------------------------------------------------------
    def side_docks(self) -> list[QDockWidget]:
        """The docked, shown docks of the left column (the configuration, the lesson)."""
        return [d for d in self.docks() if not d.isFloating() and not d.isHidden()
                and self.window.dockWidgetArea(d) == Qt.DockWidgetArea.LeftDockWidgetArea]

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        t = event.type()
        if obj is self.window:
            if t == QEvent.Type.Resize:
                self._note_window_resize(event.oldSize(), event.size())
            elif t == QEvent.Type.ChildAdded and isinstance(event.child(), QTabBar):
                self.fix_tabs_later()
            elif t == QEvent.Type.ChildAdded and isinstance(event.child(), QDockWidget):
                event.child().installEventFilter(self)
        elif t == QEvent.Type.Resize and isinstance(obj, QDockWidget):
            self._on_dock_resized(obj)
        return False

    def _on_dock_resized(self, dock: QDockWidget) -> None:
        """A left-column dock changed width. Qt lays the docks out in the window's Resize
        before anyone else hears of it, so a resize of the window is told from the user's
        splitter drag by the window's size: a drag (same window size) sets the column's width,
        a window resize puts the width back once laid out."""
        if dock not in self.side_docks():
            return
        size = self.window.size()
        if size == self._window_size or self._side_width is None:
            self._window_size = size
            self._side_width = dock.width()
            return
        self._window_size = size
        if not self._side_pending:
            self._side_pending = True
            QTimer.singleShot(0, self._keep_side)

    def _keep_side(self) -> None:
        """The left column back to its width: capped there for one layout pass (Qt's
        `resizeDocks` cannot narrow it: the window would have nowhere to put the width; capped,
        the docks on the right take it), then free again for the user's splitter."""
        self._side_pending = False
        side = [d for d in self.side_docks() if abs(d.width() - (self._side_width or 0)) > 2]
        if not side or self._side_width is None:
            return
        caps = [(d, d.maximumWidth()) for d in side]
        for d, _ in caps:
            d.setMaximumWidth(max(self._side_width, d.minimumSizeHint().width()))

        def release() -> None:
            for d, cap in caps:
                if shiboken6.isValid(d):
                    d.setMaximumWidth(cap)

        QTimer.singleShot(50, release)
