"""The application state: what every panel and feature reads, with one change signal per field.

    state = AppState()                      # the window makes one; a figure gets a copy
    state.selection.changed / state.hover   # the sliders' layer: head, query, key; the crosshair
    state.model_selection, state.model_hover  # the loaded model's: layer, head, query, key
    state.config                 -> config_changed(config); request_config(cfg) asks the window
    state.set_reference(frame)   -> reference_changed(frame | None)   # the pinned A
    state.set_theme(theme)       -> theme_changed(theme)
    state.set_lesson(key)        -> lesson_changed(key | None)   # the lesson panel's chapter
    state.set_language(code)     -> language_changed(code)
    state.training_lab, state.profile, state.models, state.snapshots   # the features' data, once made
    figure = state.for_figure(selection=None)   # an export's own panel: same data, own hover

A panel is built from the state (`Panel(state)`) and draws from it; a feature (export,
models, training, profile, animation, snapshots, compare, lessons) is made from the window
and reads the same state, so nothing keeps a side registry keyed by a `Selection` to find
its data. Setters emit only on a real change. The window stays the owner of the config and
its frame (`MainWindow.config`, `set_config`, `frame_rendered`: the public contract); the
state mirrors the config, and a panel asks for another one with `request_config`.

The fields are plain Python values; Qt is used only for the signals.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from .selection import HoverLink, ModelSelection, Selection


class AppState(QObject):
    """The state of one window (see the module docstring)."""

    config_changed = Signal(object)     # engine.AttentionConfig: what the sliders show now
    config_requested = Signal(object)   # engine.AttentionConfig: a panel asks the window for it
    reference_changed = Signal(object)  # Frame | None
    theme_changed = Signal(object)      # figures.themes.Theme
    lesson_changed = Signal(object)     # chapter key | None
    language_changed = Signal(str)      # "en", "zh_CN"

    def __init__(self, parent: QObject | None = None, *, theme: Any = None) -> None:
        super().__init__(parent)
        self.selection = Selection(self)
        self.hover = HoverLink(self)
        self.model_selection = ModelSelection(self)
        self.model_hover = HoverLink(self)
        self.config = None  # engine.AttentionConfig: the window's (MainWindow.set_config sets it)
        self.reference = None  # Frame | None: the pinned A
        self.theme = theme
        self.lesson: str | None = None  # the chapter the lesson panel shows, None when closed
        self.language = "en"  # the interface language (MainWindow.set_language sets it)
        #: explorer.training.lab.TrainingLab, made by the training feature (None until then)
        self.training_lab = None
        #: explorer.profile.state.ProfileState, made with the profile feature (None until then)
        self.profile = None
        #: explorer.models.controller.ModelController, made with the models feature
        self.models = None
        #: explorer.snapshots.SnapshotList, made with the snapshots feature
        self.snapshots = None

    # ---- evented fields --------------------------------------------------------------------
    def set_config(self, config) -> None:
        """The window's config changed (MainWindow.set_config calls this; a panel that wants
        another config calls `request_config`)."""
        if config != self.config:
            self.config = config
            self.config_changed.emit(config)

    def request_config(self, config) -> None:
        """Ask the window to show `config` (an undoable step, like a slider's change)."""
        self.config_requested.emit(config)

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

    def set_language(self, code: str) -> None:
        if code != self.language:
            self.language = code
            self.language_changed.emit(code)

    # ---- a figure's copy -----------------------------------------------------------------------
    def for_figure(self, selection: Selection | None = None) -> AppState:
        """A state for an export's fresh panel: the same data (reference, theme, lesson, the
        lab, the profile, the model and its selection), a hover link of its own (a figure has
        no crosshair), and `selection` (an animation's clamped copy) or the window's. The
        copy follows nothing: delete it with the figure."""
        fig = AppState(theme=self.theme)
        fig.selection = selection if selection is not None else self.selection
        fig.model_selection = self.model_selection
        fig.config = self.config
        fig.reference = self.reference
        fig.lesson = self.lesson
        fig.language = self.language
        fig.training_lab = self.training_lab
        fig.profile = self.profile
        fig.models = self.models
        fig.snapshots = self.snapshots
        return fig
