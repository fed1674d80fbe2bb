"""The teachers' guide names only what the window has (issue 27, item 10).

docs/teachers-guide.md follows one convention, said in the guide itself, that this test reads:

- **Menu ▸ Entry** (bold, with ▸) is a menu path, from the menu bar down; a shortcut in
  brackets right after it, "(Ctrl+E)", is that entry's shortcut. (→ is for the operating
  system's menus and dialogs, which the window does not have.)
- **Title** panel is the panel whose title starts with Title (up to a ":" or a space);
  `name` panel is a registered panel name. **X** menu is a menu of the menu bar, **X**
  button a button of the window.
- *label* (italics) is the text of a control: a label, check box, button or list entry of
  the window or of a panel (a check box's "(…)" may be left out: *causal*). "*label* to
  `value`" sets a list to one of its entries.
- "Panel names: `a`, `b`, …" lists exactly the panels `attention-explorer export --panel`
  takes.

Each test fails when the guide names something that is not there, with what was named.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from conftest import shown_window
from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractButton, QComboBox, QFormLayout, QGroupBox, QLabel, QWidget

from explorer.export.options import (
    CLOSED_PANEL_NAMES,
    MODEL_PANEL_NAMES,
    ON_DEMAND_PANELS,
    PANEL_NAMES,
)
from explorer.panels import PANELS

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "teachers-guide.md"


def guide_text(path: Path = GUIDE) -> str:
    """The guide without its code blocks, on one line (names wrap across lines)."""
    text = re.sub(r"^```.*?^```", " ", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    return re.sub(r"\s+", " ", text)


def clean(text: str) -> str:
    """A widget's text as the user reads it: no mnemonic &, no markup, one space."""
    text = re.sub(r"<[^>]+>", "", text).replace("\u00a0", " ")
    text = re.sub(r"&(?!&)", "", text).replace("&&", "&")
    return re.sub(r"\s+", " ", text).strip()


# ---- what the guide names ------------------------------------------------------------------------

BOLD = re.compile(r"\*\*([^*]+?)\*\*")
ITALIC = re.compile(r"(?<![*\w])\*(?![*\s])([^*`]+?)(?<!\s)\*(?![*\w])")


def menu_paths(text: str) -> list[tuple[list[str], str | None]]:
    """[(path, shortcut or None)] of every **A ▸ B** (its "(Ctrl+X" right after it)."""
    out = []
    for m in BOLD.finditer(text):
        if "▸" in m.group(1):
            after = re.match(r"\s*\(([^,)]+)", text[m.end():])
            shortcut = after.group(1).strip() if after and re.fullmatch(r"(Ctrl|Alt|Shift|F\d)\S*",
                                                                         after.group(1).strip()) else None
            out.append(([p.strip() for p in m.group(1).split("▸")], shortcut))
    return out


def bold_before(text: str, word: str) -> list[str]:
    """Every **X** followed by `word` (panel, menu, button)."""
    return [m.group(1).strip() for m in re.finditer(r"\*\*([^*]+?)\*\*\s+" + word + r"\b", text)]


def code_panels(text: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`\s+panel\b", text)


def italics(text: str) -> list[tuple[str, str | None]]:
    """[(label, value or None)] of every *label* (and "to `value`", "`value`" or "to 2" right after it)."""
    out = []
    for m in ITALIC.finditer(text):
        value = re.match(r"\s+(?:(?:back\s+)?to\s+)?(?:`([^`]+)`|(\d+)\b)", text[m.end():])
        out.append((m.group(1).strip(), (value.group(1) or value.group(2)) if value else None))
    return out


def export_list(text: str) -> list[str]:
    m = re.search(r"Panel names: (.*?)\.(?: |$)", text)
    assert m, "the guide lists the export's panel names after 'Panel names:'"
    return re.findall(r"`([a-z_]+)`", m.group(1))


# ---- what the window has -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def win(qapp):
    with shown_window(qapp) as w:
        w.render_sync()
        w.show_lessons()  # the lesson panel's buttons
        qapp.processEvents()
        yield w


@pytest.fixture(scope="module")
def extra_panels(win, qapp):
    """One of each registered panel the window does not hold (model panels, the lab):
    their buttons and lists are named too."""
    made = []
    for name, cls in PANELS.items():
        if name in win.panel_names():
            continue
        panel = cls(win.state)
        if cls.requires_model:
            panel.set_model(win.model_controller)
        made.append(panel)
    qapp.processEvents()
    yield made
    for panel in made:
        panel.deleteLater()
    qapp.processEvents()


def control_texts(roots: list[QWidget]) -> dict[str, QWidget]:
    """Every text a control shows → the widget it names (a form label → its field)."""
    texts: dict[str, QWidget] = {}
    for root in roots:
        for form in root.findChildren(QFormLayout):
            for row in range(form.rowCount()):
                label = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
                field = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
                if label is not None and isinstance(label.widget(), QLabel) and field is not None:
                    texts.setdefault(clean(label.widget().text()), field.widget() or label.widget())
        for w in root.findChildren(QLabel):
            texts.setdefault(clean(w.text()), w)
        for w in root.findChildren(QAbstractButton):
            texts.setdefault(clean(w.text()), w)
        for w in root.findChildren(QGroupBox):
            texts.setdefault(clean(w.title()), w)
        for w in root.findChildren(QComboBox):
            for i in range(w.count()):
                texts.setdefault(clean(w.itemText(i)), w)
    texts.pop("", None)
    return texts


def find_control(texts: dict[str, QWidget], label: str) -> QWidget | None:
    if label in texts:
        return texts[label]
    return next((w for t, w in texts.items() if t.startswith(label + " (")), None)


def panel_titles() -> list[str]:
    return [QCoreApplication.translate("Panel", cls.title) for cls in PANELS.values()]


def titled(prefix: str, titles: list[str]) -> bool:
    return any(t == prefix or t.startswith(prefix + ":") or t.startswith(prefix + " ") for t in titles)


def resolve_menu(win, path: list[str]):
    """The QAction at `path` from the menu bar (a submenu's action for a submenu), or None."""
    actions = win.menuBar().actions()
    found = None
    for part in path:
        found = next((a for a in actions if clean(a.text()) == part), None)
        if found is None:
            return None
        actions = found.menu().actions() if found.menu() is not None else []
    return found


# ---- the tests -----------------------------------------------------------------------------------

def test_the_guide_follows_its_convention():
    """The parser finds the names of the first lesson (a broken pattern would pass vacuously)."""
    text = guide_text()
    assert ["File", "Save session"] in [p for p, _s in menu_paths(text)]
    assert {"Heads", "Scores", "Diagnostics", "Softmax gradient"} <= set(bold_before(text, "panel"))
    assert {"seed", "tokens", "scaling", "causal", "padding", "mask value"} <= {t for t, _v in italics(text)}
    assert ("scaling", "none (×1)") in italics(text)
    # no panel, control or window menu is named another way: the old *qkv* panel, **seed**
    for old in re.findall(r"(?<!\*)\*([a-z_]+)\* panel", text):
        pytest.fail(f"panel written *{old}*: write the **Title** panel or the `{old}` panel")


@pytest.mark.slow
def test_every_menu_entry_the_guide_names_exists(win):
    missing, wrong_keys = [], []
    for path, shortcut in menu_paths(guide_text()):
        action = resolve_menu(win, path)
        if action is None:
            missing.append(" ▸ ".join(path))
        elif shortcut is not None:
            have = action.shortcut().toString(QKeySequence.SequenceFormat.PortableText)
            if have != shortcut:
                wrong_keys.append(f"{' ▸ '.join(path)}: the guide says {shortcut}, the menu {have or 'none'}")
    menus = [clean(a.text()) for a in win.menuBar().actions()]
    missing += [f"the {m} menu" for m in bold_before(guide_text(), "menu") if m not in menus]
    assert not missing, f"menu entries the window does not have: {missing}"
    assert not wrong_keys, wrong_keys


def test_every_panel_the_guide_names_exists():
    text = guide_text()
    titles = panel_titles()
    missing = [f"**{t}** panel" for t in bold_before(text, "panel") if not titled(t, titles)]
    missing += [f"`{n}` panel" for n in code_panels(text) if n not in PANELS]
    assert not missing, f"panels no title starts with (titles: {titles}): {missing}"


def test_the_export_panel_list_is_what_export_takes():
    exportable = {*PANEL_NAMES, *CLOSED_PANEL_NAMES, *MODEL_PANEL_NAMES, *ON_DEMAND_PANELS}
    listed = export_list(guide_text())
    assert set(listed) == exportable, (sorted(set(listed) - exportable), sorted(exportable - set(listed)))


@pytest.mark.slow
def test_every_control_and_value_the_guide_names_exists(win, extra_panels):
    texts = control_texts([win, *extra_panels])
    missing, bad_values = [], []
    for label, value in italics(guide_text()):
        w = find_control(texts, label)
        if w is None:
            missing.append(label)
        elif value is not None and isinstance(w, QComboBox):
            entries = [clean(w.itemText(i)) for i in range(w.count())] + [str(w.itemData(i)) for i in range(w.count())]
            if value not in entries:
                bad_values.append(f"*{label}* has no `{value}`: {entries[:w.count()]}")
    buttons = [clean(b.text()) for b in win.findChildren(QAbstractButton)]
    missing += [f"the {b} button" for b in bold_before(guide_text(), "button") if b not in buttons]
    assert not missing, f"controls the window does not show (convention: *label*): {missing}"
    assert not bad_values, bad_values


@pytest.mark.slow
def test_a_bogus_name_fails(win, extra_panels, tmp_path):
    """The checks bite: a guide naming a panel, control, menu entry or value that does not exist."""
    bogus = tmp_path / "guide.md"
    bogus.write_text("Open **File ▸ Save everything** (Ctrl+E), look at the **Attention flow** panel and "
                     "the `flow` panel, set *temperature* and set *scaling* to `×2`. **Tools** menu.",
                     encoding="utf-8")
    text = guide_text(bogus)
    assert resolve_menu(win, menu_paths(text)[0][0]) is None
    assert not titled(bold_before(text, "panel")[0], panel_titles())
    assert code_panels(text) == ["flow"] and "flow" not in PANELS
    texts = control_texts([win, *extra_panels])
    (label, value), (label2, value2) = italics(text)
    assert (label, value) == ("temperature", None) and find_control(texts, label) is None
    combo = find_control(texts, label2)
    assert isinstance(combo, QComboBox) and value2 not in [combo.itemText(i) for i in range(combo.count())]
    assert bold_before(text, "menu") == ["Tools"]
