"""Build, check and package the Attention Explorer bundle.

    python packaging/build.py bundle      # PyInstaller one-folder bundle -> dist/attention-explorer/
    python packaging/build.py check       # run the bundle: inspect (demo model) + selftest, offscreen
    python packaging/build.py deb         # Linux: dist/attention-explorer_<version>_<arch>.deb
    python packaging/build.py deb-test    # Linux: unpack the .deb into a temp root and run its selftest
    python packaging/build.py deb-install-test   # Linux, root: apt-get install the .deb, selftest, purge
    python packaging/build.py sizes       # print (and save) bundle and installer sizes
    python packaging/build.py all         # bundle + check + deb (+ deb-test) on Linux

Run it with the project's virtual environment's Python (``make bundle`` does), after
``pip install -r packaging/requirements-build.txt``. Every step prints what it runs and
exits non-zero on failure. Windows (Inno Setup) and macOS (.dmg) use ``bundle`` and
``check`` from here and their own recipes in packaging/windows and packaging/macos.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import bundle_config as cfg  # noqa: E402

DIST = ROOT / "dist"
WORK = ROOT / "build" / "pyinstaller"
BUNDLE = DIST / cfg.APP_NAME
SPEC = HERE / "attention_explorer.spec"
SIZES = ROOT / "build" / "packaging-sizes.json"
SELFTEST_TIMEOUT = int(os.environ.get("AE_SELFTEST_TIMEOUT", "900"))
IS_WIN = sys.platform.startswith("win")
IS_MAC = sys.platform == "darwin"
# One sentence for the demo-model smoke check.
CHECK_TEXT = "The animal didn't cross the street because it was too tired."


def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    log("$ " + " ".join(str(c) for c in cmd))
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def tree_size(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return total


def mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def bundle_exe(bundle: Path = BUNDLE) -> Path:
    return bundle / (cfg.APP_NAME + (".exe" if IS_WIN else ""))


def mac_app() -> Path:
    return DIST / f"{cfg.DISPLAY_NAME}.app"


def deb_arch() -> str:
    try:
        return subprocess.run(["dpkg", "--print-architecture"], check=True, capture_output=True,
                              text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def deb_path() -> Path:
    return DIST / f"{cfg.APP_NAME}_{cfg.app_version()}_{deb_arch()}.deb"


def record_sizes(**entries: int) -> None:
    data = json.loads(SIZES.read_text()) if SIZES.exists() else {}
    data.update(entries)
    SIZES.parent.mkdir(parents=True, exist_ok=True)
    SIZES.write_text(json.dumps(data, indent=2) + "\n")


# ------------------------------------------------------------------ bundle
def build_translations() -> None:
    """Compile assets/translations/*.ts to .qm (gitignored) so every OS's bundle has them."""
    sources = sorted((ROOT / "assets" / "translations").glob("*.ts"))
    stale = [ts for ts in sources if not ts.with_suffix(".qm").exists()
             or ts.with_suffix(".qm").stat().st_mtime < ts.stat().st_mtime]
    if not stale:
        return
    scripts = Path(sys.executable).parent
    candidates = [scripts / ("pyside6-lrelease" + (".exe" if IS_WIN else "")),
                  shutil.which("pyside6-lrelease"), shutil.which("lrelease")]
    lrelease = next((str(c) for c in candidates if c and Path(c).exists()), None)
    if lrelease is None:
        sys.exit("build: cannot compile the translations: pyside6-lrelease not found "
                 "(it comes with PySide6-Essentials in the pinned environment)")
    for ts in stale:
        run([lrelease, "-silent", ts, "-qm", ts.with_suffix(".qm")])


def strip_libraries(bundle: Path) -> None:
    """Linux: strip symbol tables from torch's libraries (see bundle_config.STRIP_PATTERNS)."""
    import fnmatch

    strip = shutil.which("strip")
    if strip is None:
        log("strip not found: leaving torch's libraries unstripped (the bundle is ~90 MB larger)")
        return
    internal = bundle / "_internal"
    for path in sorted(internal.rglob("*.so*")):
        rel = path.relative_to(internal).as_posix()
        if path.is_symlink() or not any(fnmatch.fnmatch(rel, p) for p in cfg.STRIP_PATTERNS):
            continue
        before = path.stat().st_size
        run([strip, "--strip-unneeded", path])
        log(f"  stripped {rel}: {mib(before)} -> {mib(path.stat().st_size)}")


def cmd_bundle(args: argparse.Namespace) -> int:
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        sys.exit("build: PyInstaller is missing: pip install -r packaging/requirements-build.txt")
    import torch

    if "+cu" in torch.__version__ or (torch.version.cuda and not args.allow_cuda):
        sys.exit(f"build: torch {torch.__version__} is a CUDA build; the installers ship the CPU "
                 "build (pip install torch==<pinned> from the CPU index), or pass --allow-cuda")
    t0 = time.monotonic()
    build_translations()
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", args.log_level,
           "--distpath", DIST, "--workpath", WORK, SPEC]
    if args.clean:
        cmd.insert(3, "--clean")
    run(cmd, cwd=ROOT)
    if sys.platform.startswith("linux"):
        strip_libraries(BUNDLE)
    dangling = [p for p in BUNDLE.rglob("*") if p.is_symlink() and not p.exists()]
    if dangling:
        sys.exit("build: dangling symlinks in the bundle: "
                 + ", ".join(str(p.relative_to(BUNDLE)) for p in dangling[:10]))
    secs = time.monotonic() - t0
    size = tree_size(BUNDLE)
    log(f"bundle: {BUNDLE} ({mib(size)}) built in {secs:.0f} s")
    record_sizes(bundle_bytes=size, bundle_build_seconds=round(secs))
    if IS_MAC and mac_app().exists():
        record_sizes(app_bytes=tree_size(mac_app()))
    return 0


# ------------------------------------------------------------------ checks
def run_app(exe: Path, argv: list[str], home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    # Keep the checks off the user's settings and caches, and off the network.
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_CACHE_HOME": str(home / ".cache"), "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1", "APPDATA": str(home / "AppData")})
    for var in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):  # the bundle must stand alone
        env.pop(var, None)
    log("$ " + " ".join([str(exe), *argv]))
    t0 = time.monotonic()
    proc = subprocess.run([str(exe), *argv], env=env, cwd=home, capture_output=True, text=True,
                          timeout=SELFTEST_TIMEOUT)
    log(f"  exit {proc.returncode} after {time.monotonic() - t0:.1f} s")
    for name, text in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        tail = text.strip().splitlines()[-(25 if proc.returncode else 4):]
        if tail:
            print(f"  --- {name} (last {len(tail)} lines)\n  " + "\n  ".join(tail), flush=True)
    return proc


def find_bundled_model(bundle: Path) -> Path:
    for base in (bundle / "_internal", bundle, bundle.parent / "Resources",
                 bundle.parent / "Frameworks"):
        candidate = base / "assets" / "models" / cfg.DEMO_MODEL_NAME
        if (candidate / "config.json").is_file():
            return candidate
    raise FileNotFoundError(f"no bundled demo model under {bundle}")


def make_tiny_unlisted_model(dest: Path, tokenizer_from: Path) -> Path | None:
    """A 2-layer random OLMo (an architecture the spec does not analyse), or None if the
    building Python lacks transformers (checks run from the project environment have it)."""
    code = (
        "import shutil, sys, torch\n"
        "from transformers import OlmoConfig, OlmoForCausalLM\n"
        "torch.manual_seed(0)\n"
        "c = OlmoConfig(vocab_size=30522, hidden_size=32, intermediate_size=64, num_hidden_layers=2,"
        " num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0,"
        " bos_token_id=101, eos_token_id=102)\n"
        "OlmoForCausalLM(c).save_pretrained(sys.argv[1])\n"
        "for f in ('tokenizer.json', 'tokenizer_config.json', 'vocab.txt', 'special_tokens_map.json'):\n"
        "    shutil.copy(sys.argv[2] + '/' + f, sys.argv[1])\n"
    )
    try:
        subprocess.run([sys.executable, "-c", code, str(dest), str(tokenizer_from)], check=True,
                       capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        log(f"  SKIPPED lazy-architecture check: cannot make a tiny OLMo model here ({exc})")
        return None
    return dest


def check_bundle(exe: Path, bundle: Path, require_selftest: bool) -> int:
    """Run the bundled program the way a classroom would, offscreen, in a throwaway HOME."""
    if not exe.exists():
        sys.exit(f"build: {exe} does not exist; build it first (python packaging/build.py bundle)")
    failures = []
    with tempfile.TemporaryDirectory(prefix="ae-check-") as tmp:
        home = Path(tmp)
        model = find_bundled_model(bundle)
        for f in ("LICENSE", "model.safetensors", "tokenizer.json"):
            if not (model / f).is_file():
                failures.append(f"bundled model lacks {f}")
        for ts in sorted((ROOT / "assets" / "translations").glob("*.ts")):
            if not (model.parent.parent / "translations" / (ts.stem + ".qm")).is_file():
                failures.append(f"bundle lacks the compiled translation {ts.stem}.qm")
        proc = run_app(exe, ["inspect", "--model", str(model), "--text", CHECK_TEXT, "--json"], home)
        try:
            report = json.loads(proc.stdout)
            assert report["tokens"] and report["heads"], "empty report"
            log(f"  inspect OK: {len(report['tokens'])} tokens, {len(report['heads'])} heads")
        except Exception as exc:
            failures.append(f"inspect failed (exit {proc.returncode}): {exc}")

        tiny = make_tiny_unlisted_model(home / "tiny-olmo", model)
        if tiny is not None:
            # An architecture the spec does not analyse: transformers must import its
            # modeling code lazily from the bundled sources.
            proc = run_app(exe, ["inspect", "--model", str(tiny), "--text", "the cat sat", "--json"],
                           home)
            if proc.returncode != 0:
                failures.append(f"lazy transformers architecture (OLMo) failed: exit {proc.returncode}")
            else:
                log("  lazy transformers import OK (OLMo, not analysed by the spec)")

        have_selftest = (ROOT / "explorer" / "selftest.py").exists()
        if have_selftest or require_selftest:
            proc = run_app(exe, ["selftest"], home)
            if proc.returncode != 0:
                failures.append(f"selftest exited {proc.returncode}")
        else:
            log("  SKIPPED selftest: explorer/selftest.py is not in the source tree yet")
    if failures:
        for f in failures:
            log(f"FAIL: {f}")
        return 1
    log(f"check OK: {exe}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    if IS_MAC and mac_app().exists() and not args.folder:
        app = mac_app()
        return check_bundle(app / "Contents" / "MacOS" / cfg.APP_NAME, app / "Contents" / "MacOS",
                            args.require_selftest)
    return check_bundle(bundle_exe(), BUNDLE, args.require_selftest)


# ------------------------------------------------------------------ .deb
LINUX = HERE / "linux"


def _chmod_tree(root: Path) -> None:
    """Debian permissions: directories 755, files 644, executables 755."""
    for p in [root, *root.rglob("*")]:
        if p.is_symlink():
            continue
        mode = p.stat().st_mode
        if p.is_dir():
            p.chmod(0o755)
        elif mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH):
            p.chmod(0o755)
        else:
            p.chmod(0o644)


def min_glibc(folder: Path) -> str:
    """The newest GLIBC_x.y symbol version any ELF file in ``folder`` needs (objdump -T)."""
    import re

    objdump = shutil.which("objdump")
    if objdump is None:
        fallback = platform.libc_ver()[1] or "2.31"
        log(f"objdump not found: assuming the bundle needs glibc {fallback} (this machine's)")
        return fallback
    best = (2, 17)
    for p in folder.rglob("*"):
        if p.is_symlink() or not p.is_file():
            continue
        with p.open("rb") as fh:
            if fh.read(4) != b"\x7fELF":
                continue
        out = subprocess.run([objdump, "-T", str(p)], capture_output=True, text=True).stdout
        for m in re.finditer(r"GLIBC_(\d+)\.(\d+)", out):
            best = max(best, (int(m.group(1)), int(m.group(2))))
    log(f"the bundle needs glibc >= {best[0]}.{best[1]}")
    return f"{best[0]}.{best[1]}"


def cmd_deb(args: argparse.Namespace) -> int:
    if not shutil.which("dpkg-deb"):
        sys.exit("build: dpkg-deb not found (Debian/Ubuntu only)")
    if not bundle_exe().exists():
        sys.exit(f"build: {bundle_exe()} does not exist; run 'python packaging/build.py bundle'")
    version, arch = cfg.app_version(), deb_arch()
    stage = ROOT / "build" / "deb" / f"{cfg.APP_NAME}_{version}_{arch}"
    if stage.exists():
        shutil.rmtree(stage)
    opt = stage / "opt" / cfg.APP_NAME
    log(f"staging {stage}")
    shutil.copytree(BUNDLE, opt, symlinks=True)

    usr = stage / "usr"
    (usr / "bin").mkdir(parents=True)
    shutil.copy2(LINUX / "attention-explorer.sh", usr / "bin" / cfg.APP_NAME)
    (usr / "bin" / cfg.APP_NAME).chmod(0o755)
    apps = usr / "share" / "applications"
    apps.mkdir(parents=True)
    shutil.copy2(LINUX / f"{cfg.APP_NAME}.desktop", apps / f"{cfg.APP_NAME}.desktop")
    icons = ROOT / "assets" / "icons"
    hicolor = usr / "share" / "icons" / "hicolor"
    for png in sorted(icons.glob(f"{cfg.APP_NAME}-*.png")):
        size = png.stem.rsplit("-", 1)[1]
        dest = hicolor / f"{size}x{size}" / "apps"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(png, dest / f"{cfg.APP_NAME}.png")
    (hicolor / "scalable" / "apps").mkdir(parents=True)
    shutil.copy2(icons / f"{cfg.APP_NAME}.svg", hicolor / "scalable" / "apps" / f"{cfg.APP_NAME}.svg")
    metainfo = usr / "share" / "metainfo"
    metainfo.mkdir(parents=True)
    shutil.copy2(LINUX / "org.attentionexplorer.AttentionExplorer.metainfo.xml", metainfo)
    doc = usr / "share" / "doc" / cfg.APP_NAME
    doc.mkdir(parents=True)
    shutil.copy2(LINUX / "copyright", doc / "copyright")
    if (ROOT / "docs" / "teachers-guide.md").exists():
        shutil.copy2(ROOT / "docs" / "teachers-guide.md", doc / "teachers-guide.md")

    debian = stage / "DEBIAN"
    debian.mkdir()
    _chmod_tree(stage)
    installed_kib = (tree_size(stage) + 1023) // 1024
    control = (LINUX / "control.in").read_text(encoding="utf-8")
    glibc = min_glibc(opt)
    depends = ", ".join([f"libc6 (>= {glibc})", *cfg.DEB_DEPENDS])
    control = (control.replace("@VERSION@", version).replace("@ARCH@", arch)
               .replace("@INSTALLED_SIZE@", str(installed_kib))
               .replace("@DEPENDS@", depends)
               .replace("@RECOMMENDS@", ", ".join(cfg.DEB_RECOMMENDS)))
    (debian / "control").write_text(control, encoding="utf-8")
    sums = []
    for p in sorted(stage.rglob("*")):
        if p.is_file() and not p.is_symlink() and debian not in p.parents:
            sums.append(f"{hashlib.md5(p.read_bytes()).hexdigest()}  {p.relative_to(stage).as_posix()}")
    (debian / "md5sums").write_text("\n".join(sums) + "\n", encoding="utf-8")
    _chmod_tree(debian)

    out = deb_path()
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    run(["dpkg-deb", "--root-owner-group", f"-Z{args.compression}", f"-z{args.level}",
         "--build", stage, out])
    secs = time.monotonic() - t0
    size = out.stat().st_size
    log(f"deb: {out} ({mib(size)}, installs {mib(installed_kib * 1024)}) packed in {secs:.0f} s")
    record_sizes(deb_bytes=size, deb_installed_bytes=installed_kib * 1024,
                 deb_pack_seconds=round(secs), deb_file=out.name)
    run(["dpkg-deb", "--info", out])
    if not args.keep_stage:
        shutil.rmtree(stage)
    return 0


def cmd_deb_test(args: argparse.Namespace) -> int:
    """Unpack the .deb into a temporary root (dpkg -x) and run the installed launcher."""
    deb = deb_path()
    if not deb.exists():
        sys.exit(f"build: {deb} does not exist; run 'python packaging/build.py deb'")
    with tempfile.TemporaryDirectory(prefix="ae-deb-root-") as tmp:
        root = Path(tmp)
        run(["dpkg-deb", "-x", deb, root])
        launcher = root / "usr" / "bin" / cfg.APP_NAME
        desktop = root / "usr" / "share" / "applications" / f"{cfg.APP_NAME}.desktop"
        for must in (launcher, desktop, root / "opt" / cfg.APP_NAME / cfg.APP_NAME,
                     root / "usr/share/icons/hicolor/scalable/apps" / f"{cfg.APP_NAME}.svg",
                     root / "usr/share/icons/hicolor/256x256/apps" / f"{cfg.APP_NAME}.png"):
            if not must.exists():
                sys.exit(f"build: the .deb lacks {must.relative_to(root)}")
        if shutil.which("desktop-file-validate"):
            run(["desktop-file-validate", desktop])
        return check_bundle(launcher, root / "opt" / cfg.APP_NAME, args.require_selftest)


def cmd_deb_install_test(args: argparse.Namespace) -> int:
    """Install the .deb for real (root), run /usr/bin/attention-explorer selftest, remove it."""
    if os.geteuid() != 0:
        sys.exit("build: deb-install-test needs root (it installs into /opt and /usr)")
    deb = deb_path()
    if not deb.exists():
        sys.exit(f"build: {deb} does not exist; run 'python packaging/build.py deb'")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(["apt-get", "install", "-y", "--no-install-recommends", str(deb)], env=env)
    try:
        run(["dpkg", "-s", cfg.APP_NAME])
        launcher = Path("/usr/bin") / cfg.APP_NAME
        return check_bundle(launcher, Path("/opt") / cfg.APP_NAME, args.require_selftest)
    finally:
        if not args.keep_installed:
            run(["dpkg", "--purge", cfg.APP_NAME], env=env)
            if Path("/opt", cfg.APP_NAME).exists():
                log(f"WARNING: /opt/{cfg.APP_NAME} still exists after purge")


# ------------------------------------------------------------------ sizes / all
def cmd_sizes(args: argparse.Namespace) -> int:
    data = json.loads(SIZES.read_text()) if SIZES.exists() else {}
    if BUNDLE.exists():
        data["bundle_bytes"] = tree_size(BUNDLE)
        internal = BUNDLE / "_internal"
        if internal.exists():
            parts = {}
            for child in internal.iterdir():
                if child.is_symlink():
                    continue
                parts[child.name] = tree_size(child) if child.is_dir() else child.stat().st_size
            top = sorted(parts.items(), key=lambda kv: -kv[1])[:12]
            data["bundle_largest"] = {k: v for k, v in top}
    if deb_path().exists():
        data["deb_bytes"] = deb_path().stat().st_size
    for key, value in data.items():
        if isinstance(value, int) and key.endswith("_bytes"):
            print(f"{key:24s} {mib(value):>12s}")
        elif isinstance(value, dict):
            print(f"{key}:")
            for k, v in value.items():
                print(f"    {k:36s} {mib(v):>12s}")
        else:
            print(f"{key:24s} {value}")
    SIZES.parent.mkdir(parents=True, exist_ok=True)
    SIZES.write_text(json.dumps(data, indent=2) + "\n")
    return 0


def cmd_all(args: argparse.Namespace) -> int:
    steps = [cmd_bundle, cmd_check]
    if sys.platform.startswith("linux"):
        steps += [cmd_deb, cmd_deb_test]
    for step in steps:
        rc = step(args)
        if rc:
            return rc
    return cmd_sizes(args)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("command", choices=["bundle", "check", "deb", "deb-test", "deb-install-test",
                                       "sizes", "all"])
    p.add_argument("--clean", action="store_true", help="bundle: clear PyInstaller's cache first")
    p.add_argument("--log-level", default="WARN", help="bundle: PyInstaller log level")
    p.add_argument("--allow-cuda", action="store_true", help="bundle: accept a CUDA torch")
    p.add_argument("--compression", default="xz", help="deb: dpkg-deb compressor (xz)")
    p.add_argument("--level", type=int, default=int(os.environ.get("AE_DEB_LEVEL", "6")),
                   help="deb: compression level (default 6, or $AE_DEB_LEVEL)")
    p.add_argument("--keep-stage", action="store_true", help="deb: keep build/deb/<stage>")
    p.add_argument("--keep-installed", action="store_true", help="deb-install-test: do not purge")
    p.add_argument("--folder", action="store_true", help="check (macOS): the folder, not the .app")
    p.add_argument("--require-selftest", action="store_true",
                   default=os.environ.get("AE_REQUIRE_SELFTEST") == "1",
                   help="check: fail if selftest is missing (default on once explorer/selftest.py exists)")
    args = p.parse_args(argv)
    handler = {"bundle": cmd_bundle, "check": cmd_check, "deb": cmd_deb, "deb-test": cmd_deb_test,
               "deb-install-test": cmd_deb_install_test, "sizes": cmd_sizes, "all": cmd_all}
    return handler[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
