"""The lessons in the window: the lesson dock, the chapter menu, a preset's config and selection, the marked panels.

A part of `MainWindow` (explorer.window), in a file of its own: the methods read the window's
attributes (settings, banner, docks, the undo stack). Texts are translated in the "MainWindow"
context, like the rest of the window.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

import explorer.i18n as i18n
from engine import AttentionConfig

from .panels.base import Panel


class LessonsMixin:
    """See the module docstring (mixed into MainWindow)."""

    def _dock_title(self, name: str, cls: type[Panel] | None = None) -> str:
        cls = cls or type(self._panels[name])
        title = cls.display_title()
        ctl = self.state.models
        if ctl is not None and ctl.loaded is not None and cls.draws_the_sliders and not cls.requires_model and cls.exportable:
            # beside a real model's panels: say these show the sliders' layer, not the model
            title += QCoreApplication.translate("MainWindow", " · the sliders' layer, not the model")
        return f"★ {title}" if name in self.state.marked_panels else title

    def _retitle_docks(self, *_args) -> None:
        for name, dock in self._docks.items():
            dock.setWindowTitle(self._dock_title(name))

    def show_lessons(self, chapter: int | None = None) -> QWidget:
        """Open (or raise) the lesson panel in its own dock, at `chapter` (0-based) if given."""
        new = "lesson" not in self._panels
        panel = self.add_panel("lesson", dock_area=False)
        dock = self._docks["lesson"]
        if new:
            panel.set_host(self)
            dock.visibilityChanged.connect(lambda visible: None if visible else panel.leave())
            if not self.restoreDockWidget(dock):
                # under the configuration: the learner reads the task and moves the controls, and
                # the panels keep their width (beside it, they were squeezed unreadable)
                self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
                if not self.controls_dock.isFloating() and self.controls_dock.isVisible():
                    self.splitDockWidget(self.controls_dock, dock, Qt.Orientation.Vertical)
                    self.resizeDocks([self.controls_dock, dock], [4, 6], Qt.Orientation.Vertical)
                self.resizeDocks([dock], [380], Qt.Orientation.Horizontal)
        dock.show()
        dock.raise_()
        if chapter is not None:
            panel.open_chapter(chapter)
        else:
            panel.enter()
        return panel

    def highlight_panels(self, names: Iterable[str]) -> None:
        """Mark the docks of `names` (accent title bar, ★) and bring them to the front;
        an empty list clears the marks (the same as `state.set_marked_panels`)."""
        names = tuple(n for n in names if n in self._docks and n != "lesson")
        if names == self.state.marked_panels:
            self._on_marked_panels(names)  # marked already: brought to the front again
        else:
            self.state.set_marked_panels(names)

    def _on_marked_panels(self, names: tuple[str, ...]) -> None:
        names = tuple(n for n in names if n in self._docks and n != "lesson")
        th = self.theme
        css = f"QDockWidget::title {{ background: {th.accent2}; padding: 4px 6px; }}"
        for n, dock in self._docks.items():
            dock.setStyleSheet(css if n in names else "")
            dock.setWindowTitle(self._dock_title(n))
        for n in names:
            self._docks[n].show()
            self._docks[n].raise_()
        # a panel whose readouts are longer in a lesson asks for its lesson height: taken from
        # the docks beside it down to their readable sizes, never by growing the window
        tall = [(self._docks[n], size) for n in names if n in self._panels
                for size in [type(self._panels[n]).lesson_size] if size is not None]
        if tall:
            self.resizeDocks([dock for dock, _ in tall],
                             [self._scaled(*size).height() + max(0, dock.height() - dock.widget().height())
                              for dock, size in tall], Qt.Orientation.Vertical)

    # ---- what the lesson panel asks of the window (explorer.panels.lesson.LessonHost) -------
    def pin_preset(self, config: AttentionConfig, name: str, on_pinned) -> None:
        from .compare import pin_before

        pin_before(self, config, name, on_pinned)

    def demo_action(self):
        act = self.features["models"].demo_action
        return act if act is not None and act.isEnabled() else None

    def model_panels_shown(self) -> bool:
        return all(n in self._panels for n in ("model_grid", "model_head"))

    def highlighted_panels(self) -> tuple[str, ...]:
        return self.state.marked_panels

    def set_state(self, config: AttentionConfig, selection: Mapping[str, int] | None = None) -> None:
        """set_config, then select (head, query, key) once the new shape is shown (lesson presets)."""
        self.state.set_config(config, selection=selection or None, whole_step=True)

    def _update_chapter_menu(self) -> None:
        """One entry per chapter under Lessons (titles in the current language)."""
        from .lessons import LessonError, load_chapters

        for a in self._chapter_actions:
            self.menu_lessons.removeAction(a)
            a.deleteLater()
        self._chapter_actions = []
        try:
            chapters = load_chapters()
        except LessonError:
            return  # the lesson panel reports it when opened
        lang = i18n.lesson_language()
        for i, ch in enumerate(chapters):
            a = QAction(f"&{i + 1:d}  {ch.title(lang)}" if i < 9 else f"{i + 1:d}  {ch.title(lang)}", self)
            a.triggered.connect(lambda _checked=False, i=i: self.show_lessons(i))
            self.menu_lessons.addAction(a)
            self._chapter_actions.append(a)
