"""Shared test setup: headless Qt, and settings that never touch the user's.

Kept minimal and Qt-free at import, so the engine's tests run without Qt.
"""

import os
import tempfile

os.environ["QT_QPA_PLATFORM"] = "offscreen"
# the explorer reads QSettings from this INI file when set (geometry, recent files)
os.environ.setdefault(
    "ATTN_EXPLORER_SETTINGS",
    os.path.join(tempfile.mkdtemp(prefix="attn-explorer-tests-"), "settings.ini"),
)
