"""The lessons feature: Lessons ▸ Show lessons (Ctrl+L) and one entry per chapter, the Lessons
button at the end of the menu bar, the lesson panel's dock, and what the lesson panel asks of
the window (explorer.panels.lesson.LessonHost): its chapter's panels marked and brought
forward, a preset pinned as A, the demo model.

Made from the state and the host (explorer.host). Texts are translated in the "MainWindow"
context, like the rest of the window.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QToolButton, QWidget

import explorer.i18n as i18n
from engine import AttentionConfig

from .feature import Feature

MODEL_PANELS = ("model_grid", "model_head")


class LessonsFeature(Feature):
    """See the module docstring."""

    name = "lessons"

    def __init__(self, state, host) -> None:
        super().__init__(state, host)
        self.act_lessons = QAction(host.parent_widget())
        self.act_lessons.setShortcut(QKeySequence("Ctrl+L"))
        self.act_lessons.triggered.connect(lambda: self.show_lessons())
        host.add_action("lessons", self.act_lessons)
        host.menu("lessons").addSeparator()
        self._chapter_actions: list[QAction] = []
        # a Lessons button at the right end of the menu bar: found at a glance, costs no height
        self.lessons_button = QToolButton()
        self.lessons_button.setObjectName("lessons_button")
        self.lessons_button.setAutoRaise(True)
        self.lessons_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.lessons_button.clicked.connect(lambda: self.show_lessons())
        host.set_menu_corner_widget(self.lessons_button)

    def retranslate_ui(self) -> None:
        self.act_lessons.setText(QCoreApplication.translate("MainWindow", "Show &lessons"))
        self.act_lessons.setStatusTip(QCoreApplication.translate(
            "MainWindow", "Step-by-step lessons: presets, explanations and a task to try in each chapter"))
        self.lessons_button.setText(QCoreApplication.translate("MainWindow", "Lessons"))
        self.lessons_button.setToolTip(QCoreApplication.translate("MainWindow", "Open the lessons (Ctrl+L)"))
        self._update_chapter_menu()

    def show_lessons(self, chapter: int | None = None) -> QWidget:
        """Open (or raise) the lesson panel in its own dock, at `chapter` (0-based) if given."""
        host = self.host
        new = "lesson" not in host.panel_names()
        panel = host.add_panel("lesson", dock_area=False)
        if new:
            panel.set_host(self)
            # closing the dock: the lesson left, the marks cleared
            host.dock("lesson").visibilityChanged.connect(lambda visible: None if visible else panel.leave())
            # under the configuration: the learner reads the task and moves the controls, and
            # the panels keep their width (beside it, they were squeezed unreadable)
            host.place_beside_controls("lesson")
        host.show_panel("lesson")
        if chapter is not None:
            panel.open_chapter(chapter)
        else:
            panel.enter()
        return panel

    def set_state(self, config: AttentionConfig, selection=None) -> None:
        """A lesson preset: `config` as a step of its own, `selection` (head, query, key)
        selected once its shape is shown."""
        self.state.set_config(config, selection=selection or None, whole_step=True)

    # ---- explorer.panels.lesson.LessonHost ------------------------------------------------------
    def highlight_panels(self, names: Iterable[str]) -> None:
        self.host.highlight_panels(names)

    def pin_preset(self, config: AttentionConfig, name: str, on_pinned) -> None:
        from .compare import pin_before

        pin_before(self.host, config, name, on_pinned)

    def demo_action(self):
        act = self.host.feature("models").demo_action
        return act if act is not None and act.isEnabled() else None

    def model_panels_shown(self) -> bool:
        return all(n in self.host.panel_names() for n in MODEL_PANELS)

    # ---- the chapters' menu ----------------------------------------------------------------------
    def _update_chapter_menu(self) -> None:
        """One entry per chapter under Lessons (titles in the current language)."""
        from .lessons import LessonError, load_chapters

        menu = self.host.menu("lessons")
        for a in self._chapter_actions:
            menu.removeAction(a)
            a.deleteLater()
        self._chapter_actions = []
        try:
            chapters = load_chapters()
        except LessonError:
            return  # the lesson panel reports it when opened
        lang = i18n.lesson_language()
        for i, ch in enumerate(chapters):
            a = QAction(f"&{i + 1:d}  {ch.title(lang)}" if i < 9 else f"{i + 1:d}  {ch.title(lang)}",
                        self.host.parent_widget())
            a.triggered.connect(lambda _checked=False, i=i: self.show_lessons(i))
            menu.addAction(a)
            self._chapter_actions.append(a)
