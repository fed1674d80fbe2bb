"""Figure export: PNG/SVG/PDF of every panel from the CLI and the window, safe writing.

Headless (QT_QPA_PLATFORM=offscreen). Checks that need poppler (`pdftoppm`) or
librsvg (`rsvg-convert`) skip cleanly without them.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from argparse import Namespace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg
from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

import main
from engine import AttentionConfig
from explorer.export import ExportError, ExportOptions, render_figure, write_atomic
from explorer.export import files as ex
from explorer.export.cli import export_command

ROOT = Path(__file__).resolve().parents[1]
PANELS = ("qkv", "scores", "softmax_grad", "heads", "diagnostics", "positions", "tiling", "efficient", "decode", "qk_space")
SVG = "{http://www.w3.org/2000/svg}"


# ---- helpers ---------------------------------------------------------------------------------


def image_array(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    return a[:, : img.width(), :3].astype(np.int16)


def assert_not_blank(img: QImage, what: str) -> np.ndarray:
    assert not img.isNull(), f"{what}: not an image"
    a = image_array(img)
    colours = len(np.unique(a.reshape(-1, 3)[:: max(1, a.shape[0] * a.shape[1] // 200_000)], axis=0))
    assert a.std() > 8, f"{what}: almost uniform (std {a.std():.1f})"
    assert colours > 40, f"{what}: only {colours} colours"
    return a


def check_png(path: Path, width: int) -> np.ndarray:
    img = QImage(str(path))
    assert img.width() == width, f"{path.name}: {img.width()} px wide, asked {width}"
    assert img.height() > width // 5
    return assert_not_blank(img, path.name)


def check_svg(path: Path) -> ET.Element:
    data = path.read_bytes()
    root = ET.fromstring(data)  # parses as XML
    assert root.tag == f"{SVG}svg"
    tags = [el.tag.replace(SVG, "") for el in root.iter()]
    assert tags.count("path") + tags.count("polyline") > 10, f"{path.name}: no vector lines"
    assert tags.count("text") > 3, f"{path.name}: no text"
    texts = "".join(el.text or "" for el in root.iter(f"{SVG}text"))
    assert any(ch.isdigit() for ch in texts)
    renderer = QSvgRenderer(QByteArray(data))
    assert renderer.isValid(), f"{path.name}: QSvgRenderer refuses it"
    size = renderer.defaultSize()
    img = QImage(size.width(), size.height(), QImage.Format.Format_ARGB32)
    img.fill(Qt.GlobalColor.white)
    p = QPainter(img)
    renderer.render(p, QRectF(0, 0, size.width(), size.height()))
    p.end()
    assert_not_blank(img, f"{path.name} rendered by QSvgRenderer")
    return root


def check_pdf(path: Path, tmp: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(b"%PDF-"), f"{path.name}: not a PDF"
    assert b"/Font" in data, f"{path.name}: no text objects (not vector text)"
    if shutil.which("pdftoppm") is None:
        return
    out = tmp / f"{path.stem}_page"
    subprocess.run(["pdftoppm", "-png", "-r", "50", "-singlefile", str(path), str(out)],
                   check=True, capture_output=True, timeout=60)
    assert_not_blank(QImage(str(out) + ".png"), f"{path.name} via pdftoppm")


def cli_args(out: Path, *, panels=None, formats=None, width=640, session=None, force=False) -> Namespace:
    argv = ["export", "--out", str(out), "--width", str(width)]
    for p in panels or []:
        argv += ["--panel", p]
    for f in formats or []:
        argv += ["--format", f]
    if session:
        argv += ["--session", str(session)]
    if force:
        argv.append("--force")
    return main.build_parser().parse_args(argv)


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".") or p.suffix == ".part"]


@pytest.fixture(scope="module", autouse=True)
def _settings(tmp_path_factory, qapp):
    """Keep the window's QSettings out of the user's real settings."""
    old = os.environ.get("ATTN_EXPLORER_SETTINGS")
    os.environ["ATTN_EXPLORER_SETTINGS"] = str(tmp_path_factory.mktemp("settings") / "settings.ini")
    yield
    if old is None:
        os.environ.pop("ATTN_EXPLORER_SETTINGS", None)
    else:
        os.environ["ATTN_EXPLORER_SETTINGS"] = old


@pytest.fixture(scope="module")
def window(qapp, _settings):
    from explorer import create_window

    w = create_window()
    w.resize(1600, 1000)
    w.show()
    qapp.processEvents()
    w.render_sync()
    qapp.processEvents()
    yield w
    w.shutdown()
    w.hide()
    w.deleteLater()
    qapp.processEvents()


# ---- the command line, every panel in every format ----------------------------------------------


@pytest.mark.slow
def test_cli_every_panel_every_format_subprocess(tmp_path):
    out = tmp_path / "figs"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               ATTN_EXPLORER_SETTINGS=str(tmp_path / "settings.ini"))
    cmd = [sys.executable, str(ROOT / "main.py"), "export", "--out", str(out), "--width", "800",
           "--format", "png", "--format", "svg", "--format", "pdf"]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == "", r.stderr
    printed = r.stdout.split()
    expected = [str(out / f"{p}.{f}") for p in PANELS for f in ("png", "svg", "pdf")]
    assert sorted(printed) == sorted(expected)
    for name in PANELS:
        check_png(out / f"{name}.png", 800)
        check_svg(out / f"{name}.svg")
        check_pdf(out / f"{name}.pdf", tmp_path)
    assert leftovers(out) == []
    # vectors kept: histograms, bars, axes and text are PDF paths and fonts, not pictures
    # (only heatmaps and colour bars are images)
    for name in ("scores", "softmax_grad", "diagnostics"):
        assert (out / f"{name}.pdf").read_bytes().count(b"/Subtype /Image") == 0, name


def _longest_black_run(img: QImage) -> int:
    """The longest horizontal run of near-black pixels (every channel < 25) in `img`."""
    arr = image_array(img)  # (H, W, 3)
    black = arr.max(-1) < 25
    best = 0
    for row in black:
        edges = np.flatnonzero(np.diff(np.r_[0, row.astype(np.int8), 0]))
        if edges.size:
            best = max(best, int((edges[1::2] - edges[::2]).max()))
    return best


def test_svg_has_no_black_frames_in_qts_own_renderer(tmp_path, window):
    """Qt's QSvgRenderer (no clip paths) drew every clip path's shape with the black stroke it
    inherited: a black frame around each title and view. Light theme: nothing black runs
    longer than a few glyphs; and librsvg, where there, draws the same picture."""
    ex.export_panels(window, tmp_path, ["heads", "qkv"], ["svg"], ExportOptions(), size=(900, 600))
    for name in ("heads", "qkv"):
        r = QSvgRenderer(str(tmp_path / f"{name}.svg"))
        assert r.isValid()
        img = QImage(r.defaultSize(), QImage.Format.Format_RGB32)
        img.fill(Qt.GlobalColor.white)
        p = QPainter(img)
        r.render(p)
        p.end()
        assert_not_blank(img, f"{name}.svg via QSvgRenderer")
        assert _longest_black_run(img) < 60, name
        if shutil.which("rsvg-convert"):
            png = tmp_path / f"{name}_rsvg.png"
            subprocess.run(["rsvg-convert", "-w", str(img.width()), "-b", "white", str(tmp_path / f"{name}.svg"),
                            "-o", str(png)], check=True, timeout=60)
            other = image_array(QImage(str(png)))
            assert other.shape == image_array(img).shape
            differ = np.abs(other - image_array(img)).max(-1) > 96
            assert differ.mean() < 0.02, (name, differ.mean())


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="rsvg-convert (librsvg) not installed")
def test_svg_renders_with_librsvg(tmp_path, window):
    path = tmp_path / "scores.svg"
    ex.export_panels(window, tmp_path, ["scores"], ["svg"], ExportOptions(), size=(900, 600))
    png = tmp_path / "scores_rsvg.png"
    subprocess.run(["rsvg-convert", "-w", "900", str(path), "-o", str(png)], check=True, timeout=60)
    assert_not_blank(QImage(str(png)), "scores.svg via rsvg-convert")


@pytest.mark.slow
def test_png_width_and_content_follow_the_config(tmp_path, window, qapp):
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    ex.export_panels(window, a_dir.mkdir() or a_dir, ["heads", "scores"], ["png"], ExportOptions(width=1000))
    try:
        window.set_config(AttentionConfig(n_heads=2, seq_len=12, causal=True, seed=3))
        ex.export_panels(window, b_dir.mkdir() or b_dir, ["heads", "scores"], ["png"], ExportOptions(width=1000))
    finally:
        window.render_sync(AttentionConfig())
    for name in ("heads", "scores"):
        a = check_png(a_dir / f"{name}.png", 1000)
        b = check_png(b_dir / f"{name}.png", 1000)
        h = min(a.shape[0], b.shape[0])  # the two configs' figures may differ in height
        changed = (np.abs(a[:h] - b[:h]).max(axis=-1) > 16).mean()  # share of visibly different pixels
        assert changed > 0.02, f"{name}: same picture ({changed:.1%} of the pixels differ)"
        assert QImage(str(b_dir / f"{name}.png")).text("Description") == \
            AttentionConfig(n_heads=2, seq_len=12, causal=True, seed=3).summary()


@pytest.mark.slow
def test_width_dpi_theme_caption_options(tmp_path, window):
    panel = window.panel("heads")
    for width in (640, 3840):
        img = QImage.fromData(render_figure(panel, "png", ExportOptions(width=width), config=window.config))
        assert img.width() == width
    dpi = QImage.fromData(render_figure(panel, "png", ExportOptions(dpi=192), config=window.config))
    logical = ET.fromstring(render_figure(panel, "svg", ExportOptions())).get("width")  # the figure's layout
    assert dpi.width() == round(float(logical) * 2)
    assert abs(dpi.dotsPerMeterX() * 0.0254 - 192) < 1
    slides = image_array(QImage.fromData(render_figure(panel, "png", ExportOptions(width=800, theme="slides"))))
    screen = image_array(QImage.fromData(render_figure(panel, "png", ExportOptions(width=800, theme="screen"))))
    assert slides.mean() > screen.mean() + 40, "slides should be light, the default window is dark"
    plain = QImage.fromData(render_figure(panel, "png", ExportOptions(width=800), config=window.config))
    capt = QImage.fromData(render_figure(panel, "png", ExportOptions(width=800, caption=True), config=window.config))
    assert capt.height() > plain.height()
    svg = render_figure(panel, "svg", ExportOptions(caption=True), config=window.config).decode()
    assert window.config.summary().split("  ")[0] in svg
    with pytest.raises(ex.ExportUsageError):
        ExportOptions(width=10).validate()
    with pytest.raises(ex.ExportUsageError):
        ExportOptions(theme="neon").validate()


def test_export_restores_the_panel(window, qapp):
    panel = window.panel("scores")
    axis = next(it for it in panel.scene().items() if isinstance(it, pg.AxisItem) and it.isVisible())
    font_before = axis.style.get("tickFont")
    size_before = None if font_before is None else font_before.pointSizeF()
    theme_before = panel.theme
    before = image_array(panel.grab().toImage())
    render_figure(panel, "png", ExportOptions(width=2000, theme="slides"))
    qapp.processEvents()
    assert panel.theme is theme_before
    font_after = axis.style.get("tickFont")
    assert (None if font_after is None else font_after.pointSizeF()) == size_before
    after = image_array(panel.grab().toImage())
    assert before.shape == after.shape
    assert np.mean(np.abs(before - after) > 8) < 0.01, "the panel looks different after an export"


# ---- sessions ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_session_drives_the_export(tmp_path, qapp):
    cfg = AttentionConfig(n_heads=2, seq_len=5, causal=True, seed=7)
    session = tmp_path / "lesson.json"
    from explorer.session import save_session

    save_session(session, cfg)
    out = tmp_path / "out"
    assert export_command(cli_args(out, panels=["heads"], formats=["png", "svg"], session=session)) == 0
    assert QImage(str(out / "heads.png")).text("Description") == cfg.summary()
    root = check_svg(out / "heads.svg")
    assert root.find(f"{SVG}desc").text == cfg.summary()
    texts = " ".join(el.text or "" for el in root.iter(f"{SVG}text"))
    assert "5×5" in texts, texts[:300]


def test_bad_session_exits_1(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    assert export_command(cli_args(tmp_path / "o", session=bad)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "session" in err and "Traceback" not in err
    assert export_command(cli_args(tmp_path / "o", session=tmp_path / "missing.json")) == 1


def _broken_model(tmp_path: Path, how: str) -> Path:
    """A model folder that cannot be opened, ``how``: gone, a file, empty, a corrupt config."""
    folder = tmp_path / "model"
    if how == "file":
        folder.write_text("not a folder")
    elif how in ("empty", "corrupt"):
        folder.mkdir()
        if how == "corrupt":
            (folder / "config.json").write_text('{"model_type": "gpt2", "n_layer": ')
            (folder / "model.safetensors").write_bytes(b"\x00" * 64)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("how", ["gone", "file", "empty", "corrupt"])
def test_a_session_whose_model_is_broken_exports_its_model_free_panels(tmp_path, capsys, how):
    """Issue 46 item 11: `export --session S --panel heads` exited 1 when the session's model
    folder was gone, though heads needs no model. Now the panels that can be drawn are, one
    line says the model's are not, and the exit is 0 when every panel asked for was written."""
    import json

    session = tmp_path / "s.json"
    session.write_text(json.dumps({"format": "attention-explorer.session", "version": 1,
                                   "config": {"seq_len": 5},
                                   "model": {"source": str(_broken_model(tmp_path, how)), "text": "a b c"}}))
    out = tmp_path / "o"
    assert export_command(cli_args(out, panels=["heads"], session=session)) == 0
    err = capsys.readouterr().err
    check_png(out / "heads.png", 640)
    assert err.count("\n") == 1 and "model" in err and "not drawn" in err and "Traceback" not in err, err
    if how != "gone":
        return
    # a model panel asked for as well: the heads are drawn, the exit says what is not (1)
    assert export_command(cli_args(out, panels=["heads", "model_grid"], session=session, force=True)) == 1
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and "model_grid not written" in err and "no folder" in err, err
    assert str(out / "heads.png") in captured.out
    # only model panels: nothing can be drawn
    assert export_command(cli_args(tmp_path / "o2", panels=["model_grid"], session=session)) == 1
    assert capsys.readouterr().err.count("\n") == 1 and not (tmp_path / "o2" / "model_grid.png").exists()


# ---- safe writing --------------------------------------------------------------------------------


@pytest.mark.slow
def test_existing_file_needs_force(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "heads.png").write_bytes(b"keep me")
    assert export_command(cli_args(out, panels=["heads"])) == 1
    err = capsys.readouterr().err
    assert "--force" in err and err.count("\n") == 1
    assert (out / "heads.png").read_bytes() == b"keep me"
    assert export_command(cli_args(out, panels=["heads"], force=True)) == 0
    check_png(out / "heads.png", 640)
    assert leftovers(out) == []


@pytest.mark.slow
def test_out_is_a_file_exits_1(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert export_command(cli_args(f)) == 1
    assert "is a file" in capsys.readouterr().err
    assert export_command(cli_args(f / "sub" / "deeper")) == 1  # a parent of --out is a file
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{f} is a file, not a folder" in err  # names the file in the way


@pytest.mark.slow
def test_unwritable_folder_exits_1_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    out = tmp_path / "o"
    out.mkdir()

    def refuse(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(ex.tempfile, "mkstemp", refuse)
    assert export_command(cli_args(out, panels=["heads"], formats=["png"])) == 1
    err = capsys.readouterr().err
    assert "permission denied" in err and err.count("\n") == 1
    assert list(out.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_folder_for_real(tmp_path, window):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(ExportError, match="permission denied"):
            ex.export_widget(window.panel("heads"), ro / "heads.png", ExportOptions(width=300))
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o700)


def test_full_disk_leaves_no_partial_file(tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ex.os, "fsync", full)
    with pytest.raises(ExportError, match="disk is full"):
        write_atomic(tmp_path / "x.png", b"data" * 1000)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "y.png").write_bytes(b"old")
    with pytest.raises(ExportError, match="disk is full"):
        write_atomic(tmp_path / "y.png", b"new", force=True)
    assert (tmp_path / "y.png").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["y.png"]


def test_write_atomic_never_clobbers_without_force(tmp_path):
    p = tmp_path / "a.svg"
    write_atomic(p, b"one")
    with pytest.raises(ExportError, match="already exists"):
        write_atomic(p, b"two")
    assert p.read_bytes() == b"one"
    write_atomic(p, b"two", force=True)
    assert p.read_bytes() == b"two"
    with pytest.raises(ExportError, match="is a file"):
        write_atomic(p / "b.svg", b"x")
    assert leftovers(tmp_path) == []


# ---- bad arguments -----------------------------------------------------------------------------------


@pytest.mark.parametrize("argv, needle", [
    (["--panel", "nope"], "unknown panel"),
    (["--width", "10"], "width"),
    (["--width", "100000"], "width"),
    (["--panel", "model_grid"], "model"),
])
def test_bad_arguments_exit_2(tmp_path, capsys, argv, needle):
    args = main.build_parser().parse_args(["export", "--out", str(tmp_path / "o"), *argv])
    assert export_command(args) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_bad_arguments_subprocess_one_line(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "main.py"), "export", "--out", str(tmp_path),
                        "--format", "gif"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, str(ROOT / "main.py"), "export", "--out", str(tmp_path),
                        "--panel", "attention"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "unknown panel" in r.stderr


# ---- the pyqtgraph SVG workaround ---------------------------------------------------------------------


def test_svg_fix_handles_closed_paths(qapp):
    import xml.dom.minidom as minidom

    import pyqtgraph as pg

    from explorer.export import svg as export_svg

    doc = minidom.parseString('<g><g transform="matrix(2,0,0,2,10,20)" stroke-width="1">'
                              '<path d="M0,0 L5,0 L5,5 Z M1,1 L2,2 Z"/></g></g>')
    export_svg.fixed_correct_coordinates(doc.documentElement, [], None, {})
    d = doc.getElementsByTagName("path")[0].getAttribute("d").split()
    assert d[0] == "M10.0,20.0" and d[3] == "Z" and d[-1] == "Z" and d[4] == "M12.0,22.0"
    # and through pyqtgraph's exporter on a real scene with closed paths (view box background)
    w = pg.PlotWidget()
    w.plot([0, 1, 2], [0, 1, 0], pen=pg.mkPen("r", width=2))
    w.getViewBox().setBorder(pg.mkPen("w"))
    w.resize(300, 200)
    w.show()
    qapp.processEvents()
    text = export_svg.scene_svg(w)
    root = ET.fromstring(text.encode())
    assert any(el.tag == f"{SVG}path" and "Z" in el.get("d", "") for el in root.iter())
    if export_svg.pyqtgraph_svg_needs_fix():  # the bug is real in this pyqtgraph
        with pytest.raises(ValueError, match="unpack"):
            pg.exporters.SVGExporter(w.scene()).export(toBytes=True)
    w.close()


def test_composite_widget_keeps_labels_and_drops_controls(qapp):
    import pyqtgraph as pg
    from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

    top = QWidget()
    lay = QVBoxLayout(top)
    bar = QHBoxLayout()
    bar.addWidget(QLabel("show:"))
    bar.addWidget(QComboBox())
    lay.addLayout(bar)
    lay.addWidget(QLabel("entropy per head: 1.23 nats"))
    g = pg.GraphicsLayoutWidget()
    plot = g.addPlot(title="weights")
    plot.addItem(pg.ImageItem(np.random.default_rng(0).random((6, 6))))
    lay.addWidget(g, 1)
    top.resize(600, 400)
    top.show()
    qapp.processEvents()
    svg = render_figure(top, "svg", ExportOptions(theme="screen")).decode()
    assert "entropy per head: 1.23 nats" in svg and "weights" in svg
    assert "show:" not in svg  # a toolbar label goes with its (left out) control
    root = ET.fromstring(svg.encode())
    assert any(el.tag == f"{SVG}image" for el in root.iter())
    pdf = render_figure(top, "pdf", ExportOptions(theme="screen"))
    assert pdf.startswith(b"%PDF-")
    top.close()


# ---- the window: dialog, actions, clipboard -----------------------------------------------------------


@pytest.mark.slow
def test_window_actions_dialog_and_clipboard(tmp_path, window, qapp):
    from explorer.export.dialog import (
        WHAT_ALL,
        ExportDialog,
        copy_panel,
        install_export_actions,
        run_export,
    )

    acts = install_export_actions(window)
    assert install_export_actions(window) is acts  # idempotent
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions() if a.menu()}
    assert acts["export"] in menus["File"].actions()
    assert acts["copy"] in menus["Edit"].actions()

    dlg = ExportDialog(window)
    dlg.panel_combo.setCurrentIndex(dlg.panel_combo.findData("scores"))
    dlg.format_combo.setCurrentIndex(dlg.format_combo.findData("pdf"))
    dlg.path_edit.setText(str(tmp_path / "mine.pdf"))
    req = dlg.request()
    assert (req.what, req.panel, req.fmt) == ("panel", "scores", "pdf")
    assert run_export(window, req) == [tmp_path / "mine.pdf"]
    check_pdf(tmp_path / "mine.pdf", tmp_path)
    with pytest.raises(ExportError, match="already exists"):
        run_export(window, req, lambda existing: False)
    assert run_export(window, req, lambda existing: True) == [tmp_path / "mine.pdf"]

    dlg.what_all.setChecked(True)
    dlg.format_combo.setCurrentIndex(dlg.format_combo.findData("png"))
    dlg.width_spin.setValue(700)
    dlg.path_edit.setText(str(tmp_path / "all"))
    req = dlg.request()
    assert req.what == WHAT_ALL
    written = run_export(window, req)
    assert {p.name for p in written} == {f"{n}.png" for n in PANELS}
    for p in written:
        check_png(p, 700)
    dlg.close()

    mime = copy_panel(window, "heads")
    assert "image/svg+xml" in mime.formats()
    assert_not_blank(qapp.clipboard().image(), "clipboard image")


@pytest.mark.slow
def test_copy_of_a_panel_too_big_for_a_quick_svg_is_its_png_alone(window, qapp):
    """issue 44: Copy panel as image at S=5256 took 30–111 s, the SVG put beside the PNG
    (the position panel's S×S map: a 108 MB SVG). A panel whose SVG would be that big goes
    on the clipboard as its PNG alone; a small one keeps its SVG."""
    from engine import AttentionConfig
    from explorer.export.dialog import copy_panel
    from explorer.export.fresh import fresh_panel, svg_is_quick

    cfg = AttentionConfig(seq_len=1100, backend="flash")  # a 1100 × 1100 map: over 1M pixels
    window.render_sync(cfg)
    try:
        with fresh_panel(window, "positions", "screen", (640, 480)) as panel:
            assert not svg_is_quick(panel)
        mime = copy_panel(window, "positions")
        assert "image/svg+xml" not in mime.formats()
        assert_not_blank(qapp.clipboard().image(), "clipboard image")
    finally:
        window.render_sync(AttentionConfig())
    assert "image/svg+xml" in copy_panel(window, "scores").formats()
