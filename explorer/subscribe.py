"""A Qt object following a Qt-free (psygnal) signal of the state, for as long as Qt keeps it.

    follow(state.config_changed, self._on_config)   # in a widget's __init__

psygnal holds a bound method weakly, which is right for Python objects but not for a Qt
object whose C++ half Qt deletes (a closed dock, a panel's parent) while its Python wrapper
lives on: the next emit would call into a deleted object. `follow` connects the method and
disconnects it when Qt destroys the object, so a deleted widget is never called. The
connection holds the object weakly: following keeps nothing alive.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import Any


def follow(signal: Any, method: Callable, *, priority: int = 0) -> Callable:
    """Connect `signal` (psygnal) to `method`, a bound method of a QObject, until Qt destroys
    that object. The method gets as many of the signal's arguments as it takes. Returns the
    callback connected (for `signal.disconnect`)."""
    owner = method.__self__
    func = method.__func__
    ref = weakref.ref(owner)
    params = inspect.signature(method).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        n_args = None
    else:
        n_args = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)

    def call(*args):
        obj = ref()
        if obj is None:
            return None
        return func(obj, *(args if n_args is None else args[:n_args]))

    signal.connect(call, priority=priority)
    owner.destroyed.connect(lambda *_: _drop(signal, call))
    return call


def _drop(signal: Any, callback: Callable) -> None:
    try:
        signal.disconnect(callback)
    except ValueError:  # already gone
        pass
