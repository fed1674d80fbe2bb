"""Cards: titled boxes of plain-text rows beside the plots (the diagnostics panel's numerics,
costs and backends), and the scroll area that holds them.

`Card.set_rows([(cells, style), ...])` shows a table of plain labels; only the labels whose
text or style changed are touched (a number that changes every frame repaints its own cell).
`SideScroll` asks for its widget's height and scrolls sideways, so a long text does not widen
the dock.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QApplication, QFrame, QGridLayout, QLabel, QMenu, QScrollArea

from ..sizing import OpaqueLabel, hold_size, release_size
from .themes import Theme

_MAX_ROWS = 64  # more rows than any card shows


class SideScroll(QScrollArea):
    """Asks for the height of its widget (plus the sideways scroll bar when shown); scrolls
    when the panel is narrower or shorter than the cards."""

    def _height(self) -> int:
        w = self.widget()
        if w is None:
            return 0
        h = w.sizeHint().height()
        if w.minimumSizeHint().width() > self.viewport().width():
            h += self.horizontalScrollBar().sizeHint().height()
        return h

    def sizeHint(self):
        hint = super().sizeHint()
        hint.setHeight(self._height())
        return hint

    #: the least height (px) it asks for: a short dock scrolls the cards rather than squash the
    #: plots above them (a lesson shows diagnostics under a tall step-through panel)
    MIN_HEIGHT = 110

    def minimumSizeHint(self):
        hint = super().minimumSizeHint()
        hint.setHeight(min(self._height(), self.MIN_HEIGHT))
        return hint

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.updateGeometry()  # the scroll bar may have come or gone


class Card(QFrame):
    """A titled box of plain-text rows laid out on a grid of QLabels.

    Plain labels, not one rich-text label: a rich-text table is re-parsed and
    re-laid out as a whole whenever one number in it changes (the backend time
    changes every frame), which cost 2–7 ms per frame. Here a label is only
    touched, and repainted, when its own text or style changes.

    A row is (cells, style): style is one of "head", "body", "total", "note",
    "ok", "warning", "error"; a row with fewer cells than columns lets its last
    cell span the rest; the first column is left-aligned, the others right.

    The cells are not mouse-selectable (a selectable QLabel lays its text out as
    a QTextDocument on every change and paint); the card's context menu copies
    the whole table as tab-separated text instead. They paint their own
    background, so a changed number repaints that cell and not the dock under it.
    """

    def __init__(self, title: str = "", columns: int = 1, align_right: tuple[int, ...] = ()) -> None:
        super().__init__()
        self.setObjectName("card")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.columns = columns
        self.align_right = set(align_right)
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(8, 6, 8, 6)
        self.grid.setHorizontalSpacing(10)
        self.grid.setVerticalSpacing(1)
        for c in range(columns):
            self.grid.setColumnStretch(c, 1 if c == 0 else 0)
        self.grid.setRowStretch(_MAX_ROWS + 1, 1)  # spare height goes below the rows, not between them
        self.title_label = QLabel(title)
        self.title_label.setTextFormat(Qt.TextFormat.PlainText)
        self.grid.addWidget(self.title_label, 0, 0, 1, columns)
        self._cells: list[list[QLabel]] = []  # [row][column], created on demand
        self._shown: list[tuple] = []  # what each row shows: (cells, style)
        self._colours: dict[str, QColor] = {}
        self._background: QColor | None = None
        self._font = QFont()
        self.title = title
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._on_context_menu)

    def _on_context_menu(self, pos) -> None:
        menu = QMenu(self)
        menu.addAction(QCoreApplication.translate("DiagnosticsPanel", "Copy table"), self.copy_text)
        menu.exec(self.mapToGlobal(pos))

    def copy_text(self) -> None:
        """Put text() on the clipboard (tab-separated: pastes into a spreadsheet)."""
        QApplication.clipboard().setText(self.text())

    @property
    def title(self) -> str:
        return self.title_label.text()

    @title.setter
    def title(self, text: str) -> None:
        self.title_label.setText(text)

    def set_theme(self, theme: Theme) -> None:
        self._colours = {"head": QColor(theme.muted), "note": QColor(theme.muted), "ok": QColor(theme.ok),
                         "warning": QColor(theme.warning), "error": QColor(theme.error),
                         "body": QColor(theme.foreground), "total": QColor(theme.foreground)}
        self._background = QColor(theme.background)
        bg = self._background.name()
        self.setStyleSheet(f"QFrame#card {{ background: {bg}; border: 1px solid {theme.hatch}; border-radius: 5px; }}")
        self._font = theme.font(8.0)
        bold = theme.font(8.0, bold=True)
        self.title_label.setFont(bold)
        self._paint_label(self.title_label, QColor(theme.foreground))
        shown, self._shown = self._shown, []
        self.set_rows([(cells, style) for cells, style in shown])

    def _paint_label(self, label: QLabel, colour: QColor | None) -> None:
        """The label's text colour (None: keep it) on the card's background.

        A style sheet, not a palette: a style sheet on an ancestor (a lesson's highlighted
        dock) makes Qt replace the palettes of everything below it (the cards' text and
        background turned black)."""
        if colour is None:
            colour = label.property("card_colour") or QColor(self._colours.get("body", QColor("#888888")))
        label.setProperty("card_colour", QColor(colour))
        bg = self._background.name() if self._background is not None else "transparent"
        css = f"QLabel {{ color: {QColor(colour).name()}; background: {bg}; }}"
        if label.styleSheet() != css:
            label.setStyleSheet(css)

    def _style_label(self, label: QLabel, style: str) -> None:
        font = QFont(self._font)
        font.setBold(style == "total")
        label.setFont(font)
        colour = self._colours.get(style)
        if colour is not None:
            self._paint_label(label, colour)

    def _row_labels(self, r: int) -> list[QLabel]:
        while len(self._cells) <= r:
            row = []
            for c in range(self.columns):
                label = OpaqueLabel()  # a new number repaints the cell, not the card and dock below
                label.setTextFormat(Qt.TextFormat.PlainText)
                if self._background is not None:
                    self._paint_label(label, None)
                right = c in self.align_right
                label.setAlignment((Qt.AlignmentFlag.AlignRight if right else Qt.AlignmentFlag.AlignLeft)
                                   | Qt.AlignmentFlag.AlignTop)
                row.append(label)
            self._cells.append(row)
        return self._cells[r]

    def set_rows(self, rows: list[tuple[list[str], str]]) -> None:
        """Show `rows` (see the class docstring); unchanged rows are left alone."""
        rows = [(tuple(cells), style) for cells, style in rows]
        for r, (cells, style) in enumerate(rows):
            if r < len(self._shown) and self._shown[r] == (cells, style):
                continue
            labels = self._row_labels(r)
            old = self._shown[r] if r < len(self._shown) else None
            placed = old is not None and len(old[0]) == len(cells)
            if not placed:  # (re)place the cells: the spans changed
                for label in labels:
                    self.grid.removeWidget(label)
                    label.hide()
                for c in range(len(cells)):
                    span = self.columns - c if c == len(cells) - 1 else 1
                    label = labels[c]
                    if span > 1 or self.columns == 1:  # a wrapped note: its height follows its width
                        release_size(label)
                        self.grid.addWidget(label, r + 1, c, 1, span)
                    else:
                        right = c in self.align_right
                        self.grid.addWidget(label, r + 1, c, 1, 1,
                                            Qt.AlignmentFlag.AlignRight if right else Qt.AlignmentFlag.AlignLeft)
                    label.setWordWrap(span > 1 or self.columns == 1)  # a note wraps: the dock keeps its width
                    label.show()
            restyle = not placed or old[1] != style
            for label, text in zip(labels, cells):
                if label.text() == text and not restyle:
                    continue
                if restyle:
                    self._style_label(label, style)
                if label.wordWrap():
                    self._set_note(label, text, held=placed and not restyle)
                    continue
                label.setText(text)
                if self.columns > 1:  # a one-line cell of a table
                    hold_size(label)  # the backend time changes every frame: no relayout for it
        for r in range(len(rows), len(self._shown)):
            for label in self._cells[r]:
                self.grid.removeWidget(label)
                label.hide()
        self._shown = rows

    @staticmethod
    def _set_note(label: QLabel, text: str, held: bool) -> None:
        """A wrapped note's new text. A note laid out already keeps its size while the new text
        takes as many lines at its width (a number in it changes every frame: it repaints the
        note, not a relayout of the card and the scroll area under it); it is measured again
        when the text needs another height, or the card another width (`resizeEvent`)."""
        size = label.size()
        if held and label.isVisible() and size.width() > 0 and label.minimumSize() != size:
            label.setFixedSize(size)  # (laid out: held from now on)
        label.setText(text)
        if label.minimumSize() == label.maximumSize() and label.heightForWidth(size.width()) != size.height():
            release_size(label)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():  # the notes wrap at the new width
            for row in self._cells:
                for label in row:
                    if label.wordWrap() and label.minimumSize() == label.maximumSize():
                        release_size(label)

    def text(self) -> str:
        """Everything the card shows, as plain text (a line per row, cells tab-separated)."""
        return "\n".join([self.title] + ["\t".join(cells) for cells, _style in self._shown])
