"""The banner under the menu bar: one message (an error, or a note), wrapped, with a close
button; `show_message(text or a function giving it, kind, cause)` — a function is called again
on a language change, so the message follows the interface language. A message stays until
the user closes it or its `cause` is gone: only a message of the frame ("frame": the engine's
refusal, a cancelled frame) is taken down by the next frame, never "Could not open X"."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolBar, QToolButton, QWidget

from .guard import contained


class Banner(QFrame):
    """A message shown in place above the panels (errors the engine raised, refused files)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 5, 6, 5)
        self.icon = QLabel("⚠")
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(self.hide_message)
        self.close_button = close
        lay.addWidget(self.icon)
        lay.addWidget(self.text, 1)
        lay.addWidget(close)
        self.kind: str | None = None
        #: what the message is about: "frame" (gone with the next frame shown) or None (stays)
        self.cause: str | None = None
        self.bar: QToolBar | None = None
        self._make_text: Callable[[], str] | None = None
        self.retranslate_ui()

    def show_message(self, text: str | Callable[[], str], kind: str = "error", cause: str | None = None) -> None:
        """Show `text`; a callable (returning self.tr()-ed text) is asked again when the language
        changes. `cause`: "frame" for a message about the frame in flight (see the module)."""
        self.kind = kind
        self.cause = cause
        self._make_text = text if callable(text) else None
        self.icon.setText("⚠" if kind in ("error", "warning") else "ℹ")  # a warning stays over new frames
        self.text.setText(text() if callable(text) else text)
        if self.bar is not None:
            self.bar.show()
        self._fit_height()

    def _fit_height(self) -> None:
        """As many lines as the text needs at the banner's width (a toolbar does not ask a
        wrapping label for its height at its width: one line came out ~70 px tall)."""
        lay = self.layout()
        m = lay.contentsMargins()
        others = self.icon.sizeHint().width() + self.close_button.sizeHint().width() + 2 * lay.spacing()
        width = max(200, self.width() - m.left() - m.right() - others)
        height = self.text.heightForWidth(width)
        if height > 0 and height != self.text.maximumHeight():
            self.text.setFixedHeight(height)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def hide_message(self) -> None:
        self.kind = None
        self.cause = None
        self._make_text = None
        self.text.setText("")
        if self.bar is not None:
            self.bar.hide()

    def retranslate_ui(self) -> None:
        self.close_button.setToolTip(self.tr("Dismiss"))
        if self.kind and self._make_text is not None:
            self.text.setText(self._make_text())
            self._fit_height()

    @contained  # an exception here must not reach Qt (explorer/guard.py)
    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def message(self) -> str:
        return self.text.text() if self.kind else ""

    def _follow_bar(self) -> None:
        """The bar is shown exactly while a message is. A restored dock layout (`restoreState`:
        the user's saved one, Reset layout, a lesson's perspective, Focus panel undone) sets
        every toolbar's visibility as it was saved, which would hide a message or show an
        empty bar; the banner puts it back once the restore is done."""
        QTimer.singleShot(0, self, self._sync_bar)

    def _sync_bar(self) -> None:
        want = self.kind is not None
        if self.bar is not None and self.bar.isHidden() == want:
            self.bar.setVisible(want)


def add_banner(window) -> Banner:
    """A Banner in its own unmovable toolbar at the top of `window` (hidden until a message;
    `banner.bar`), and the empty central widget a window of docks needs."""
    banner = Banner()
    bar = QToolBar()
    bar.setObjectName("banner_bar")
    bar.setMovable(False)
    bar.setFloatable(False)
    bar.addWidget(banner)
    bar.toggleViewAction().setVisible(False)
    window.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
    banner.bar = bar
    bar.hide()
    bar.visibilityChanged.connect(banner._follow_bar)
    central = QWidget()
    central.setMaximumSize(0, 0)
    window.setCentralWidget(central)
    central.hide()
    return banner
