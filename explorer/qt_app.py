"""The QApplication: the window's (`ensure_app`) and a command line's (`headless_app`), and
the one filter that keeps the offscreen platform's harmless notices out of the output.

    app = ensure_app()          # the running app, or a new one named for QSettings
    app = headless_app()        # the running app, or a new offscreen one (export, train --gif)
    with quiet_offscreen(): ... # "This plugin does not support ..." dropped, the rest passes

Kept apart from `explorer/__init__.py` so that feature modules (an export, the training film)
can make the app without importing the package facade, which imports the window.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

_app = None  # keeps a QApplication made here alive
#: What the offscreen platform says about raising windows and size hints (harmless).
HARMLESS = ("This plugin does not support",)


def _install_quiet_handler():
    """Install the filter; returns the handler it replaced (None: Qt's default)."""
    from PySide6.QtCore import qInstallMessageHandler

    previous = None

    def handler(mode, context, message: str) -> None:
        if message.startswith(HARMLESS):
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            print(message, file=sys.stderr)

    previous = qInstallMessageHandler(handler)
    return previous


@contextlib.contextmanager
def quiet_offscreen() -> Iterator[None]:
    """Drop the offscreen notices while the block runs; the previous handler is restored."""
    from PySide6.QtCore import qInstallMessageHandler

    previous = _install_quiet_handler()
    try:
        yield
    finally:
        qInstallMessageHandler(previous)


def ensure_app():
    """The running QApplication, or a new one (offscreen needs QT_QPA_PLATFORM set)."""
    global _app
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = _app = QApplication(["attention-explorer"])
        app.setApplicationName("Attention Explorer")
        app.setOrganizationName("AttentionExplorer")
        if app.platformName() == "offscreen":
            _install_quiet_handler()
    return app


def headless_app():
    """The QApplication for a command line; a new one renders offscreen unless a platform
    was chosen (and has no organisation name: a headless run never reads the user's
    window settings)."""
    global _app
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = _app = QApplication([sys.argv[0] if sys.argv else "attention-explorer"])
        if app.platformName() == "offscreen":  # `train --gif` printed "… propagateSizeHints()"
            _install_quiet_handler()
    return app
