"""Words for model folders that cannot be read (issue 46, item 14): an unreadable config.json
was "not valid JSON", an unreadable folder spoke of a training_run.json it does not hold, an
unreadable weights file gave "[Errno 13]"; a pickle .bin's refusal came with two lines of a
torch warning. Each is now one line naming the file and the cause.

The tests run as root, which reads any file: the unreadable cases run in a subprocess whose
capabilities to bypass file modes are dropped (``setpriv --bounding-set``), so the modes apply
as they do to a user."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import warnings

import models_fixtures as mf
import pytest

from engine.models import ModelLoadError, load_model

SCRIPT = r"""
import json, sys
from engine.models import ModelLoadError, load_model
out = {}
for folder in sys.argv[1:]:
    try:
        load_model(folder)
        out[folder] = None
    except ModelLoadError as exc:
        out[folder] = [str(exc), exc.reason, exc.files]
    except Exception as exc:
        out[folder] = [f"{type(exc).__name__}: {exc}", "crash", []]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def llama_folder(tmp_path_factory):
    return mf.build_llama(tmp_path_factory.mktemp("llama_unreadable"))


def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to drop the file-mode bypass")
def test_unreadable_files_and_folders_are_named_in_one_line(tmp_path, llama_folder):
    weights = _copy(llama_folder, tmp_path / "weights")
    config = _copy(llama_folder, tmp_path / "config")
    folder = _copy(llama_folder, tmp_path / "folder")
    os.chmod(weights / "model.safetensors", 0)
    os.chmod(config / "config.json", 0)
    os.chmod(folder, 0)
    try:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        run = subprocess.run(["setpriv", "--bounding-set", "-dac_override,-dac_read_search",
                              sys.executable, "-c", SCRIPT, str(weights), str(config), str(folder)],
                             capture_output=True, text=True, timeout=300, env=env)
    finally:
        os.chmod(folder, 0o755)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    for path, name in ((weights, "model.safetensors"), (config, "config.json")):
        message, reason, files = got[str(path)]
        assert message == (f"{name} in '{path}' cannot be read: permission denied (its owner or mode "
                           "does not let this user read it). Make it readable.")
        assert reason == "unreadable" and files == [name]
    message, reason, _files = got[str(folder)]
    assert message.startswith(f"The folder '{folder}' cannot be read: permission denied")
    assert "training_run" not in message and reason == "unreadable"
    assert "Traceback" not in run.stderr


def test_a_pickle_bin_is_refused_in_one_line_without_a_torch_warning(tmp_path, llama_folder):
    """A plain pickle (protocol 4) saved as pytorch_model.bin: torch's weights-only unpickler
    warned "Detected pickle protocol 4 …" on stderr besides the refusal."""
    folder = _copy(llama_folder, tmp_path / "pickle")
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps({"a": 1}, protocol=4))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(ModelLoadError) as info:
            load_model(folder)
    assert len(str(info.value).splitlines()) == 1
    assert "could not be read safely" in str(info.value)
    assert [str(w.message) for w in seen] == []
