"""Themes: the colours, font sizes and line widths a figure is drawn with.

A panel is drawn from (frame, selection, theme, size): the window uses DARK or
LIGHT; an export builds a fresh panel with `figure_theme(...)`, e.g. the
"slides" theme (light, fonts ×1.45, lines ×2) with its lines also multiplied
by the export's raster scale (Qt's cosmetic pens are device pixels). Every
font and pen of a panel comes from `Theme.font` / `Theme.pen`, so nothing is
restyled after the fact.

Colour maps do not change with the theme: viridis for weights (perceptually
uniform, colour-blind safe), a blue-white-red diverging map (CET-D1A) for
signed matrices centred on zero.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtGui import QColor, QFont, QPalette, QPen
from PySide6.QtWidgets import QApplication, QWidget

WEIGHTS_CMAP = "viridis"
SIGNED_CMAP = "CET-D1A"

#: One colour per head/KV group, readable on both backgrounds (Okabe-Ito + extras).
CATEGORY_COLORS = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999",
)


@dataclass(frozen=True)
class Theme:
    name: str
    background: str  # plot background
    window: str  # Qt window background
    base: str  # Qt input fields
    foreground: str  # text, axes
    muted: str  # secondary text, grid
    accent: str  # selection, current value
    accent2: str  # second series
    hatch: str  # masked cells
    warning: str
    error: str
    ok: str
    bar: str  # neutral bars
    dark: bool
    font_scale: float = 1.0  # multiplies every font size (slides: larger text)
    line_scale: float = 1.0  # multiplies every line width (slides; an export's raster scale)

    def color(self, name: str) -> QColor:
        return QColor(getattr(self, name))

    def font(self, pt: float = 9.0, bold: bool = False) -> QFont:
        """A plot font of `pt` points at this theme's scale."""
        return plot_font(pt * self.font_scale, bold)

    def pt(self, pt: float) -> str:
        """A CSS / pyqtgraph size string ("9pt") at this theme's scale."""
        return f"{pt * self.font_scale:.3g}pt"

    def pen(self, color, width: float = 1.0, style: Qt.PenStyle | None = None) -> QPen:
        """A cosmetic pen `width` px wide at this theme's scale (1 px stays 1 px on screen:
        Qt draws those directly, wider pens are stroked as polygons first)."""
        kw = {} if style is None else {"style": style}
        return pg.mkPen(color, width=width * self.line_scale, **kw)


LIGHT = Theme(
    name="light", background="#ffffff", window="#f3f4f6", base="#ffffff", foreground="#1f2328",
    muted="#8b949e", accent="#d62728", accent2="#1f77b4", hatch="#b8bcc4", warning="#b35900",
    error="#c62828", ok="#2e7d32", bar="#6b8fb8", dark=False,
)
DARK = Theme(
    name="dark", background="#15181d", window="#1e2228", base="#262b33", foreground="#d6dae0",
    muted="#7d8590", accent="#ff6b6b", accent2="#58a6ff", hatch="#4a515c", warning="#f0a040",
    error="#ff6b6b", ok="#56d364", bar="#6f9bd1", dark=True,
)
THEMES = {"light": LIGHT, "dark": DARK}
#: A projector: light, larger text, thicker lines.
SLIDES = replace(LIGHT, name="slides", font_scale=1.45, line_scale=2.0)
#: What an export's `theme` option names: "screen" is the window's own theme.
FIGURE_THEMES = ("slides", "screen")


def theme_named(name: str) -> Theme:
    return THEMES.get(name, DARK)


def figure_theme(name: str, screen: Theme, raster_scale: float = 1.0) -> Theme:
    """The theme an exported figure is drawn in: "slides" or "screen" (the window's
    `screen` theme), its lines multiplied by `raster_scale` (device px per logical px)."""
    base = SLIDES if name == "slides" else screen
    return replace(base, line_scale=base.line_scale * raster_scale)


def qt_palette(theme: Theme) -> QPalette:
    pal = QPalette()
    win, base, fg = QColor(theme.window), QColor(theme.base), QColor(theme.foreground)
    muted = QColor(theme.muted)
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        pal.setColor(group, QPalette.ColorRole.Window, win)
        pal.setColor(group, QPalette.ColorRole.WindowText, fg)
        pal.setColor(group, QPalette.ColorRole.Base, base)
        pal.setColor(group, QPalette.ColorRole.AlternateBase, win)
        pal.setColor(group, QPalette.ColorRole.Text, fg)
        pal.setColor(group, QPalette.ColorRole.Button, base if theme.dark else win)
        pal.setColor(group, QPalette.ColorRole.ButtonText, fg)
        pal.setColor(group, QPalette.ColorRole.ToolTipBase, base)
        pal.setColor(group, QPalette.ColorRole.ToolTipText, fg)
        pal.setColor(group, QPalette.ColorRole.Highlight, QColor(theme.accent2))
        pal.setColor(group, QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
        pal.setColor(group, QPalette.ColorRole.PlaceholderText, muted)
        pal.setColor(group, QPalette.ColorRole.Link, QColor(theme.accent2))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, muted)
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Window, win)
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Base, win)
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Button, win)
    return pal


def stylesheet(theme: Theme) -> str:
    """Small touches the palette cannot express (dock titles, the error banner)."""
    return f"""
    QDockWidget::title {{ padding: 4px 6px; background: {theme.window}; }}
    QGroupBox {{ font-weight: 600; border: 1px solid {theme.hatch}; border-radius: 5px;
                 margin-top: 10px; padding: 6px 4px 4px 4px; }}
    QGroupBox::title {{ subcontrol-origin: margin; left: 8px; padding: 0 3px; color: {theme.foreground}; }}
    QLabel#groupMap {{ color: {theme.muted}; }}
    QLabel#hint {{ color: {theme.muted}; }}
    QFrame#banner {{ background: {'#5c1f1f' if theme.dark else '#fdecea'};
                     border: 1px solid {theme.error}; border-radius: 4px; }}
    QFrame#banner QLabel {{ color: {theme.foreground}; }}
    QStatusBar QLabel {{ padding: 0 6px; }}
    QWidget#formula_strip QToolButton {{ padding: 1px 5px; }}
    QWidget#formula_strip QToolButton[inactive="true"] {{ color: {theme.muted}; }}
    QToolButton#panel_help {{ font-weight: bold; color: {theme.accent2}; }}
    """


#: an application property: Fusion is set once (under a style sheet app.style().name() is "")
_FUSION_SET = "attention_explorer_fusion"


def apply_app_theme(app: QApplication, theme: Theme, *, repolish: bool = False) -> None:
    """Fusion style with the theme's palette; pyqtgraph defaults for new items.

    The style object is made once per application: `setStyle` deletes the one every widget
    holds and made a new window crash (a segfault in setStyle while an earlier window's
    widgets were going away). Under a style sheet `app.style().name()` is "" (the style
    sheet's style wraps Fusion), so an application property says it was done: the name test
    alone set Fusion again at every theme switch (~1 s of re-polishing every widget at
    1600×1000, and the crash risk above).

    The style sheet is set again with each theme even where only the palette changed: under
    an application style sheet a new palette does not reach the widgets below a window (the
    sheet's style pins each one's palette when it polishes it), so only a re-polish of all
    of them repaints the window in the new colours (tried: a sheet of palette(...) roles and
    a re-polish of the widgets it colours left the docks' contents in the old theme).

    That re-polish walks every widget of the application, the hidden forms of pyqtgraph's
    plot menus too (~1,800 of ~2,400 at 1600×1000; ~0.5 s), so it is skipped when the
    application already wears this palette and sheet (a new window: its widgets take the sheet
    when they are first shown). `repolish` (the same theme after a language switch: the sheet's
    fonts and title heights must be measured again with the new font) polishes again only the
    widgets of the shown windows (`repolish_shown`)."""
    if not app.property(_FUSION_SET):
        if app.style() is None or app.style().name().lower() != "fusion":
            app.setStyle("Fusion")
        app.setProperty(_FUSION_SET, True)
    pg.setConfigOptions(background=theme.background, foreground=theme.foreground)
    palette, sheet = qt_palette(theme), stylesheet(theme)
    if app.styleSheet() == sheet and app.palette() == palette:
        if repolish:
            repolish_shown(app)
        return
    app.setPalette(palette)
    app.setStyleSheet(sheet)


def repolish_shown(app: QApplication) -> None:
    """Polish again every shown window and the widgets below it, as a new application style
    sheet would (unpolish, polish, a StyleChange event), the hidden windows left alone: a
    widget's style-sheet font and the sizes measured with it follow the application's font."""
    change = QEvent(QEvent.Type.StyleChange)
    for top in app.topLevelWidgets():
        if not top.isVisible():
            continue
        for w in (top, *top.findChildren(QWidget)):
            style = w.style()
            style.unpolish(w)
            style.polish(w)
            QCoreApplication.sendEvent(w, change)


def plot_font(size: float = 9.0, bold: bool = False) -> QFont:
    f = QFont()
    f.setPointSizeF(size)
    f.setBold(bold)
    return f
