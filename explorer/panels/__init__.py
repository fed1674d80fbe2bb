"""The window's panels, registered by name (see base.PANELS).

Importing this package registers the five core panels in their default
order; later panels (model_grid, model_head) register the same way. `lesson`
is registered too but not a default panel: the Lessons menu opens its dock.
"""

from . import diagnostics, heads, lesson, model_grid, model_head, qkv, scores, softmax_grad  # noqa: F401 (registers)
from .base import PANELS, Panel, register_panel

CORE_PANELS = ("heads", "qkv", "scores", "softmax_grad", "diagnostics")

__all__ = ["CORE_PANELS", "PANELS", "Panel", "register_panel"]
