"""Tables of numbers beside the plots: the model panel's head table and the length profile's
S × backend grid are one kind of widget, set up and themed one way.

A read-only QTableView (or QTableWidget) whose colours come from one style sheet: a style
sheet, not a palette, because a style sheet on an ancestor (a lesson's highlighted dock)
makes Qt replace the palettes of everything below it, and because the headers and the
corner button have colours a palette does not reach.
"""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QTableView

from .themes import Theme


def setup_table(table: QTableView, name: str, *, select_rows: bool) -> QTableView:
    """`table` read-only, named `name` (for tests and style sheets); whole rows selectable
    one at a time when `select_rows`, else nothing selectable."""
    table.setObjectName(name)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    if select_rows:
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    else:
        table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    return table


def style_table(table: QTableView, theme: Theme, pt: float = 9.0) -> None:
    """The theme's colours and a `pt`-point font on the table, its headers and its corner."""
    table.setFont(theme.font(pt))
    table.setStyleSheet(
        f"QTableView {{ background: {theme.background}; color: {theme.foreground}; "
        f"alternate-background-color: {theme.window}; gridline-color: {theme.hatch}; "
        f"selection-background-color: {theme.accent2}; selection-color: #ffffff; "
        f"border: 1px solid {theme.hatch}; }}"
        f"QHeaderView::section {{ background: {theme.window}; color: {theme.foreground}; border: none; "
        f"border-right: 1px solid {theme.hatch}; border-bottom: 1px solid {theme.hatch}; padding: 2px 6px; }}"
        f"QTableCornerButton::section {{ background: {theme.window}; border: none; }}")
