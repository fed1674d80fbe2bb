"""The window does the work a user sees, and no more (issue 19 item 7): the backend
comparison (three more engine runs per frame) only while its panel is visible."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from engine import AttentionConfig

TIMEOUT = 30_000


@pytest.mark.slow
def test_the_backend_comparison_runs_only_while_its_panel_is_visible(qtbot, window):
    measured = []
    window.backends_measured.connect(measured.append)
    window.dock("diagnostics").hide()
    cfg = AttentionConfig(seq_len=12, n_heads=2, d_model=32)
    with qtbot.waitSignal(window.frame_rendered, timeout=TIMEOUT, check_params_cb=lambda c: c == cfg):
        window.set_config(cfg)
    qtbot.wait(4 * int(window.worker.extras_delay_s * 1000) + 500)  # well past the idle delay
    assert measured == [] and window.frame.backends is None
    # shown again: measured for the frame on screen, and the card shows it
    with qtbot.waitSignal(window.backends_measured, timeout=TIMEOUT):
        window.dock("diagnostics").show()
    assert set(window.frame.backends) == {"eager", "sdpa", "flash"}
    assert "measuring" not in window.panel("diagnostics").backend_card.text()


@pytest.mark.slow
def test_frame_rendered_means_the_layout_is_final(qtbot, window):
    """issue 19 item 12: when frame_rendered fires, the large heatmap lies inside its view (a
    click right after it lands on the cell it shows, not on the axis)."""
    heads = window.panel("heads")
    window.dock("diagnostics").show()
    seen = []

    def check(cfg) -> None:
        img, vb = heads.big.image.sceneBoundingRect(), heads.big.vb.sceneBoundingRect()
        seen.append(max(vb.left() - img.left(), img.right() - vb.right(),
                        vb.top() - img.top(), img.bottom() - vb.bottom()))

    window.frame_rendered.connect(check)
    try:
        for s, h in ((3, 1), (31, 8), (5, 2), (64, 4), (13, 1), (48, 8), (8, 2), (20, 4)):
            cfg = AttentionConfig(seq_len=s, n_heads=h, d_model=64)
            with qtbot.waitSignal(window.frame_rendered, timeout=TIMEOUT, check_params_cb=lambda c, cfg=cfg: c == cfg):
                window.set_config(cfg)
    finally:
        window.frame_rendered.disconnect(check)
    assert len(seen) >= 8 and max(seen) <= 1.0, seen




def _slow_config(seconds: float = 3.0) -> AttentionConfig:
    """A run whose projections take about `seconds` on this CPU: the slower of float16 and
    bfloat16 (20-100x slower than float32 without half arithmetic, as fast with AVX512-FP16 or
    AMX), its batch grown until `engine.speed` estimates that long."""
    from dataclasses import replace

    from engine.speed import matmul_flops_per_s, projection_seconds

    dtype = min(("float16", "bfloat16"), key=matmul_flops_per_s)
    cfg = AttentionConfig(d_model=4096, n_heads=32, batch=1, seq_len=64, dtype=dtype)
    while projection_seconds(cfg) < seconds and cfg.batch < 4096:
        cfg = replace(cfg, batch=min(4096, cfg.batch * 2))
    return cfg


SLOW = _slow_config()  # seconds here, whatever the CPU


def test_a_slow_dtype_run_shows_progress_and_cancels_between_chunks(qtbot, window):
    """float16 matmuls on a CPU without half arithmetic: the run is chunked, the bar shows,
    Cancel stops it within about a second, and the panels keep the last frame."""
    small = AttentionConfig(seq_len=7, n_heads=2, d_model=32)
    with qtbot.waitSignal(window.frame_rendered, timeout=TIMEOUT, check_params_cb=lambda c: c == small):
        window.set_config(small)
    window.set_config(SLOW)
    qtbot.waitUntil(lambda: window.status.frame_progress.isVisible(), timeout=TIMEOUT)
    import time

    t0 = time.perf_counter()
    with qtbot.waitSignal(window.worker.cancelled, timeout=TIMEOUT):
        window.status.frame_progress.cancel_button.click()
    assert time.perf_counter() - t0 < 3.0
    assert window.frame.config == small and "Cancelled" in window.banner.message()


def test_the_worker_stops_within_a_second_of_quitting_mid_run(qtbot):
    """Quitting during a slow run: the worker stops at its next chunk instead of finishing."""
    import time

    from explorer.work.compute import ComputeWorker

    worker = ComputeWorker()
    worker.start()
    try:
        progress = []
        worker.progress.connect(lambda *a: progress.append(a))
        worker.request(SLOW)
        qtbot.waitUntil(lambda: bool(progress), timeout=TIMEOUT)
        t0 = time.perf_counter()
        worker.stop()
        assert time.perf_counter() - t0 < 1.5 and not worker.isRunning()
    finally:
        worker.stop()


def test_a_new_request_stops_a_slow_backend_comparison(qtbot):
    """The comparison runs three more engine runs after a frame; for a slow config a slider
    moved meanwhile must not wait for them."""
    import time
    from types import SimpleNamespace

    from explorer.frame import measure_backends
    from explorer.work.compute import ComputeWorker

    worker = ComputeWorker(compute=lambda cfg, rid: SimpleNamespace(config=cfg, request_id=rid),
                           measure=measure_backends, extras_delay_s=0.0)
    frames, measured = [], []
    worker.frame_ready.connect(frames.append)
    worker.backends_ready.connect(lambda rid, res: measured.append(rid))
    worker.start()
    try:
        worker.request(SLOW)
        qtbot.waitUntil(lambda: bool(frames), timeout=TIMEOUT)
        qtbot.wait(800)  # the comparison of SLOW is under way (seconds of float16 runs)
        small = AttentionConfig(seq_len=5)
        t0 = time.perf_counter()
        worker.request(small)
        qtbot.waitUntil(lambda: frames[-1].config == small, timeout=TIMEOUT)
        assert time.perf_counter() - t0 < 3.0
        assert 1 not in measured  # SLOW's comparison was dropped, not delivered
    finally:
        worker.stop()
