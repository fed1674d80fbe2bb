"""The interface language (Qt translators) and the bundled CJK font.

English is the source language of every string in `explorer/` (wrapped in
`tr()` / `QCoreApplication.translate`); Simplified Chinese comes from
`assets/translations/attention_explorer_zh_CN.qm`, which `make` builds from
the committed `.ts` with pyside6-lrelease. The language at start is, in
order: the ATTN_EXPLORER_LANGUAGE environment variable, the choice saved in
QSettings (View ▸ Language), the system locale.

Switching installs new translators; Qt then sends every widget a
LanguageChange event, and each widget re-sets its own texts
(`retranslate_ui`), so the switch is live.

The font: machines without a CJK font (many Linux installs) would draw the
Chinese as boxes, so a subset of Noto Sans CJK SC (OFL, assets/fonts/) is
registered at start and added as a fallback family of the application font.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QCoreApplication,
    QLibraryInfo,
    QLocale,
    QSettings,
    QTranslator,
)
from PySide6.QtGui import QFont, QFontDatabase, QFontInfo

from assets import asset_path

#: code → the language's name in that language (what the View ▸ Language menu shows).
LANGUAGES: dict[str, str] = {"en": "English", "zh_CN": "中文"}
DEFAULT_LANGUAGE = "en"
SETTINGS_KEY = "language"
#: Environment variable forcing the language at start ("en" or "zh_CN"; tests use it).
LANGUAGE_ENV = "ATTN_EXPLORER_LANGUAGE"
TS_NAME = "attention_explorer_{lang}.ts"
QM_NAME = "attention_explorer_{lang}.qm"
#: The bundled subset font (regenerate with packaging/subset_font.py).
CJK_FONT_FILES = ("NotoSansCJKsc-Regular-subset.otf", "NotoSansCJKsc-Bold-subset.otf")
CJK_FAMILY = "Noto Sans CJK SC"

_translators: list[QTranslator] = []
_language: str | None = None  # None until the first set_language
_font_families: list[str] | None = None


def translations_dir() -> Path:
    return asset_path("translations")


def qm_path(lang: str) -> Path:
    return translations_dir() / QM_NAME.format(lang=lang)


def ts_path(lang: str) -> Path:
    return translations_dir() / TS_NAME.format(lang=lang)


def normalize(lang: str | None) -> str | None:
    """'zh', 'zh_CN', 'zh-Hans' → 'zh_CN'; 'en', 'en_US' → 'en'; anything else None."""
    if not lang:
        return None
    lang = str(lang).replace("-", "_")
    if lang in LANGUAGES:
        return lang
    base = lang.split("_")[0].lower()
    if base == "zh":
        return "zh_CN"
    if base == "en":
        return "en"
    return None


def system_language(locale: QLocale | None = None) -> str:
    """The interface language for the system locale: Chinese locales get zh_CN, all others English."""
    loc = locale if locale is not None else QLocale.system()
    if loc.language() == QLocale.Language.Chinese:
        return "zh_CN"
    for ui in loc.uiLanguages():  # e.g. ["zh-Hans-CN", "en-US"]: the first one we have wins
        lang = normalize(ui)
        if lang is not None:
            return lang
    return DEFAULT_LANGUAGE


def startup_language(settings: QSettings | None = None) -> str:
    """Environment override, else the saved choice, else the system locale."""
    env = normalize(os.environ.get(LANGUAGE_ENV))
    if env is not None:
        return env
    if settings is not None:
        saved = normalize(settings.value(SETTINGS_KEY, "", type=str))
        if saved is not None:
            return saved
    return system_language()


def current_language() -> str:
    return _language or DEFAULT_LANGUAGE


def lesson_language(lang: str | None = None) -> str:
    """The lesson-text code ("en" or "zh") for an interface language."""
    return "zh" if (lang or current_language()).startswith("zh") else "en"


def is_initialized() -> bool:
    return _language is not None


def set_language(lang: str) -> bool:
    """Install the translators of `lang` (live: widgets get LanguageChange).

    Returns False, and stays in English, when the .qm of `lang` is missing
    (a checkout where `make` has not built it yet) or unreadable.
    """
    global _language
    app = QCoreApplication.instance()
    lang = normalize(lang) or DEFAULT_LANGUAGE
    if app is None:
        raise RuntimeError("set_language needs a QApplication")
    if lang == _language:
        return True
    new: list[QTranslator] = []
    ok = True
    if lang != DEFAULT_LANGUAGE:
        ours = QTranslator(app)
        if ours.load(str(qm_path(lang))):
            new.append(ours)
            # Qt's own strings: the Cancel / Yes / No of standard dialogs and buttons
            qt = QTranslator(app)
            qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
            if qt.load(f"qtbase_{lang}", qt_dir):
                new.append(qt)
        else:
            print(f"attention-explorer: no translation {qm_path(lang)} (run `make translations`); "
                  "showing English", file=sys.stderr)
            ok = False
            lang = DEFAULT_LANGUAGE
    for t in _translators:
        app.removeTranslator(t)
    _translators.clear()
    for t in new:
        app.installTranslator(t)  # posts LanguageChange to every widget
        _translators.append(t)
    _language = lang
    _order_font_families(lang)
    return ok


_latin_family: str | None = None


def _order_font_families(lang: str) -> None:
    """Chinese leads with the CJK family, so every line's height (a dock title, a table row)
    is measured with the taller CJK glyphs: measured with the Latin font, Chinese text sat
    lower and its Latin neighbours lost their descenders ("QKᵀ" read "OKᵀ", "√d_k" "√d k")."""
    app = QCoreApplication.instance()
    families = _font_families or []
    if not families or app is None or not hasattr(app, "setFont") or _latin_family is None:
        return
    lead = [*families, _latin_family] if lang.startswith("zh") else [_latin_family, *families]
    font = app.font()
    if font.families() != lead:
        font.setFamilies(lead)
        app.setFont(font)


def install_fonts() -> list[str]:
    """Register the bundled CJK font and make it a fallback of the application font (once).

    Returns the families registered (empty when the font files are missing:
    Chinese then relies on the system's fonts).
    """
    global _font_families
    if _font_families is not None:
        return _font_families
    app = QCoreApplication.instance()
    families: list[str] = []
    for name in CJK_FONT_FILES:
        path = asset_path("fonts", name)
        if not path.is_file():
            continue
        fid = QFontDatabase.addApplicationFont(str(path))
        if fid >= 0:
            families += [f for f in QFontDatabase.applicationFontFamilies(fid) if f not in families]
    _font_families = families
    if families and app is not None and hasattr(app, "setFont"):
        base = app.font()
        # the family the platform really uses ("Sans Serif" is only an alias): Latin text keeps
        # its usual look, and only characters it lacks come from the CJK font
        first = QFontInfo(base).family() or base.family()
        global _latin_family
        _latin_family = first
        chain = [first, *[f for f in families if f != first]]
        if (_language or "").startswith("zh"):
            chain = [*chain[1:], first]
        base.setFamilies(chain)
        app.setFont(base)
        # widgets or plot items that name a family themselves still fall back to the CJK font
        for fam in {first, "DejaVu Sans", "Sans Serif", "Segoe UI", "Helvetica", "Arial"}:
            QFont.insertSubstitutions(fam, families)
    return families


class LiveText(str):
    """A line translated now that can be translated again after a language switch (`now`):
    for texts a model keeps and a widget shows later (the training lab's message line)."""

    context: str
    source: str
    values: dict

    def __new__(cls, context: str, source: str, **values) -> LiveText:
        text = QCoreApplication.translate(context, source)
        obj = super().__new__(cls, text.format(**values) if values else text)
        obj.context, obj.source, obj.values = context, source, values
        return obj

    def now(self) -> LiveText:
        return LiveText(self.context, self.source, **self.values)


def now(text: str) -> str:
    """`text` in the current language: a LiveText translated again, any other str as it is."""
    return text.now() if isinstance(text, LiveText) else text


#: lines the engine writes (English: it imports no Qt) that the window shows: (pattern, source);
#: the pattern's groups fill the source's {fields}. Translated in the "Engine" context.
ENGINE_LINES: tuple[tuple[str, str], ...] = (
    (r"A training-lab run: (?P<summary>.+), (?P<steps>\S+) steps\.",
     QT_TRANSLATE_NOOP("Engine", "A training-lab run: {summary}, {steps} steps.")),
    (r"Its tokens are the task's symbols: type e\.g\. '(?P<example>[^']*)' \(spaces are ignored, "
     r"characters outside the vocabulary skipped\); <bos> comes first as in training\.",
     QT_TRANSLATE_NOOP("Engine", "Its tokens are the task's symbols: type e.g. '{example}' (spaces are "
                                 "ignored, characters outside the vocabulary skipped); <bos> comes first "
                                 "as in training.")),
    (r"The text has (?P<n>\d+) tokens; only the first (?P<shown>\d+) are shown \(the limit is (?P<limit>\d+)\)\.",
     QT_TRANSLATE_NOOP("Engine", "The text has {n} tokens; only the first {shown} are shown (the limit is {limit}).")),
    (r"reproduces the model's own logits: max \|Δ\| (?P<d>\S+) \(hidden states (?P<h>\S+), attribution (?P<a>\S+)\)",
     QT_TRANSLATE_NOOP("Engine", "reproduces the model's own logits: max |Δ| {d} (hidden states {h}, attribution {a})")),
    (r"reproduces the model's own logits: max \|Δ\| (?P<d>\S+) \(hidden states (?P<h>\S+)\)",
     QT_TRANSLATE_NOOP("Engine", "reproduces the model's own logits: max |Δ| {d} (hidden states {h})")),
    (r"reproduces the model's own logits: max \|Δ\| (?P<d>\S+) \(attribution (?P<a>\S+)\)",
     QT_TRANSLATE_NOOP("Engine", "reproduces the model's own logits: max |Δ| {d} (attribution {a})")),
    (r"reproduces the model's own logits: max \|Δ\| (?P<d>\S+)",
     QT_TRANSLATE_NOOP("Engine", "reproduces the model's own logits: max |Δ| {d}")),
    (r"reproduces the model's own hidden states: max \|Δ\| (?P<d>\S+)",
     QT_TRANSLATE_NOOP("Engine", "reproduces the model's own hidden states: max |Δ| {d}")),
)


#: the engine's refusals (engine/config.py's and engine/training/config.py's ConfigError, a
#: BackendUnavailable) and the training circuit check's verdicts, written as the engine formats
#: them with a {field} for each value; translated in the "EngineRefusal" context. The most
#: specific first: the first whose pattern matches the whole line is used.
ENGINE_REFUSALS: tuple[str, ...] = (
    QT_TRANSLATE_NOOP("EngineRefusal", "n_heads must divide d_model={d_model}; got n_heads={n_heads} (allowed: {allowed})"),
    QT_TRANSLATE_NOOP("EngineRefusal", "n_kv_heads must divide n_heads={n_heads}; got {value} (allowed: None, {allowed})"),
    QT_TRANSLATE_NOOP("EngineRefusal", "positional='rope' needs an even head_dim (d_model/n_heads); got {d_model}/{n_heads} = {head_dim}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "kernel={kernel} cannot take positional='alibi': ALiBi is a bias inside the softmax "
                                       "(use kernel='softmax', or another positional encoding)"),
    QT_TRANSLATE_NOOP("EngineRefusal", "summary_block cannot take a window: hierarchical attention sees its own block "
                                       "exactly and a summary of every other (set window=None)"),
    QT_TRANSLATE_NOOP("EngineRefusal", "summary_block cannot take global_tokens: hierarchical attention has its own "
                                       "global view, the block summaries (set global_tokens=0)"),
    QT_TRANSLATE_NOOP("EngineRefusal", "summary_block needs kernel='softmax', got kernel={kernel}: its summaries share "
                                       "one softmax with the block's own keys"),
    QT_TRANSLATE_NOOP("EngineRefusal", "scale must be a finite number or None (1/√d_k), got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "scale must be 'sqrt' (1/√d_head), 'none' or a multiplier in (0, {top}], got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "init_std must be a positive number or None (Xavier), got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "tokens must hold at least one token (or be None)"),
    QT_TRANSLATE_NOOP("EngineRefusal", "tokens must hold at most {limit} tokens, got {n}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "tokens must all be strings, got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "tokens must be a list of strings, got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "tokens must be a sequence of strings or None, got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "tokens must be valid Unicode text: token {i} holds {text}, a lone surrogate"),
    QT_TRANSLATE_NOOP("EngineRefusal", "batch, seq_len and the model's size need about {need} GiB a step, more than the "
                                       "{budget} GiB allowed: lower batch (now {batch}) or seq_len (now {seq_len})"),
    QT_TRANSLATE_NOOP("EngineRefusal", "unknown config field(s): {fields} (known: {known})"),
    QT_TRANSLATE_NOOP("EngineRefusal", "unknown training config field(s): {fields} (known: {known})"),
    QT_TRANSLATE_NOOP("EngineRefusal", "config must be a JSON object, got {kind}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "training config must be a JSON object, got {kind}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "{name} must be a number in {range} (0 = no clipping), got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "{name} must be a number in {range}, got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "{name} must be a finite number, got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "{name} must be an integer, got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "{name} must be between {lo} and {hi}, got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "{name} must be true or false, got {value}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "{name} must be one of {allowed}; got {value}"),
    # engine.memory's budget checks (the parts they list stay as the engine wrote them)
    QT_TRANSLATE_NOOP("EngineRefusal", "this config needs about {total}: {parts} at {shape}; over the {budget} memory "
                                       "budget: {advice}; a fused backend (sdpa, flash) holds no grid"),
    QT_TRANSLATE_NOOP("EngineRefusal", "this config needs about {total}: {parts} at {shape}; over the {budget} memory "
                                       "budget: {advice}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "this {what} needs about {total}, no attention grid: {parts} at {shape}; over "
                                       "the {budget} memory budget: {advice}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "decoding this config needs about {need} (KV cache, weights, the causal mask; "
                                       "S = {S}, d_model = {d_model}), over the {budget} memory budget: lower seq_len, "
                                       "d_model or batch"),
    # (the parts a memory refusal lists, and what it says is run: engine.memory._PARTS, _FUSED_PARTS)
    QT_TRANSLATE_NOOP("EngineRefusal", "weights {weights} (d_model²), activations {activations} (B·S·d_model), "
                                       "attention grids {grids} (B·H·S·Skv), temporaries {temporaries} (B·H·S·Skv)"),
    QT_TRANSLATE_NOOP("EngineRefusal", "weights {weights} (d_model²), activations {activations} (B·S·d_model), "
                                       "mask and kernel temporaries {temporaries} (S·Skv, B·H·S·d_k)"),
    QT_TRANSLATE_NOOP("EngineRefusal", "sdpa run"),
    QT_TRANSLATE_NOOP("EngineRefusal", "flash run"),
    QT_TRANSLATE_NOOP("EngineRefusal", "eager run"),
    QT_TRANSLATE_NOOP("EngineRefusal", "efficient run ({variants})"),
    QT_TRANSLATE_NOOP("EngineRefusal", "lower d_model"),
    QT_TRANSLATE_NOOP("EngineRefusal", "lower seq_len, kv_len, batch or d_model"),
    QT_TRANSLATE_NOOP("EngineRefusal", "lower seq_len, kv_len, heads or batch"),
    QT_TRANSLATE_NOOP("EngineRefusal", "device 'cuda' was asked for but no CUDA device is available"),
    QT_TRANSLATE_NOOP("EngineRefusal", "backend {name} is unavailable: {why}"),
    # (explorer.session's frame around the engine's refusal of a session's config)
    QT_TRANSLATE_NOOP("EngineRefusal", "invalid config in session: {reason}"),
    # the training circuit check (engine.training.trainer.Trainer.check_circuit)
    QT_TRANSLATE_NOOP("EngineRefusal", "the loss is not a number: the run diverged"),
    QT_TRANSLATE_NOOP("EngineRefusal", "still learning: loss on the predictable part {loss} nats"),
    QT_TRANSLATE_NOOP("EngineRefusal", "solved: loss on the predictable part {loss} nats"),
    QT_TRANSLATE_NOOP("EngineRefusal", "an induction head formed: induction score {score}, loss {loss} nats{unseen}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "another circuit formed: the loss fell to {loss} nats but the best induction "
                                       "score is only {score}{unseen}"),
    QT_TRANSLATE_NOOP("EngineRefusal", "; at the unseen prefix length {n} the loss is {loss} (it has not generalised "
                                       "beyond the trained lengths)"),
    QT_TRANSLATE_NOOP("EngineRefusal", "; at the unseen prefix length {n} the loss is {loss}"),
)


def _template_pattern(source: str) -> str:
    """The regular expression of a {field} template: its text literally, each field a group."""
    import re

    parts = re.split(r"\{(\w+)\}", source)
    return "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.*?)" for i, p in enumerate(parts))


def engine_text(line: str) -> str:
    """One of the engine's English lines (`ENGINE_LINES`, `ENGINE_REFUSALS`) in the interface
    language; a line not in the tables (a refusal naming a file, a number) is shown as the
    engine wrote it. A field that is itself one of the engine's lines (the circuit check's
    "; at the unseen prefix length …", a memory refusal's advice) is translated too."""
    import re

    for pattern, source in ENGINE_LINES:
        m = re.fullmatch(pattern, line)
        if m is not None:
            return QCoreApplication.translate("Engine", source).format(**m.groupdict())
    for source in ENGINE_REFUSALS:
        m = re.fullmatch(_template_pattern(source), line, re.S)
        if m is not None:
            values = {k: engine_text(v) for k, v in m.groupdict().items()}  # (a part may be a line too)
            return QCoreApplication.translate("EngineRefusal", source).format(**values)
    return line


def setup(settings: QSettings | None = None) -> str:
    """Fonts, and the start-up language unless one was chosen already in this process."""
    install_fonts()
    if not is_initialized():
        set_language(startup_language(settings))
    return current_language()


__all__ = [
    "LANGUAGES",
    "LiveText",
    "current_language",
    "engine_text",
    "install_fonts",
    "lesson_language",
    "now",
    "qm_path",
    "set_language",
    "setup",
    "startup_language",
    "system_language",
    "ts_path",
]
