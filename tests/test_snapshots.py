"""Named snapshots (issue 18): pinned states in a list, any of them A, saved with the session."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtGui import QImage

from engine import AttentionConfig
from explorer.session import SessionError, load_session, save_session, session_to_dict
from explorer.snapshot_data import MAX_SNAPSHOTS, Snapshot
from explorer.snapshots import show_snapshots


def image_array(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    return a[:, : img.width(), :3].astype(np.int16)


# ---- the session file -----------------------------------------------------------------------------


def test_snapshots_round_trip_through_a_session(tmp_path):
    snaps = (Snapshot("with √d_k", AttentionConfig(d_model=128), {"head": 1, "query": 2, "key": 3}, True),
             Snapshot("no scaling", AttentionConfig(d_model=128, scale=1.0)))
    path = save_session(tmp_path / "s.json", AttentionConfig(), None, None, snaps)
    s = load_session(path)
    assert s.snapshots == snaps
    assert json.loads(path.read_text())["snapshots"][0]["name"] == "with √d_k"


def test_an_older_session_without_snapshots_still_opens(tmp_path):
    old = session_to_dict(AttentionConfig(n_heads=2))
    assert "snapshots" not in old  # a session without snapshots is written as before
    p = tmp_path / "old.json"
    p.write_text(json.dumps(old))
    s = load_session(p)
    assert s.snapshots == () and s.config.n_heads == 2


def _with(entries):
    d = session_to_dict(AttentionConfig())
    d["snapshots"] = entries
    return d


GOOD = {"name": "A", "config": {"d_model": 32}}


@pytest.mark.parametrize("entries, words", [
    ({"name": "A"}, "'snapshots' must be a list"),
    (["A"], "snapshots[0] must be an object"),
    ([{"config": {}}], "snapshots[0].name must be a string"),
    ([{"name": "  ", "config": {}}], "snapshots[0].name must not be empty"),
    ([{"name": "x" * 200, "config": {}}], "at most 80 characters"),
    ([{"name": "a\nb", "config": {}}], "printable"),
    ([GOOD, {"name": "B", "config": {"d_model": 30, "n_heads": 4}}], "invalid config in snapshots[1]"),
    ([{"name": "B", "config": {"d_modl": 30}}], "invalid config in snapshots[0]"),
    ([{"name": "B", "config": []}], "snapshots[0].config must be an object"),
    ([{**GOOD, "selection": {"head": 9}}], "snapshots[0].selection.head must be an integer from 0 to 3"),
    ([{**GOOD, "thumbnail": "AAAA"}], "unknown snapshots[0] field(s): thumbnail"),
    ([{**GOOD, "reference": "yes"}], "snapshots[0].reference must be true or false"),
    ([{**GOOD, "reference": True}, {**GOOD, "reference": True}], "more than one snapshot"),
    ([GOOD] * (MAX_SNAPSHOTS + 1), f"at most {MAX_SNAPSHOTS}"),
])
def test_a_malformed_snapshot_is_refused_in_one_line(entries, words):
    with pytest.raises(SessionError) as err:
        load_session(_with(entries))
    assert words in str(err.value) and "\n" not in str(err.value)


# ---- the window -----------------------------------------------------------------------------------


@pytest.fixture()
def win(qapp):
    from conftest import shown_window

    with shown_window(qapp) as w:
        w.render_sync()
        qapp.processEvents()
        yield w


def show(win, qapp, config):
    """Draw `config` now; returns the frame the panels show (what Pin keeps)."""
    win.render_sync(config)
    qapp.processEvents()
    assert win.frame.config == config
    return win.frame


def test_pin_adds_snapshots_and_any_becomes_a(win, qapp):
    a = show(win, qapp, AttentionConfig(d_model=64, n_heads=4))
    win.act_pin.trigger()
    b = show(win, qapp, AttentionConfig(d_model=64, n_heads=4, scale=1.0))
    win.act_pin.trigger()
    assert len(win.snapshots) == 2 and win.reference is b
    show(win, qapp, AttentionConfig(d_model=64, n_heads=4, scale=0.02))
    dock = show_snapshots(win)
    qapp.processEvents()
    panel = dock.widget()
    assert [r[0] for r in panel.rows()] == ["Snapshot 1", "● Snapshot 2"]
    assert "scale=1" in panel.rows()[1][1]
    heads = win.panel("heads")
    heads.view.setCurrentIndex(1)  # Show: A
    qapp.processEvents()
    shown_b = image_array(heads.grab().toImage())
    win.snapshots.use(0)  # choose the first snapshot as A
    qapp.processEvents()
    assert win.reference is a
    assert [r[0] for r in panel.rows()] == ["● Snapshot 1", "Snapshot 2"]
    np.testing.assert_array_equal(heads.big.data, a.weights_shown[win.selection.head])
    shown_a = image_array(heads.grab().toImage())
    assert np.mean(np.abs(shown_a - shown_b) > 16) > 0.01, "the A view did not change"
    win.snapshots.rename(0, "with √d_k")
    assert panel.rows()[0][0] == "● with √d_k"
    with pytest.raises(ValueError, match="must not be empty"):
        win.snapshots.rename(0, " ")
    win.snapshots.remove(0)  # deleting A unpins it
    assert win.reference is None and [r[0] for r in panel.rows()] == ["Snapshot 2"]


def test_snapshots_are_saved_and_reopened_with_their_reference(win, qapp, tmp_path):
    import explorer

    show(win, qapp, AttentionConfig(d_model=128, n_heads=2))
    win.act_pin.trigger()
    win.snapshots.rename(0, "wide")
    show(win, qapp, AttentionConfig(d_model=32, n_heads=2, causal=True))
    win.act_pin.trigger()
    win.snapshots.use(0)
    assert win.save_session(tmp_path / "s.json")
    again = explorer.create_window(tmp_path / "s.json")
    try:
        again.show()
        qapp.processEvents()
        assert again.snapshots.names() == ["wide", "Snapshot 2"]
        assert again.reference is not None and again.reference.config == AttentionConfig(d_model=128, n_heads=2)
        np.testing.assert_array_equal(again.reference.weights, win.snapshots.frame(0).weights)  # recomputed, same
    finally:
        again.shutdown()
        again.hide()
        again.deleteLater()
        qapp.processEvents()
