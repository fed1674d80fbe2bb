"""`python main.py bench`: what one animation frame of the step-throughs costs.

A frame is what the player's timer does: `set_position(i)` (the panel re-sets its
few items) and the repaint of the panel's view, forced synchronously. The tiling
and decode panels are measured in the same window by turns (interleaved rounds:
they share a tab, so one is in front at a time), at the default config and at the lesson's; medians and the frame
rate they allow (target ≥ 30 frames/s).
"""

from __future__ import annotations

import statistics
import time

from engine import AttentionConfig

TARGET_FPS = 30.0
CONFIGS = {"default (S=8)": AttentionConfig(), "lesson 10 (S=16, causal)": AttentionConfig(seq_len=16, causal=True)}


def _frame_ms(app, panel, i: int) -> float:
    t0 = time.perf_counter()
    panel.player.set_position(i)
    panel.graphics.scene().prepareForPaint()
    panel.graphics.viewport().repaint()
    app.processEvents()
    return (time.perf_counter() - t0) * 1e3


def stepthrough_benchmarks(quick: bool = False) -> dict:
    from .window import shown_bench_window

    app, window = shown_bench_window()
    out = {}
    try:
        for label, cfg in CONFIGS.items():
            window.render_sync(cfg)
            panels = []
            for name in ("tiling", "decode"):
                window.show_panel(name)
                panel = window.panel(name)
                deadline = time.monotonic() + 60
                while panel.view is None or panel.view.config != cfg:
                    app.processEvents()
                    time.sleep(0.005)
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{name}: the steps did not arrive")
                panels.append((name, panel))
            rounds = 2 if quick else 6
            times: dict[str, list[float]] = {n: [] for n, _p in panels}
            for _ in range(rounds):  # the two panels share a tab: one in front at a time, by turns
                for name, panel in panels:
                    window.show_panel(name)
                    app.processEvents()
                    assert panel.isVisible()
                    for i in range(panel.player.count):
                        times[name].append(_frame_ms(app, panel, i))
            for name, xs in times.items():
                med = statistics.median(xs[len(xs) // 10:])  # the first frames warm caches up
                out[f"{name} · {label}"] = {"frames": len(xs), "median_ms": round(med, 2),
                                            "fps": round(1000 / med, 1), "target_fps": TARGET_FPS,
                                            "verdict": "ok" if 1000 / med >= TARGET_FPS else "MISSED"}
    finally:
        window.close()
        window.shutdown()
    return out
