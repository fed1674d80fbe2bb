"""Python exceptions kept inside Qt's virtual methods.

PySide 6.11 segfaults (in `Shiboken::Errors::storePythonOverrideErrorOrPrint`) when a second
Python override raises while the first one's error is still stored, e.g. two panels whose
`changeEvent` raises during the one `sendPostedEvents()` that delivers a language change
(View ▸ Language: the tryout's crash in libshiboken6, reproduced by the monkey). An override
that runs the app's own drawing code is wrapped:

    @contained
    def changeEvent(self, event): ...

so an exception is reported like any other (`sys.excepthook`: printed, and counted by the
monkey) and never reaches Qt: a bug stays a traceback, not a native crash.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def contained(method: F) -> F:
    """See the module docstring; the method returns None after an exception."""

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except Exception:
            sys.excepthook(*sys.exc_info())
            return None

    return wrapper  # type: ignore[return-value]
