"""Config change → repaint at the default config, this tree against other checkouts (issue 26).

    python explorer/bench/seed_latency.py [--rounds 5] [--n 30] [--open K] [TREE ...]

Each TREE (a checkout of this repository, e.g. `git worktree add /tmp/v1 cbaa8ba`; default:
this one) is measured in a fresh process started in that tree (its `explorer` and `engine`
first on the path), in turn, A B C A B C … for `--rounds` rounds, so a machine that slows down
or speeds up meanwhile weighs on every tree alike. A process builds the window through the
public contract only (`explorer.create_window`, `window.set_config`, `window.frame_rendered`,
`AttentionConfig().replace(seed=…)`), shows it offscreen at 1600×1000, and times `--n` seed
changes (after `--warmup`), each from `set_config` to the `frame_rendered` of that config,
then lets the event loop run as a user's would. It prints its median; the driver prints each
tree's median of medians, the spread (min–max of the rounds' medians) and the ratios against
the first tree, per round and overall. `--open K` then opens K new windows in the same
process, one after another, and times each from `create_window` to its first `frame_rendered`
(shown at 1600×1000; the process's first window, with the imports and first paint, is not
one of them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()


def open_windows(app, k: int) -> list[float]:
    """A new window, create → shown at 1600×1000 with its first frame (`frame_rendered`), then
    closed; k times after the process's first window (its imports and first paint are the
    start-up's, not a window's). ms per window."""
    import time

    from PySide6.QtCore import QEvent, QEventLoop, QTimer

    import explorer

    times = []
    for _ in range(k):
        t0 = time.perf_counter()
        window = explorer.create_window()
        loop = QEventLoop()
        done: list[bool] = []
        window.frame_rendered.connect(lambda _cfg, done=done, loop=loop: (done.append(True), loop.quit()))
        window.resize(1600, 1000)
        window.show()
        if not done:  # (the event loop runs as a user's would: no busy wait beside the worker)
            QTimer.singleShot(60_000, loop, loop.quit)
            loop.exec()
        if not done:
            raise RuntimeError("a new window drew no frame within 60 s")
        times.append((time.perf_counter() - t0) * 1e3)
        close(window)
        window.deleteLater()
        # deleted now (processEvents leaves deferred deletes alone: the closed windows piled up)
        app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        app.processEvents()
    return times


def close(window) -> None:
    """Close `window` and stop its threads (a v1 window has no shutdown: closing it is enough)."""
    window.close()
    shutdown = getattr(window, "shutdown", None)
    if shutdown is not None:
        shutdown()


def measure(n: int, warmup: int, open_k: int = 0) -> dict:
    """In the tree's own process: the latency of n seed changes (ms), after `warmup` of them;
    with `open_k`, then the time to open a new window (`open_windows`)."""
    import time

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop, QTimer

    import explorer
    from engine import AttentionConfig

    app = explorer.ensure_app()
    window = explorer.create_window()
    window.resize(1600, 1000)
    window.show()
    for _ in range(5):
        app.processEvents()
    base = AttentionConfig()
    loop = QEventLoop()
    state = {"want": None, "done": False}

    def on_rendered(cfg) -> None:
        if cfg == state["want"]:
            state["done"] = True
            loop.quit()

    window.frame_rendered.connect(on_rendered)
    guard = QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(loop.quit)
    samples, cpu = [], []
    for i in range(warmup + n):
        cfg = base.replace(seed=base.seed + 1 + i)
        state.update(want=cfg, done=False)
        t0, c0 = time.perf_counter(), time.thread_time()
        window.set_config(cfg)
        if not state["done"]:
            guard.start(30_000)
            loop.exec()
            guard.stop()
        t1, c1 = time.perf_counter(), time.thread_time()
        if not state["done"]:
            raise RuntimeError(f"no frame_rendered for seed {cfg.seed} within 30 s")
        if i >= warmup:
            samples.append((t1 - t0) * 1e3)
            cpu.append((c1 - c0) * 1e3)
        app.processEvents()
    close(window)
    opened = open_windows(app, open_k) if open_k else [float("nan")]
    return {"explorer": explorer.__file__, "median_ms": statistics.median(samples),
            "min_ms": min(samples), "max_ms": max(samples), "ui_cpu_ms": statistics.median(cpu), "n": n,
            "open_ms": statistics.median(opened)}


def run_tree(tree: Path, n: int, warmup: int, open_k: int = 0) -> dict:
    """One fresh process in `tree` (its own settings folder: no saved geometry or docks)."""
    with tempfile.TemporaryDirectory(prefix="seed-latency-") as home:
        env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen",
               "XDG_CONFIG_HOME": home, "HOME": home}
        out = subprocess.run([sys.executable, str(HERE), "--child", "--n", str(n), "--warmup", str(warmup),
                              "--open", str(open_k)],
                             cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{tree}: exit {out.returncode}\n{out.stderr[-2000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if not Path(res["explorer"]).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"{tree}: imported {res['explorer']}, not that tree's explorer")
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", type=Path, help="checkouts to compare; the first is the reference")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, default=30, help="seed changes timed per process")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--open", type=int, default=0, metavar="K",
                    help="then open K new windows one after another and time each (create → first frame)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.n, args.warmup, args.open)))
        return 0
    trees = args.trees or [HERE.parents[2]]
    got: dict[str, dict[Path, list[float]]] = {"median_ms": {t: [] for t in trees},
                                               "ui_cpu_ms": {t: [] for t in trees}}
    if args.open:
        got["open_ms"] = {t: [] for t in trees}
    for r in range(args.rounds):
        row = []
        for t in trees:
            res = run_tree(t, args.n, args.warmup, args.open)
            for key, per_tree in got.items():
                per_tree[t].append(res[key])
            row.append(f"{t}: {res['median_ms']:.1f} (UI CPU {res['ui_cpu_ms']:.1f})")
        lat = got["median_ms"]
        ratios = " ".join(f"{lat[t][-1] / lat[trees[0]][-1]:.2f}" for t in trees[1:])
        print(f"round {r + 1}: " + " · ".join(row) + (f"  (ratio vs first: {ratios})" if ratios else ""),
              flush=True)
    print(f"\nset_config → frame_rendered, seed changes, default config, 1600×1000 offscreen; "
          f"{args.rounds} rounds × {args.n} changes (median per process)")
    for key, what in (("median_ms", "latency"), ("ui_cpu_ms", "UI thread CPU per change"),
                      ("open_ms", f"a new window, create → first frame (median of {args.open} a process)")):
        if key not in got:
            continue
        per_tree = got[key]
        ref = statistics.median(per_tree[trees[0]])
        print(what)
        for t in trees:
            ms = per_tree[t]
            med = statistics.median(ms)
            pair = statistics.median(m / r for m, r in zip(ms, per_tree[trees[0]], strict=True))
            print(f"  {t!s:<38} median of medians {med:6.1f} ms  spread {min(ms):.1f}–{max(ms):.1f} ms  "
                  f"vs first {med / ref:.2f} (median of per-round ratios {pair:.2f})")
    return 0


def only_this_tree() -> None:
    """Import the tree on PYTHONPATH and nothing of another checkout: drop this folder from the
    path and an editable install's finder (which would serve a module the tree lacks from the
    installed checkout)."""
    if sys.path and Path(sys.path[0]).resolve() == HERE.parent:
        del sys.path[0]
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")
                        and "__editable__" not in getattr(f, "__name__", "")]


if __name__ == "__main__":
    if "--child" in sys.argv:
        only_this_tree()
    sys.exit(main())
