"""The words the training panel's parts share (its form, its figures, the panel itself).

Every string of the panel is translated in the context "TrainingPanel" (the panel's class:
assets/translations/*.ts), whichever module draws it: the form and the figures, which are
no QObject of that name, call ``translate("TrainingPanel", …)`` with the context written
out, so `make translations-update` (lupdate) files each string where it always was.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QLabel

from engine.numbers import MISSING, number
from engine.training import TrainConfig

from .lab import Run

#: QCoreApplication.translate; called as translate("TrainingPanel", text) (lupdate reads that)
translate = QCoreApplication.translate

#: short names of the settings in a legend that tells runs apart
LEGEND_NAMES = {"n_layers": "layers", "n_heads": "heads", "n_kv_heads": "kv", "d_model": "d",
                "warmup_steps": "warmup", "init_std": "init", "attn_only": "attn-only"}


def translated(text: str) -> str:
    """A string marked with QT_TRANSLATE_NOOP("TrainingPanel", …), in the interface language."""
    return QCoreApplication.translate("TrainingPanel", text)


def num(v: float) -> str:
    """3 significant digits; "—" for a value that is not a number (never "nan", never "-0")."""
    return number(v, 3, nan=MISSING)


def set_text(label: QLabel, text: str) -> None:
    """label.setText, skipped when unchanged (a word-wrapped label re-lays out its column)."""
    if label.text() != text:
        label.setText(text)


def legend_labels(runs: list[Run]) -> dict[int, str]:
    """Each run's legend text: its name and the settings that tell it from the other runs
    (all of its settings when it is alone or they agree)."""
    dicts = {r.id: r.config.to_dict() for r in runs}
    keys = [k for k in TrainConfig().to_dict()
            if len({repr(d[k]) for d in dicts.values()}) > 1]
    out = {}
    for r in runs:
        if keys:
            parts = []
            for k in keys:
                v = dicts[r.id][k]
                name = LEGEND_NAMES.get(k, k)
                parts.append(f"{name} {v:g}" if isinstance(v, float) else f"{name} {v}")
            text = " · ".join(parts)
        else:
            text = r.config.summary()
        out[r.id] = f"{r.display_name()}: {text}"
    return out
