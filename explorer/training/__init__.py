"""The training lab's window half: the `training` panel, its thread and its experiments.

`install_training(window)` gives a window its lab (`window.training_lab`) and a menu entry
(Lessons ▸ Training lab…); the panel's dock is made the first time it is asked for, so a
window that never opens the lab never starts its training process. The engine is
`engine.training`.

Importing this package is cheap and Qt-free (the training process imports
`explorer.training.serve` and nothing of the GUI): the Qt parts load on first use.
"""

from __future__ import annotations

import importlib

__all__ = ["PRESETS", "Preset", "Run", "TrainingLab", "TrainingPanel", "install_training",
           "show_training"]

_LAZY = {"install_training": "feature", "show_training": "feature", "PRESETS": "presets", "Preset": "presets",
         "Run": "lab", "TrainingLab": "lab", "TrainingPanel": "panel"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
