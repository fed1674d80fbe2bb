"""UI-thread CPU per move of the selected cell (query, key), in the tree on PYTHONPATH (issue 44).

    PYTHONPATH=<tree> QT_QPA_PLATFORM=offscreen python explorer/bench/cell_move.py [--seq-len 512]

Builds the window through the public contract (`explorer.create_window`, `window.set_config`,
`window.selection`), shows one frame at the default config with `--seq-len` queries, then
moves the selected cell `--moves` times (after 10 of warm-up) and prints the median thread
CPU time (ms) of `selection.set` plus the event loop's repaint. A move changes no frame, so
this is what the panels' redraw-by-what-changed saves; run trees in turn (A B A B …) and
compare medians: the machine's speed drifts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seq-len", type=int, default=512)
    ap.add_argument("--moves", type=int, default=80)
    args = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop

    import explorer
    from engine import AttentionConfig

    app = explorer.ensure_app()
    window = explorer.create_window()
    window.resize(1600, 1000)
    window.show()
    cfg = AttentionConfig(seed=3, seq_len=args.seq_len)
    loop, done = QEventLoop(), []

    def on_rendered(c) -> None:
        if c == cfg:
            done.append(True)
            loop.quit()

    window.frame_rendered.connect(on_rendered)
    window.set_config(cfg)
    if not done:
        loop.exec()
    for _ in range(5):
        app.processEvents()
    s, cpu = cfg.seq_len, []
    for n in range(10 + args.moves):
        t0 = time.thread_time()
        window.selection.set(query=(n * 37) % s, key=(n * 53 + 1) % s)
        app.processEvents()
        if n >= 10:
            cpu.append((time.thread_time() - t0) * 1e3)
    print(json.dumps({"explorer": explorer.__file__, "seq_len": s,
                      "cell_move_cpu_ms": round(statistics.median(cpu), 2)}))
    window.close()
    shutdown = getattr(window, "shutdown", None)
    if shutdown is not None:
        shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
