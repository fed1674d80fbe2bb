"""The training lab's display cost (issue 17): training steps/s with the lab drawing, against
the same loop run bare, measured interleaved in one run (``python main.py bench --train``).

Three modes, alternated ``rounds`` times for ``seconds`` each, so that a change of the
machine's load hits all three alike:

- ``bare``: ``Trainer.step`` in this process, one torch thread, no window work at all
  (engine.training.bench's loop);
- ``hidden``: the lab's child process training while its dock is hidden (the panel skips
  drawing; the window relays the messages);
- ``drawing``: the same with the lab shown and redrawing every update.

The steps/s of a lab mode is counted from the steps the window received between the first
and the last update of the window of time, so the start-up and the pause are left out.
``ratio`` is the median of ``drawing`` over the median of ``bare``; ``display_hz`` is the
panel's own readout of its redraw rate.
"""

from __future__ import annotations

import os
import statistics
import time

from engine.training import TrainConfig, Trainer

#: the target of issue 17: training with the display on ≥ 85 % of bare
TARGET_RATIO = 0.85


def _bare(config: TrainConfig, seconds: float, trainer: Trainer) -> float:
    t0 = time.perf_counter()
    n0 = trainer.steps_done
    while time.perf_counter() - t0 < seconds:
        trainer.step(5)
    return (trainer.steps_done - n0) / (time.perf_counter() - t0)


def _wait(seconds: float) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


def _lab(app, lab, seconds: float) -> float:
    """Train the lab's current run for ``seconds`` of wall time; steps/s the window saw."""
    seen: list[tuple[float, int]] = []

    def on_changed(what: str) -> None:
        if what == "progress" and lab.current is not None:
            seen.append((time.perf_counter(), lab.current.steps_done))

    lab.changed.connect(on_changed)
    try:
        lab.start()
        _wait(seconds)  # the event loop runs as in the window: redraws, paints, relays
        lab.pause()
        t_end = time.perf_counter() + 0.5
        while time.perf_counter() < t_end and lab.running:
            app.processEvents()
            time.sleep(0.005)
    finally:
        lab.changed.disconnect(on_changed)
    seen = [s for s in seen if s[1] > 0]
    if len(seen) < 3:
        return float("nan")
    (t0, n0), (t1, n1) = seen[1], seen[-1]  # the first update carries the start-up
    return (n1 - n0) / (t1 - t0) if t1 > t0 else float("nan")


def display_ratio(seconds: float = 3.0, rounds: int = 6, config: TrainConfig | None = None) -> dict:
    """The interleaved measurement (see the module docstring); returns a JSON-safe dict."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from ..bench.window import shown_bench_window
    from .feature import install_training, show_training

    config = config or TrainConfig(steps=5000)  # (the defaults, with room for every round's steps)
    app, window = shown_bench_window()
    try:
        install_training(window)
        panel = show_training(window)
        dock = window.dock("training")
        lab = window.training_lab
        lab.apply_preset(None)
        lab.set_settings(config)
        lab.reset()
        t_end = time.perf_counter() + 60
        while lab.current.latest is None and time.perf_counter() < t_end:  # the child process started
            app.processEvents()
            time.sleep(0.01)
        trainer = Trainer(config, threads=1)
        trainer.step(5)
        load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        rates: dict[str, list[float]] = {"bare": [], "hidden": [], "drawing": []}
        hz: list[float] = []
        cost: list[float] = []
        for _ in range(rounds):
            rates["bare"].append(_bare(config, seconds, trainer))
            dock.hide()
            app.processEvents()
            rates["hidden"].append(_lab(app, lab, seconds))
            dock.show()
            app.processEvents()
            rates["drawing"].append(_lab(app, lab, seconds))
            hz.append(panel.display_rate())
            cost.append(panel.draw_cost_ms())
        med = {k: statistics.median(v) for k, v in rates.items()}
        load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        pairs = [d / b for d, b in zip(rates["drawing"], rates["bare"]) if b > 0]
        return {"config": config.summary(), "seconds": seconds, "rounds": rounds,
                "steps_per_s": {k: [round(x, 1) for x in v] for k, v in rates.items()},
                "median": {k: round(v, 1) for k, v in med.items()},
                "ratio_hidden": round(med["hidden"] / med["bare"], 3),
                "ratio": round(med["drawing"] / med["bare"], 3),
                "pair_ratios": [round(x, 2) for x in pairs],
                "load": [round(load0, 2), round(load1, 2)], "cpus": os.cpu_count(),
                "display_hz": [round(x, 1) for x in hz], "draw_ms": [round(x, 1) for x in cost],
                "target": TARGET_RATIO}
    finally:
        window.close()
        window.shutdown()
        window.deleteLater()
        app.processEvents()


def format_display(r: dict) -> str:
    m = r["median"]
    ok = "✓" if r["ratio"] >= r["target"] else "✗"
    return (f"training lab, display on vs bare ({r['config']}; {r['rounds']} × {r['seconds']:g} s each, interleaved)\n"
            f"  median steps/s: bare {m['bare']:.0f} · lab hidden {m['hidden']:.0f} · lab drawing {m['drawing']:.0f}\n"
            f"  display on / bare = {r['ratio']:.2f} (target ≥ {r['target']:.2f}) {ok}; hidden / bare = "
            f"{r['ratio_hidden']:.2f}; display {', '.join(f'{h:.0f}' for h in r['display_hz'])} Hz, "
            f"{', '.join(f'{c:.0f}' for c in r['draw_ms'])} ms of UI-thread CPU a redraw\n"
            f"  each round's drawing/bare: {', '.join(f'{x:.2f}' for x in r['pair_ratios'])}; load average "
            f"{r['load'][0]:.1f} → {r['load'][1]:.1f} on {r['cpus']} CPUs (other sessions take their share)\n"
            f"  runs: {r['steps_per_s']}")


def bench_command(as_json: bool = False, quick: bool = False) -> int:
    """``python main.py bench --train``: the engine's training bench, then the display ratio."""
    import json

    from engine.training.bench import bench_training, format_training

    r = bench_training(quick)
    r["display"] = display_ratio(seconds=2.0 if quick else 3.0, rounds=2 if quick else 6)
    if as_json:
        print(json.dumps(r, indent=2), flush=True)
    else:
        print(format_training(r), flush=True)
        print(format_display(r["display"]), flush=True)
    return 0
