"""The application state, Qt-free: the one owner of what the window shows, with a change
event per field (psygnal's signals, napari's choice), emitted only on a real change.

    state = AppState()                          # the window makes one; a figure gets a copy
    state.config                 set_config(cfg, selection=None, whole_step=False)
                                 -> config_changed(new, old, whole_step)
    state.frame                  set_frame(frame): the frame on screen; the selection is
                                 clamped to its shape here, before any panel draws it
    state.selection.changed      the sliders' layer: head, query, key (explorer.selection)
    state.hover                  the crosshair and its readout
    state.model_selection, state.model_hover      the loaded model's: layer, head, query, key
    state.reference              set_reference(frame | None) -> reference_changed(frame | None)
    state.theme                  set_theme(theme)   -> theme_changed(theme)
    state.lesson                 set_lesson(key)    -> lesson_changed(key | None)
    state.lesson_progress        set_lesson_progress(p) -> lesson_progress_changed(new, old)
    state.marked_panels          set_marked_panels(names) -> marked_panels_changed(names)
    state.language               set_language(code) -> language_changed(code)
    state.training_lab, state.profile, state.models, state.snapshots   # the features' data
    figure = state.for_figure(selection=None)   # an export's own panel: same data, own hover

Who changes what: every control, lesson, undo/redo step, session and script calls the
setters; the compute request, the panels, the status bar, the controls and the undo history
follow the events (explorer.window wires them). No other object keeps a copy of a field:
the controls' widgets, the undo history and the lesson's ✓ read and follow the state.

A lesson's progress (`LessonProgress`: the chapter, whether its task started from the
preset, whether the change it asks for happened) is state like the config, so the undo
history restores it with the config: Undo can never leave a false ✓.

What changed is said by identity: every frame the state is given is a new object, and the
reference A and the selection's ints are replaced, never edited, so a panel keeps a drawing
while the objects it was drawn from are the same ones (`explorer.figures.plots.same_sources`)
and never compares array contents to find out.

Nothing here imports Qt (import-linter's "Qt-free modules" contract): a Qt object that
follows an event connects through `explorer.subscribe.follow`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from psygnal import Signal

from engine import AttentionConfig

from .selection import HoverLink, ModelSelection, Selection


@dataclasses.dataclass(frozen=True)
class LessonProgress:
    """Where the learner is in a chapter's "Try this" task."""

    chapter: str | None = None  # the chapter key this progress is of (None: no task)
    started: bool = False       # the task counts from the preset (applied, or reached by hand)
    achieved: bool = False      # the change the text promises happened (the ✓ then stays)


class AppState:
    """The state of one window (see the module docstring)."""

    #: (new, old, whole_step): whole_step when the change is a step of its own for the undo
    #: history (Reset, a lesson preset), never merged with the slider steps before it
    config_changed = Signal(object, object, bool)
    reference_changed = Signal(object)          # Frame | None: the pinned A
    theme_changed = Signal(object)              # figures.themes.Theme
    lesson_changed = Signal(object)             # chapter key | None
    lesson_progress_changed = Signal(object, object)  # LessonProgress: new, old
    marked_panels_changed = Signal(object)      # tuple of panel names a lesson talks about
    language_changed = Signal(str)              # "en", "zh_CN"

    def __init__(self, *, theme: Any = None, config: AttentionConfig | None = None) -> None:
        self.selection = Selection()
        self.hover = HoverLink()
        self.model_selection = ModelSelection()
        self.model_hover = HoverLink()
        self.config: AttentionConfig = config if config is not None else AttentionConfig()
        self.frame = None  # explorer.frame.Frame | None: the frame the panels show
        #: (head, query, key) to select once a frame of `_pending_config` is shown
        self._pending_selection: tuple[int, int, int] | None = None
        self.reference = None  # Frame | None: the pinned A
        self.theme = theme
        self.lesson: str | None = None  # the chapter the lesson panel shows, None when closed
        self.lesson_progress = LessonProgress()
        self.marked_panels: tuple[str, ...] = ()
        self.language = "en"  # the interface language
        #: explorer.training.lab.TrainingLab, made by the training feature (None until then)
        self.training_lab = None
        #: explorer.profile.state.ProfileState, made with the profile feature (None until then)
        self.profile = None
        #: explorer.models.controller.ModelController, made with the models feature
        self.models = None
        #: the loaded model's entry for a session file ({"source", "text", ...}; None: none)
        self.model_info: dict | None = None
        #: explorer.snapshots.SnapshotList, made with the snapshots feature
        self.snapshots = None

    # ---- the config and its frame ---------------------------------------------------------
    def set_config(self, config: AttentionConfig, *, selection=None, whole_step: bool = False) -> None:
        """Show `config`: what every control, lesson, undo step, session and script calls.

        `selection` ({"head", "query", "key"} or a (head, query, key) tuple) is selected
        once a frame of `config` is on screen (at once when it is already). `whole_step`:
        a step of its own in the undo history. Emits `config_changed` only on a change."""
        if not isinstance(config, AttentionConfig):
            raise TypeError(f"set_config needs an AttentionConfig, got {type(config).__name__}")
        if selection is not None:
            sel = (tuple(int(v) for v in selection) if isinstance(selection, tuple | list) else
                   (int(selection.get("head", 0)), int(selection.get("query", 0)), int(selection.get("key", 0))))
            if config == self.config and self.frame is not None and self.frame.config == config:
                self.selection.set(*sel)  # this shape is on screen already
            else:
                self._pending_selection = sel
        if config == self.config:
            return
        old, self.config = self.config, config
        self.config_changed.emit(config, old, whole_step)

    def restore(self, config: AttentionConfig, progress: LessonProgress | None = None) -> None:
        """Put back `config` and the lesson `progress` (None keeps it) together: an undo or
        redo step. Both fields are set before either event is emitted, so a listener of one
        never sees the other half-restored."""
        old_config, old_progress = self.config, self.lesson_progress
        self.config = config
        if progress is not None:
            self.lesson_progress = progress
        if config != old_config:
            self.config_changed.emit(config, old_config, True)
        if self.lesson_progress != old_progress:
            self.lesson_progress_changed.emit(self.lesson_progress, old_progress)

    def set_frame(self, frame) -> None:
        """The frame the panels are about to show: the selection is clamped to its shape (and
        a pending selection applied) now, before any panel draws it."""
        self.frame = frame
        cfg = frame.config
        pending, self._pending_selection = self._pending_selection, None
        self.selection.set_limits(cfg.n_heads, cfg.seq_len, cfg.key_len, select=pending)

    # ---- the other fields ---------------------------------------------------------------------
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

    def set_lesson_progress(self, progress: LessonProgress) -> None:
        if progress != self.lesson_progress:
            old, self.lesson_progress = self.lesson_progress, progress
            self.lesson_progress_changed.emit(progress, old)

    def set_marked_panels(self, names) -> None:
        names = tuple(names)
        if names != self.marked_panels:
            self.marked_panels = names
            self.marked_panels_changed.emit(names)

    def set_language(self, code: str) -> None:
        if code != self.language:
            self.language = code
            self.language_changed.emit(code)

    # ---- a figure's copy -----------------------------------------------------------------------
    def for_figure(self, selection: Selection | None = None) -> AppState:
        """A state for an export's fresh panel: the same data (config, frame, reference, theme,
        lesson, the lab, the profile, the model and its selection), a hover link of its own
        (a figure has no crosshair), and `selection` (an animation's clamped copy) or the
        window's. The copy follows nothing: drop it with the figure."""
        fig = AppState(theme=self.theme, config=self.config)
        fig.selection = selection if selection is not None else self.selection
        fig.model_selection = self.model_selection
        fig.frame = self.frame
        fig.reference = self.reference
        fig.lesson = self.lesson
        fig.lesson_progress = self.lesson_progress
        fig.language = self.language
        fig.training_lab = self.training_lab
        fig.profile = self.profile
        fig.models = self.models
        fig.model_info = self.model_info
        fig.snapshots = self.snapshots
        return fig
