"""Where the window keeps what outlives it: geometry, the dock layout, recent files and the
interface language (QSettings; never a session's content)."""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings

#: Environment variable naming an INI file to use instead of the platform settings (tests).
SETTINGS_ENV = "ATTN_EXPLORER_SETTINGS"


def make_settings() -> QSettings:
    """QSettings for geometry, recent files and the interface language only."""
    path = os.environ.get(SETTINGS_ENV)
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings("AttentionExplorer", "Attention Explorer")
