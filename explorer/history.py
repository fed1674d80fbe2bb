"""Undo and redo of configuration changes (Edit ▸ Undo, Ctrl+Z / Ctrl+Shift+Z).

`UndoHistory` follows the state (explorer.state): every config change the state announces
(a control, a lesson preset, Reset, a script) becomes one `ConfigChange` on its QUndoStack,
and undo/redo put the step's config back into the state. Changes of the same fields in
quick succession merge into one step, so a slider drag (dozens of values) is undone at
once; the stack's clean state is the saved session, which the window title marks with "*"
until it is saved again.

A step also carries the lesson's progress (`state.lesson_progress`) before and after it:
undo restores both together, so a lesson's ✓ never outlives the change that earned it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QObject
from PySide6.QtGui import QUndoCommand, QUndoStack

from engine import AttentionConfig

from .state import AppState, LessonProgress
from .subscribe import follow

#: changes of the same fields less than this far apart are one step (a slider drag)
MERGE_SECONDS = 1.5
#: how many steps are kept
UNDO_LIMIT = 200


#: the config's fields, in their order (what a step compares and names)
FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(AttentionConfig))


def changed_fields(before: AttentionConfig, after: AttentionConfig) -> tuple[str, ...]:
    """The config fields whose values differ, in field order (read off the frozen configs:
    no `to_dict` copies on every slider step)."""
    return tuple(k for k in FIELDS if getattr(before, k) != getattr(after, k))


def describe_change(before: AttentionConfig, after: AttentionConfig,
                    fields: tuple[str, ...] | None = None) -> str:
    """'d_model = 128', 'causal = on, pad = 2', or 'preset (5 fields)' for larger changes
    (`fields`: changed_fields(before, after), when the caller has it already)."""
    if fields is None:
        fields = changed_fields(before, after)
    if len(fields) > 3:
        return QCoreApplication.translate("History", "{n} settings").format(n=len(fields))

    def value(v) -> str:
        if isinstance(v, bool):
            return QCoreApplication.translate("History", "on") if v else QCoreApplication.translate("History", "off")
        if isinstance(v, list | tuple):
            text = " ".join(map(str, v))
            return text if len(text) <= 24 else text[:23] + "…"
        return "—" if v is None else f"{v:g}" if isinstance(v, float) else str(v)

    return ", ".join(f"{k} = {value(getattr(after, k))}" for k in fields)


class ConfigChange(QUndoCommand):
    """before → after (configs, and the lesson progress with each); `apply(config, progress)`
    shows them without recording a new step."""

    ID = 1

    def __init__(self, before: AttentionConfig, after: AttentionConfig,
                 apply: Callable[[AttentionConfig, LessonProgress | None], None], mergeable: bool = True,
                 progress: LessonProgress | None = None) -> None:
        fields = changed_fields(before, after)
        super().__init__(describe_change(before, after, fields))
        self.before, self.after, self.apply = before, after, apply
        # the lesson progress at the step's two ends (`after`'s follows later changes of the
        # progress made while this step is the current one: UndoHistory)
        self.before_progress = self.after_progress = progress
        self.fields = fields
        self.at = time.monotonic()
        # a step of its own (Reset, a preset), or one taken back and redone: nothing joins it
        self.mergeable = mergeable
        self._done = True  # pushed after the window already shows `after`

    def id(self) -> int:
        return self.ID

    def redo(self) -> None:
        if self._done:  # QUndoStack.push calls redo: the change is on screen already
            self._done = False
            return
        self.mergeable = False
        self.apply(self.after, self.after_progress)

    def undo(self) -> None:
        self.mergeable = False
        self.apply(self.before, self.before_progress)

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not (isinstance(other, ConfigChange) and self.mergeable and other.mergeable):
            return False
        if other.fields != self.fields:
            return False
        if other.at - self.at > MERGE_SECONDS:
            return False
        self.after, self.at = other.after, other.at
        self.after_progress = other.after_progress
        self.setText(describe_change(self.before, self.after))
        if self.before == self.after:
            self.setObsolete(True)  # dragged back to where it started: no step at all
        return True


class UndoHistory(QObject):
    """The undo history of a state: `stack` (a QUndoStack) follows `state.config_changed`
    and `state.lesson_progress_changed`; undo/redo change the state back."""

    def __init__(self, state: AppState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.stack = QUndoStack(self)
        self.stack.setUndoLimit(UNDO_LIMIT)
        self._replaying = False  # the state changes because of undo/redo: not a new step
        follow(state.config_changed, self._on_config_changed)
        follow(state.lesson_progress_changed, self._on_progress_changed)

    def _on_config_changed(self, new: AttentionConfig, old: AttentionConfig, whole_step: bool) -> None:
        if self._replaying:
            return
        # the progress as it was before this change (a lesson sets its new progress after
        # the config: explorer.panels.lesson)
        self.stack.push(ConfigChange(old, new, self._replay, mergeable=not whole_step,
                                     progress=self.state.lesson_progress))

    def _on_progress_changed(self, new: LessonProgress, _old: LessonProgress) -> None:
        """The progress moved while the current step is on screen: it is that step's end."""
        if self._replaying or self.stack.index() == 0:
            return
        step = self.stack.command(self.stack.index() - 1)
        if isinstance(step, ConfigChange):
            step.after_progress = new

    def _replay(self, config: AttentionConfig, progress: LessonProgress | None) -> None:
        self._replaying = True
        try:
            self.state.restore(config, progress)
        finally:
            self._replaying = False

    def alive(self) -> bool:
        """Whether the stack still exists (it emits while Qt deletes it with the window)."""
        import shiboken6

        return shiboken6.isValid(self.stack)

    def name_last_step(self, text: str) -> None:
        """Give the newest step a name of its own (Reset)."""
        if self.stack.index() > 0:
            self.stack.command(self.stack.index() - 1).setText(text)
