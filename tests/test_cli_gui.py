"""`python main.py selftest` and `gui` from the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "main.py", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.slow
def test_main_selftest_exits_0():
    """The selftest builds the window, runs every backend, renders and exports: it passes."""
    r = _run("selftest")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "selftest passed" in r.stdout
    for backend in ("eager", "sdpa", "flash"):
        assert f"backend {backend} on cpu, float32" in r.stdout
    assert "export the panels" in r.stdout


@pytest.mark.slow
@pytest.mark.parametrize("content, reason", [
    ('{"format": "attention-explorer.session", "version": 7, "config": {}}', "newer"),
    ("not json", "not valid JSON"),
])
def test_gui_refuses_a_bad_session_with_one_line(tmp_path, content, reason):
    p = tmp_path / "bad.json"
    p.write_text(content)
    r = _run("gui", "--session", str(p), timeout=60)
    assert r.returncode == 1
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and reason in lines[0] and "SessionError" in lines[0]


@pytest.mark.slow
def test_main_gui_opens_the_session_and_runs_the_loop(qapp, tmp_path, monkeypatch):
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import QEventLoop, QTimer

    import explorer
    import explorer.app as app_mod
    from engine import AttentionConfig

    p = tmp_path / "s.json"
    p.write_text(json.dumps({"format": "attention-explorer.session", "version": 1,
                             "config": {"n_heads": 2, "causal": True},
                             "selection": {"head": 1, "query": 2, "key": 1}, "model": None}))
    made, ran = [], []
    real = explorer.create_window

    def spy(session=None):
        w = real(session)
        made.append(w)
        return w

    def exec_briefly():
        # stands in for app.exec(): run the event loop for a moment. (Quitting the real
        # application loop would make every later QEventLoop in this process return at once.)
        ran.append(made[0].isVisible())
        loop = QEventLoop()
        made[0].frame_rendered.connect(lambda _c: loop.quit())
        QTimer.singleShot(10_000, loop.quit)
        loop.exec()
        return 0

    monkeypatch.setattr(explorer, "create_window", spy)
    monkeypatch.setattr(qapp, "exec", exec_briefly)
    assert app_mod.main_gui(session=str(p), model=None) == 0
    w = made[0]
    assert ran == [True]  # shown before the loop ran
    assert w.frame is not None and w.frame.config == AttentionConfig(n_heads=2, causal=True)
    assert (w.selection.head, w.selection.query, w.selection.key) == (1, 2, 1)
    assert w.windowTitle().replace("[*]", "").endswith("s.json")
    w.close()
    w.deleteLater()


_POOLED_THREADS = """
import os, sys
sys.path.insert(0, os.getcwd())
from explorer import create_window, ensure_app
app = ensure_app()
w = create_window(); w.resize(1600, 1000); w.show()
for _ in range(20):
    app.processEvents()
w.grab()  # paints every panel once more, synchronously
names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
print("POOLED", sum(n.startswith("Thread (pooled)") for n in names))
w.shutdown()
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through /proc (Linux)")
@pytest.mark.parametrize("opt_out, pooled", [(None, False), ("1", True)])
def test_raster_fills_stay_on_the_ui_thread_unless_asked(opt_out, pooled):
    """Qt would hand big fills to a GUI thread pool (slower here, see serial_raster_fills);
    importing explorer turns that off, ATTN_EXPLORER_PAINT_THREADS=1 turns it back on."""
    env = {k: v for k, v in os.environ.items() if k not in ("QT_NO_GUI_THREADPOOL", "ATTN_EXPLORER_PAINT_THREADS")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    if opt_out:
        env["ATTN_EXPLORER_PAINT_THREADS"] = opt_out
    r = subprocess.run([sys.executable, "-c", _POOLED_THREADS], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    count = int(r.stdout.split("POOLED")[-1])
    assert (count > 0) == pooled, r.stdout
