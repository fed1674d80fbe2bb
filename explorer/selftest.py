"""`python main.py selftest`: build the window offscreen, run every backend, render, export.

Each step prints one line; the first failure prints its reason on stderr and
the selftest returns 1. Nothing is written outside a temporary folder (the
window's settings included).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

#: Configurations that exercise the lessons' corner cases (masks, overflow, GQA, cross, RoPE).
LESSON_CONFIGS = {
    "causal + window + padding, fully masked rows (-inf → NaN)": dict(
        seq_len=6, causal=True, window=2, pad=6, mask_value="-inf"),
    "float16 overflow without pre-scaling": dict(dtype="float16", init_std=2.0, d_model=512, n_heads=1),
    "GQA 4:1 with RoPE": dict(d_model=128, n_heads=8, n_kv_heads=2, positional="rope"),
    "cross-attention, ALiBi, bfloat16": dict(seq_len=5, kv_len=11, positional="alibi", dtype="bfloat16"),
    "tokens, sinusoidal positions": dict(tokens=("the", "cat", "sat", "on", "the", "mat"), positional="sinusoidal"),
}


class SelftestFailure(RuntimeError):
    pass


def _step(name: str, fn: Callable[[], str | None]) -> None:
    t0 = time.perf_counter()
    try:
        detail = fn()
    except SelftestFailure:
        raise
    except Exception as exc:  # report which step broke, in one line
        raise SelftestFailure(f"{name}: {type(exc).__name__}: {exc}".splitlines()[0]) from exc
    ms = (time.perf_counter() - t0) * 1e3
    print(f"  ok  {name}{' · ' + detail if detail else ''}  ({ms:.0f} ms)", flush=True)


def _check_frame(window, config) -> str:
    frame = window.frame
    if frame is None or frame.config != config:
        raise SelftestFailure(f"the panels do not show {config.summary()}")
    for name in window.panel_names():
        panel = window.panel(name)
        if getattr(panel, "frame", None) is not frame:
            raise SelftestFailure(f"panel {name!r} was not drawn")
    return frame.backend_impl


def _export_panels(window, out: Path) -> list[Path]:
    """explorer.export when it exists (the export command's own path), else widget grabs."""
    try:
        from .export.files import export_panels  # the export command's own path
        from .export.options import ExportOptions
    except ImportError:
        export_panels = None
    paths: list[Path] = []
    if export_panels is not None:
        paths = [Path(p) for p in export_panels(window, out, None, ["png"], ExportOptions(width=1200),
                                                 size=(900, 600))]
    else:
        for name in window.panel_names():
            panel = window.panel(name)
            panel.resize(900, 600)
            p = out / f"{name}.png"
            if not panel.grab().save(str(p)):
                raise SelftestFailure(f"could not write {p}")
            paths.append(p)
    for p in paths:
        if not p.exists() or p.stat().st_size < 1000:
            raise SelftestFailure(f"export {p.name} is missing or empty")
    return paths


def run_selftest() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    tmp = tempfile.TemporaryDirectory(prefix="attention-explorer-selftest-")
    out = Path(tmp.name)
    print("Attention Explorer selftest", flush=True)
    window = None
    try:
        from PySide6.QtCore import QSettings

        import engine
        from engine import AttentionConfig

        from .qt_app import ensure_app
        from .session import load_session, save_session
        from .window import MainWindow

        app = ensure_app()
        state: dict = {}

        def build() -> str:
            nonlocal window
            window = MainWindow(settings=QSettings(str(out / "settings.ini"), QSettings.Format.IniFormat))
            window.resize(1600, 1000)
            window.show()
            for _ in range(3):
                app.processEvents()
            return f"QPA {app.platformName()}, panels {', '.join(window.panel_names())}"

        _step("build the window", build)

        def default() -> str:
            cfg = AttentionConfig()
            window.render_sync(cfg)
            return _check_frame(window, cfg)

        _step("default configuration", default)

        devices = ["cpu"] + (["cuda"] if engine.available_backends("cuda", "float32")["eager"] is None else [])
        for device in devices:
            for dtype in ("float32", "float16", "bfloat16"):
                for backend, why in engine.available_backends(device, dtype).items():
                    cfg = AttentionConfig(backend=backend, device=device, dtype=dtype, causal=True)

                    def one(cfg=cfg, why=why) -> str:
                        if why is not None:
                            return f"unavailable: {why}"
                        frame = window.render_sync(cfg)
                        impl = _check_frame(window, cfg)
                        diff = frame.trace.backend_max_abs_diff
                        tol = {"float32": 1e-4, "float16": 5e-2, "bfloat16": 2e-1}[cfg.dtype]
                        if diff is not None and not diff <= tol:
                            raise SelftestFailure(f"{impl} differs from eager by {diff:.3g} (> {tol})")
                        return impl + ("" if diff is None else f", max |Δ| vs eager {diff:.1e}")

                    _step(f"backend {backend} on {device}, {dtype}", one)

        def comparison() -> str:
            res = window.measure_backends_sync()
            bad = [k for k, v in res.items() if "error" in v and engine.available_backends(
                window.config.device, window.config.dtype).get(k) is None]
            if bad:
                raise SelftestFailure(f"backend comparison failed for {', '.join(bad)}: {res[bad[0]]['error']}")
            return ", ".join(f"{k}: {v.get('impl', v.get('error'))}" for k, v in res.items())

        _step("backend comparison (diagnostics panel)", comparison)

        for label, kw in LESSON_CONFIGS.items():
            def lesson(kw=kw) -> str:
                cfg = AttentionConfig(**kw)
                frame = window.render_sync(cfg)
                _check_frame(window, cfg)
                msgs = frame.overflow.messages
                return f"{len(msgs)} warning(s)" + (f": {msgs[0][:60]}…" if msgs else "")

            _step(label, lesson)

        def selection() -> str:
            cfg = AttentionConfig(n_heads=4, seq_len=8)
            window.render_sync(cfg)
            window.selection.set(head=2, query=5, key=3)
            app.processEvents()
            sel = window.selection
            if (sel.head, sel.query, sel.key) != (2, 5, 3):
                raise SelftestFailure("selection did not stick")
            state["selection"] = sel.as_dict()
            return "head 2, query 5, key 3"

        _step("selection", selection)

        def session() -> str:
            path = out / "roundtrip.json"
            save_session(path, window.config, window.selection)
            s = load_session(path)
            if s.config != window.config or s.selection != state["selection"]:
                raise SelftestFailure("session round trip changed the config or selection")
            return path.name

        _step("session save and load", session)

        def render_png() -> str:
            window.render_sync(AttentionConfig(causal=True, n_kv_heads=2))
            app.processEvents()
            p = out / "window.png"
            if not window.grab().save(str(p)) or p.stat().st_size < 10_000:
                raise SelftestFailure("the window did not render to PNG")
            return f"{p.stat().st_size // 1024} KiB"

        _step("render the window", render_png)

        def export() -> str:
            paths = _export_panels(window, out)
            return ", ".join(p.name for p in paths)

        _step("export the panels", export)

        def async_path() -> str:
            from .work.base import run_events_until

            cfg = AttentionConfig(seq_len=12, causal=True)
            got: list = []
            window.frame_rendered.connect(lambda c: got.append(c) if c == cfg else None)
            window.set_config(cfg)
            if not run_events_until(lambda: bool(got), 20.0):
                raise SelftestFailure("no frame from the worker thread within 20 s")
            return f"latency {window.latency_ms:.1f} ms"

        _step("worker thread (set_config → frame_rendered)", async_path)
    except SelftestFailure as exc:
        print(f"selftest FAILED: {exc}", file=sys.stderr, flush=True)
        return 1
    finally:
        if window is not None:
            window.close()
            window.shutdown()
        tmp.cleanup()
    print("selftest passed", flush=True)
    return 0
