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
    win.menus_feature.act_pin.trigger()
    b = show(win, qapp, AttentionConfig(d_model=64, n_heads=4, scale=1.0))
    win.menus_feature.act_pin.trigger()
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


@pytest.mark.slow
def test_snapshots_are_saved_and_reopened_with_their_reference(win, qapp, tmp_path):
    import explorer

    show(win, qapp, AttentionConfig(d_model=128, n_heads=2))
    win.menus_feature.act_pin.trigger()
    win.snapshots.rename(0, "wide")
    show(win, qapp, AttentionConfig(d_model=32, n_heads=2, causal=True))
    win.menus_feature.act_pin.trigger()
    win.snapshots.use(0)
    assert win.save_session(tmp_path / "s.json")
    again = explorer.create_window(tmp_path / "s.json")
    try:
        again.show()
        qapp.processEvents()
        assert again.snapshots.names() == ["wide", "Snapshot 2"]
        assert again.snapshots.wait_ready(60) is None  # A is computed off the UI thread
        assert again.reference is not None and again.reference.config == AttentionConfig(d_model=128, n_heads=2)
        np.testing.assert_array_equal(again.reference.weights, win.snapshots.frame(0).weights)  # recomputed, same
    finally:
        again.shutdown()
        again.hide()
        again.deleteLater()
        qapp.processEvents()


# ---- computed off the UI thread, and refusals (issue 28) ------------------------------------------


def _session_with(tmp_path, *snapshots: Snapshot):
    path = tmp_path / "snaps.json"
    save_session(path, AttentionConfig(), None, None, snapshots)
    return path


@pytest.mark.slow
def test_the_window_appears_while_its_reference_snapshot_is_computed(qapp, tmp_path, monkeypatch):
    """The session's reference A was computed on the UI thread while the window was built
    (53 s for an sdpa S=8192 snapshot, the window nowhere): now the worker computes it."""
    import threading
    import time

    import explorer
    import explorer.snapshots as snaps

    gate, real = threading.Event(), snaps.build_frame

    def slow_build(config, *args, **kwargs):
        gate.wait(60)  # "a long frame": until the test lets it finish
        return real(config, *args, **kwargs)

    monkeypatch.setattr(snaps, "build_frame", slow_build)
    ref_config = AttentionConfig(d_model=32, n_heads=2, scale=1.0)
    path = _session_with(tmp_path, Snapshot("before", ref_config, {"head": 1, "query": 0, "key": 0}, reference=True))
    t0 = time.perf_counter()
    w = explorer.create_window(path)
    try:
        w.show()
        qapp.processEvents()
        built = time.perf_counter() - t0
        assert built < 45, f"the window took {built:.1f} s: the snapshot was computed on the UI thread"
        assert w.snapshots.busy and w.reference is None
        gate.set()
        assert w.snapshots.wait_ready(60) is None
        assert w.reference is not None and w.reference.config == ref_config
    finally:
        gate.set()
        w.shutdown()
        w.deleteLater()
        qapp.processEvents()


@pytest.mark.slow
def test_a_snapshot_the_engine_refuses_is_marked_and_the_rest_of_the_session_opens(qapp, tmp_path):
    """A snapshot over the memory budget made the whole session unopenable (gui and export exit
    1 naming the budget, not the snapshot); now the session opens, the snapshot is marked with
    why, the banner names it, and the others work."""
    import explorer

    huge = AttentionConfig(seq_len=65536, backend="eager")  # its grids are over any budget here
    ok = AttentionConfig(d_model=32, n_heads=2)
    path = _session_with(tmp_path, Snapshot("fine", ok, {"head": 0, "query": 0, "key": 0}),
                         Snapshot("huge one", huge, {"head": 0, "query": 0, "key": 0}, reference=True))
    w = explorer.create_window(path)
    try:
        w.show()
        problem = w.snapshots.wait_ready(60)
        assert problem is not None and "“huge one”" in problem and "budget" in problem, problem
        assert "huge one" in w.banner.message() and w.reference is None
        assert w.config == AttentionConfig() and w.snapshots.names() == ["fine", "huge one"]
        dock = show_snapshots(w)
        panel = dock.widget()
        tree = panel.tree
        assert "budget" in tree.topLevelItem(1).toolTip(0)
        w.snapshots.use(0)  # the other snapshot still becomes A
        assert w.snapshots.wait_ready(60) is None and w.reference.config == ok
    finally:
        w.shutdown()
        w.deleteLater()
        qapp.processEvents()


_MEMORY_CHILD = """
import json, os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
import explorer
from explorer.snapshots import show_snapshots

def rss(key="VmRSS"):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024

app = explorer.ensure_app()
w = explorer.create_window(sys.argv[1])
w.show()
app.processEvents()
before = rss()
show_snapshots(w)
t0 = time.time()
while any(e.image is None and not e.error for e in w.snapshots.entries) and time.time() - t0 < 240:
    app.processEvents()
    time.sleep(0.01)
print(json.dumps({"before": before, "after": rss(), "peak": rss("VmHWM"),
                  "thumbnails": sum(e.image is not None for e in w.snapshots.entries)}))
w.shutdown()
"""


@pytest.mark.slow
def test_the_snapshots_dock_keeps_thumbnails_not_frames(tmp_path):
    """Every snapshot's frame was built for its thumbnail and kept: a few-KB session of long
    snapshots held GBs (8 × S=1536: +1.2 GB here). Now one frame at a time in the worker,
    dropped once its thumbnail is made."""
    import subprocess
    import sys

    n = 8
    path = _session_with(tmp_path, *(Snapshot(f"s{i}", AttentionConfig(seq_len=1536, seed=i, backend="eager"),
                                              {"head": 0, "query": 0, "key": 0}) for i in range(n)))
    env = dict(__import__("os").environ, QT_QPA_PLATFORM="offscreen", ATTN_EXPLORER_SETTINGS=str(tmp_path / "s.ini"))
    r = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(path)], capture_output=True, text=True,
                       timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["thumbnails"] == n
    assert got["after"] - got["before"] < 300, f"the dock holds {got['after'] - got['before']:.0f} MB"


_QUIT_CHILD = """
import sys, time
from PySide6.QtCore import QTimer
import explorer
from explorer.work.base import run_events_until

app = explorer.ensure_app()
w = explorer.create_window(sys.argv[1])
w.show()
assert run_events_until(lambda: w.snapshots.worker.running is not None, 120), "the reference never started"
assert w.snapshots.busy, "the reference was computed before the window closed"
print("closing", time.time(), flush=True)
QTimer.singleShot(0, w.close)  # File > Quit does this
app.exec()
"""


@pytest.mark.slow
def test_quitting_while_the_reference_is_computed_exits_at_once(tmp_path):
    """Quitting while a session's long reference A was computed (fp16 flash, S = 4096: over a
    minute here) waited 10 s for the worker, then aborted ("QThread: Destroyed while thread is
    still running", exit 134). Now the frame stops at its next block: exit 0 within seconds."""
    import subprocess
    import sys
    import time

    long_ref = AttentionConfig(seq_len=4096, dtype="float16", backend="flash")
    path = _session_with(tmp_path, Snapshot("long", long_ref, {"head": 0, "query": 0, "key": 0}, reference=True))
    r = subprocess.run([sys.executable, "-c", _QUIT_CHILD, str(path)], capture_output=True, text=True,
                       timeout=240)
    ended = time.time()
    assert r.returncode == 0, r.stderr[-2000:]
    assert "QThread" not in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]
    closing = float(r.stdout.split("closing", 1)[1].split()[0])
    # the bug: 10-20 s; the goal is 2 s, with room for the interpreter's exit on a loaded machine
    assert ended - closing < 6, f"quit took {ended - closing:.1f} s"
