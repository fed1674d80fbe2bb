"""A fuzz of hostile session files and snapshots (issue 28): a few hundred files, made from a
fixed seed, through the public paths: `explorer.session.load_session`, File ▸ Open of the
window (`MainWindow.open_session`: the config's frame, the snapshots' restore, the reference
A and the thumbnails the Snapshots dock asks for, all computed by the window's workers) and
`main.py export --session F` for a handful.

Malformed JSON, wrong types, huge numbers, NaN and infinities, deep nesting, snapshots over
the memory budget, duplicated and oversized snapshot lists, hostile unicode, missing fields,
and valid small sessions among them. Each outcome must be a session opened or one clear line
(a SessionError, the banner's refusal, a snapshot marked with why, export's exit 1 with one
line on stderr); never another exception (in the loader, a Qt slot or a worker thread), a
hang, or memory past the cap.

Everything runs in ONE subprocess (this file as a script: ``python tests/test_fuzz_sessions.py
--worker FOLDER OUT.json``) under an address-space limit (RLIMIT_AS) and a wall timeout, so
a regression fails the test instead of the machine.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GIB = 1 << 30
SEED = 28
#: files made by hostile_sessions (a quarter of them open: 5 % valid, the rest hostile)
COUNT = 300
#: how many of them also go through `main.py export --session` (refused ones and opened ones)
EXPORTS = 4
#: address space of the worker (torch and Qt map ~1.5 GiB of it before any session)
MEMORY_LIMIT = 4 * GIB
#: peak RSS the worker may reach: a few small frames and thumbnails at a time
PEAK_RSS_MB = 1500
#: the whole worker (a hang fails here, with every thread's stack)
WORKER_TIMEOUT_S = 150
#: one file: opened, its frame and snapshots computed (or refused)
FILE_TIMEOUT_S = 30
#: runs under this budget: a config over it is refused before allocating anything
BUDGET = 512 * 1024**2
#: a refusal is one line of at most this many characters
LINE_MAX = 400

pytestmark = pytest.mark.slow


# ============================================================================================
# the files
# ============================================================================================

FIELDS = ["d_model", "n_heads", "n_kv_heads", "seq_len", "kv_len", "batch", "causal", "window", "pad",
          "mask_value", "scale", "prescale_q", "dtype", "positional", "backend", "device", "seed",
          "init_std", "tokens"]
#: configs far over BUDGET: refused by the estimate, before anything is allocated
HUGE_CONFIGS = [{"seq_len": 65536, "backend": "eager"}, {"d_model": 65536}, {"batch": 64, "seq_len": 4096, "d_model": 512},
                {"seq_len": 1, "kv_len": 1_000_000, "d_model": 1024}, {"d_model": 8192, "seq_len": 2048,
                                                                      "dtype": "bfloat16", "backend": "sdpa"}]
UNICODE = ["🙂", "中文注意力", "\u202etxet\u202c", "e\u0301\u0301\u0301", "a\u200db\u200bc", "\ufeffbom", "\u0000",
           "\x07bell", "\ud800", "\udfff", "x" * 81, "字" * 80, "🙂" * 81, " ", "", "\n", "\u2028", "ℌ𝔢𝔩𝔩𝔬",
           "\U0010ffff", "A" * 5000]
ODD = [None, True, False, 0, -1, 1, 2**31, 2**63, -(2**63), 0.5, -0.0, 1e308, -1e308, 5e-324, "", "3", "abc",
       [], [1], {}, {"a": 1}, [[[]]], "NaN", "\ud800"]
RAW = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1" + "0" * 400, "9" * 4299, "9" * 5000,
       "-" + "9" * 5000, "1.0e-400", "0." + "0" * 5000 + "1"]


def _small_config(rng: random.Random) -> dict:
    from engine import AttentionConfig, ConfigError

    while True:
        d = rng.choice([8, 16, 32, 64])
        h = rng.choice([h for h in (1, 2, 4) if d % h == 0])
        kw = {"d_model": d, "n_heads": h, "seq_len": rng.randint(1, 12), "causal": rng.random() < 0.5,
              "dtype": rng.choice(["float32", "float16", "bfloat16"]),
              "backend": rng.choice(["eager", "sdpa", "flash"]), "seed": rng.randint(0, 2**31 - 1)}
        try:
            return AttentionConfig(**kw).to_dict()
        except ConfigError:
            continue


def _snapshot(rng: random.Random, i: int, config: dict | None = None) -> dict:
    cfg = config if config is not None else _small_config(rng)
    return {"name": f"snapshot {i}", "config": cfg,
            "selection": {"head": rng.randrange(cfg["n_heads"]), "query": rng.randrange(cfg["seq_len"]), "key": 0}}


def _valid(rng: random.Random, snapshots: int | None = None) -> dict:
    cfg = _small_config(rng)
    data = {"format": "attention-explorer.session", "version": 1, "config": cfg,
            "selection": {"head": 0, "query": rng.randrange(cfg["seq_len"]), "key": 0}, "model": None}
    n = rng.choice([0, 0, 1, 2, 3]) if snapshots is None else snapshots
    if n:
        data["snapshots"] = [_snapshot(rng, i) for i in range(n)]
        if rng.random() < 0.5:
            data["snapshots"][rng.randrange(n)]["reference"] = True
    return data


def _containers(data) -> list:
    """Every (container, key) in `data`, depth first."""
    out, stack = [], [data]
    while stack:
        c = stack.pop()
        for k, v in (c.items() if isinstance(c, dict) else enumerate(c)):
            out.append((c, k))
            if isinstance(v, dict | list):
                stack.append(v)
    return out


def _place(rng: random.Random, data: dict, value) -> None:
    """Put `value` at a random place: a field, a config field, a selection or snapshot field
    (wherever an earlier change left a container)."""
    where = rng.random()
    snaps = [s for s in data.get("snapshots") or [] if isinstance(s, dict)] \
        if isinstance(data.get("snapshots"), list) else []
    cfg, sel = data.get("config"), data.get("selection")
    if where < 0.4 and isinstance(cfg, dict):
        cfg[rng.choice(FIELDS)] = value
    elif where < 0.55:
        data[rng.choice(["format", "version", "config", "selection", "model", "snapshots", "extra"])] = value
    elif where < 0.65 and isinstance(sel, dict):
        sel[rng.choice(["head", "query", "key", "other"])] = value
    elif where < 0.7:
        data["model"] = {"source": "/nonexistent/model", rng.choice(["source", "text", "layer", "head"]): value}
    elif snaps and where < 0.85 and isinstance(s := rng.choice(snaps), dict) and isinstance(s.get("config"), dict):
        s["config"][rng.choice(FIELDS)] = value
    elif snaps:
        rng.choice(snaps)[rng.choice(["name", "config", "selection", "reference", "thumbnail"])] = value
    else:
        container, key = rng.choice(_containers(data))
        container[key] = value


def _with_raw(rng: random.Random, data: dict, raw: str) -> str:
    """The JSON of `data` with `raw` (a literal json.dumps cannot write) at a random place."""
    _place(rng, data, "__RAW__")
    return json.dumps(data, ensure_ascii=rng.random() < 0.5).replace('"__RAW__"', raw, 1)


def _deep(rng: random.Random, depth: int) -> str:
    if rng.random() < 0.5:
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def hostile_sessions(seed: int = SEED, count: int = COUNT) -> list[tuple[str, bytes]]:
    """`count` (kind, file bytes) pairs made from `seed`; the same every time."""
    rng = random.Random(seed)
    # every 20 files: mostly refusals (cheap), a few that open (a frame and thumbnails each)
    kinds = ["json", "types", "numbers", "nan", "deep", "lists", "unicode", "missing", "budget", "valid",
             "json", "types", "numbers", "nan", "deep", "lists", "unicode", "missing", "json", "types"]
    out = []
    for i in range(count):
        kind = kinds[i % len(kinds)]
        data = _valid(rng)
        text = None
        if kind == "json":
            good = json.dumps(data)
            text = rng.choice([
                good[: rng.randrange(len(good))], good.replace('"', "'", rng.randint(1, 3)), good[:-1] + ",}",
                good.replace(":", "::", 1), "\ufeff" + good, "", "   \n", "null", "[]", "0", '"session"',
                good + good, good.replace("}", ",}", 1), good[: len(good) // 2] + "\x00" + good[len(good) // 2:],
                good.replace('"config"', '"config": 1, "config"', 1),
            ])
            if rng.random() < 0.15:
                out.append((kind, good.encode()[: rng.randrange(len(good))] + bytes([rng.choice([0x80, 0xC3, 0xFF, 0xFE])])))
                continue
        elif kind == "types":
            for _ in range(rng.randint(1, 3)):
                _place(rng, data, rng.choice(ODD))
        elif kind == "numbers":
            if rng.random() < 0.5:
                _place(rng, data, rng.choice([10 ** rng.randint(9, 300), -(10 ** rng.randint(9, 300)),
                                              float(10 ** rng.randint(10, 300)), 2**31, 2**53 + 1]))
            else:
                text = _with_raw(rng, data, rng.choice(RAW[3:]))
        elif kind == "nan":
            text = _with_raw(rng, data, rng.choice(RAW[:3]))
        elif kind == "deep":
            text = _with_raw(rng, data, _deep(rng, rng.choice([33, 40, 200, 999, 1100, 20_000, 200_000])))
        elif kind == "budget":
            huge = {**_small_config(rng), "seq_len": 8, **rng.choice(HUGE_CONFIGS)}
            huge.pop("tokens", None)
            if rng.random() < 0.3:
                data["config"] = dict(huge)  # the window's own frame refused
            else:
                snaps = data.setdefault("snapshots", [])
                for s in snaps:
                    s.pop("reference", None)
                snaps.insert(rng.randint(0, len(snaps)), {"name": "huge", "config": huge,
                                                          "reference": rng.random() < 0.6})
        elif kind == "lists":
            entry = _snapshot(rng, 0)
            n = rng.choice([2, 63, 64, 65, 1000, 20_000])
            data["snapshots"] = [dict(entry) for _ in range(n)]
            if rng.random() < 0.3:
                for s in rng.sample(data["snapshots"], 2):
                    s["reference"] = True
            elif n <= 64 and rng.random() < 0.5:
                data["snapshots"][-1] = {**entry, "reference": True}
            if n > 64 and rng.random() < 0.3:
                data["snapshots"] = [data["snapshots"]] * 2  # a list of lists
        elif kind == "unicode":
            for _ in range(rng.randint(1, 2)):
                u = rng.choice(UNICODE)
                target = rng.random()
                if target < 0.3 and data.get("snapshots"):
                    rng.choice(data["snapshots"])["name"] = u
                elif target < 0.5:
                    data["config"]["tokens"] = [u] * data["config"]["seq_len"]
                elif target < 0.7:
                    data["model"] = {"source": rng.choice(["/nonexistent/" + u, u, "~nosuchuser" + u, "m" + u]),
                                     "text": u}
                elif target < 0.85:
                    data[u] = 1
                else:
                    data["config"]["dtype"] = u
        elif kind == "missing":
            for _ in range(rng.randint(1, 3)):
                if places := _containers(data):
                    container, key = rng.choice(places)
                    del container[key]
        if text is None:
            try:
                text = json.dumps(data, ensure_ascii=rng.random() < 0.5)
            except ValueError:  # an integer json.dumps refuses to write: its digits by hand
                text = json.dumps(data, default=str)
        out.append((kind, text.encode("utf-8", "surrogatepass")))
    return out


# ============================================================================================
# the parent side: pytest writes the files and runs the worker once
# ============================================================================================

@pytest.fixture(scope="module")
def report(tmp_path_factory):
    if os.name != "posix" or not sys.platform.startswith("linux"):  # pragma: no cover
        pytest.skip("the worker needs RLIMIT_AS and /proc (Linux)")
    folder = tmp_path_factory.mktemp("sessions")
    for i, (kind, data) in enumerate(hostile_sessions()):
        (folder / f"s{i:03d}-{kind}.json").write_bytes(data)
    out = folder.parent / "report.json"
    env = {k: v for k, v in os.environ.items() if k not in ("ATTN_EXPLORER_MEMORY_BUDGET",)}
    env.update(QT_QPA_PLATFORM="offscreen", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", MALLOC_ARENA_MAX="2",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ATTN_EXPLORER_MEMORY_BUDGET=str(BUDGET),
               ATTN_EXPLORER_SETTINGS=str(folder.parent / "settings.ini"),
               PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", str(folder), str(out)],
                              cwd=ROOT, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=WORKER_TIMEOUT_S + 30)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the session fuzz hung past {WORKER_TIMEOUT_S + 30} s\n{_tail(exc.stderr)}")
    wall = time.perf_counter() - t0
    assert proc.returncode == 0, f"the worker exited {proc.returncode}\n{_tail(proc.stderr)}"
    got = json.loads(out.read_text(encoding="utf-8"))
    got["wall_s"] = wall
    return got


def _tail(text, n: int = 4000) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return (text or "")[-n:]


def _one_line(msg: str) -> bool:
    return bool(msg) and "\n" not in msg and "\r" not in msg and len(msg) <= LINE_MAX and "Traceback" not in msg


def test_every_file_is_opened_or_refused_in_one_line(report):
    files = report["files"]
    assert len(files) == COUNT
    print(f"\nsession fuzz: {COUNT} files in {report['wall_s']:.1f} s (worker {report['seconds']:.1f} s, "
          f"slowest file {max(f['seconds'] for f in files):.1f} s), peak RSS {report['peak_rss_mb']:.0f} MB; "
          f"loaded {sum(f['load'] == 'loaded' for f in files)}, refused {sum(f['load'] == 'refused' for f in files)}")
    for f in files:
        assert f["load"] in ("loaded", "refused"), f
        if f["load"] == "refused":
            assert _one_line(f["message"]), f
        # the window agrees with the loader: opened exactly what load_session accepted
        assert f["opened"] == (f["load"] == "loaded"), f
        if not f["opened"]:
            assert _one_line(f["banner"]) and f["message"] in f["banner"], f
        else:
            assert f["frame"] in ("frame", "refused"), f
            if f["frame"] == "refused":
                assert _one_line(f["banner"]) and "budget" in f["banner"], f
            for e in f["snapshot_errors"]:
                assert _one_line(e), f
            assert not f["model_banner"] or _one_line(f["model_banner"]), f
            assert f["thumbnails"] + len(f["snapshot_errors"]) == f["snapshots"], f


def test_each_kind_of_hostility_is_met(report):
    """The fixed seed makes every kind refused at least once, and some files open."""
    by_kind: dict[str, set] = {}
    for f in report["files"]:
        by_kind.setdefault(f["kind"], set()).add(f["load"])
    for kind, outcomes in by_kind.items():
        assert "refused" in outcomes or kind in ("valid", "budget"), (kind, outcomes)
    assert by_kind["valid"] == {"loaded"}
    assert any(e and "budget" in e for f in report["files"] for e in f.get("snapshot_errors", [])), \
        "no snapshot over the memory budget was marked"


def test_nothing_raised_hung_or_grew_past_the_cap(report):
    assert report["exceptions"] == [], report["exceptions"][:5]
    assert report["peak_rss_mb"] < PEAK_RSS_MB, f"peak RSS {report['peak_rss_mb']:.0f} MB"
    slow = [f for f in report["files"] if f["seconds"] > FILE_TIMEOUT_S]
    assert not slow, slow[:3]


def test_export_of_a_session_exits_0_or_says_why_in_one_line(report):
    exports = report["exports"]
    assert len(exports) == EXPORTS and {e["rc"] for e in exports} <= {0, 1}, exports
    assert {e["rc"] for e in exports} == {0, 1}, exports  # both refusals and figures
    for e in exports:
        lines = [ln for ln in e["stderr"].splitlines() if ln.strip()]
        if e["rc"] == 0:
            assert e["written"], e
        else:
            assert len(lines) == 1 and lines[0].startswith("attention-explorer export: ") and _one_line(lines[0]), e


@pytest.mark.parametrize("source", ["A" * 5000, "🙂" * 81, "~nosuchuser/model", "~nosuchuser" + "A" * 300])
def test_a_model_source_the_system_cannot_look_up_is_no_folder_in_one_line(source):
    """What the fuzz found: a session's model named by a name too long for the file system
    (ENAMETOOLONG) or under the home of no user raised OSError / RuntimeError out of File ▸
    Open (Path.exists, expanduser): now it is a folder that is not there, said in one line."""
    from engine.models import ModelLoadError
    from engine.models.files import path_exists, resolve_source
    from explorer.models.source import portable_source, source_exists

    assert not path_exists(source) and not source_exists(source)
    assert portable_source(source) == source
    with pytest.raises(ModelLoadError) as err:
        resolve_source(source)
    assert err.value.reason == "no_folder" and _one_line(str(err.value)) and len(str(err.value)) < 250


def test_a_5000_character_token_is_a_label_of_32():
    """s006-unicode's 5,000-character tokens: cut once where labels are made (explorer.frame),
    not measured and elided at every draw."""
    from engine import AttentionConfig
    from explorer.frame import LABEL_CHARS, token_labels

    q, k = token_labels(AttentionConfig(seq_len=2, d_model=8, n_heads=1, tokens=["A" * 5000, "b"]))
    assert q == k == ["A" * (LABEL_CHARS - 1) + "…", "b"] and LABEL_CHARS == 32


# ============================================================================================
# the worker: one process, capped
# ============================================================================================

def _worker(folder: Path, out: Path) -> int:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    import faulthandler

    faulthandler.dump_traceback_later(WORKER_TIMEOUT_S, exit=True)
    t_import = time.perf_counter()
    sys.path.insert(0, str(ROOT))
    import threading

    import explorer
    from explorer.session import SessionError, load_session

    exceptions: list[str] = []

    def record(kind: str, exc_type, exc, tb) -> None:
        import traceback

        exceptions.append(f"{kind}: {''.join(traceback.format_exception(exc_type, exc, tb))[-1500:]}")

    sys.excepthook = lambda t, e, tb: record("slot", t, e, tb)
    threading.excepthook = lambda a: record("thread", a.exc_type, a.exc_value, a.exc_traceback)
    sys.unraisablehook = lambda u: record("unraisable", type(u.exc_value), u.exc_value, u.exc_traceback)


    app = explorer.ensure_app()
    w = explorer.create_window()
    w.resize(640, 420)
    w.show()
    app.processEvents()
    t_start = time.perf_counter()

    def settle(deadline: float, done) -> None:
        from explorer.work.base import run_events_until

        run_events_until(done, max(0.0, deadline - time.perf_counter()))

    outcome = {}
    w.frame_rendered.connect(lambda cfg: outcome.setdefault(cfg, "frame"))
    w.compute_failed.connect(lambda cfg, msg: outcome.setdefault(cfg, "refused"))
    files = []
    for p in sorted(folder.glob("*.json")):
        t0 = time.perf_counter()
        r = {"file": p.name, "kind": p.stem.split("-", 1)[1]}
        try:
            load_session(p)
            r["load"] = "loaded"
        except SessionError as exc:
            r.update(load="refused", message=str(exc))
        except BaseException as exc:  # what the fuzz looks for
            r.update(load=type(exc).__name__, message=str(exc)[:500])
        outcome.clear()
        w.banner.hide_message()
        try:
            r["opened"] = bool(w.open_session(p))
        except BaseException as exc:
            r.update(opened=False, open_error=f"{type(exc).__name__}: {exc}"[:500])
        r["banner"] = w.banner.message()
        if r["opened"]:
            deadline = t0 + FILE_TIMEOUT_S
            settle(deadline, lambda: w.config in outcome)
            r["frame"] = outcome.get(w.config, "timeout")
            r["banner"] = w.banner.message()
            snaps = w.snapshots
            settle(deadline, lambda: not w.snapshots.busy)
            for i in range(len(snaps)):
                snaps.image(i)  # what the Snapshots dock asks for: computed by its worker
            settle(deadline, lambda: all(e.image is not None or e.error for e in w.snapshots.entries))
            r.update(snapshots=len(snaps), thumbnails=sum(e.image is not None for e in snaps.entries),
                     snapshot_errors=[e.error for e in snaps.entries if e.error])
            settle(deadline, lambda: not w.model_controller.busy)  # a session's model: refused here
            r["model_banner"] = w.banner.message() if w.model_info else ""
        r["seconds"] = time.perf_counter() - t0
        files.append(r)
    w.shutdown()
    w.hide()
    w.deleteLater()
    app.processEvents()

    t_files = time.perf_counter()
    exports = _exports(folder, files)
    report = {"files": files, "exports": exports, "exceptions": exceptions, "peak_rss_mb": _status_mb("VmHWM"),
              "seconds": time.perf_counter() - t_start, "startup_s": t_start - t_import,
              "files_s": t_files - t_start, "exports_s": time.perf_counter() - t_files}
    out.write_text(json.dumps(report), encoding="utf-8")
    return 0


def _exports(folder: Path, files: list[dict]) -> list[dict]:
    """`main.py export --session F` (in this process: main.main) for EXPORTS of the files,
    half refused ones and half opened ones with snapshots."""
    import contextlib
    import io

    import main

    refused = [f for f in files if f["load"] == "refused"]
    opened = sorted((f for f in files if f["load"] == "loaded"), key=lambda f: -f.get("snapshots", 0))
    chosen = refused[:: max(1, len(refused) // (EXPORTS // 2))][: EXPORTS // 2]
    chosen += opened[: EXPORTS - len(chosen)]
    results = []
    for i, f in enumerate(chosen):
        target = folder.parent / f"export{i}"
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = main.main(["export", "--session", str(folder / f["file"]), "--out", str(target),
                            "--panel", "heads", "--width", "320"])
        results.append({"file": f["file"], "rc": rc, "stderr": err.getvalue(),
                        "written": sorted(p.name for p in target.glob("*.png")) if target.exists() else []})
    return results


def _status_mb(key: str) -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    sys.exit(_worker(Path(sys.argv[2]), Path(sys.argv[3])))
