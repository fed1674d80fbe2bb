"""The dock layer: each panel's minimum readable size, named perspectives (default, each
lesson's, model, training), View ▸ Reset layout, and the user's layout remembered across runs.

    perspectives.py   Perspective, DEFAULT, MODEL, TRAINING, lesson_perspective (Qt-free)
    docks.py          DockLayout: readable sizes, show_panel, apply, reset, save/restore, tab bars
"""

from .perspectives import DEFAULT, MODEL, TRAINING, Perspective, lesson_perspective, perspectives

__all__ = ["DEFAULT", "MODEL", "TRAINING", "Perspective", "lesson_perspective", "perspectives"]
