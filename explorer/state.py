"""The application state: what every panel and feature reads, with one change signal per field.

    state = AppState()                      # the window makes one; a figure gets a copy
    state.selection.changed / state.hover   # the sliders' layer: head, query, key; the crosshair
    state.model_selection, state.model_hover  # the loaded model's: layer, head, query, key
    state.set_reference(frame)   -> reference_changed(frame | None)   # the pinned A
    state.set_theme(theme)       -> theme_changed(theme)
    state.set_lesson(key)        -> lesson_changed(key | None)
    state.training_lab, state.profile   # the lab and the length profile, once made
    figure = state.for_figure(selection=None)   # an export's own panel: same data, own hover

A panel is built from the state (`Panel(state)`) and draws from it; a feature (export,
models, training, profile, animation, snapshots, compare, lessons) is made from the window
and reads the same state, so nothing keeps a side registry keyed by a `Selection` to find
its data. Setters emit only on a real change. The window stays the owner of the config and
its frame (`MainWindow.config`, `set_config`, `frame_rendered`: the public contract).

The fields are plain Python values; Qt is used only for the signals.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from .selection import HoverLink, ModelSelection, Selection


class AppState(QObject):
    """The state of one window (see the module docstring)."""

    reference_changed = Signal(object)  # Frame | None
    theme_changed = Signal(object)      # figures.themes.Theme
    lesson_changed = Signal(object)     # chapter key | None

    def __init__(self, parent: QObject | None = None, *, theme: Any = None) -> None:
        super().__init__(parent)
        self.selection = Selection(self)
        self.hover = HoverLink(self)
        self.model_selection = ModelSelection(self)
        self.model_hover = HoverLink(self)
        self.reference = None  # Frame | None: the pinned A
        self.theme = theme
        self.lesson: str | None = None
        #: explorer.training.lab.TrainingLab, made by the training feature (None until then)
        self.training_lab = None
        #: explorer.profile.state.ProfileState, made with the profile feature (None until then)
        self.profile = None
        #: explorer.models.controller.ModelController, made with the models feature
        self.models = None

    # ---- evented fields --------------------------------------------------------------------
    def set_reference(self, frame) -> None:
        if frame is not self.reference:
            self.reference = frame
            self.reference_changed.emit(frame)

    def set_theme(self, theme) -> None:
        if theme != self.theme:
            self.theme = theme
            self.theme_changed.emit(theme)

    def set_lesson(self, key: str | None) -> None:
        if key != self.lesson:
            self.lesson = key
            self.lesson_changed.emit(key)

    # ---- a figure's copy -----------------------------------------------------------------------
    def for_figure(self, selection: Selection | None = None) -> AppState:
        """A state for an export's fresh panel: the same data (reference, theme, lesson, the
        lab, the profile, the model and its selection), a hover link of its own (a figure has
        no crosshair), and `selection` (an animation's clamped copy) or the window's. The
        copy follows nothing: delete it with the figure."""
        fig = AppState(theme=self.theme)
        fig.selection = selection if selection is not None else self.selection
        fig.model_selection = self.model_selection
        fig.reference = self.reference
        fig.lesson = self.lesson
        fig.training_lab = self.training_lab
        fig.profile = self.profile
        fig.models = self.models
        return fig
