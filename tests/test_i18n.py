"""The bilingual interface: every string translated, the .qm loads, the font covers the Chinese,
the language follows the locale and the settings, and switching relabels the window live."""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QCoreApplication, QLocale, QSettings, QTranslator
from PySide6.QtGui import QRawFont

import explorer
from explorer import i18n
from explorer.lessons import load_chapters

ROOT = Path(__file__).resolve().parent.parent
TS = ROOT / "assets" / "translations" / "attention_explorer_zh_CN.ts"
PLACEHOLDER = re.compile(r"\{[a-z_]*(?::[^}]*)?\}")  # {name}, {value:.3f}
TAG = re.compile(r"</?[a-z]+[^>]*>")


def ts_messages(path: Path) -> dict[tuple[str, str], ET.Element]:
    """(context, source) → the <translation> element."""
    root = ET.parse(path).getroot()
    return {(c.findtext("name"), m.findtext("source")): m.find("translation")
            for c in root.iter("context") for m in c.findall("message")}


MESSAGES = ts_messages(TS)


def zh(context: str, source: str) -> str:
    return MESSAGES[(context, source)].text


def is_finished(tr: ET.Element) -> bool:
    return tr.get("type") is None and bool((tr.text or "").strip())


# ---- the .ts ---------------------------------------------------------------------------------


def test_ts_is_simplified_chinese_and_fully_translated():
    root = ET.parse(TS).getroot()
    assert root.get("language") == "zh_CN" and root.get("sourcelanguage") == "en"
    assert len(MESSAGES) > 300
    bad = [f"{ctx}: {src!r} ({tr.get('type') or 'empty'})" for (ctx, src), tr in MESSAGES.items()
           if not is_finished(tr)]
    assert not bad, f"{len(bad)} untranslated strings in {TS.name}:\n" + "\n".join(bad)


def test_translations_keep_placeholders_markup_and_accelerators():
    bad = []
    for (ctx, src), tr in MESSAGES.items():
        if not is_finished(tr):
            continue  # reported by the test above
        text = tr.text or ""
        if sorted(PLACEHOLDER.findall(src)) != sorted(PLACEHOLDER.findall(text)):
            bad.append(f"{ctx}: {src!r}: placeholders {PLACEHOLDER.findall(text)}")
        if sorted(TAG.findall(src)) != sorted(TAG.findall(text)):
            bad.append(f"{ctx}: {src!r}: markup differs")
        if re.search(r"&[A-Za-z](?![a-z]*;)", src) and not re.search(r"&[A-Za-z](?![a-z]*;)", text):
            bad.append(f"{ctx}: {src!r}: lost its & accelerator")
    assert not bad, "\n".join(bad)


def test_every_string_in_the_code_has_a_translation(tmp_path):
    """lupdate over explorer/ into a fresh .ts: a new tr() string not yet in the committed .ts
    (or not translated there) fails here, naming it; run `make translations-update`."""
    lupdate = Path(__import__("sys").executable).with_name("pyside6-lupdate")
    if not lupdate.exists():
        pytest.skip("pyside6-lupdate is not installed next to this interpreter")
    files = sorted(str(p) for p in (ROOT / "explorer").rglob("*.py") if "__pycache__" not in p.parts)
    fresh = tmp_path / "fresh.ts"
    subprocess.run([str(lupdate), *files, "-silent", "-locations", "none", "-ts", str(fresh)],
                   check=True, capture_output=True, timeout=120)
    found = ts_messages(fresh)
    assert len(found) > 300, "lupdate found too few strings: is it reading the Python files?"
    missing = [f"{ctx}: {src!r}" for (ctx, src) in found
               if (ctx, src) not in MESSAGES or not is_finished(MESSAGES[(ctx, src)])]
    assert not missing, (f"{len(missing)} strings of explorer/ have no Chinese translation "
                         "(make translations-update, then translate them):\n" + "\n".join(missing))
    assert "" not in {ctx for ctx, _ in found}, "a tr() call without a class context (use self.tr)"


def test_qm_is_built_and_translates(qapp, translations_built):
    qm = i18n.qm_path("zh_CN")
    assert qm.is_file(), "the .qm was not built (pyside6-lrelease missing?)"
    t = QTranslator()
    assert t.load(str(qm))
    assert t.translate("MainWindow", "&File") == zh("MainWindow", "&File") == "文件(&F)"


def test_bundled_font_covers_the_chinese_text(qapp):
    """Every CJK character of the translations, the Chinese lessons and help pages (and the
    words the help fills in) has a glyph in the bundled subset (else: python
    packaging/subset_font.py, see assets/fonts/README.md)."""
    from explorer import help as help_text

    text = "".join(tr.text or "" for tr in MESSAGES.values())
    for folder in ("lessons", "help"):
        text += "".join(p.read_text(encoding="utf-8") for p in (ROOT / "assets" / folder / "zh").glob("*.md"))
    text += "".join(help_text._WORDS["zh"].values()) + "".join(s for _b, s in help_text._SATURATION["zh"])
    cjk = sorted({c for c in text if "\u2e80" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef"})
    assert len(cjk) > 300
    for name in i18n.CJK_FONT_FILES:
        font = QRawFont(str(ROOT / "assets" / "fonts" / name), 12)
        assert font.isValid(), name
        assert font.familyName() == i18n.CJK_FAMILY
        lacking = "".join(c for c in cjk if not font.supportsCharacter(ord(c)))  # the str overload misreads CJK
        assert not lacking, f"{name} lacks {lacking!r}: run packaging/subset_font.py"
    assert (ROOT / "assets" / "fonts" / "OFL.txt").read_text(encoding="utf-8").count("SIL OPEN FONT LICENSE") >= 1


# ---- choosing the language -------------------------------------------------------------------------


def test_system_locale_chooses_the_language():
    assert i18n.system_language(QLocale(QLocale.Language.Chinese, QLocale.Country.China)) == "zh_CN"
    assert i18n.system_language(QLocale(QLocale.Language.Chinese, QLocale.Country.Taiwan)) == "zh_CN"
    assert i18n.system_language(QLocale(QLocale.Language.English, QLocale.Country.UnitedKingdom)) == "en"
    assert i18n.system_language(QLocale(QLocale.Language.German, QLocale.Country.Germany)) == "en"
    assert [i18n.normalize(x) for x in ("zh", "zh-Hans-CN", "en_US", "fr", "")] == ["zh_CN", "zh_CN", "en", None, None]


def test_saved_choice_beats_the_locale_and_the_environment_beats_both(tmp_path, monkeypatch):
    s = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    monkeypatch.delenv(i18n.LANGUAGE_ENV, raising=False)
    monkeypatch.setattr(i18n, "system_language", lambda locale=None: "en")
    assert i18n.startup_language(s) == "en"
    s.setValue(i18n.SETTINGS_KEY, "zh_CN")
    assert i18n.startup_language(s) == "zh_CN"
    monkeypatch.setenv(i18n.LANGUAGE_ENV, "en")
    assert i18n.startup_language(s) == "en"


# ---- switching live ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    from explorer.window import MainWindow

    explorer.ensure_app()
    # its own settings file: the language it saves must not reach the other tests' windows
    ini = tmp_path_factory.mktemp("i18n") / "settings.ini"
    w = MainWindow(settings=QSettings(str(ini), QSettings.Format.IniFormat))
    w.resize(1600, 1000)
    w.show()
    qapp.processEvents()
    yield w
    w.set_language("en")
    w.close()
    w.shutdown()
    w.deleteLater()
    qapp.processEvents()


def labels(w) -> dict[str, str]:
    """The texts the test follows: menus, a control label and group, dock titles, axis labels,
    the status bar, a lesson title."""
    return {
        "menus": [a.text() for a in w.menuBar().actions()],
        "query length": w.controls._labels["seq_len"].text(),
        "group": w.controls._groups[0].title(),
        "checkbox": w.controls.causal.text(),
        "controls dock": w.controls_dock.windowTitle(),
        "heads dock": w.dock("heads").windowTitle(),
        "axis key": w.panel("softmax_grad").row_plot.getAxis("bottom").labelText,
        "axis query": w.panel("heads").big.item.getAxis("left").labelText,
        "diagnostics toolbar": w.panel("diagnostics").cache_label.text(),
        "compute": w.status.status_compute.text(),
        "lesson": w.panel("lesson").title_label.text(),
        "lesson button": w.panel("lesson").apply_button.text(),
        "title": w.windowTitle(),
    }


@pytest.mark.slow
def test_switching_to_chinese_relabels_the_window_and_back(qtbot, window):
    w = window
    w.show_lessons(2)
    qtbot.waitUntil(lambda: w.frame is not None, timeout=20_000)
    en = labels(w)
    assert en["query length"] == "query length" and "&File" in en["menus"]
    assert w.language() == "en" and w.features["help"].act_languages["en"].isChecked()

    assert w.set_language("zh_CN")
    try:
        cn = labels(w)
        for source in ("&File", "&View", "&Lessons", "&Help", "&Edit"):
            assert zh("MainWindow", source) in cn["menus"], (source, cn["menus"])
        assert cn["query length"] == zh("ConfigControls", "query length") == "查询长度"
        assert cn["group"] == zh("ConfigControls", "Shape")
        assert cn["checkbox"] == zh("ConfigControls", "causal (bottom-right aligned)")
        assert cn["controls dock"] == zh("MainWindow", "Configuration")
        assert cn["heads dock"].endswith(zh("Panel", "Heads: attention weights"))
        assert cn["axis key"] == zh("SoftmaxGradPanel", "key") == "键"
        assert cn["axis query"] == zh("HeadsPanel", "query") == "查询"
        assert cn["diagnostics toolbar"] == zh("DiagnosticsPanel", "KV cache at")
        assert "毫秒" in cn["compute"]
        assert load_chapters()[2].title("zh") in cn["lesson"]
        assert cn["lesson button"] == zh("LessonPanel", "Apply preset")
        assert cn["title"].startswith("注意力探索器")
        assert w.features["help"].act_languages["zh_CN"].isChecked() and not w.features["help"].act_languages["en"].isChecked()
        assert w.settings.value(i18n.SETTINGS_KEY) == "zh_CN"
        # exports follow the language: the caption, and the panels draw translated text
        from explorer.export import caption_text

        assert caption_text(w.config).startswith("注意力探索器 · ")
        assert all(v != en[k] for k, v in cn.items() if k != "compute"), "some text stayed English"
    finally:
        assert w.set_language("en")
    assert labels(w) == {**en, "compute": labels(w)["compute"]}
    assert w.settings.value(i18n.SETTINGS_KEY) == "en"
    assert QCoreApplication.translate("MainWindow", "&File") == "&File"


def test_the_kv_head_map_keeps_its_lines_whole_in_chinese(qtbot, window):
    """The KV-head map under the KV heads box is three lines high, measured once in English:
    switched to Chinese live (a CJK font, taller lines) its third line was cut."""
    from engine import AttentionConfig

    w = window
    gm = w.controls.group_map
    for cfg in (AttentionConfig(), AttentionConfig(n_heads=8, n_kv_heads=4, d_model=64)):
        w.set_config(cfg)
        assert gm.heightForWidth(gm.width()) <= gm.height(), "English"
        assert w.set_language("zh_CN")
        try:
            assert gm.heightForWidth(gm.width()) <= gm.height(), (cfg, gm.height(), gm.heightForWidth(gm.width()))
        finally:
            assert w.set_language("en")


def test_the_status_bar_and_the_formula_strip_follow_the_language(window):
    """Live switch to Chinese: the status bar's config line and the formula strip's mask step
    are Chinese too (they stayed English: "heads=4 · mask=causal+window=3"), and English again after."""
    from engine import AttentionConfig

    w = window
    cfg = AttentionConfig(causal=True, window=3, positional="sinusoidal", prescale_q=True)
    w.render_sync(cfg)
    en_status, en_mask = w.status.status_config.text(), w.formula.buttons["mask"].text()
    assert en_status == cfg.summary().replace("  ", " · ")
    assert "causal" in en_mask
    assert w.set_language("zh_CN")
    try:
        status, mask = w.status.status_config.text(), w.formula.buttons["mask"].text()
        masks = zh("MainWindow", "causal") + "+" + zh("MainWindow", "window={w}").format(w=3)
        for part in (zh("MainWindow", "heads={n}").format(n=4), zh("MainWindow", "mask={masks}").format(masks=masks),
                     zh("MainWindow", "prescale Q"),
                     zh("MainWindow", "pos={p}").format(p=zh("MainWindow", "sinusoidal"))):
            assert part in status, (part, status)
        for word in ("heads", "mask", "causal", "window", "scale", "prescale", "pos=", "sinusoidal"):
            assert word not in status, (word, status)
        assert zh("Formula", "causal") in mask and "causal" not in mask, mask
    finally:
        assert w.set_language("en")
    assert w.status.status_config.text() == en_status and w.formula.buttons["mask"].text() == en_mask


@pytest.mark.slow
def test_missing_translation_falls_back_to_english(qtbot, window, monkeypatch, tmp_path):
    monkeypatch.setattr(i18n, "qm_path", lambda lang: tmp_path / "nothing.qm")
    assert not window.set_language("zh_CN")
    assert window.language() == "en"
    assert window.controls._labels["seq_len"].text() == "query length"
    assert "make translations" in window.banner.message()
    window.banner.hide_message()
