"""The length profile panel with the efficient variants (issue 45): their curves and legend
names beside full attention's, to S = 65,536, full attention past 16,384 hollow at its
estimate, and the crossover of linear attention and flash as the user reads it (the note's
line, the dashed line on the time plot)."""

from __future__ import annotations

import re

import pytest
from conftest import plain, profile_finished

from engine import AttentionConfig
from engine.profile import MAX_LENGTH, PAST_MAX, ProfilePoint
from explorer.figures.text import plot_title

pytest.importorskip("pytestqt")

SMALL = AttentionConfig(d_model=32, n_heads=2, causal=True)
VARIANT_NAMES = ["linear attention (elu + 1)", "performer (FAVOR+, m = 64)",
                 "local + global (window 256, 16 global)", "hierarchical (blocks of 256)"]


@pytest.fixture(scope="module")
def panel(qapp):
    from conftest import drawn_window

    from explorer.profile import show_profile

    with drawn_window(qapp) as w:
        w.set_language("en")
        made = show_profile(w)
        made.win = w  # (the test's own note: the window, for its language)
        yield made




def _show(panel, qapp, points: list[ProfilePoint]) -> None:
    """Results as a finished measurement leaves them (what an export of them draws)."""
    st = panel.state
    st.config, st.points = SMALL, list(points)
    st.plan = [(p.seq_len, p.backend) for p in points]
    st.done = st.total = len(points)
    st.changed.emit("points")
    qapp.processEvents()


def _pt(S: int, backend: str, seconds: float | None, note: str = "") -> ProfilePoint:
    return ProfilePoint(S, backend, seconds, 1 << 22, seconds is None, 1 << 22, 1 << 32,
                        samples=() if seconds is None else (seconds,), note=note)


@pytest.mark.slow
def test_measured_variants_are_drawn_and_named_with_the_crossover(panel, qapp):
    st = panel.state
    assert set(panel.checks) >= {"linear", "performer", "local+global", "hierarchical"}
    assert panel.last.findData(65536) >= 0, "the sweep's end goes to 65,536"
    panel.app_state.config = SMALL
    st.set_settings(lengths=(64, 128, 256), backends=("flash", "linear", "performer", "local+global",
                                                      "hierarchical"), repeats=1)
    panel.measure_button.click()
    profile_finished(st, qapp)
    assert st.error == "" and len(st.points) == 15 and all(p.seconds for p in st.points)
    legend = [label.text for _sample, label in panel.legend.items]
    assert legend == ["flash (fused, tiled kernel)", *VARIANT_NAMES]
    for b in ("linear", "performer", "local+global", "hierarchical"):
        assert len(panel.curves["time"][b].spots.points()) == 3, b
    headers = [panel.table.horizontalHeaderItem(c).text() for c in range(panel.table.columnCount())]
    assert headers == ["flash", "linear", "performer", "local+global", "hierarchical"]
    note = plain(panel.note.text)
    line = re.search(r"Crossover: linear (beats flash from S ≈ [\d,]+ on this machine|beats flash at every S "
                     r"measured \(S = 64 to 256\)|never beats flash up to S = 256)", note)
    assert line, note


def test_the_crossover_line_and_its_mark(panel, qapp):
    lin = {256: 0.02, 1024: 0.03, 4096: 0.05, 16384: 0.2, 65536: 1.0}
    flash = {256: 0.01, 1024: 0.06, 4096: 0.4, 16384: 5.0}
    points = [_pt(S, "flash", t) for S, t in flash.items()] + [_pt(65536, "flash", None, PAST_MAX)]
    points += [_pt(S, "linear", t) for S, t in lin.items()]
    _show(panel, qapp, points)
    note = plain(panel.note.text)
    assert ("Crossover: linear beats flash from S ≈ 512 on this machine (slower at S = 256, faster at "
            "S = 1,024 and every S measured after)") in note
    assert panel.cross_line.isVisible() and panel.cross_line.value() == pytest.approx(2.709, abs=1e-3)  # log10 512
    assert panel.cross_line.label.toPlainText() == "linear < flash from S ≈ 512"
    # flash past 16,384: hollow at its estimate (the axis goes to 65,536), its cell says why
    assert panel.time_plot.viewRange()[0][1] > 4.8  # log10 65,536 = 4.82
    hollow = [s.data() for s in panel.curves["memory"]["flash"].spots.points() if s.data().estimated]
    assert [p.seq_len for p in hollow] == [65536]
    assert panel.table.item(4, 0).text() == f"not run (> {MAX_LENGTH})"
    assert "full attention is measured to S = 16384" in panel.table.item(4, 0).toolTip()
    assert "full attention past S = 16384" in plot_title(panel.mem_plot)

    slow = [_pt(S, "flash", t) for S, t in flash.items()] + [_pt(S, "linear", 9.0) for S in flash]
    _show(panel, qapp, slow)
    assert "Crossover: linear never beats flash up to S = 16,384" in plain(panel.note.text)
    assert not panel.cross_line.isVisible()

    no_linear = [_pt(S, "flash", t) for S, t in flash.items()]
    _show(panel, qapp, no_linear)
    assert "Crossover" not in plain(panel.note.text)


# ---- in Chinese: one switch there (and back, after the last) for the tests below, which come
# last in this module; a switch relabels and restyles the whole window (seconds each)


@pytest.fixture(scope="module")
def chinese(panel, qapp):
    """The panel's window switched to Chinese once, for the rest of the module."""
    assert panel.win.set_language("zh_CN")
    qapp.processEvents()
    yield panel
    panel.win.set_language("en")
    qapp.processEvents()


def test_the_crossover_is_in_chinese_too(chinese, qapp):
    panel = chinese
    points = [_pt(256, "flash", 0.01), _pt(1024, "flash", 0.06), _pt(256, "linear", 0.02), _pt(1024, "linear", 0.03),
              _pt(65536, "flash", None, PAST_MAX), _pt(65536, "linear", 0.5)]
    _show(panel, qapp, points)
    note = plain(panel.note.text)
    assert "交叉点" in note and "S ≈ 512" in note and "Crossover" not in note, note
    assert "S ≈ 512" in panel.cross_line.label.toPlainText() and "from" not in panel.cross_line.label.toPlainText()
    cells = [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())]
    assert cells[-1] == f"未运行（> {MAX_LENGTH}）" and "未运行" in panel.table.item(2, 0).toolTip()


STATUS_CONFIGS = {"核=performer m=64": SMALL.replace(seq_len=16, kernel="performer"),
                  "全局=2": SMALL.replace(seq_len=16, window=4, global_tokens=2),
                  "块均值=4": SMALL.replace(seq_len=16, summary_block=4)}
STATUS_ENGLISH = {"核=performer m=64": "kernel=performer m=64", "全局=2": "global=2", "块均值=4": "summary_block=4"}


def test_the_status_lines_variant_parts_are_in_chinese(chinese, qapp):
    """The status bar's config line names the kernel, global tokens and block summaries in the
    window's language (the English words stay those of config files and captions)."""
    win = chinese.win
    for want, config in STATUS_CONFIGS.items():
        win.render_sync(config)
        qapp.processEvents()
        assert want in win.status.status_config.text() and STATUS_ENGLISH[want] not in win.status.status_config.text()


def test_the_status_line_is_english_again_after_the_switch_back(chinese, qapp):
    """Drawn in Chinese, then View ▸ Language ▸ English: the same line in English words (the
    module's last test: it ends the Chinese the tests above share)."""
    win = chinese.win
    win.render_sync(STATUS_CONFIGS["块均值=4"])
    qapp.processEvents()
    assert "块均值=4" in win.status.status_config.text()
    assert win.set_language("en")
    qapp.processEvents()
    assert STATUS_ENGLISH["块均值=4"] in win.status.status_config.text()
    assert "块均值" not in win.status.status_config.text()
