"""A figure is a fresh panel: built offscreen from the window's current state (frame,
selection, model, the panel's own options and zoom) in the figure's theme, laid out at
FIGURE_SIZE logical px, rendered and thrown away.

    render_panel(window, "heads", "png", ExportOptions(width=1920, theme="slides")) -> bytes
    render_figure(widget, "png", options, config=cfg) -> bytes   # a panel, or the whole window as it is
    with fresh_panel(window, "scores", "slides") as panel: ...  # an animation draws many frames on one

The window is never restyled or resized, and panels behind a tab or closed export like shown
ones. PNG is that picture at `width` pixels (or `dpi`), SVG and PDF are vectors at 96 px per
inch. Painting lives in `render` (PNG, PDF) and `svg` (SVG).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from ..host import host_of
from .options import (
    FIGURE_SIZE,
    ExportError,
    ExportOptions,
    check_format,
)


def caption_text(config, summary: str | None = None) -> str | None:
    """The one-line caption: `summary` (a model panel's: `model_summary`) or else the config's
    summary (None without either)."""
    if summary is None:
        if config is None:
            return None
        summary = config.summary()
    from PySide6.QtCore import QCoreApplication  # the caption follows the interface language

    return QCoreApplication.translate("Export", "Attention Explorer · {summary}").format(summary=summary)


#: characters of the model's text a caption quotes (longer: cut with "…")
CAPTION_TEXT_CHARS = 60


def model_summary(state, panel) -> str | None:
    """What a model panel draws, for its caption and file metadata: the model's name, the
    selected layer and head, and the text it runs (the patching panel's clean text); None when
    no model is loaded. The sliders' config has nothing to do with such a figure."""
    from PySide6.QtCore import QCoreApplication

    controller = state.models  # the model feature's controller (None before it is made)
    loaded = getattr(controller, "loaded", None)
    if loaded is None:
        return None
    text = panel.clean_text() if hasattr(panel, "clean_text") else controller.text
    text = " ".join(str(text).split())
    if len(text) > CAPTION_TEXT_CHARS:
        text = text[:CAPTION_TEXT_CHARS - 1].rstrip() + "…"
    sel = state.model_selection
    return QCoreApplication.translate("Export", "{model} · layer {layer} · head {head} · “{text}”").format(
        model=loaded.name, layer=int(sel.layer), head=int(sel.head), text=text)


def _settle(rounds: int = 2) -> None:
    from .render import settle  # Qt: imported when a figure is drawn, not with the package

    settle(rounds)


def _encode(img, fmt_title: str, summary: str, dpi: float | None, logical_width: int) -> bytes:
    """A rendered QImage as PNG bytes with its resolution and text chunks."""
    dpi = dpi or 96 * img.width() / max(1, logical_width)
    img.setDotsPerMeterX(round(dpi / 0.0254))
    img.setDotsPerMeterY(round(dpi / 0.0254))
    if fmt_title:
        img.setText("Title", fmt_title)
    if summary:
        img.setText("Description", summary)
    img.setText("Software", "Attention Explorer")
    return _encode_png(img)


def _render(root, fmt: str, options: ExportOptions, theme, *, config, title: str, fresh: bool,
            summary: str | None = None) -> bytes:
    """`root` (a fresh figure panel, or the window as it is) encoded as `fmt`; `summary` (a
    model panel's) replaces the config's in the caption and the file's metadata."""
    from .render import render_image, render_pdf

    caption = caption_text(config, summary) if options.caption else None
    if summary is None:
        summary = config.summary() if config is not None else ""
    if fmt == "png":
        img = render_image(root, options.png_width(root.width()), theme, caption,
                           options.include_controls, fresh)
        return _encode(img, title, summary, options.dpi, root.width())
    if fmt == "pdf":
        doc_title = f"{title} ({summary})" if title and summary else (title or summary)
        return render_pdf(root, theme, caption, options.include_controls, doc_title, fresh)
    from .svg import render_svg

    return render_svg(root, theme, caption, options.include_controls, title, summary, fresh)


def render_figure(widget, fmt: str, options: ExportOptions, *, config=None, title: str = "") -> bytes:
    """The figure of `widget` encoded as `fmt`: a panel of a window is drawn afresh
    (`render_panel`); any other widget (the whole window: a screenshot, controls included)
    is painted as it is on screen."""
    fmt = check_format(fmt)
    options.validate()
    window = _window_of_panel(widget)
    if window is not None:
        return render_panel(window, widget.name, fmt, options)
    if widget.width() < 2 or widget.height() < 2:
        raise ExportError(f"{title or 'the widget'} has no size yet ({widget.width()}×{widget.height()}); "
                          "show it before exporting")
    theme = getattr(widget, "theme", None) or _screen_theme(widget)
    return _render(widget, fmt, options, theme, config=config, title=title, fresh=False)


def _window_of_panel(widget):
    """The explorer window that has `widget` as its panel `widget.name` (its dock's Qt parent,
    also while the dock floats), or None (a figure's panel, any other widget)."""
    from PySide6.QtWidgets import QMainWindow

    from ..panels.base import Panel

    if not isinstance(widget, Panel):
        return None
    w = widget.parentWidget()
    while w is not None and not isinstance(w, QMainWindow):
        w = w.parentWidget()
    if w is None or widget.name not in w.panel_names():
        return None
    return w if w.panel(widget.name) is widget else None


def _screen_theme(widget):
    """The theme `widget` is drawn in on screen: its own, else its window's, else dark."""
    from ..figures.themes import DARK

    return getattr(widget.window(), "theme", None) or DARK


def _encode_png(img) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not img.save(buf, "PNG"):
        raise ExportError("Qt could not encode the PNG image")
    buf.close()
    return bytes(data.data())


# ---- a figure is a fresh panel -------------------------------------------------------------


def _copy_view_options(source, target) -> None:
    """The panel's own choices (a combo box's entry, a spin box's value, a check box, a line
    edit's text) from the window's panel to the figure's: both build their controls in the
    same order."""
    from PySide6.QtWidgets import QAbstractSpinBox, QCheckBox, QComboBox, QLineEdit

    for kind, get, put in ((QComboBox, "currentIndex", "setCurrentIndex"),
                           (QAbstractSpinBox, "value", "setValue"),
                           (QCheckBox, "isChecked", "setChecked")):
        mine, theirs = source.findChildren(kind), target.findChildren(kind)
        for a, b in zip(mine, theirs):
            if type(a) is type(b) and hasattr(a, get):
                b.blockSignals(True)
                getattr(b, put)(getattr(a, get)())
                b.blockSignals(False)
    # a line edit of the panel's own (a target token, a corrupted text), not a spin or combo box's
    def plain_edits(panel):
        return [e for e in panel.findChildren(QLineEdit)
                if not isinstance(e.parentWidget(), QAbstractSpinBox | QComboBox)]

    for a, b in zip(plain_edits(source), plain_edits(target)):
        b.blockSignals(True)
        b.setText(a.text())
        b.blockSignals(False)


def frame_of(window):
    """The frame of the window's current config (computed now when the window is behind)."""
    window = host_of(window)  # (the window or its host)
    ensure_current(window)
    frame = window.state.frame
    if frame is None:
        raise ExportError("the window has not drawn anything yet")
    return frame


@contextlib.contextmanager
def fresh_panel(window, name: str, theme_name: str = "slides",
                size: tuple[int, int] | None = None, *, frame=None, selection=None) -> Iterator:
    """A new panel `name` drawn from the window's current state (frame, selection, model, the
    panel's own options and zoom) in the figure theme ("slides" or "screen"), laid out
    offscreen at `size` logical px (default FIGURE_SIZE; grown up to 1.5× until no plot is
    cut); deleted on exit. The window is never touched, whether the panel is shown, behind a
    tab or closed there. `frame` and `selection` replace the window's (an animation's
    frames: explorer.export.animation)."""
    window = host_of(window)  # (the window or its host)
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from ..figures.themes import figure_theme, qt_palette, stylesheet
    from ..panels import PANELS
    from .render import figure_parts, overflow

    # the window's panel, for its view options and choices; one it has not made (closed since
    # the window opened) has the defaults a fresh panel has, and is not made for a figure
    if name not in window.panel_names():
        raise KeyError(f"no panel {name!r}; panels: {', '.join(window.panel_names())}")
    source = window.panel(name) if name in window.panel_names(made=True) else None
    cls = PANELS[name]
    theme = figure_theme(theme_name, window.state.theme)
    w, h = size or FIGURE_SIZE
    if not cls.requires_model:
        frame = frame_of(window) if frame is None else frame
    state = window.state.for_figure(selection)  # the window's data, a hover link of its own
    panel = cls(state)
    try:
        panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        panel.setPalette(qt_palette(theme))
        panel.setAutoFillBackground(True)
        panel.setStyleSheet(stylesheet(theme))
        app_pt = QApplication.font().pointSizeF()
        panel.setFont(theme.font(app_pt if app_pt > 0 else 9.0))
        if state.reference is not None:  # the pinned A, before the panel's
            panel.set_reference(state.reference)  # own Show choice is copied
        if source is not None:
            _copy_view_options(source, panel)
            panel.copy_choices(source)
        panel.apply_theme(theme)
        panel.resize(w, h)
        panel.show()
        _settle()
        if cls.requires_model:
            panel.set_model(state.models)
        else:
            panel.show_frame(frame)
            if name == "diagnostics":
                panel.set_backends(frame.backends if frame.backends is not None
                                   else _measure_backends(window, frame))
        for mine, theirs in zip(source.heatmaps() if source is not None else (), panel.heatmaps()):
            if mine.shape == theirs.shape and mine.zoomed():
                theirs.vb.setRange(mine.vb.viewRect(), padding=0)
        _settle()
        for _ in range(3):  # grow until every plot fits its view (titles at full length)
            dx, dy = overflow(figure_parts(panel), preferred_width=True)
            grown = (min(int(w * 1.5), panel.width() + dx + 8 if dx > 1 else panel.width()),
                     min(int(h * 1.5), panel.height() + dy + 8 if dy > 1 else panel.height()))
            if grown == (panel.width(), panel.height()):
                break
            panel.resize(*grown)
            _settle()
        more = panel.figure_room()  # (a table's rows: not a plot the loop above sees)
        if more > 0:
            panel.resize(panel.width(), panel.height() + more)
            _settle()
            panel.fit_figure()
            _settle()
        panel.figure_theme = theme
        yield panel
    finally:
        panel.detach()
        panel.hide()
        panel.setParent(None)
        panel.deleteLater()
        _settle(1)


def _measure_backends(window, frame) -> dict:
    from ..frame import measure_backends

    return measure_backends(frame.config)


def restyle_lines(panel, theme_name: str, window, raster_scale: float) -> None:
    """Re-draw the figure panel with its lines `raster_scale` times wider (a PNG larger than
    the layout: Qt's cosmetic pens are device pixels)."""
    window = host_of(window)  # (the window or its host)
    from ..figures.themes import figure_theme

    theme = figure_theme(theme_name, window.state.theme, raster_scale)
    if theme != panel.figure_theme:
        panel.figure_theme = theme
        panel.apply_theme(theme)
        _settle(1)


def render_panel(window, name: str, fmt: str, options: ExportOptions, *,
                 size: tuple[int, int] | None = None) -> bytes:
    """Panel `name` of `window` as a figure (`fmt`: png, svg, pdf), from a fresh panel."""
    return render_panels(window, [name], [fmt], options, size=size)[(name, fmt)]


#: Copy panel as image puts an SVG beside the PNG only for a panel whose SVG is quick to
#: write (`svg_is_quick`): pyqtgraph's exporter writes every scatter symbol as an element of
#: its own through a DOM (~3–8 ms each on this CPU: the Q/K space's 3,500 points at S = 5256
#: took 29 s) and embeds images at their full size (the position panel's S×S map at S = 5256:
#: a 108 MB SVG in 111 s). Measured against a PNG of 2–5 s for the same panels.
COPY_SVG_MAX = {"symbols": 1_000, "vertices": 100_000, "pixels": 1_000_000}


def svg_load(panel) -> dict[str, int]:
    """What an SVG of `panel` would write: scatter symbols, curve vertices, image pixels
    (of its visible items)."""
    import numpy as np
    import pyqtgraph as pg

    load = dict.fromkeys(COPY_SVG_MAX, 0)
    for item in panel.scene().items():
        if not item.isVisible():
            continue
        if isinstance(item, pg.PlotCurveItem):
            x = item.getData()[0]
            load["vertices"] += 0 if x is None else len(x)
        elif isinstance(item, pg.ScatterPlotItem):
            load["symbols"] += len(item.data)
        elif isinstance(image := getattr(item, "image", None), np.ndarray) and image.ndim >= 2:
            load["pixels"] += image.shape[0] * image.shape[1]  # ImageItem, heatmap.RgbaImage
    return load


def svg_is_quick(panel) -> bool:
    """Whether `panel`'s SVG is within COPY_SVG_MAX (seconds at most, not minutes)."""
    load = svg_load(panel)
    return all(load[k] <= limit for k, limit in COPY_SVG_MAX.items())


def render_panels(window, names: Sequence[str], formats: Sequence[str], options: ExportOptions, *,
                  size: tuple[int, int] | None = None,
                  quick_svg_only: bool = False) -> dict[tuple[str, str], bytes]:
    """{(name, fmt): bytes} for every panel and format, one fresh panel per name.
    `quick_svg_only`: a panel whose SVG is not `svg_is_quick` gets none (its key is left out)."""
    window = host_of(window)  # (the window or its host)
    from ..panels import PANELS
    from .render import figure_parts, figure_rect

    options.validate()
    formats = [check_format(f) for f in formats]
    out: dict[tuple[str, str], bytes] = {}
    for name in names:
        title = str(PANELS[name].display_title())
        with fresh_panel(window, name, options.theme, size) as panel:
            summary = model_summary(window.state, panel) if type(panel).requires_model else None
            for fmt in formats:
                if fmt == "svg" and quick_svg_only and not svg_is_quick(panel):
                    continue
                scale = 1.0
                if fmt == "png":
                    shown = max(1, figure_rect(figure_parts(panel)).width())
                    scale = options.png_width(panel.width()) / shown
                restyle_lines(panel, options.theme, window, scale)
                out[(name, fmt)] = _render(panel, fmt, options, panel.figure_theme,
                                           config=window.state.config, title=title, fresh=True, summary=summary)
    return out


def panel_image(window, name: str, options: ExportOptions, *, size: tuple[int, int] | None = None):
    """Panel `name` as a QImage (for the clipboard), from a fresh panel."""
    window = host_of(window)  # (the window or its host)
    from PySide6.QtGui import QImage

    img = QImage()
    img.loadFromData(render_panel(window, name, "png", options, size=size), "PNG")
    return img



def ensure_current(window) -> None:
    """Make sure the window's frame is of its current config, so no figure is stale: compute
    it now (`render_sync`: the window's visible panels catch up as they would anyway)."""
    window = host_of(window)  # (the window or its host)
    frame = window.state.frame
    if frame is not None and frame.config == window.state.config:
        return
    try:
        window.render_sync(all_panels=False)
    except Exception as exc:  # the engine refused the config: nothing to export
        raise ExportError(f"the current configuration cannot be drawn: {exc}") from None
