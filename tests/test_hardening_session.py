"""Hostile session files (issue 19, items 3, 5 and 10): refused in one line, never read without
bound, never blocking, and no temporary files left to pile up.

Whatever could eat memory or hang runs in a subprocess under an address-space limit and a
timeout, so a regression fails the test instead of the machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine import AttentionConfig
from explorer import session as S
from explorer.session import SessionError, load_session, save_session

ROOT = Path(__file__).resolve().parents[1]
GIB = 1 << 30

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX: FIFOs and /dev/zero")


def run_limited(code: str, *, timeout: float = 60, memory: int = 3 * GIB) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter with at most `memory` bytes of address space."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung: no answer within {timeout} s")


_LOAD = """
import sys
from explorer.session import SessionError, load_session
for path in {paths!r}:
    try:
        load_session(path)
    except SessionError as exc:
        print("REFUSED", exc, flush=True)
    else:
        print("LOADED", flush=True)
"""


def _load(*paths) -> str:
    return _LOAD.format(paths=[str(p) for p in paths])


def _refusals(r: subprocess.CompletedProcess, count: int) -> list[str]:
    """The one-line refusal of each of `count` files loaded by _LOAD."""
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.strip().splitlines()
    assert len(lines) == count and all(ln.startswith("REFUSED ") for ln in lines), r.stdout + r.stderr[-2000:]
    return lines


def _refusal(r: subprocess.CompletedProcess) -> str:
    return _refusals(r, 1)[0]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_character_device_or_a_fifo_is_refused_without_reading_or_blocking(tmp_path):
    fifo = tmp_path / "s.json"
    os.mkfifo(fifo)
    zero, pipe = _refusals(run_limited(_load("/dev/zero", fifo), timeout=30, memory=2 * GIB), 2)
    assert "/dev/zero is a character device, not a session file" in zero
    assert f"{fifo} is a pipe (FIFO), not a session file" in pipe


@pytest.mark.slow
def test_a_fifo_swapped_in_after_the_check_cannot_block(tmp_path):
    """The check said 'regular file' (stat is made to lie, as a swap between stat and open
    would); opening and reading must still not wait for a writer."""
    fifo, real = tmp_path / "s.json", tmp_path / "real.json"
    os.mkfifo(fifo)
    real.write_text("{}")
    code = textwrap.dedent(f"""
        import os
        real_stat = os.stat
        os.stat = lambda p, *a, **k: real_stat({str(real)!r}) if str(p) == {str(fifo)!r} else real_stat(p, *a, **k)
    """) + _load(fifo)
    line = _refusal(run_limited(code, timeout=30, memory=2 * GIB))
    assert "pipe (FIFO), not a session file" in line


def test_a_folder_and_an_empty_path_are_refused(tmp_path):
    with pytest.raises(SessionError, match="is a folder, not a session file"):
        load_session(tmp_path)
    with pytest.raises(SessionError, match="empty"):
        load_session("")


def test_a_file_larger_than_its_size_check_said_is_still_refused(tmp_path, monkeypatch):
    """A file that grows after the size check (stat is made to report 5 bytes) is not read whole."""
    p = tmp_path / "big.json"
    p.write_text(json.dumps({"format": S.FORMAT, "version": 1, "model": {"source": "x" * 200_000}}))
    monkeypatch.setattr(S, "MAX_BYTES", 1000)
    real_stat = os.stat

    class Small:
        def __init__(self, st):
            self.st_mode, self.st_size = st.st_mode, 5

    monkeypatch.setattr(os, "stat", lambda q, *a, **k: Small(real_stat(q)) if str(q) == str(p) else real_stat(q, *a, **k))
    with pytest.raises(SessionError, match="more than 1000 bytes, too large"):
        load_session(p)


def _header(config: str = "{}", **extra: str) -> str:
    rest = "".join(f', "{k}": {v}' for k, v in extra.items())
    return f'{{"format": "attention-explorer.session", "version": 1, "config": {config}{rest}}}'


HOSTILE = [
    ("[" * 100_000, "too deeply"),
    ('{"a":' * 100_000, "too deeply"),
    (_header('{"seed": ' + "[" * 200 + "]" * 200 + "}"), "too deeply"),
    (_header('{"scale": 1' + "0" * 400 + ".0}"), "scale"),
    (_header('{"scale": 1' + "0" * 400 + "}"), "scale"),
    (_header('{"init_std": 1' + "0" * 400 + "}"), "init_std"),
    (_header('{"scale": 1e400}'), "scale"),
    (_header('{"window": 1' + "0" * 30 + "}"), "window"),
    (_header('{"seed": 2147483648}'), "seed"),
    (_header('{"seed": ' + "7" * 5000 + "}"), "too many digits"),
    (_header(selection='{"head": ' + "7" * 5000 + "}"), "too many digits"),
    (_header(selection='{"head": ' + "7" * 4000 + "}"), "selection.head"),
    (_header('{"seq_len": "abc", "tokens": ["a", "b"]}'), "seq_len"),
    (_header('{"tokens": ["a", "\\ud800"]}'), "tokens"),
    (_header(model='{"source": "m", "text": "\\udc80"}'), "model.text"),
    # issue 28: a selection that is not an object was taken as {} (the defaults)
    (_header(selection="[]"), "'selection' must be an object"),
    (_header(selection="0"), "'selection' must be an object"),
    (_header(selection="false"), "'selection' must be an object"),
]


def test_hostile_files_are_a_one_line_session_error(tmp_path):
    paths = []
    for i, (text, _reason) in enumerate(HOSTILE):
        paths.append(tmp_path / f"s{i}.json")
        paths[-1].write_text(text, encoding="utf-8")
    lines = _refusals(run_limited(_load(*paths), memory=2 * GIB), len(HOSTILE))
    for i, ((_text, reason), line) in enumerate(zip(HOSTILE, lines, strict=True)):
        assert reason in line and len(line) < 300, f"case {i}: {line}"


def test_a_deep_dict_handed_over_directly_is_refused():
    deep: dict = {}
    inner = deep
    for _ in range(100_000):
        inner["x"] = {}
        inner = inner["x"]
    with pytest.raises(SessionError, match="too deeply"):
        load_session({"format": S.FORMAT, "version": 1, "config": {"seed": deep}})
    with pytest.raises(SessionError, match=r"^invalid config in session: seed must be between 0 and 2147483647, got an integer of about 5001 digits$"):
        load_session({"format": S.FORMAT, "version": 1, "config": {"seed": 10**5000}})


# ---- leftovers of interrupted saves -----------------------------------------------------

_KILLED_SAVE = """
    import os, sys, time
    from engine import AttentionConfig
    from explorer import session as S
    def stuck(src, dst):  # killed between writing the temporary file and the rename
        print("WRITTEN", flush=True)
        time.sleep(600)
    S.os.replace = stuck
    S.save_session(sys.argv[1], AttentionConfig(seq_len=3))
"""


@pytest.mark.slow
def test_temp_files_of_killed_saves_are_removed_by_the_next_save(tmp_path):
    target = tmp_path / "s.json"
    for _ in range(2):
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_KILLED_SAVE), str(target)], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "WRITTEN"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            proc.stdout.close()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 2 and all(n.startswith(".s.json.") and n.endswith(".tmp") for n in left), left

    # others' files, and a save that may still be running (a fresh temp file), are left alone
    old = time.time() - 3600
    keep = [tmp_path / ".other.json.abcd1234.tmp", tmp_path / ".s.json.abcd1234.tmp.bak",
            tmp_path / "s.json.abcd1234.tmp", tmp_path / ".s.json.abcd12345.tmp"]
    for p in keep:
        p.write_text("x")
        os.utime(p, (old, old))
    folder = tmp_path / ".s.json.zzzz9999.tmp"
    folder.mkdir()
    os.utime(folder, (old, old))
    fresh = tmp_path / ".s.json.fresh123.tmp"
    fresh.write_text("a save in progress")
    for name in left:
        os.utime(tmp_path / name, (old, old))

    save_session(target, AttentionConfig(seq_len=4))
    remaining = sorted(p.name for p in tmp_path.iterdir())
    assert remaining == sorted(["s.json", fresh.name, folder.name, *(p.name for p in keep)])
    assert load_session(target).config.seq_len == 4


def test_a_saved_session_reads_back_at_the_limits(tmp_path):
    cfg = AttentionConfig(window=2**31 - 1, seed=2**31 - 1, tokens=("é", "中", "🙂"))
    path = save_session(tmp_path / "s.json", cfg)
    assert load_session(path).config == cfg
