"""Sweeps as animations (issue 18): File ▸ Export animation… and `export --sweep`.

What a user gets: GIF / MP4 files with one frame per value at the width asked, read back with
imageio; no file at all after a cancel or a failure; exit codes and one-line reasons for bad
sweeps; the window as it was.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import imageio.v2 as iio2
import imageio.v3 as iio
import numpy as np
import pytest
from PIL import Image
from PySide6.QtGui import QImage

import main
from explorer.constraints import D_MODEL_MAX
from explorer.export import ExportError
from explorer.export.animation import AnimationRequest, export_animation
from explorer.export.animation_dialog import AnimationDialog, start_animation
from explorer.export.sweep import MAX_FRAMES, SweepError, parse_sweep, sweep_configs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "packaging"))
import bundle_config as cfg


def image_array(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    return a[:, : img.width(), :3].astype(np.int16)


def every_file(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.fixture(scope="module")
def win(qapp):
    from conftest import shown_window

    with shown_window(qapp) as w:
        w.render_sync()
        qapp.processEvents()
        yield w


# ---- the sweep's values -------------------------------------------------------------------------


def test_values_include_stop_and_factors():
    assert parse_sweep("d_model=32:128:32").values == (32, 64, 96, 128)
    assert parse_sweep("scale=0.1:0.5:0.1").values == (0.1, 0.2, 0.3, 0.4, 0.5)
    assert parse_sweep("head_dim=8:512:x2").values == (8, 16, 32, 64, 128, 256, 512)
    assert parse_sweep("seq_len=32:8:-8").values == (32, 24, 16, 8)
    from engine import AttentionConfig

    configs = sweep_configs(AttentionConfig(n_heads=4), parse_sweep("head_dim=8:32:x2"))
    assert [c.d_model for c in configs] == [32, 64, 128] and {c.head_dim for c in configs} == {8, 16, 32}
    assert parse_sweep("d_model=32:64:32").label(64) == "d_model = 64"


def test_a_head_count_sweep_keeps_the_counts_that_divide():
    """`--sweep n_kv_heads=8:1:-1` failed at 7 (KV heads must divide the query heads): it
    sweeps the divisors; a sweep left with one value says why."""
    from engine import AttentionConfig
    from explorer.export.sweep import fit_to

    spec = fit_to(AttentionConfig(n_heads=8), parse_sweep("n_kv_heads=8:1:-1"))
    assert spec.values == (8, 4, 2, 1)
    configs = sweep_configs(AttentionConfig(n_heads=8), spec)
    assert [c.kv_heads for c in configs] == [8, 4, 2, 1]
    assert fit_to(AttentionConfig(n_kv_heads=2), parse_sweep("n_heads=1:8:1")).values == (2, 4, 6, 8)
    with pytest.raises(SweepError, match="1 of its values divide n_heads = 4; a sweep needs two"):
        fit_to(AttentionConfig(), parse_sweep("n_kv_heads=3:4:1"))
    assert fit_to(AttentionConfig(), parse_sweep("seed=0:2:1")).values == (0, 1, 2)


@pytest.mark.parametrize("text, words", [
    ("nope=1:2:1", "cannot sweep 'nope'"),
    ("d_model=8:64:0", "STEP of the d_model sweep must not be 0"),
    ("d_model=8:64:-8", "walks away from STOP"),
    (f"seq_len=1:{MAX_FRAMES + 10}:1", f"at most {MAX_FRAMES}"),
    ("d_model=32:48:0.5", "whole numbers"),
    ("d_model=32:64", "three numbers"),
    ("d_model=66:70:2", "d_model = 66: n_heads must divide d_model"),
    (f"d_model={D_MODEL_MAX // 2}:{D_MODEL_MAX * 2}:{D_MODEL_MAX // 2}",
     f"d_model = {D_MODEL_MAX * 3 // 2} is outside the range"),
    ("scale=0.5:0.5:0.1", "a sweep needs two or more"),
])
def test_bad_sweeps_say_why(text, words):
    from engine import AttentionConfig

    with pytest.raises(SweepError) as err:
        sweep_configs(AttentionConfig(), parse_sweep(text))
    msg = str(err.value)
    assert words in msg and "\n" not in msg


# ---- files ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_gif_of_four_values_at_the_width_asked(win, tmp_path):
    req = AnimationRequest(parse_sweep("d_model=32:128:32"), ("heads",), "gif", tmp_path, width=640)
    written = export_animation(win, req)
    assert written == [tmp_path / "heads-d_model.gif"]
    frames = iio.imread(written[0], index=None)  # (n, H, W, 3)
    assert frames.shape[0] == 4 and frames.shape[2] == 640
    for i in range(3):  # each value draws a different picture
        assert np.mean(np.abs(frames[i].astype(int) - frames[i + 1]) > 16) > 0.01, (i, i + 1)
    assert every_file(tmp_path) == ["heads-d_model.gif"]  # no temporary file left
    # the caption strip differs where the value is written (bottom left), like every frame
    strip = frames[:, -frames.shape[1] // 20:, : 640 // 4]
    assert not np.array_equal(strip[0], strip[1])


@pytest.mark.slow
def test_mp4_reads_back_with_one_frame_per_value_and_even_sides(win, tmp_path):
    req = AnimationRequest(parse_sweep("scale=0.1:0.3:0.1"), ("heads", "scores"), "mp4", tmp_path, width=641)
    written = export_animation(win, req)
    assert sorted(p.name for p in written) == ["heads-scale.mp4", "scores-scale.mp4"]
    for p in written:
        reader = iio2.get_reader(p, format="FFMPEG")
        try:
            assert reader.count_frames() == 3
            w, h = reader.get_meta_data()["size"]
            assert w == 642 and w % 2 == 0 and h % 2 == 0  # padded for yuv420p
        finally:
            reader.close()


def test_the_window_is_left_unchanged(win, qapp, tmp_path):
    before_cfg, before_sel = win.config, win.selection.as_dict()
    before = image_array(win.grab().toImage())
    export_animation(win, AnimationRequest(parse_sweep("n_heads=1:4:x2"), ("heads", "diagnostics"), "gif",
                                           tmp_path, width=320))
    qapp.processEvents()
    after = image_array(win.grab().toImage())
    assert win.config == before_cfg and win.selection.as_dict() == before_sel
    assert before.shape == after.shape
    assert np.mean(np.abs(before - after) > 8) < 0.002, "the window looks different after an animation export"


def test_cancel_in_the_window_leaves_no_file(win, qapp, tmp_path):
    req = AnimationRequest(parse_sweep("seq_len=8:64:8"), ("heads", "scores"), "gif", tmp_path, width=480)
    progress = start_animation(win, req)
    assert progress.isVisible() and progress.bar.maximum() == 16
    while progress.running and progress.job.done < 3:
        qapp.processEvents()  # the event loop drives it: the window keeps answering
    assert progress.bar.value() >= 3
    assert any(n.endswith(".part.gif") for n in every_file(tmp_path))  # written to temporaries
    progress.cancel_button.click()
    qapp.processEvents()
    assert not progress.running and progress.cancelled
    assert every_file(tmp_path) == []
    assert "nothing was written" in win.statusBar().currentMessage()


def test_a_failure_leaves_no_file_and_says_so(win, qapp, tmp_path, monkeypatch):
    import explorer.export.animation as anim

    def broken(self):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(anim.Encoder, "close", broken)
    req = AnimationRequest(parse_sweep("d_model=32:64:32"), ("heads", "qkv"), "gif", tmp_path, width=320)
    with pytest.raises(ExportError) as err:
        export_animation(win, req)
    assert "No space left" in str(err.value)
    assert every_file(tmp_path) == []
    progress = start_animation(win, req)
    while progress.running:
        qapp.processEvents()
    assert progress.error and every_file(tmp_path) == []
    assert "The animation was not written" in win.banner.message()


def test_dialog_lists_the_values_or_the_reason(win, qapp, tmp_path):
    dlg = AnimationDialog(win)
    dlg.folder_edit.setText(str(tmp_path))
    dlg.field_combo.setCurrentIndex(dlg.field_combo.findData("d_model"))
    dlg.start_edit.setText("32"), dlg.stop_edit.setText("128"), dlg.step_edit.setText("32")
    assert dlg.values_label.text().startswith("4 frames: 32, 64, 96, 128") and dlg.export_button.isEnabled()
    assert dlg.files_label.text() == "heads-d_model.gif"
    dlg.step_edit.setText("0")
    assert "must not be 0" in dlg.values_label.text() and not dlg.export_button.isEnabled()
    dlg.start_edit.setText("66"), dlg.stop_edit.setText("70"), dlg.step_edit.setText("2")
    assert "d_model = 66" in dlg.values_label.text() and not dlg.export_button.isEnabled()
    dlg.deleteLater()


# ---- command line ------------------------------------------------------------------------------


@pytest.mark.parametrize("argv, words", [
    (["--sweep", "heads_x=1:2:1"], "cannot sweep 'heads_x'"),
    (["--sweep", "d_model=16:64:0"], "must not be 0"),
    (["--sweep", "seed=0:500:1"], "at most"),
    (["--sweep", "d_model=66:70:2"], "d_model = 66"),
    (["--sweep", "d_model=32:64:32", "--format", "png"], "an animation is gif or mp4"),
    (["--format", "gif"], "add --sweep"),
    (["--sweep", "d_model=32:64:32", "--panel", "model_grid"], "loaded model"),
    (["--sweep", "d_model=32:64:32", "--fps", "0"], "--fps"),
    (["--sweep", "n_kv_heads=5:7:1"], "0 of its values divide n_heads = 4"),
])
def test_cli_bad_sweeps_exit_2_with_one_line(argv, words, tmp_path, capsys):
    rc = main.main(["export", "--out", str(tmp_path / "o"), *argv])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert words in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_cli_writes_one_gif_per_panel(tmp_path, capsys, qapp):
    out = tmp_path / "o"
    rc = main.main(["export", "--out", str(out), "--sweep", "scale=0.5:1:0.5", "--panel", "heads",
                    "--width", "320"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert captured.out.split() == [str(out / "heads-scale.gif")]
    assert iio.imread(out / "heads-scale.gif", index=None).shape[:3][::2] == (2, 320)
    rc = main.main(["export", "--out", str(out), "--sweep", "scale=0.5:1:0.5", "--panel", "heads"])
    assert rc == 1 and "already exists" in capsys.readouterr().err


def _export_with_file_size_limit(out: Path, fmt: str, limit: int, *extra: str):
    """`export --sweep` in a child whose files may not grow past `limit` bytes (RLIMIT_FSIZE, as a
    full disk would stop them; SIGXFSZ ignored so a write fails with EFBIG instead of killing)."""
    import resource
    import signal
    import subprocess

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATTN_EXPLORER_SETTINGS=str(out.parent / "s.ini"))
    return subprocess.run([sys.executable, str(Path(main.__file__)), "export", "--out", str(out), "--sweep",
                           "seed=0:3:1", "--panel", "heads", "--format", fmt, "--width", "640", *extra],
                          preexec_fn=limited, env=env, capture_output=True, text=True, timeout=240)


@pytest.mark.slow
def test_a_film_cut_short_by_a_full_disk_is_never_published(win, tmp_path):
    """issue 28: ffmpeg's failed write left a truncated MP4 ("moov atom not found") published with
    exit 0, replacing a good film under --force; a GIF's failure printed a 20-line traceback."""
    out = tmp_path / "o"
    good = export_animation(win, AnimationRequest(parse_sweep("seed=0:3:1"), ("heads",), "mp4", out, width=640))
    before = good[0].read_bytes()
    r = _export_with_file_size_limit(out, "mp4", 30_000, "--force")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout == "" and r.stderr.count("\n") == 1 and "not written completely" in r.stderr, r.stderr
    assert good[0].read_bytes() == before, "the good film was replaced"
    assert every_file(out) == ["heads-seed.mp4"], "a temporary file was left"
    r = _export_with_file_size_limit(out, "gif", 30_000)
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert "cannot write the GIF" in r.stderr and "Traceback" not in r.stderr and "ignored" not in r.stderr
    assert every_file(out) == ["heads-seed.mp4"]


_MEASURED = """
import json, resource, sys
limit = int(sys.argv[1])
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import main
rc = main.main(["export", *sys.argv[2:]])
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
print(json.dumps({"rc": rc, "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "vmpeak": int(status["VmPeak"].split()[0]) * 1024}))
"""


def _export_measured(out: Path, width: int, frames: int, limit: int = 0) -> dict:
    """`export --sweep seed=0:N:1 --panel heads` (GIF) in a child, under RLIMIT_AS = `limit`
    when given; its exit code, peak RSS and peak address space."""
    import json
    import subprocess

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATTN_EXPLORER_SETTINGS=str(out.parent / "s.ini"))
    r = subprocess.run([sys.executable, "-c", _MEASURED, str(limit), "--out", str(out), "--sweep",
                        f"seed=0:{frames - 1}:1", "--panel", "heads", "--width", str(width)],
                       cwd=Path(main.__file__).parent, env=env, capture_output=True, text=True, timeout=300)
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    assert r.returncode == 0 and lines, (r.returncode, r.stdout[-500:], r.stderr[-2000:])
    return json.loads(lines[-1])


@pytest.mark.slow
def test_a_long_gif_holds_a_few_frames_not_all_of_them(tmp_path):
    """issue 28, item 7: `--sweep seed=0:119:1 --width 2500` was estimated at 1.47 GiB and
    peaked at 5.0 GB (Pillow wrote the GIF from every frame, 2.7 frames' bytes each). Frames are
    now streamed to the encoder: 24 frames at 2000 px stay within `film_bytes` (~10 frames)
    over the same sweep at 320 px, under an address-space cap the old code ran out of."""
    from explorer.export.animation import film_bytes

    frames = 24
    small = _export_measured(tmp_path / "a", 320, frames)
    cap = small["vmpeak"] + 384 * 1024**2  # all 24 frames at 2000 px took over 500 MB more
    big = _export_measured(tmp_path / "b", 2000, frames, limit=cap)
    assert big["rc"] == 0, big
    with Image.open(tmp_path / "b" / "heads-seed.gif") as im:
        assert im.n_frames == frames
        w, h = im.size
    grew = big["maxrss"] - small["maxrss"]
    held = film_bytes(w * h * 3, 1)
    assert grew <= held, f"peak RSS grew {grew / 2**20:.0f} MB, the estimate says {held / 2**20:.0f} MB"
    assert film_bytes(w * h * 3, 1) < 12 * w * h * 3  # a few frames, whatever the film's length


def test_the_memory_cap_counts_panels_and_width_not_frames(win, tmp_path):
    from explorer.export.animation import AnimationJob

    long_one = AnimationRequest(parse_sweep("seed=0:119:1"), ("heads",), "gif", tmp_path, width=2500)
    AnimationJob(win, long_one)  # 120 frames at 2500 px: accepted, its frames are not all held
    AnimationJob(win, AnimationRequest(parse_sweep("seed=0:119:1"), ("heads",), "mp4", tmp_path, width=8192))
    wide = AnimationRequest(parse_sweep("seed=0:1:1"), ("heads", "scores", "qkv"), "mp4", tmp_path, width=8192)
    with pytest.raises(SweepError, match=r"3 panels at 8192 px would hold about \d+\.\d GiB while writing"):
        AnimationJob(win, wide)
    assert every_file(tmp_path) == []


def test_a_gif_streamed_reads_back_frame_by_frame():
    """explorer.export.gif: every frame given is a frame read back, unchanged ones included,
    each close to its own quantisation."""
    import io

    from PIL import ImageSequence

    from explorer.export.gif import GifStream

    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (60, 80, 3)).astype(np.uint8)
    given = []
    for i in range(5):
        f = base.copy()
        if i:
            f[10 + i:20 + i, 5:30] = (255, 0, 40 * i)
        given.append(f)
    given.append(given[-1].copy())  # nothing changes: still a frame
    buf = io.BytesIO()
    gif = GifStream(buf, 250)
    for f in given:
        gif.add(f)
    gif.close()
    buf.seek(0)
    with Image.open(buf) as im:
        back = [np.asarray(x.convert("RGB")).astype(int) for x in ImageSequence.Iterator(im)]
        assert im.info["duration"] == 250 and im.info["loop"] == 0
    assert len(back) == len(given)
    for i, (f, b) in enumerate(zip(given, back)):
        own = np.asarray(Image.fromarray(f).convert("P", palette=Image.Palette.ADAPTIVE).convert("RGB"))
        assert np.abs(b - f).mean() <= np.abs(own.astype(int) - f).mean() + 1.5
        if i:  # the block that moved is where it is now
            j = min(i, 4)
            assert np.abs(b[10 + j:20 + j, 5:30] - f[10 + j:20 + j, 5:30]).max() < 8


# ---- packaging -----------------------------------------------------------------------------------


def test_the_bundle_takes_the_encoders():
    import imageio_ffmpeg

    spec = (Path(cfg.__file__).parent / "attention_explorer.spec").read_text(encoding="utf-8")
    assert "cfg.ANIMATION_PLUGINS" in spec and "collect_data_files(cfg.FFMPEG_PACKAGE" in spec
    for module in ("imageio", "imageio_ffmpeg", "PIL"):
        assert not any(module == ex or module.startswith(ex + ".") for ex in cfg.EXCLUDES), module
    exe = Path(imageio_ffmpeg.get_ffmpeg_exe())
    assert exe.parent.name == cfg.FFMPEG_SUBDIR and os.access(exe, os.X_OK)  # what the spec collects
    lock = (Path(cfg.__file__).parent.parent / "requirements.lock").read_text()
    for dist in ("imageio==", "imageio-ffmpeg==", "pillow=="):
        assert dist in lock
