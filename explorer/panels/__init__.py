"""The window's panels, registered by name (see base.PANELS).

Importing this package registers the five core panels in their default
order; later panels (model_grid, model_head, and the circuits panels: circuits,
logit_lens, attribution, patching, model_qk_space) register the same way. `lesson`
is registered too but not a default panel: the Lessons menu opens its dock.
"""

from . import (  # noqa: F401 (registers)
    attribution,
    circuits,
    decode,
    diagnostics,
    efficient,
    heads,
    lesson,
    logit_lens,
    model_grid,
    model_head,
    patching,
    positions,
    qk_space,
    qkv,
    scores,
    softmax_grad,
    tiling,
)
from .base import PANELS, Panel, register_panel

CORE_PANELS = ("heads", "qkv", "scores", "softmax_grad", "diagnostics")
#: made with the window but closed, each placed in a tab beside a core panel for when View ▸
#: opens it: (panel, the panel it shares a tab with)
TABBED_PANELS = (("positions", "qkv"), ("tiling", "heads"), ("decode", "heads"),
                 ("qk_space", "qkv"), ("efficient", "heads"))

__all__ = ["CORE_PANELS", "PANELS", "TABBED_PANELS", "Panel", "register_panel"]
