"""Undo and redo of configuration changes (Edit ▸ Undo, Ctrl+Z / Ctrl+Shift+Z).

Every config the window is asked to show (a control, a lesson preset, Reset) is
one `ConfigChange` on a QUndoStack. Changes of the same fields in quick
succession merge into one step, so a slider drag (dozens of values) is undone
at once; the stack's clean state is the saved session, which the window title
marks with "*" until it is saved again.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QUndoCommand

from engine import AttentionConfig

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
    """before → after; `apply(config)` shows a config without recording a new step."""

    ID = 1

    def __init__(self, before: AttentionConfig, after: AttentionConfig,
                 apply: Callable[[AttentionConfig], None], mergeable: bool = True) -> None:
        fields = changed_fields(before, after)
        super().__init__(describe_change(before, after, fields))
        self.before, self.after, self.apply = before, after, apply
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
        self.apply(self.after)

    def undo(self) -> None:
        self.mergeable = False
        self.apply(self.before)

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not (isinstance(other, ConfigChange) and self.mergeable and other.mergeable):
            return False
        if other.fields != self.fields:
            return False
        if other.at - self.at > MERGE_SECONDS:
            return False
        self.after, self.at = other.after, other.at
        self.setText(describe_change(self.before, self.after))
        if self.before == self.after:
            self.setObsolete(True)  # dragged back to where it started: no step at all
        return True
