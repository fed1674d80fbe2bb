"""Issue 15: every number agrees with its explanation, nothing a student does is lost.

Each test reads what the window shows (titles, card rows, control texts, the
status bar, pixels) for a config where today's code told the student something
wrong, and checks it against the engine.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

pytest.importorskip("pytestqt")

from conftest import plain, shown_window
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel

from engine import AttentionConfig
from explorer.figures.layout import text_boxes
from explorer.figures.plots import fmt_number
from explorer.frame import positional_view, scaling_sweep
from explorer.lessons import LESSON_DIR, load_chapters


@pytest.fixture(scope="module")
def win(qapp):
    with shown_window(qapp) as w:
        yield w


@pytest.fixture(autouse=True)
def no_reference(request):
    """Each test starts without a reference A (a comparison chapter's preset pins one)."""
    yield
    if "win" in request.fixturenames:
        request.getfixturevalue("win").clear_reference()


def show(win, qapp, cfg: AttentionConfig, backends: bool = False):
    """Draw `cfg` now (and the backend comparison); the frame shown."""
    win.render_sync(cfg)
    qapp.processEvents()
    if backends:
        win.measure_backends_sync()
        qapp.processEvents()
    return win.frame


def panel_texts(win, name: str) -> list[str]:
    """Every text panel `name` shows: plot titles, readouts, axis and tick labels, card rows."""
    panel = win.panel(name)
    texts = [plain(t) for _view, boxes in text_boxes(panel) for t, _b, _a in boxes]
    texts += [plain(lab.text()) for lab in panel.findChildren(QLabel) if lab.isVisible() and lab.text()]
    return texts


def joined(win, name: str) -> str:
    return "\n".join(panel_texts(win, name))


# ---- the √d_k sweep: the star and the curves answer the same question -------------------------

def _sweep_title(win) -> str:
    return next(t for t in panel_texts(win, "softmax_grad") if t.startswith("why √d_k"))


@pytest.mark.slow
@pytest.mark.parametrize("seq_len", [8, 64])
def test_the_star_sits_on_the_curve_of_its_own_scaling(win, qapp, seq_len):
    """At S=8 the scaled config's star sat on the unscaled curve (curves had 64 keys)."""
    for scale, own, other in ((None, "grad_scaled", "grad_unscaled"), (1.0, "grad_unscaled", "grad_scaled")):
        f = show(win, qapp, AttentionConfig(seq_len=seq_len, scale=scale))
        here = float(re.search(r"here \([^)]*\): ([0-9.]+)", _sweep_title(win)).group(1))
        sw = scaling_sweep(f.sweep_counts)
        i = list(sw["d_k"]).index(f.config.head_dim)
        assert abs(here - sw[own][i]) < abs(here - sw[other][i]), (seq_len, scale, here)
        assert abs(here - sw[own][i]) < 0.25 * sw[own][i]
    # and the panel says what the curves are for
    assert f"{seq_len} keys/row" in joined(win, "softmax_grad")


def test_causal_curves_cover_the_rows_key_counts(win, qapp):
    f = show(win, qapp, AttentionConfig(seq_len=8, causal=True))
    assert f.sweep_counts == tuple((n, 1) for n in range(1, 9))
    assert "1–8 keys/row" in joined(win, "softmax_grad")


# ---- NaN rows are NaN, not "collapsed" ----------------------------------------------------------

def test_fully_padded_rows_are_nan_not_collapsed(win, qapp):
    show(win, qapp, AttentionConfig(pad=8))
    diag = joined(win, "diagnostics")
    assert "collapsed" not in diag
    assert "every weight row is NaN" in diag
    assert "entropy (nats) · head 0: NaN" in diag
    assert "sink mass (key 0) · head 0: NaN" in diag
    assert "here (scaled): NaN" in _sweep_title(win)
    # every row fully masked: no key count to draw curves for, and the sweep says so (item 8)
    assert "no curves: no row sees a key" in _sweep_title(win)
    assert "keys/row" not in _sweep_title(win)
    assert not win.panel("softmax_grad").sweep_scaled.isVisible()


def test_per_head_bars_say_how_many_rows_they_cover(win, qapp):
    # float16 overflow (lesson 8): some rows of some heads are NaN
    f = show(win, qapp, AttentionConfig(d_model=256, n_heads=2, seq_len=16, init_std=3.0, dtype="float16"))
    covered = f.head_rows
    assert covered.min() < 16 and covered.max() > 0
    diag = joined(win, "diagnostics")
    assert re.search(r"per-head bars: means over \d+(–\d+)? of 16 rows \(NaN rows left out\)", diag)
    ent = f.entropy[0][f.valid_rows[0]]
    assert f"head 0: {fmt_number(ent.mean())}" in diag  # the mean of the rows that have weights


def test_the_largest_score_next_to_overflow_says_finite_and_counts_the_infinities(win, qapp):
    """With float16 overflow the peak is of the finite entries only: both panels say "largest
    finite" and the diagnostics count the ±inf entries (issue 27, item 9)."""
    f = show(win, qapp, AttentionConfig(d_model=256, n_heads=2, seq_len=16, init_std=3.0, dtype="float16"))
    n_inf = f.overflow.inf_scores_raw
    assert n_inf > 0
    diag = joined(win, "diagnostics")
    assert f"largest finite |Q·Kᵀ| = {f.overflow.max_abs_score_raw:.4g} (float16 max 6.55e+04) · {n_inf} entries ±inf" in diag
    assert "largest finite |QKᵀ|" in joined(win, "scores")
    show(win, qapp, AttentionConfig(dtype="float16"))  # nothing overflows: no "finite" to say
    assert "largest |Q·Kᵀ| = " in joined(win, "diagnostics") and "finite" not in joined(win, "diagnostics")
    assert "largest |QKᵀ|" in joined(win, "scores")


def test_one_collapsed_head_is_one_head(win, qapp):
    show(win, qapp, AttentionConfig(d_model=1024, n_heads=1, scale=1.0, seq_len=8))
    diag = joined(win, "diagnostics")
    assert "head 0 has collapsed" in diag
    assert "heads 0 have" not in diag


@pytest.mark.parametrize("causal", [False, True])
def test_sliding_window_1_is_not_a_collapse(win, qapp, causal):
    """Every row sees one key by construction: entropy 0 is all it can have (issue 47, item 8).
    The warning compares a head with the most its rows could spread, log(keys each row sees)."""
    f = show(win, qapp, AttentionConfig(seq_len=8, window=1, causal=causal))
    assert np.all(f.head_entropy < 1e-6)  # one-hot rows, as the window makes them
    assert "collapsed" not in joined(win, "diagnostics")


def test_a_collapse_inside_a_window_or_under_causal_is_still_one(win, qapp):
    """Unscaled d_k = 1024: near one-hot rows where rows could spread over 1..4 keys (window 4)
    or 1..8 keys (causal): a collapse, and the panel still says so."""
    for cfg in (AttentionConfig(d_model=1024, n_heads=1, scale=1.0, seq_len=8, window=4, causal=True),
                AttentionConfig(d_model=1024, n_heads=1, scale=1.0, seq_len=8, causal=True)):
        show(win, qapp, cfg)
        assert "head 0 has collapsed" in joined(win, "diagnostics"), cfg


def test_a_nan_rows_entropy_is_undefined_not_nan_nats(win, qapp):
    """Every key padded under −∞: the selected row is NaN; its title says the entropy is
    undefined instead of "H = nan nats" (issue 47, item 11)."""
    show(win, qapp, AttentionConfig(pad=8))
    text = joined(win, "softmax_grad")
    assert "H undefined" in text and "NaN row" in text
    assert "nan nats" not in text.lower()
    show(win, qapp, AttentionConfig())  # a row with weights: its entropy in nats
    assert re.search(r"H = [0-9.]+ nats", joined(win, "softmax_grad"))


def test_a_zero_score_reads_0_not_minus_0(win, qapp):
    """A multiplier of 0 (lesson 2's task): every scaled score is ±0; the selected cell's
    label reads "= 0", never "= -0" (issue 47, item 11)."""
    f = show(win, qapp, AttentionConfig(scale=0.0))
    i, j = (int(v) for v in np.unravel_index(int(np.argmin(f.scores_raw[0])), f.scores_raw[0].shape))
    win.selection.set(0, i, j)  # the most negative raw score: times 0 it is −0.0
    qapp.processEvents()
    assert f.cell("scores", 0, i, j) == 0 and f"{f.cell('scores', 0, i, j):.3g}" == "-0"
    labels = [t for t in panel_texts(win, "scores") if t.startswith(f"q{i}·k{j} = ")]
    assert f"q{i}·k{j} = 0" in labels, labels
    assert f"q{i}·k{j} = -0" not in labels
    assert not any("nan" in t for t in panel_texts(win, "scores"))


def test_no_minus_zero():
    assert fmt_number(-0.0) == "0"
    assert fmt_number(-1e-12, 3) == "-1e-12"
    assert fmt_number(float("nan")) == "NaN"
    assert fmt_number(0.0625) == "0.0625"


# ---- backend differences against the dtype's rounding -------------------------------------------

LESSON_10 = dict(d_model=64, n_heads=4, seq_len=16, causal=True, backend="flash")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_backend_differences_are_judged_in_units_of_rounding(win, qapp, dtype):
    """Lesson 10 says the backends agree up to rounding, also in bfloat16: the card says why."""
    f = show(win, qapp, AttentionConfig(**LESSON_10, dtype=dtype), backends=True)
    card = win.panel("diagnostics").backend_card.text()
    eps = {"float32": 2.0 ** -23, "bfloat16": 2.0 ** -7}[dtype]
    assert f"ε = {eps:.2g}" in card
    for name in ("sdpa", "flash"):
        row = next(line for line in card.splitlines() if line.startswith(name))
        diff = f.backends[name]["max_abs_diff"]
        ulps = diff / (eps * f.output_scale)
        assert f"{fmt_number(ulps, 2)} ε ✓" in row  # rounding: within 8 ε of the output's scale
        assert ulps <= 8


# ---- the lessons quote what their panels show ----------------------------------------------------

CHAPTERS = [ch for ch in load_chapters() if ch.expect]


def _lesson_values(lesson) -> tuple[str, str | None]:
    text = plain(lesson.metric_label.text())
    m = re.search(r": (.+?) at the preset(?: → (.+?) now)?", text)
    assert m, text
    return m.group(1), m.group(2)


@pytest.mark.slow
@pytest.mark.parametrize("ch", CHAPTERS, ids=lambda ch: ch.key)
def test_each_lesson_quotes_the_number_its_panels_show(win, qapp, qtbot, ch):
    lesson = win.show_lessons([c.key for c in load_chapters()].index(ch.key))
    lesson.apply_preset()
    qtbot.waitUntil(lambda: bool(lesson.metric_label.text()) and "…" not in lesson.metric_label.text(),
                    timeout=20000)
    show(win, qapp, win.config, backends=ch.expect["metric"] == "backend_max_abs_diff")
    before, _ = _lesson_values(lesson)
    # (a panel computed off the UI thread, such as efficient, shows the number once it is done)
    qtbot.waitUntil(lambda: before in "\n".join(joined(win, p) for p in ch.panels), timeout=30000)
    lesson.do_it()
    qtbot.waitUntil(lambda: _lesson_values(lesson)[1] not in (None, "…"), timeout=20000)
    show(win, qapp, win.config)
    _, now = _lesson_values(lesson)
    qtbot.waitUntil(lambda: now in "\n".join(joined(win, p) for p in ch.panels), timeout=30000)


def test_the_check_stays_once_the_task_is_done(win, qapp, qtbot):
    """Chapter 4: padding 5 gives the ✓; its next step (mask value min) must not take it away."""
    keys = [c.key for c in load_chapters()]
    lesson = win.show_lessons(keys.index("04-masks"))
    lesson.apply_preset()
    qtbot.waitUntil(lambda: lesson.try_holds is False or lesson.metric_label.text() != "", timeout=20000)
    win.set_config(win.config.replace(pad=5))
    qtbot.waitUntil(lambda: lesson.try_holds is True, timeout=20000)
    win.set_config(win.config.replace(mask_value="min"))
    qtbot.wait(300)
    qtbot.waitUntil(lambda: "…" not in lesson.metric_label.text(), timeout=20000)
    assert lesson.try_holds is True
    assert lesson.check_label.isVisible()


def test_chinese_lessons_have_no_spaces_around_bold_terms():
    """Chinese sets no space between characters: "关注 **对角线**" reads as a gap (a bold Latin
    term such as **W_Q** keeps its spaces)."""
    cjk = r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"
    for path in sorted((LESSON_DIR / "zh").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        bad = re.findall(rf"{cjk} \*\*{cjk}[^*]*\*\*|\*\*[^*]*{cjk}\*\* {cjk}", text)
        assert not bad, (path.name, bad[:3])
        doc = QTextDocument()
        doc.setMarkdown(text)
        assert "**" not in doc.toPlainText(), path.name  # every bold term still parses as bold


# ---- small lies and oddities ----------------------------------------------------------------------

def test_the_greyed_multiplier_shows_the_exact_scale(win, qapp):
    show(win, qapp, AttentionConfig(d_model=256, n_heads=1))
    spin = win.controls.scale.spin
    assert not spin.isEnabled()
    assert spin.text() == "0.0625"


def test_rows_that_see_no_key_are_hatched_under_minus_1e9(win, qapp):
    """Query rows 3 and 4 see no key (window 1, causal, the last two keys padded): under -1e9 they
    get a uniform row, drawn in colour; the hatching over it says the cells are masked."""
    cfg = AttentionConfig(seq_len=5, window=1, causal=True, pad=2, mask_value="-1e9", d_model=32, n_heads=2)
    f = show(win, qapp, cfg)
    # the selection's outline away from the cells probed below (an earlier lesson selected
    # (2, 1), and the maps may be short: a pinned A's paired readouts took height)
    win.selection.set(head=0, query=4, key=4)
    qapp.processEvents()
    assert not f.mask[3].any() and f.mask[1].any()
    heads = win.panel("heads")
    img = heads.grab().toImage()
    hm = heads.heatmaps()[0]

    def colours(row: int, col: int, vb=None, centre=None) -> int:
        c = (vb or hm.vb).mapViewToScene(centre if centre is not None else QPointF(col, row))
        p = heads.graphics.mapFromScene(c)
        p = heads.graphics.mapTo(heads, p)
        ratio = img.devicePixelRatio()
        seen = set()
        k = 6 if vb is None else 3
        for dx in range(-k, k + 1):
            for dy in range(-k, k + 1):
                seen.add(img.pixel(int((p.x() + dx) * ratio), int((p.y() + dy) * ratio)))
        return len(seen)

    assert colours(1, 1) == 1  # a visible cell: its colour only
    assert colours(3, 1) >= 2  # the uniform fallback's colour, and hatch lines over it
    th = heads.thumbs  # the thumbnails too
    assert colours(0, 0, th.vb, th.cell_center(1, 1, 1)) == 1
    assert colours(0, 0, th.vb, th.cell_center(1, 3, 1)) >= 2
    from explorer.panels.heads import describe_cell

    assert "sees no key" in describe_cell(f, 0, 3, 0)


def test_reset_forgets_the_stretched_axis_ranges(win, qapp):
    fresh = show(win, qapp, AttentionConfig())
    assert fresh is not None
    scores = win.panel("scores")
    plot = scores.raw.plot
    default_range = plot.viewRange()[0]
    show(win, qapp, AttentionConfig(d_model=1024, n_heads=2, scale=1.0))  # a 4× wider histogram
    assert plot.viewRange()[0][1] > 2 * default_range[1]
    win.reset()
    show(win, qapp, win.config)
    assert plot.viewRange()[0] == pytest.approx(default_range, rel=0.05)


def test_init_std_of_lesson_8_is_shown_and_a_refused_value_is_said(win, qapp):
    show(win, qapp, AttentionConfig(init_std=3.0))
    box = win.controls.init_std
    assert box.value() == pytest.approx(3.0)
    box.setFocus()
    box.selectAll()
    QTest.keyClicks(box, "30")
    qapp.processEvents()
    message = win.statusBar().currentMessage()
    assert "init std" in message and "out of range" in message and "30" in message


def test_the_typed_sentence_survives_a_change_of_query_length(win, qapp):
    c = win.controls
    show(win, qapp, AttentionConfig())
    c.tokens.setText("the cat sat on the mat")
    c.tokens.editingFinished.emit()
    qapp.processEvents()
    assert win.config.tokens == ("the", "cat", "sat", "on", "the", "mat")
    c.seq_len.set_value(4)
    c.seq_len.value_changed.emit(4)
    qapp.processEvents()
    assert win.config.tokens == ("the", "cat", "sat", "on")
    assert "first 4 of 6 words" in c.sentence_note.text()
    assert c.tokens.text() == "the cat sat on the mat"
    c.seq_len.value_changed.emit(8)
    qapp.processEvents()
    assert win.config.seq_len == 8 and win.config.tokens[:6] == ("the", "cat", "sat", "on", "the", "mat")
    assert "2 filler tokens" in c.sentence_note.text()
    c.seq_len.value_changed.emit(6)
    qapp.processEvents()
    assert win.config.tokens == ("the", "cat", "sat", "on", "the", "mat")
    assert c.sentence_note.text() == ""


def test_cross_attention_shows_the_memory_keys_come_from(win, qapp):
    f = show(win, qapp, AttentionConfig(kv_len=12, positional="sinusoidal"))
    titles = [t for t in panel_texts(win, "qkv") if t.startswith("memory")]
    assert titles and titles[0].startswith("memory + sinusoidal positions · 12×64"), titles
    dh = f.config.head_dim
    k_from_memory = f.memory @ f.w_k[:, :dh]
    np.testing.assert_allclose(k_from_memory, f.k[0], rtol=1e-4, atol=1e-4)
    show(win, qapp, AttentionConfig())
    assert "memory" not in joined(win, "qkv")


def test_pattern_labels_are_translated():
    from engine.models import PATTERN_LABELS
    from explorer.panels.model_grid import PATTERN_NAMES

    assert set(PATTERN_NAMES) == set(PATTERN_LABELS)


# ---- undo, redo, modified ---------------------------------------------------------------------------

def test_undo_redo_and_the_modified_mark(win, qapp, tmp_path):
    show(win, qapp, AttentionConfig())
    win.save_session(tmp_path / "s.json")
    assert not win.isWindowModified()
    c = win.controls
    for d in (16, 24, 32):  # a drag: one step
        c.d_model.slider.setValue(c.d_model._to_index(d))
        qapp.processEvents()
    c.flush()
    c.causal.setChecked(True)
    qapp.processEvents()
    assert (win.config.d_model, win.config.causal) == (32, True)
    assert win.isWindowModified() and "*" in win.windowTitle().replace("[*]", "*")
    assert win.menus_feature.act_undo.text() == "&Undo causal = on"
    win.menus_feature.act_undo.trigger()
    assert (win.config.d_model, win.config.causal) == (32, False)
    assert c.causal.isChecked() is False
    win.menus_feature.act_undo.trigger()
    assert win.config.d_model == 64 and c.d_model.value() == 64
    assert not win.isWindowModified()  # back where it was saved
    win.menus_feature.act_redo.trigger()
    assert win.config.d_model == 32
    win.reset()
    assert win.config == AttentionConfig()
    win.menus_feature.act_undo.trigger()
    assert win.config.d_model == 32  # Reset is a step of its own


def test_ctrl_z_undoes(win, qapp):
    show(win, qapp, AttentionConfig())
    win.set_config(AttentionConfig(n_heads=8))
    win.activateWindow()
    win.panel("heads").setFocus()
    QTest.keyClick(win.panel("heads"), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qapp.processEvents()
    assert win.config.n_heads == 4


def test_opening_a_session_starts_an_unmodified_history(win, qapp, tmp_path):
    from explorer.session import save_session

    path = tmp_path / "other.json"
    save_session(path, AttentionConfig(causal=True), {"head": 0, "query": 0, "key": 0}, None)
    win.set_config(AttentionConfig(n_heads=2))
    assert win.open_session(path)
    assert win.config.causal and not win.isWindowModified()
    assert not win.menus_feature.act_undo.isEnabled()


# ---- every panel explains itself -------------------------------------------------------------------

HELP_TOPICS = ["overview", "controls", "qkv", "scores", "softmax_grad", "heads", "diagnostics", "positions",
               "lesson", "model_grid", "model_head"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_panel_has_help_in_both_languages(win, qapp, lang):
    from explorer.help import has_help, help_values, load_help, placeholders
    from explorer.panels import PANELS

    f = show(win, qapp, AttentionConfig())
    values = help_values(f, lang=lang)
    for name in {*HELP_TOPICS, *PANELS}:
        assert has_help(name, lang), (name, lang)
        assert placeholders(name, lang) <= set(values), (name, lang, placeholders(name, lang) - set(values))
        title, body = load_help(name, lang, values)
        assert title and body and "{" not in body, (name, lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_positions_help_gives_the_formula_with_its_numbers(lang):
    """Every panel's help has "the formula, now" but the positions one: it now writes the
    encoding in use with its numbers (RoPE's θ_i, ALiBi's slope of the selected head)."""
    from engine import positional as pe
    from explorer.frame import build_frame
    from explorer.help import help_values, load_help

    bodies = {}
    for kind in ("none", "sinusoidal", "learned", "rope", "alibi"):
        cfg = AttentionConfig(positional=kind, n_heads=8, d_model=64)
        _title, bodies[kind] = load_help("positions", lang, help_values(build_frame(cfg), head=2, lang=lang))
    assert "PE_p[2i] = sin(p·10000^(−2i/64))" in bodies["sinusoidal"]
    assert "X_p = E(token_p) + P_p" in bodies["learned"]
    assert "θ_i = 10000^(−2i/8) = 1, 0.1, 0.01, …, 0.001" in bodies["rope"]
    slope = float(pe.alibi_slopes(8)[2])
    assert f"m_2 = {slope:.3g}" in bodies["alibi"] and "m_h = 2^(−8(h+1)/8)" in bodies["alibi"]
    assert "X_p = E(token_p)" in bodies["none"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_scores_help_says_saturated_when_the_numbers_are(lang):
    """Scaling "none" at d_k 64 gives a softmax input of std ~8 (one-hot rows): the help must
    not say "back near 1, not saturated" (issue 27, item 4); with ÷√d_k it says near 1."""
    from explorer.frame import build_frame
    from explorer.help import help_values, load_help

    words = {"en": ("saturated: rows are close to one-hot", "near 1, so softmax is not saturated"),
             "zh": ("softmax 已饱和", "在 1 附近，softmax 不会饱和")}[lang]
    bodies = {}
    for scaling, scale in (("none", 1.0), ("sqrt_dk", None)):
        f = build_frame(AttentionConfig(d_model=256, n_heads=4, scale=scale))
        bodies[scaling] = load_help("scores", lang, help_values(f, lang=lang))[1]
    assert words[0] in bodies["none"] and words[1] not in bodies["none"]
    assert words[1] in bodies["sqrt_dk"] and words[0] not in bodies["sqrt_dk"]


def test_the_saturation_verdict_gives_none_when_no_score_is_finite():
    """Every score masked (std NaN) or overflowed (std inf) is not "saturated"."""
    from explorer.help import saturation_sentence

    for lang in ("en", "zh"):
        assert saturation_sentence(float("nan"), lang) == "—"
        assert saturation_sentence(float("inf"), lang) == "—"
    assert "softmax is saturated" in saturation_sentence(16.7, "en")


def test_the_question_mark_explains_the_panel_with_todays_numbers(win, qapp, qtbot):
    show(win, qapp, AttentionConfig(d_model=64, n_heads=4))  # d_k 16, scale 0.25
    win.selection.set(head=2, query=0, key=0)
    win.panel("heads").help_button.click()
    from explorer.help_dialog import HelpDialog

    dlg = win.findChild(HelpDialog, "help_dialog")
    assert dlg is not None and dlg.isVisible()
    text = dlg.text()
    assert dlg.windowTitle() == "Heads: attention weights"
    assert "weights_2 = softmax(Q_2 K_2ᵀ · 0.25 + mask)" in text
    win.panel("scores").help_button.click()
    assert "std(QKᵀ) ≈ √d_k = 4" in dlg.text()
    win.set_config(AttentionConfig(d_model=256, n_heads=4))  # the open help follows: d_k 64
    qtbot.waitUntil(lambda: "√d_k = 8" in dlg.text(), timeout=10000)
    # its lesson link opens the chapter
    from PySide6.QtCore import QUrl

    dlg.browser.anchorClicked.emit(QUrl("lesson:03-scaling"))
    keys = [c.key for c in load_chapters()]
    assert win.panel("lesson").index == keys.index("03-scaling")
    dlg.close()


# ---- the formula, live ----------------------------------------------------------------------------

def test_the_formula_strip_shows_todays_shapes(win, qapp):
    show(win, qapp, AttentionConfig(d_model=64, n_heads=4, seq_len=8))
    win.selection.set(head=0)
    strip = win.formula
    q = strip.buttons["q"].text()
    assert "(8, 64)·(64, 16) = (8, 16)" in q
    assert "(8, 16)·(16, 8) = (8, 8)" in strip.buttons["scores"].text()
    assert "· 0.25" in strip.buttons["scale"].text()
    assert strip.buttons["bias"].property("inactive") is True  # no ALiBi: greyed
    win.set_config(AttentionConfig(d_model=64, n_heads=4, seq_len=8, kv_len=12, n_kv_heads=2,
                                   positional="alibi", causal=True))
    qapp.processEvents()
    kv = strip.buttons["kv"].text()
    assert "M·W_K" in kv and "(12, 64)·(64, 16) = (12, 16) ×2" in kv
    assert "(8, 16)·(16, 12) = (8, 12)" in strip.buttons["scores"].text()
    assert "ALiBi" in strip.buttons["bias"].text() and strip.buttons["bias"].property("inactive") is False
    assert "causal" in strip.buttons["mask"].text()


def test_a_formula_step_brings_its_panel_forward(win, qapp):
    show(win, qapp, AttentionConfig())
    win.tabifyDockWidget(win.dock("heads"), win.dock("scores"))
    win.dock("heads").raise_()
    qapp.processEvents()
    assert win.panel("scores").visibleRegion().isEmpty()
    win.formula.buttons["scores"].click()
    qapp.processEvents()
    assert not win.panel("scores").visibleRegion().isEmpty()
    win.restoreState(win.saveState())


# ---- positions drawn ------------------------------------------------------------------------------

@pytest.mark.parametrize("positional,title", [
    ("sinusoidal", "sinusoidal table added to X · 8×64"),
    ("learned", "learned table added to X · 8×64"),
    ("rope", "RoPE: cos(p·θ_i)"),
    ("alibi", "ALiBi bias of head 1 · 8×8"),
])
def test_the_positions_panel_draws_the_encoding_in_use(win, qapp, positional, title):
    from engine import positional as pe

    win.show_panel("positions")
    f = show(win, qapp, AttentionConfig(positional=positional))
    win.selection.set(head=1)
    qapp.processEvents()
    texts = panel_texts(win, "positions")
    assert any(t.startswith(title) for t in texts), texts
    panel = win.panel("positions")
    table = panel.table.data
    # its colour bar: the table's levels, and what the colours are
    assert panel.cbar.isVisible() and tuple(panel.cbar.levels()) == pytest.approx(panel.table.levels)
    assert panel.cbar.getAxis("left").labelText == {"sinusoidal": "value", "learned": "value", "rope": "cos(p·θ_i)",
                                         "alibi": "bias"}[positional]
    if positional == "sinusoidal":
        np.testing.assert_allclose(table, pe.sinusoidal(torch.arange(8), 64).numpy())
        # X is the token embeddings plus this table
        from engine.inputs import token_embeddings

        np.testing.assert_allclose(f.x, token_embeddings(f.config)[0].numpy() + table, atol=1e-5)
    if positional == "alibi":
        np.testing.assert_allclose(table, pe.alibi_bias(4, 8, 8)[1].numpy())
        # the lines' legend: each head's slope, in its line's colour
        note = next(t for t in texts if t.startswith("each head its own slope"))
        for g, slope in enumerate(pe.alibi_slopes(4).tolist()):
            assert f"━ h{g} {slope:.3g}" in note.replace("\u00a0", " "), note
    if positional == "rope":  # the score depends on the distance only: q·k(0) = 1 at Δ = 0
        view = positional_view(f.config)
        assert next(iter(view.curves.values()))[0] == pytest.approx(1.0)


def test_without_positions_shuffling_only_permutes_the_weights(win, qapp):
    words = ("dog", "bites", "man", "today")
    f = show(win, qapp, AttentionConfig(tokens=words, d_model=32, n_heads=2))
    panel = win.panel("positions")
    win.show_panel("positions")
    qapp.processEvents()
    assert "No positional encoding: cos(x_i, x_j)" in joined(win, "positions")
    panel.shuffle.click()
    qapp.processEvents()
    shuffled = win.config.tokens
    assert sorted(shuffled) == sorted(words) and shuffled != words
    g = show(win, qapp, win.config)
    perm = [words.index(t) for t in shuffled]
    np.testing.assert_allclose(g.weights, f.weights[:, perm][:, :, perm], atol=1e-6)
    win.menus_feature.act_undo.trigger()
    assert win.config.tokens == words


def test_every_control_explains_itself_in_the_status_bar(win, qapp):
    """Tooltip windows need a window manager; the same text also shows in the status bar."""
    c = win.controls
    for widget in (c.d_model.slider, c.d_model.spin, c.heads, c.kv_heads, c.tokens, c.seq_len.slider,
                   c.causal, c.pad.spin, c.mask_value, c.scale_mode, c.dtype, c.positional, c.backend, c.seed):
        assert widget.statusTip(), widget
        win.controls_dock.widget().ensureWidgetVisible(widget)  # (the controls scroll)
        QTest.mouseMove(win.statusBar())  # elsewhere first (always shown, no tip): then the mouse enters the control
        qapp.processEvents()
        win.statusBar().clearMessage()
        QTest.mouseMove(widget)
        qapp.processEvents()
        assert widget.underMouse(), widget
        assert win.statusBar().currentMessage() == widget.statusTip(), widget


# ---- a pinned reference A (issue 18's first slice) --------------------------------------------------

def test_pin_a_reference_and_see_the_difference(win, qapp):
    a = show(win, qapp, AttentionConfig(d_model=256, n_heads=4))
    win.menus_feature.act_pin.trigger()
    assert win.reference is a
    b = show(win, qapp, AttentionConfig(d_model=256, n_heads=4, scale=1.0))
    win.selection.set(head=2)
    qapp.processEvents()
    heads = win.panel("heads")
    assert heads.view.isVisible() and heads.comparison() == "B-A"
    np.testing.assert_array_equal(heads.big.data, b.weights[2] - a.weights[2])  # exactly the engine's B − A
    assert any(t.startswith("B − A · head 2 · max |Δ|") for t in panel_texts(win, "heads"))
    numerics = win.panel("diagnostics").warn_card.text()
    ent_a, ent_b = (float(fr.entropy[fr.valid_rows].mean()) for fr in (a, b))
    assert f"mean entropy: {fmt_number(ent_a)} → {fmt_number(ent_b)}" in numerics
    heads.view.setCurrentIndex(1)  # A itself
    np.testing.assert_array_equal(heads.big.data, a.weights_shown[2])
    # another shape: no difference map, said, and A and B side by side (tests/test_compare.py)
    heads.view.setCurrentIndex(2)
    show(win, qapp, AttentionConfig(d_model=256, n_heads=4, seq_len=12))
    assert heads.comparison() == "A|B"
    assert not heads.view.model().item(2).isEnabled()
    assert "shapes differ" in heads.view.model().item(2).toolTip()
    win.menus_feature.act_unpin.trigger()
    assert win.reference is None and not heads.view.isVisible()
