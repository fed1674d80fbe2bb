"""Named perspectives: which panels a mode of work puts in front (Qt-free data).

    DEFAULT    the sliders' five panels (View ▸ Reset layout brings the whole default back)
    MODEL      a model's grid and head view (File ▸ Open model)
    TRAINING   the training lab
    lesson_perspective(chapter)   the panels a lesson names (`Chapter.panels`)

A perspective only says what is in front; the dock layer (`explorer.layout.docks.DockLayout
.apply`) brings each of those panels forward at no less than its readable size, taking the
room from the docks beside it, and never hides a panel the user has open.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Perspective:
    """`name`: "default", "model", "training" or "lesson:<chapter key>"; `front`: the panels
    brought forward, in order (a later one wins a tab group they share)."""

    name: str
    front: tuple[str, ...]


DEFAULT = Perspective("default", ("heads", "qkv", "scores", "softmax_grad", "diagnostics"))
MODEL = Perspective("model", ("model_grid", "model_head"))
TRAINING = Perspective("training", ("training",))


def lesson_perspective(chapter) -> Perspective:
    """A lesson's perspective: the panels its chapter names (`chapter.key`, `chapter.panels`);
    the lesson panel itself is placed by the lesson feature, not by the perspective."""
    return Perspective(f"lesson:{chapter.key}", tuple(n for n in chapter.panels if n != "lesson"))


def perspectives(chapters=()) -> dict[str, Perspective]:
    """Every named perspective: the three fixed ones and one per chapter."""
    out = {p.name: p for p in (DEFAULT, MODEL, TRAINING)}
    for ch in chapters:
        p = lesson_perspective(ch)
        out[p.name] = p
    return out
