"""Figures for slides: any panel (or the whole window) as PNG, SVG or PDF.

    render_figure(widget, "png", ExportOptions(width=1920, theme="slides"), config=cfg) -> bytes
    export_widget(widget, path, options, config=cfg, force=False) -> Path
    export_command(args) -> int          # `python main.py export ...`
    install_export_actions(window)       # File ▸ Export…, Edit ▸ Copy panel (export_dialog)

What is drawn is what the window shows (the panel as laid out, at its
current logical size), scaled to the requested width: PNG at `width` pixels
(or `dpi`), SVG and PDF as vectors sized to the widget at 96 px per inch.
The "slides" theme is light with larger fonts and thicker lines; "screen"
keeps the window's colours. Rendering lives in `export_render` (PNG, PDF) and
`export_svg` (SVG, with the pyqtgraph 0.14 fix).

Files are written safely: to a temporary file in the same folder, flushed to
disk, then moved into place; an existing file is kept unless `force`; any
failure (unwritable folder, a path that is a file, a full disk) raises
`ExportError` with one readable line and leaves no temporary file behind.
"""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

FORMATS = ("png", "svg", "pdf")
THEMES = ("slides", "screen")
#: The panels of DESIGN.md; model_* exist only when a model is loaded.
PANEL_NAMES = ("qkv", "scores", "softmax_grad", "heads", "diagnostics")
MODEL_PANEL_NAMES = ("model_grid", "model_head")
MIN_WIDTH, MAX_WIDTH = 64, 8192  # PNG pixels; 8192 is 8K, ~200 MB of RGBA at 16:10
MIN_DPI, MAX_DPI = 24, 1200
#: The logical size a panel is laid out at for a headless export (16:10, like a slide body).
CLI_PANEL_SIZE = (1200, 750)
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


def render_figure(widget, fmt: str, options: ExportOptions, *, config=None, title: str = "") -> bytes:
    """The figure of `widget` encoded as `fmt` (png, svg or pdf)."""
    from .export_render import LOOKS, render_image, render_pdf

    fmt = check_format(fmt)
    options.validate()
    if widget.width() < 2 or widget.height() < 2:
        raise ExportError(f"{title or 'the widget'} has no size yet ({widget.width()}×{widget.height()}); "
                          "show it before exporting")
    look = LOOKS[options.theme]
    if options.include_controls:  # the whole window: a screenshot, in light colours for slides
        look = replace(look, font_scale=1.0, pen_scale=1.0)
    caption = caption_text(config) if options.caption else None
    summary = config.summary() if config is not None else ""
    if fmt == "png":
        img = render_image(widget, options.png_width(widget.width()), look, caption,
                           options.include_controls)
        dpi = options.dpi or 96 * img.width() / max(1, widget.width())
        img.setDotsPerMeterX(round(dpi / 0.0254))
        img.setDotsPerMeterY(round(dpi / 0.0254))
        if title:
            img.setText("Title", title)
        if config is not None:
            img.setText("Description", config.summary())
        img.setText("Software", "Attention Explorer")
        return _encode_png(img)
    if fmt == "pdf":
        doc_title = f"{title} ({summary})" if title and summary else (title or summary)
        return render_pdf(widget, look, caption, options.include_controls, doc_title)
    from .export_svg import render_svg

    return render_svg(widget, look, caption, options.include_controls, title, summary)


def _encode_png(img) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not img.save(buf, "PNG"):
        raise ExportError("Qt could not encode the PNG image")
    buf.close()
    return bytes(data.data())


def figure_image(widget, options: ExportOptions, *, config=None):
    """The figure as a QImage (for the clipboard)."""
    from .export_render import LOOKS, render_image

    options.validate()
    caption = caption_text(config) if options.caption else None
    return render_image(widget, options.png_width(widget.width()), LOOKS[options.theme], caption,
                        options.include_controls)


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


def write_atomic(path: str | os.PathLike, data: bytes, *, force: bool = False) -> Path:
    """Write `data` to `path` via a temporary file in the same folder, then rename it into
    place. Without `force` an existing file is never replaced, even one that appears while
    we write (the final step is a hard link, which refuses to overwrite)."""
    p = Path(path)
    folder = p.parent
    if p.is_dir():
        raise ExportError(f"cannot write {p}: it is a folder")
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise ExportError(f"cannot write {p}: the folder {folder} {what}")
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


class PanelLayout:
    """Lays a docked panel out on its own at a chosen logical size (the dock floats, which
    offscreen shows nothing), grows it until no plot is cut off, and puts it back after."""

    def __init__(self, widget, size: tuple[int, int]) -> None:
        self.widget, self.size = widget, size
        self.dock = _dock_of(widget)
        self.state = None

    def __enter__(self) -> PanelLayout:
        from .export_render import settle

        d = self.dock
        if d is None:
            self.widget.resize(*self.size)
            settle()
            return self
        self.state = (d.isVisible(), d.isFloating())
        d.show()
        d.setFloating(True)
        settle()
        self._resize(*self.size)
        return self

    def _resize(self, w: int, h: int) -> None:
        from .export_render import settle

        d = self.dock
        if d is None:
            self.widget.resize(w, h)
        else:
            d.resize(w + max(0, d.width() - self.widget.width()), h + max(0, d.height() - self.widget.height()))
        settle()

    def fit(self, look, include_controls: bool = False, rounds: int = 3, max_growth: float = 1.5) -> None:
        """Widen/heighten the panel until, in `look`, every plot fits in its view and its
        titles are not cut (up to `max_growth` times the requested size)."""
        from .export_render import figure_parts, overflow, restyled

        max_w, max_h = int(self.size[0] * max_growth), int(self.size[1] * max_growth)
        for _ in range(rounds):
            parts_fn = lambda: figure_parts(self.widget, include_controls)  # noqa: E731
            with restyled(self.widget, parts_fn, look, adapt=False) as parts:
                dx, dy = overflow(parts, preferred_width=True)
            if dx <= 1 and dy <= 1:
                return
            w = min(max_w, self.widget.width() + max(0, dx) + 8)
            h = min(max_h, self.widget.height() + max(0, dy) + 8)
            if (w, h) == (self.widget.width(), self.widget.height()):
                return
            self._resize(w, h)

    def __exit__(self, *exc) -> None:
        from .export_render import settle

        if self.dock is not None and self.state is not None:
            visible, floating = self.state
            self.dock.setFloating(floating)
            self.dock.setVisible(visible)
            settle(1)


def ensure_current(window, timeout_s: float = RENDER_TIMEOUT_S) -> None:
    """Make sure the panels show the window's current config, so no figure is stale: draw it
    now when the window can (`render_sync`), else wait for `frame_rendered` of that config."""
    frame = getattr(window, "frame", None)
    if frame is not None and getattr(frame, "config", None) == window.config:
        return
    if hasattr(window, "render_sync"):
        try:
            window.render_sync()
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

    size: lay each panel out on its own at this logical size first (headless export);
    None exports the panels as they are on screen (hidden ones are refused)."""
    from .export_render import LOOKS

    out = Path(out_dir)
    known = panel_names(window)
    names = list(dict.fromkeys(names)) if names else known
    for n in names:
        if n not in known:
            raise ExportUsageError(_unknown_panel(n, known))
    formats = [check_format(f) for f in dict.fromkeys(formats)]
    options.validate()
    if not force:  # refuse before rendering anything
        for n in names:
            for f in formats:
                if (out / f"{n}.{f}").exists():
                    raise ExportError(f"{out / f'{n}.{f}'} already exists (use --force to overwrite)")
    ensure_current(window)
    written = []
    for n in names:
        widget = window.panel(n)
        title = str(widget.display_title() if hasattr(widget, "display_title") else getattr(widget, "title", "") or n)
        if size is None:
            if not is_shown(widget):
                raise ExportError(f"panel {n!r} is hidden: show it in the window first")
            layout = None
        else:
            layout = PanelLayout(widget, size)
        with layout if layout is not None else _nothing():
            if layout is not None:
                if n == "diagnostics" and hasattr(window, "measure_backends_sync"):
                    window.measure_backends_sync()  # the backend table, not "measuring…"
                layout.fit(LOOKS[options.theme], options.include_controls)
            for f in formats:
                data = render_figure(widget, f, options, config=window.config, title=title)
                p = write_atomic(out / f"{n}.{f}", data, force=force)
                written.append(p)
                if on_written is not None:
                    on_written(p)
    return written


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc) -> None:
        return None


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
    [--width PX] [--force]`: 0 done, 2 bad arguments, 1 anything else (one line on stderr)."""
    names = list(dict.fromkeys(args.panels or []))
    bad = [n for n in names if n not in PANEL_NAMES + MODEL_PANEL_NAMES]
    if bad:
        return _fail(_unknown_panel(bad[0], PANEL_NAMES), 2)
    try:
        formats = [check_format(f) for f in (args.formats or ["png"])]
        options = ExportOptions(
            width=args.width,
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

    app = _headless_app()
    from . import create_window

    window = None
    quiet = _QuietOffscreen()
    try:
        try:
            window = create_window(session)
        except Exception as exc:  # e.g. SessionError for a session the window refuses
            return _fail(str(exc), 1)
        window.show()
        app.processEvents()
        if has_model and hasattr(window, "model_controller"):
            # the session names a model: wait until it is loaded and its panels drawn
            problem = window.model_controller.wait_ready(RENDER_TIMEOUT_S)
            if problem:
                raise ExportError(f"the session's model: {problem}")

        def printed(p: Path) -> None:
            print(p, flush=True)

        known = panel_names(window)
        for n in names:
            if n not in known:
                raise ExportUsageError(_unknown_panel(n, known))
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ExportError(f"cannot create the folder {out}: {_reason(exc)}") from None
        export_panels(window, out, names or None, formats, options, force=args.force,
                      size=CLI_PANEL_SIZE, on_written=printed)
    except ExportUsageError as exc:
        return _fail(str(exc), 2)
    except ExportError as exc:
        return _fail(str(exc), 1)
    finally:
        if window is not None:
            # not close(): that would save this headless layout as the user's window state
            if hasattr(window, "shutdown"):
                window.shutdown()
            window.hide()
            window.deleteLater()
            app.processEvents()
        quiet.restore()
    return 0


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
