"""Figures for slides and films for lessons: any panel as PNG, SVG or PDF, a sweep of a config
field as GIF or MP4, from the window's menus and from `python main.py export`.

    render_panel(window, "heads", "png", ExportOptions(width=1920)) -> bytes    # fresh.py
    export_panels(window, out_dir, names, formats, options) -> [Path]           # files.py
    write_atomic(path, data, force=False) -> Path                               # files.py

The modules, each with one job (none imports another's private names):
    options   what is asked: formats, themes, panel names, ExportOptions, the errors
    fresh     a figure is a fresh panel drawn offscreen from the window's state
    render    painting a panel's parts onto a QImage or a PDF
    svg       the same parts as SVG (with pyqtgraph 0.14's fix)
    files     safe writing: temporary file, fsync, rename; all figures of a call or none
    sweep     a config field's values (Qt-free)
    animation a sweep or a training film: frames → one encoder → GIF/MP4
    dialog, animation_dialog   File ▸ Export figure…, Copy panel, File ▸ Export animation…
    cli       `python main.py export ...`

Importing this package does not import Qt (the command line reads the names first). The
command itself is `explorer.export.cli.export_command`: it builds the whole window, so the
facade leaves it out (the window's own modules import this package).
"""

from .files import export_panels, export_widget, panel_names, write_atomic
from .fresh import (
    caption_text,
    fresh_panel,
    panel_image,
    render_figure,
    render_panel,
    render_panels,
)
from .options import (
    CLOSED_PANEL_NAMES,
    FIGURE_SIZE,
    FORMATS,
    MODEL_PANEL_NAMES,
    PANEL_NAMES,
    THEMES,
    ExportError,
    ExportOptions,
    ExportUsageError,
)

__all__ = [
    "CLOSED_PANEL_NAMES", "FIGURE_SIZE", "FORMATS", "MODEL_PANEL_NAMES", "PANEL_NAMES", "THEMES",
    "ExportError", "ExportOptions", "ExportUsageError", "caption_text",
    "export_panels", "export_widget", "fresh_panel", "panel_image", "panel_names", "render_figure",
    "render_panel", "render_panels", "write_atomic",
]
