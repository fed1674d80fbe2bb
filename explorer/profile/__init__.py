"""The length profile's window half: the `profile` panel, its state and its thread.

`ProfileActions(window)` (explorer.profile.feature) adds View ▸ Length profile… (Ctrl+Shift+L);
the panel and its dock are made the first time they are asked for (`show_profile`, or an export naming
"profile": `profile_panel(window)` makes it with its dock closed), so a window that never
profiles pays nothing. The measuring is `engine.profile.length_profile`.

Importing this package is cheap: the Qt parts load on first use.
"""

from __future__ import annotations

import importlib

__all__ = ["ProfileActions", "ProfilePanel", "ProfileState", "install_profile", "profile_panel", "show_profile"]

_LAZY = {"ProfilePanel": "panel", "ProfileState": "state", "ProfileActions": "feature",
         "install_profile": "feature", "profile_panel": "feature", "show_profile": "feature"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
