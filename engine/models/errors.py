"""Errors raised by :mod:`engine.models`.

Every message is written for a student: it says what is wrong and, where
possible, what to do about it.
"""

from __future__ import annotations


class ModelLoadError(RuntimeError):
    """A model could not (or must not) be loaded.

    ``reason`` is a short machine-readable tag (``"no_folder"``, ``"no_config"``,
    ``"no_weights"``, ``"corrupt_weights"``, ``"not_cached"``, ``"remote_code"``,
    ``"no_attention"``, ``"unsupported"``, ``"too_large"``, ``"no_tokenizer"``,
    ``"device"``, ``"download"``, ``"bad_config"``: config.json holds impossible sizes or
    disagrees with the weights, ``"unreadable"``: a file or the folder this user may not
    read); ``files`` names the files involved (for
    ``"remote_code"``: the Python files that would run if the user opted in).
    """

    def __init__(self, message: str, *, reason: str = "error", files: list[str] | None = None):
        super().__init__(message)
        self.reason = reason
        self.files = list(files or [])


class InspectError(ValueError):
    """Bad arguments to :meth:`LoadedModel.inspect` / ``deletion_test``
    (layer out of range, empty text, token index out of range, too much memory)."""


def is_whole(value) -> bool:
    """The one rule for every whole-number argument of the engine.models API: a Python
    ``int`` or a NumPy integer (``np.int64`` from an array), never a bool."""
    import numpy as np

    return not isinstance(value, bool | np.bool_) and isinstance(value, int | np.integer)


def one_line_reason(exc: BaseException, limit: int = 400) -> str:
    """The whole of an exception's message on one line (transformers' validation errors put
    the reason on their second line: "Validation error for field 'hidden_size':" then "…
    expected int, got str"); a KeyError says what is missing, not just "'added_tokens'"."""
    text = " ".join(str(exc).split())
    if isinstance(exc, KeyError):
        text = f"{text} is missing" if text else "an entry is missing"
    text = text or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
