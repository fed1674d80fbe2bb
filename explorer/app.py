"""`python main.py [gui --session FILE --model SRC]`: open the window and run the event loop."""

from __future__ import annotations

import sys


def main_gui(session: str | None = None, model: str | None = None) -> int:
    """Create the QApplication, show the window, run until it closes; returns the exit code.

    A session that cannot be read raises SessionError before the window
    appears (main.py turns that into one line on stderr and exit status 1).
    """
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication

    from . import create_window, ensure_app
    from .session import load_session

    # refuse a bad session file before any window appears
    loaded = load_session(session) if session is not None else None
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = ensure_app()
    from PySide6.QtGui import QIcon

    import assets

    app.setWindowIcon(QIcon(str(assets.icon_path(256))))
    window = create_window(loaded)
    if session is not None:
        window.set_session_path(session)
    if model:
        # off the UI thread: the window shows at once, the model panels when it has loaded;
        # a refusal (no such folder, not cached, remote code) ends in the banner
        window.model_controller.load(model)
    window.show()
    try:
        code = app.exec()
    finally:
        window.shutdown()
    sys.stdout.flush()
    from .models.worker import exit_if_left_running

    exit_if_left_running(int(code))  # a model load that takes no cancel does not hold up the quit
    return int(code)
