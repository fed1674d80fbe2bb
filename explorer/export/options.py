"""What an export is asked for, before anything is drawn: formats, themes, the panel
names, the limits of a figure's size, `ExportOptions`, and the errors (one line for the user;
`ExportUsageError` is a bad argument: the CLI exits 2). Qt-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

FORMATS = ("png", "svg", "pdf")
THEMES = ("slides", "screen")
#: The panels of docs/contract.md; model_* exist only when a model is loaded.
PANEL_NAMES = ("qkv", "scores", "softmax_grad", "heads", "diagnostics")
MODEL_PANEL_NAMES = ("model_grid", "model_head", "circuits", "logit_lens", "attribution", "patching",
                     "model_qk_space")
#: Panels every window has, closed at first (View ▸ opens them): exportable by name too.
CLOSED_PANEL_NAMES = ("positions", "tiling", "decode", "qk_space", "efficient")
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



#: Panels a window makes on first use (View ▸ opens them): exportable by name, an export
#: makes them with their dock closed: name → "module:function(window)" that makes it.
ON_DEMAND_PANELS = {"profile": "explorer.profile:profile_panel"}


def unknown_panel(name: str, known: Sequence[str]) -> str:
    if name in MODEL_PANEL_NAMES:
        return f"panel {name!r} needs a loaded model (the session has none)"
    return f"unknown panel {name!r}: choose from {', '.join(known)}"
