"""Figures for slides: any panel (or the whole window) as PNG, SVG or PDF.

    render_panel(window, "heads", "png", ExportOptions(width=1920, theme="slides")) -> bytes
    export_panels(window, out_dir, names, formats, options, force=False) -> [Path]
    render_figure(window, "png", options, config=cfg) -> bytes   # the whole window, as it is
    export_command(args) -> int          # `python main.py export ...`
    install_export_actions(window)       # File ▸ Export…, Edit ▸ Copy panel (export_dialog)

A panel figure is a fresh panel (`fresh_panel`): built offscreen from the
window's current state (frame, selection, model, the panel's own options) in
the figure's theme, laid out at FIGURE_SIZE logical px, rendered and thrown
away. The window is never restyled or resized, and panels behind a tab or
closed export like shown ones; the File ▸ Export dialog and the CLI go
through the same code, so they give the same picture. PNG is that picture at
`width` pixels (or `dpi`), SVG and PDF are vectors at 96 px per inch. The
"slides" theme is light with larger fonts and thicker lines; "screen" is the
window's theme. Painting lives in `export_render` (PNG, PDF) and `export_svg`
(SVG, with the pyqtgraph 0.14 fix).

Files are written safely: to a temporary file in the same folder, flushed to
disk, then moved into place; an existing file is kept unless `force`; any
failure (unwritable folder, a path that is a file, a full disk) raises
`ExportError` with one readable line and leaves no temporary file behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

FORMATS = ("png", "svg", "pdf")
THEMES = ("slides", "screen")
#: The panels of DESIGN.md; model_* exist only when a model is loaded.
PANEL_NAMES = ("qkv", "scores", "softmax_grad", "heads", "diagnostics")
MODEL_PANEL_NAMES = ("model_grid", "model_head")
#: Panels every window has, closed at first (View ▸ opens them): exportable by name too.
CLOSED_PANEL_NAMES = ("positions", "tiling", "decode")
MIN_WIDTH, MAX_WIDTH = 64, 8192  # PNG pixels; 8192 is 8K, ~200 MB of RGBA at 16:10
MIN_DPI, MAX_DPI = 24, 1200
#: The logical size a figure's panel is laid out at (16:10, like a slide body), in the window's
#: exports and the CLI's alike; a PNG is this picture at the requested width.
FIGURE_SIZE = (1200, 750)
RENDER_TIMEOUT_S = 120.0


class ExportError(Exception):
    """An export that could not be done; str() is one line for the user."""


class ExportUsageError(ExportError):
    """Bad arguments (the CLI exits 2)."""


@dataclass(frozen=True)
class ExportOptions:
    """width: PNG pixel width (ignored when dpi is set); dpi: PNG resolution relative to
    the widget's size at 96 dpi (192 → twice the screen size); theme: 'slides' or 'screen';
    caption: add a line with the config summary under the figure; include_controls: keep
    buttons, combo boxes and sliders in the picture (the whole window does)."""

    width: int = 1920
    dpi: float | None = None
    theme: str = "slides"
    caption: bool = False
    include_controls: bool = False

    def validate(self) -> ExportOptions:
        if self.theme not in THEMES:
            raise ExportUsageError(f"theme must be one of {', '.join(THEMES)}, got {self.theme!r}")
        if self.dpi is None:
            if not isinstance(self.width, int) or not MIN_WIDTH <= self.width <= MAX_WIDTH:
                raise ExportUsageError(
                    f"width must be an integer from {MIN_WIDTH} to {MAX_WIDTH} pixels, got {self.width!r}")
        elif not MIN_DPI <= self.dpi <= MAX_DPI:
            raise ExportUsageError(f"dpi must be from {MIN_DPI} to {MAX_DPI}, got {self.dpi!r}")
        return self

    def png_width(self, logical_width: int) -> int:
        if self.dpi is None:
            return self.width
        return max(MIN_WIDTH, min(MAX_WIDTH, round(logical_width * self.dpi / 96)))


def check_format(fmt: str) -> str:
    f = fmt.lower().lstrip(".")
    if f not in FORMATS:
        raise ExportUsageError(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    return f


# ---- rendering ----------------------------------------------------------------------------


def caption_text(config) -> str | None:
    """The one-line config summary for a caption (None without a config)."""
    if config is None:
        return None
    from PySide6.QtCore import QCoreApplication  # the caption follows the interface language

    return QCoreApplication.translate("Export", "Attention Explorer · {summary}").format(summary=config.summary())


def _encode(img, fmt_title: str, config, dpi: float | None, logical_width: int) -> bytes:
    """A rendered QImage as PNG bytes with its resolution and text chunks."""
    dpi = dpi or 96 * img.width() / max(1, logical_width)
    img.setDotsPerMeterX(round(dpi / 0.0254))
    img.setDotsPerMeterY(round(dpi / 0.0254))
    if fmt_title:
        img.setText("Title", fmt_title)
    if config is not None:
        img.setText("Description", config.summary())
    img.setText("Software", "Attention Explorer")
    return _encode_png(img)


def _render(root, fmt: str, options: ExportOptions, theme, *, config, title: str, fresh: bool) -> bytes:
    """`root` (a fresh figure panel, or the window as it is) encoded as `fmt`."""
    from .export_render import render_image, render_pdf

    caption = caption_text(config) if options.caption else None
    summary = config.summary() if config is not None else ""
    if fmt == "png":
        img = render_image(root, options.png_width(root.width()), theme, caption,
                           options.include_controls, fresh)
        return _encode(img, title, config, options.dpi, root.width())
    if fmt == "pdf":
        doc_title = f"{title} ({summary})" if title and summary else (title or summary)
        return render_pdf(root, theme, caption, options.include_controls, doc_title, fresh)
    from .export_svg import render_svg

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
    """The explorer window `widget` is a panel of, or None."""
    name = getattr(widget, "name", None)
    w = widget.window() if hasattr(widget, "window") else None
    if not name or w is None or w is widget or not hasattr(w, "panel"):
        return None
    try:
        return w if w.panel(name) is widget else None
    except KeyError:
        return None


def _screen_theme(widget):
    from .figures.themes import DARK

    w = widget.window() if hasattr(widget, "window") else None
    return getattr(w, "theme", None) or DARK


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


def _settle(rounds: int = 2) -> None:
    from .export_render import settle

    settle(rounds)


def _copy_view_options(source, target) -> None:
    """The panel's own choices (a combo box's entry, a spin box's value, a check box) from
    the window's panel to the figure's: both build their controls in the same order."""
    from PySide6.QtWidgets import QAbstractSpinBox, QCheckBox, QComboBox

    for kind, get, put in ((QComboBox, "currentIndex", "setCurrentIndex"),
                           (QAbstractSpinBox, "value", "setValue"),
                           (QCheckBox, "isChecked", "setChecked")):
        mine, theirs = source.findChildren(kind), target.findChildren(kind)
        for a, b in zip(mine, theirs):
            if type(a) is type(b) and hasattr(a, get):
                b.blockSignals(True)
                getattr(b, put)(getattr(a, get)())
                b.blockSignals(False)


def _frame_of(window):
    """The frame of the window's current config (computed now when the window is behind)."""
    ensure_current(window)
    frame = getattr(window, "frame", None)
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
    frames: explorer.animation)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from .export_render import figure_parts, overflow
    from .figures.themes import figure_theme, qt_palette, stylesheet
    from .selection import HoverLink

    source = window.panel(name)
    cls = type(source)
    theme = figure_theme(theme_name, window.theme)
    w, h = size or FIGURE_SIZE
    if cls.requires_model:
        ctl = window.model_controller
        panel = cls(ctl.selection, HoverLink())
    else:
        frame = _frame_of(window) if frame is None else frame
        panel = cls(window.selection if selection is None else selection, HoverLink())
    try:
        panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        panel.setPalette(qt_palette(theme))
        panel.setAutoFillBackground(True)
        panel.setStyleSheet(stylesheet(theme))
        app_pt = QApplication.font().pointSizeF()
        panel.setFont(theme.font(app_pt if app_pt > 0 else 9.0))
        if getattr(window, "reference", None) is not None:  # the pinned A, before the panel's
            panel.set_reference(window.reference)           # own Show choice is copied
        _copy_view_options(source, panel)
        panel.apply_theme(theme)
        panel.resize(w, h)
        panel.show()
        _settle()
        if cls.requires_model:
            panel.set_model(ctl)
        else:
            panel.show_frame(frame)
            if name == "diagnostics":
                panel.set_backends(frame.backends if frame.backends is not None
                                   else _measure_backends(window, frame))
        for mine, theirs in zip(source.heatmaps(), panel.heatmaps()):
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
        panel.figure_theme = theme
        yield panel
    finally:
        panel.detach()
        panel.hide()
        panel.setParent(None)
        panel.deleteLater()
        _settle(1)


def _measure_backends(window, frame) -> dict:
    from .frame import measure_backends

    return measure_backends(frame.config)


def _restyle_lines(panel, theme_name: str, window, raster_scale: float) -> None:
    """Re-draw the figure panel with its lines `raster_scale` times wider (a PNG larger than
    the layout: Qt's cosmetic pens are device pixels)."""
    from .figures.themes import figure_theme

    theme = figure_theme(theme_name, window.theme, raster_scale)
    if theme != panel.figure_theme:
        panel.figure_theme = theme
        panel.apply_theme(theme)
        _settle(1)


def render_panel(window, name: str, fmt: str, options: ExportOptions, *,
                 size: tuple[int, int] | None = None) -> bytes:
    """Panel `name` of `window` as a figure (`fmt`: png, svg, pdf), from a fresh panel."""
    return render_panels(window, [name], [fmt], options, size=size)[(name, fmt)]


def render_panels(window, names: Sequence[str], formats: Sequence[str], options: ExportOptions, *,
                  size: tuple[int, int] | None = None) -> dict[tuple[str, str], bytes]:
    """{(name, fmt): bytes} for every panel and format, one fresh panel per name."""
    from .export_render import figure_parts, figure_rect

    options.validate()
    formats = [check_format(f) for f in formats]
    out: dict[tuple[str, str], bytes] = {}
    for name in names:
        source = window.panel(name)
        title = str(source.display_title() if hasattr(source, "display_title") else name)
        with fresh_panel(window, name, options.theme, size) as panel:
            for fmt in formats:
                scale = 1.0
                if fmt == "png":
                    shown = max(1, figure_rect(figure_parts(panel)).width())
                    scale = options.png_width(panel.width()) / shown
                _restyle_lines(panel, options.theme, window, scale)
                out[(name, fmt)] = _render(panel, fmt, options, panel.figure_theme,
                                           config=window.config, title=title, fresh=True)
    return out


def panel_image(window, name: str, options: ExportOptions, *, size: tuple[int, int] | None = None):
    """Panel `name` as a QImage (for the clipboard), from a fresh panel."""
    from PySide6.QtGui import QImage

    img = QImage()
    img.loadFromData(render_panel(window, name, "png", options, size=size), "PNG")
    return img


# ---- safe writing --------------------------------------------------------------------------


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "the disk is full"
    if exc.errno == errno.EDQUOT:
        return "the disk quota is exceeded"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "the file system is read-only"
    if exc.errno == errno.ENOTDIR:
        return "a part of the path is a file, not a folder"
    if exc.errno == errno.ENOENT:
        return "the folder does not exist"
    return exc.strerror or str(exc)


def check_target(p: Path) -> Path:
    """The folder a file `p` would be written into; ExportError when `p` is a folder or its
    folder is missing or a file."""
    folder = p.parent
    if p.is_dir():
        raise ExportError(f"cannot write {p}: it is a folder")
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise ExportError(f"cannot write {p}: the folder {folder} {what}")
    return folder


def write_atomic(path: str | os.PathLike, data: bytes, *, force: bool = False) -> Path:
    """Write `data` to `path` via a temporary file in the same folder, then rename it into
    place. Without `force` an existing file is never replaced, even one that appears while
    we write (the final step is a hard link, which refuses to overwrite)."""
    p = Path(path)
    folder = check_target(p)
    if p.exists() and not force:
        raise ExportError(f"{p} already exists (use --force to overwrite)")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise ExportError(f"cannot write in {folder}: {_reason(exc)}") from None
    try:
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o644 & ~_umask())
            if force:
                os.replace(tmp, p)
            else:
                _publish_no_clobber(tmp, p)
        except OSError as exc:
            raise ExportError(f"cannot write {p}: {_reason(exc)}") from None
    finally:
        if os.path.exists(tmp):
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return p


def _publish_no_clobber(tmp: str, p: Path) -> None:
    try:
        os.link(tmp, p)  # atomic, fails if p exists
    except FileExistsError:
        raise ExportError(f"{p} already exists (use --force to overwrite)") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        # a file system without hard links (FAT, some network shares): check, then rename
        if p.exists():
            raise ExportError(f"{p} already exists (use --force to overwrite)") from None
        os.replace(tmp, p)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def export_widget(widget, path: str | os.PathLike, options: ExportOptions, *, config=None,
                  force: bool = False, fmt: str | None = None, title: str = "") -> Path:
    """Render `widget` and write it to `path` (format from `fmt` or the suffix)."""
    p = Path(path)
    fmt = check_format(fmt or p.suffix or "?")
    if p.exists() and not force:  # fail before spending time on the render
        raise ExportError(f"{p} already exists (use --force to overwrite)")
    data = render_figure(widget, fmt, options, config=config, title=title or p.stem)
    return write_atomic(p, data, force=force)


# ---- the window's panels ---------------------------------------------------------------------


#: Panels a window makes on first use (View ▸ opens them): exportable by name, an export
#: makes them with their dock closed: name → "module:function(window)" that makes it.
ON_DEMAND_PANELS = {"profile": "explorer.profile:profile_panel"}


def make_on_demand(window, names: Iterable[str] | None) -> None:
    """Make the on-demand panels among ``names`` that ``window`` has not made yet (closed)."""
    import importlib

    have = window.panel_names() if hasattr(window, "panel_names") else None
    for n in names or ():
        if have is not None and n in ON_DEMAND_PANELS and n not in have:
            module, function = ON_DEMAND_PANELS[n].split(":")
            getattr(importlib.import_module(module), function)(window)


def panel_names(window) -> list[str]:
    """The panels this window has (model panels only once a model is loaded)."""
    if hasattr(window, "panel_names"):
        # not the lesson panel: it is text and buttons, not a figure
        return [n for n in window.panel_names() if getattr(window.panel(n), "exportable", True)]
    names = []
    for name in (*PANEL_NAMES, *MODEL_PANEL_NAMES):
        try:
            window.panel(name)
        except (KeyError, LookupError):
            continue
        names.append(name)
    return names


def _dock_of(widget):
    from PySide6.QtWidgets import QDockWidget

    w = widget
    while w is not None:
        if isinstance(w, QDockWidget):
            return w
        w = w.parentWidget()
    return None


def is_shown(widget) -> bool:
    """Whether the panel is on screen in its window (not closed, not behind a dock tab)."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


def ensure_current(window, timeout_s: float = RENDER_TIMEOUT_S) -> None:
    """Make sure the window's frame is of its current config, so no figure is stale: compute
    it now when the window can (`render_sync`: the window's visible panels catch up as they
    would anyway), else wait for `frame_rendered` of that config."""
    frame = getattr(window, "frame", None)
    if frame is not None and getattr(frame, "config", None) == window.config:
        return
    if hasattr(window, "render_sync"):
        try:
            window.render_sync(all_panels=False)
        except Exception as exc:  # the engine refused the config: nothing to export
            raise ExportError(f"the current configuration cannot be drawn: {exc}") from None
        return
    from PySide6.QtCore import QEventLoop, QTimer

    target, loop, got = window.config, QEventLoop(), []

    def on_rendered(cfg) -> None:
        if cfg == target:
            got.append(cfg)
            loop.quit()

    window.frame_rendered.connect(on_rendered)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    try:
        loop.exec()
    finally:
        window.frame_rendered.disconnect(on_rendered)
    if not got:
        raise ExportError(f"the panels did not finish drawing within {timeout_s:.0f} s")


def export_panels(window, out_dir: str | os.PathLike, names: Iterable[str] | None, formats: Sequence[str],
                  options: ExportOptions, *, force: bool = False, size: tuple[int, int] | None = None,
                  on_written: Callable[[Path], None] | None = None) -> list[Path]:
    """Write out_dir/NAME.FORMAT for each panel and format; returns the paths written.

    Every figure is a fresh panel drawn from the window's current state (`fresh_panel`),
    laid out at `size` (default FIGURE_SIZE), also for panels behind a tab or closed. All of
    them are rendered before the first file is written, and a failure while writing removes
    the files this call wrote: the folder gets all the figures or nothing new."""
    out = Path(out_dir)
    names = list(names) if names is not None else None
    make_on_demand(window, names)
    known = panel_names(window)
    names = list(dict.fromkeys(names)) if names else known
    for n in names:
        if n not in known:
            raise ExportUsageError(_unknown_panel(n, known))
    formats = [check_format(f) for f in dict.fromkeys(formats)]
    options.validate()
    targets = [(n, f, out / f"{n}.{f}") for n in names for f in formats]
    if not force:  # refuse before rendering anything
        for _n, _f, path in targets:
            if path.is_dir():
                raise ExportError(f"cannot write {path}: it is a folder")
            if path.exists():
                raise ExportError(f"{path} already exists (use --force to overwrite)")
    figures = render_panels(window, names, formats, options, size=size)
    written: list[Path] = []
    try:
        for n, f, path in targets:
            written.append(write_atomic(path, figures[(n, f)], force=force))
    except ExportError:
        for p in written:
            with contextlib.suppress(OSError):
                p.unlink()
        raise
    for p in written:
        if on_written is not None:
            on_written(p)
    return written


def _unknown_panel(name: str, known: Sequence[str]) -> str:
    if name in MODEL_PANEL_NAMES:
        return f"panel {name!r} needs a loaded model (the session has none)"
    return f"unknown panel {name!r}: choose from {', '.join(known)}"


# ---- command line ------------------------------------------------------------------------------


def _fail(msg: str, code: int) -> int:
    print(f"attention-explorer export: {msg}".splitlines()[0], file=sys.stderr)
    return code


def export_command(args) -> int:
    """`python main.py export --out DIR [--session FILE] [--panel NAME]... [--format F]...
    [--width PX] [--force]`: 0 done, 2 bad arguments, 1 anything else (one line on stderr).
    With `--sweep FIELD=START:STOP:STEP`: animations (`explorer.animation.sweep_command`)."""
    if getattr(args, "sweep", None):
        from .animation import sweep_command

        return sweep_command(args)
    if any(str(f).lower() in ("gif", "mp4") for f in args.formats or []):
        return _fail("gif and mp4 are animations: add --sweep FIELD=START:STOP:STEP", 2)
    names = list(dict.fromkeys(args.panels or []))
    bad = [n for n in names if n not in PANEL_NAMES + CLOSED_PANEL_NAMES + MODEL_PANEL_NAMES]
    bad = [n for n in bad if n not in ON_DEMAND_PANELS]
    if bad:
        return _fail(_unknown_panel(bad[0], PANEL_NAMES + CLOSED_PANEL_NAMES + tuple(ON_DEMAND_PANELS)), 2)
    try:
        formats = [check_format(f) for f in (args.formats or ["png"])]
        options = ExportOptions(
            width=1920 if args.width is None else args.width,
            dpi=getattr(args, "dpi", None),
            theme=getattr(args, "theme", None) or "slides",
            caption=bool(getattr(args, "caption", False)),
        ).validate()
    except ExportUsageError as exc:
        return _fail(str(exc), 2)

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        return _fail(f"--out {out} is a file, not a folder", 1)
    if not args.force and out.is_dir():  # refuse before building a window
        for n in names or PANEL_NAMES:
            for f in formats:
                if (out / f"{n}.{f}").exists():
                    return _fail(f"{out / f'{n}.{f}'} already exists (use --force to overwrite)", 1)
    session, has_model = None, False
    if args.session:
        try:
            from .session import SessionError, load_session
        except ImportError:
            session = args.session
        else:
            try:
                has_model = load_session(args.session).model is not None
            except SessionError as exc:
                return _fail(str(exc), 1)
            session = args.session
    wants_model = [n for n in names if n in MODEL_PANEL_NAMES]
    if wants_model and not has_model:
        return _fail(_unknown_panel(wants_model[0], PANEL_NAMES), 2)

    try:
        with headless_window(session) as window:
            if has_model and hasattr(window, "model_controller"):
                # the session names a model: wait until it is loaded and its panels drawn
                problem = window.model_controller.wait_ready(RENDER_TIMEOUT_S)
                if problem:
                    raise ExportError(f"the session's model: {problem}")

            def printed(p: Path) -> None:
                print(p, flush=True)

            make_on_demand(window, names)
            known = panel_names(window)
            for n in names:
                if n not in known:
                    raise ExportUsageError(_unknown_panel(n, known))
            try:
                out.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ExportError(f"cannot create the folder {out}: {_reason(exc)}") from None
            export_panels(window, out, names or None, formats, options, force=args.force,
                          on_written=printed)
    except ExportUsageError as exc:
        return _fail(str(exc), 2)
    except ExportError as exc:
        return _fail(str(exc), 1)
    return 0


@contextlib.contextmanager
def headless_window(session):
    """The full window for a command-line export, shown offscreen with Qt's offscreen chatter
    quiet, and put away however the export ends: shut down, not closed (closing would save
    this headless layout as the user's window state). A window that cannot be made (e.g. a
    session it refuses) is an ExportError with its reason."""
    app = _headless_app()
    from . import create_window

    window = None
    quiet = _QuietOffscreen()
    try:
        try:
            window = create_window(session)
        except Exception as exc:  # e.g. SessionError
            raise ExportError(str(exc)) from None
        window.show()
        app.processEvents()
        yield window
    finally:
        if window is not None:
            window.shutdown()
            window.hide()
            window.deleteLater()
            app.processEvents()
        quiet.restore()


class _QuietOffscreen:
    """Drop Qt's notes that an offscreen platform cannot raise windows or pass size hints
    (they would clutter the one-path-per-line output); every other message passes."""

    HARMLESS = ("This plugin does not support",)

    def __init__(self) -> None:
        from PySide6.QtCore import qInstallMessageHandler

        self._previous = qInstallMessageHandler(self._handle)

    def _handle(self, mode, context, message: str) -> None:
        if message.startswith(self.HARMLESS):
            return
        if self._previous is not None:
            self._previous(mode, context, message)
        else:
            print(message, file=sys.stderr)

    def restore(self) -> None:
        from PySide6.QtCore import qInstallMessageHandler

        qInstallMessageHandler(self._previous)


def _headless_app():
    """The QApplication; a new one renders offscreen unless a platform was chosen."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = QApplication([sys.argv[0] if sys.argv else "attention-explorer"])
    return app


def install_export_actions(window):
    """File ▸ Export figure…, Edit ▸ Copy panel; see `export_dialog.install_export_actions`."""
    from .export_dialog import install_export_actions as install

    return install(window)
