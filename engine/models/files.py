"""Everything about a model folder that can be checked without running it.

Finding the folder (local path or a hub id in the local Hugging Face cache),
reading ``config.json`` as plain JSON, spotting remote code, validating the
weight files (safetensors headers are parsed by hand, so a truncated or
garbage file is refused before transformers ever touches it) and estimating
how much memory the weights will take.

Nothing here imports transformers or executes anything from the folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ModelLoadError

#: bytes per element of each safetensors dtype tag
SAFETENSORS_ITEMSIZE = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
}
_FLOAT_TAGS = {"F8_E4M3", "F8_E5M2", "F8_E8M0", "F16", "BF16", "F32", "F64"}
_MAX_HEADER = 100 * 1024 * 1024
#: the largest config.json / index / tokenizer_config.json read as JSON
_MAX_JSON_BYTES = 16 * 1024 * 1024
#: real configs nest a few levels (text_config, rope_scaling); far deeper is no config
_MAX_JSON_DEPTH = 32
#: files a download needs (no .bin when safetensors exist, no ONNX/TF/Flax copies)
DOWNLOAD_PATTERNS = [
    "*.json", "*.safetensors", "*.txt", "*.model", "tokenizer*", "vocab*", "merges*",
]
_LAYER_RE = re.compile(r"(?:^|\.)(?:layers|layer|h|blocks|block)\.(\d+)\.")


@dataclass
class WeightFile:
    path: Path
    kind: str  # "safetensors" or "bin"
    #: tensor name -> (dtype tag, number of elements); empty for .bin files
    tensors: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: tensor name -> shape; empty for .bin files
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return self.path.stat().st_size


@dataclass
class FolderInfo:
    """A model folder: its config.json, checked weight files and shipped Python files."""

    folder: Path
    config: dict
    weights: list[WeightFile]
    remote_code_files: list[str]

    @property
    def weight_kind(self) -> str:
        return self.weights[0].kind

    def weight_bytes(self, itemsize: int | None = None, n_layers: int | None = None) -> int:
        """Bytes the weights take once loaded.

        ``itemsize`` converts floating tensors to that many bytes per element
        (None keeps the stored dtype); ``n_layers`` counts only tensors of the
        first ``n_layers`` layers (plus everything not inside a layer).
        """
        total = 0
        for wf in self.weights:
            if wf.kind != "safetensors":
                total += wf.size  # a .bin holds the tensors plus a little pickle
                continue
            for name, (tag, numel) in wf.tensors.items():
                if n_layers is not None:
                    m = _LAYER_RE.search(name)
                    if m and int(m.group(1)) >= n_layers:
                        continue
                size = SAFETENSORS_ITEMSIZE[tag]
                if itemsize is not None and tag in _FLOAT_TAGS:
                    size = itemsize
                total += numel * size
        return total

    def stored_layers(self) -> int | None:
        """How many layers the safetensors weights hold (highest layer index + 1), read
        from the tensor names; None when unknown (.bin files, or no layer-indexed names)."""
        if any(wf.kind != "safetensors" for wf in self.weights):
            return None
        top = -1
        for wf in self.weights:
            for name in wf.tensors:
                m = _LAYER_RE.search(name)
                if m:
                    top = max(top, int(m.group(1)))
        return top + 1 if top >= 0 else None

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        """Every safetensors tensor name -> its shape, over all weight files."""
        out: dict[str, tuple[int, ...]] = {}
        for wf in self.weights:
            out.update(wf.shapes)
        return out


def json_depth(value) -> int:
    """Nesting depth of parsed JSON (a scalar is 0, ``[]`` is 1), without recursion."""
    depth = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth = max(depth, level)
        if depth > _MAX_JSON_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return depth


class _JsonRefused(ValueError):
    """A JSON file that is not a regular file, too large, or nested too deeply."""


def load_json_file(path: Path, *, limit: int = _MAX_JSON_BYTES):
    """Parse a small JSON file safely: a regular file only (never a FIFO or device), at most
    ``limit`` bytes read, nesting at most :data:`_MAX_JSON_DEPTH` deep.

    Raises :class:`_JsonRefused` (a ValueError) with a short reason, OSError,
    UnicodeDecodeError, or ValueError from the parser.
    """
    import stat

    with open(path, "rb", buffering=0) as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _JsonRefused("it is not a regular file")
        raw = fh.read(limit + 1)
    if len(raw) > limit:
        raise _JsonRefused(f"it is larger than {limit // (1024 * 1024)} MiB")
    try:
        value = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise _JsonRefused("it is nested too deeply") from None
    if json_depth(value) > _MAX_JSON_DEPTH:
        raise _JsonRefused("it is nested too deeply")
    return value


#: the files of a model folder transformers reads when they are there (config, tokenizer)
MODEL_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
               "special_tokens_map.json", "added_tokens.json", "vocab.txt", "vocab.json", "merges.txt",
               "tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "chat_template.jinja",
               "chat_template.json")


def file_kind(path: Path) -> str:
    """What `path` is when it is not a regular file: "a FIFO", "a folder", "a device", …"""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "a broken link" if os.path.islink(path) else "missing"
    for test, what in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a file")):
        if test(mode):
            return what
    return "not a file"


def check_regular_files(folder: Path, names=MODEL_FILES) -> None:
    """ModelLoadError naming the first of `names` that is in `folder` but is not a regular
    file (a FIFO, a device, a folder, a broken link): transformers skips such a file without
    a word (a FIFO vocab.txt made every token [UNK]) or blocks reading it. Nothing is opened."""
    bad = [n for n in names if os.path.lexists(folder / n) and not (folder / n).is_file()]
    if bad:
        raise ModelLoadError(
            f"{bad[0]} in '{folder}' is not a regular file ({file_kind(folder / bad[0])}), so it cannot "
            "be read: put the real file there.",
            reason="no_config" if bad[0].startswith(("config", "generation")) else "no_tokenizer", files=bad)


def check_readable(folder: Path) -> None:
    """ModelLoadError (reason "unreadable") naming what in `folder` this user may not read: the
    folder itself (not listable), or the first of its files that cannot be opened (its owner
    or mode; a file of a read-protected training run too). Without this an unreadable
    config.json was "not valid JSON", an unreadable folder spoke of a training_run.json it
    does not hold, and an unreadable weights file of "[Errno 13]" (issue 46, item 14). Each
    regular file is opened and closed, nothing read."""
    try:
        names = sorted(os.listdir(folder))
    except PermissionError:
        raise ModelLoadError(f"The folder '{folder}' cannot be read: permission denied (its owner "
                             "or mode does not let this user list it). Make it readable, or copy it.",
                             reason="unreadable") from None
    except OSError:
        return  # (not a folder, or gone: what reads it next says so)
    for name in names:
        path = folder / name
        try:
            if not path.is_file():
                continue
            with open(path, "rb"):
                pass
        except PermissionError:
            raise ModelLoadError(f"{name} in '{folder}' cannot be read: permission denied (its owner "
                                 "or mode does not let this user read it). Make it readable.",
                                 reason="unreadable", files=[name]) from None
        except OSError:
            continue


def looks_like_path(source: str) -> bool:
    """True when ``source`` is clearly meant as a folder, not a hub id."""
    return (
        source.startswith((".", "~", "/", "\\"))
        or "\\" in source
        or source.count("/") > 1
        or bool(re.match(r"^[A-Za-z]:", source))
    )


def _cache_hint() -> str:
    try:
        from huggingface_hub import constants

        return str(constants.HF_HUB_CACHE)
    except Exception:  # pragma: no cover - hub always ships with transformers
        return "~/.cache/huggingface/hub"


@contextlib.contextmanager
def offline_mode(enabled: bool) -> Iterator[None]:
    """Force the Hugging Face libraries offline (``HF_HUB_OFFLINE=1``) while active.

    huggingface_hub reads the variable at import time, so its cached constant
    is switched too; both are restored afterwards.
    """
    if not enabled:
        yield
        return
    old_env = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    constants = None
    old_const = None
    try:
        from huggingface_hub import constants as _c

        constants = _c
        old_const = constants.HF_HUB_OFFLINE
        constants.HF_HUB_OFFLINE = True
    except Exception:  # pragma: no cover
        pass
    try:
        yield
    finally:
        if old_env is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = old_env
        if constants is not None:
            constants.HF_HUB_OFFLINE = old_const


def path_exists(path: str | os.PathLike) -> bool:
    """Whether `path` (``~`` expanded) exists; False, never an exception, for a name the system
    cannot look up: one too long (ENAMETOOLONG), a NUL byte, ``~nosuchuser``, no permission."""
    try:
        return Path(path).expanduser().exists()
    except (OSError, ValueError, RuntimeError):  # RuntimeError: a home folder that cannot be found
        return False


def shown_source(text: str, limit: int = 200) -> str:
    """`text` for a one-line message: as it is when short, else its start and end around '…'."""
    text = " ".join(text.splitlines())
    return text if len(text) <= limit else f"{text[: limit - 41]}…{text[-40:]}"


def resolve_source(source: str | os.PathLike, *, allow_download: bool = False,
                   tqdm_class=None) -> Path:
    """Turn ``source`` into a local folder.

    A path that exists is used as is. Anything else is treated as a hub id
    (``"org/name"``) and looked up in the local Hugging Face cache; only with
    ``allow_download=True`` is the network used, and then only for the files
    in :data:`DOWNLOAD_PATTERNS`.
    """
    text = os.fspath(source).strip()
    if not text:
        raise ModelLoadError("No model given: type a folder path or a Hugging Face id.",
                             reason="no_folder")
    if path_exists(text):
        path = Path(text).expanduser()
        if not path.is_dir():
            raise ModelLoadError(
                f"'{shown_source(text)}' is a file, not a folder. Choose the folder that holds config.json "
                "and the weights.", reason="no_folder")
        return path.resolve()
    if looks_like_path(text) or not re.fullmatch(r"[\w.\-]+(/[\w.\-]+)?", text) or len(text) > 255:
        raise ModelLoadError(f"There is no folder '{shown_source(text)}'. Check the path.",
                             reason="no_folder")
    try:
        from huggingface_hub import snapshot_download
    except Exception as exc:  # pragma: no cover
        raise ModelLoadError(f"huggingface_hub is not installed: {exc}", reason="not_cached") from exc
    try:
        with offline_mode(True):
            return Path(snapshot_download(text, local_files_only=True))
    except Exception as cached_exc:
        if not allow_download:
            raise ModelLoadError(
                f"'{text}' is neither a folder nor a model in the local Hugging Face cache "
                f"({_cache_hint()}), and downloads are off. Allow downloads, or give the path "
                "of a folder that holds the model.", reason="not_cached") from cached_exc
    try:
        kwargs = {"allow_patterns": DOWNLOAD_PATTERNS}
        if tqdm_class is not None:
            kwargs["tqdm_class"] = tqdm_class
        return Path(snapshot_download(text, **kwargs))
    except Exception as exc:
        raise ModelLoadError(f"Downloading '{text}' failed: {exc}", reason="download") from exc


def read_config(folder: Path) -> dict:
    cfg_path = folder / "config.json"
    check_regular_files(folder, ("config.json",))  # a FIFO or /dev/zero is there, not missing
    if not cfg_path.is_file():
        entries = [p.name for p in folder.iterdir()] if folder.is_dir() else []
        what = "is empty" if not entries else "has no config.json"
        raise ModelLoadError(
            f"The folder '{folder}' {what}, so it is not a Hugging Face model folder "
            "(it needs config.json, the weights and the tokenizer files).", reason="no_config")
    try:
        config = load_json_file(cfg_path)
    except _JsonRefused as exc:
        raise ModelLoadError(f"config.json in '{folder}' is not a valid model config: {exc}.",
                             reason="no_config") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ModelLoadError(f"config.json in '{folder}' is not valid JSON "
                             f"({' '.join(str(exc).split())[:200]}).",
                             reason="no_config") from None
    if not isinstance(config, dict):
        raise ModelLoadError(f"config.json in '{folder}' is not a JSON object.", reason="no_config")
    return config


def remote_code_files(folder: Path, config: dict | None = None) -> list[str]:
    """The Python files this folder asks transformers to run (``auto_map`` in
    config.json or tokenizer_config.json, plus any ``*.py`` lying in the folder)."""
    names: set[str] = set()
    maps = []
    if config is None:
        with contextlib.suppress(ModelLoadError):
            config = read_config(folder)
    if config:
        maps.append(config.get("auto_map"))
    tok_cfg = folder / "tokenizer_config.json"
    if tok_cfg.is_file():
        with contextlib.suppress(Exception):
            maps.append(load_json_file(tok_cfg).get("auto_map"))
    for amap in maps:
        if not isinstance(amap, dict):
            continue
        for value in amap.values():
            refs = value if isinstance(value, list | tuple) else [value]
            for ref in refs:
                if isinstance(ref, str) and "." in ref:
                    module = ref.split("--")[-1].rsplit(".", 1)[0]
                    names.add(module.replace(".", "/") + ".py")
    names.update(p.name for p in folder.glob("*.py"))
    return sorted(names)


def read_safetensors_header(path: Path) -> dict[str, tuple[str, int]]:
    """Parse and check a safetensors header without loading any tensor: name ->
    (dtype tag, number of elements).

    Raises :class:`ModelLoadError` for a file that is empty, garbage or
    truncated (shorter than its header says).
    """
    return {name: (tag, numel) for name, (tag, numel, _shape) in _read_header(path).items()}


def _read_header(path: Path) -> dict[str, tuple[str, int, tuple[int, ...]]]:
    """name -> (dtype tag, number of elements, shape); only the header is read (its
    length, the first 8 bytes, is bounded by :data:`_MAX_HEADER`)."""
    size = path.stat().st_size
    name = path.name
    if size < 8:
        raise ModelLoadError(f"The weights file {name} is empty or truncated ({size} bytes). "
                             "Download it again.", reason="corrupt_weights", files=[name])
    with open(path, "rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        if n == 0 or n > _MAX_HEADER or n > size - 8:
            if 0 < n <= _MAX_HEADER:
                msg = (f"The weights file {name} is truncated: its header alone needs {n} bytes "
                       f"but the file has {size - 8}. Download it again.")
            else:
                msg = (f"The weights file {name} is not a valid safetensors file (it is corrupt "
                       "or something else renamed). Download it again.")
            raise ModelLoadError(msg, reason="corrupt_weights", files=[name])
        raw = fh.read(n)
    try:
        try:
            header = json.loads(raw.decode("utf-8"))
        except RecursionError:
            raise ValueError("it is nested too deeply") from None
        if not isinstance(header, dict):
            raise ValueError("header is not an object")
    except (UnicodeDecodeError, ValueError) as exc:
        raise ModelLoadError(f"The weights file {name} is corrupt: its header cannot be read "
                             f"({exc}). Download it again.", reason="corrupt_weights",
                             files=[name]) from exc
    tensors: dict[str, tuple[str, int, tuple[int, ...]]] = {}
    end = 0
    for key, info in header.items():
        if key == "__metadata__":
            continue
        try:
            tag = info["dtype"]
            shape = [int(s) for s in info["shape"]]
            start, stop = (int(x) for x in info["data_offsets"])
            itemsize = SAFETENSORS_ITEMSIZE[tag]
            if any(s < 0 for s in shape):
                raise ValueError("negative dimension")
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelLoadError(f"The weights file {name} is corrupt: tensor '{key}' has a bad "
                                 "description. Download it again.", reason="corrupt_weights",
                                 files=[name]) from exc
        numel = 1
        for s in shape:
            numel *= s
        if stop - start != numel * itemsize or start < 0:
            raise ModelLoadError(f"The weights file {name} is corrupt: tensor '{key}' does not "
                                 "have the size its shape says. Download it again.",
                                 reason="corrupt_weights", files=[name])
        tensors[key] = (tag, numel, tuple(shape))
        end = max(end, stop)
    data = size - 8 - n
    if data < end:
        raise ModelLoadError(f"The weights file {name} is truncated: it should hold {end} bytes "
                             f"of tensors but holds {data} (an interrupted download?). "
                             "Download it again.", reason="corrupt_weights", files=[name])
    if not tensors:
        raise ModelLoadError(f"The weights file {name} holds no tensors.",
                             reason="corrupt_weights", files=[name])
    return tensors


def _sharded(folder: Path, index_name: str, kind: str) -> list[WeightFile] | None:
    index = folder / index_name
    if not index.is_file():
        return None
    try:
        shards = sorted(set(load_json_file(index, limit=_MAX_HEADER)["weight_map"].values()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelLoadError(f"{index_name} is corrupt ({' '.join(str(exc).split())[:200]}).",
                             reason="corrupt_weights", files=[index_name]) from None
    missing = [s for s in shards if not (folder / s).is_file()]
    if missing:
        raise ModelLoadError(
            f"The model is split into {len(shards)} weight files but {len(missing)} are missing "
            f"({', '.join(missing[:3])}{'…' if len(missing) > 3 else ''}): the download is "
            "incomplete.", reason="no_weights", files=missing)
    return [WeightFile(folder / s, kind) for s in shards]


def find_weights(folder: Path) -> list[WeightFile]:
    """The weight files to load, safetensors preferred, each checked."""
    files = _sharded(folder, "model.safetensors.index.json", "safetensors")
    if files is None and (folder / "model.safetensors").is_file():
        files = [WeightFile(folder / "model.safetensors", "safetensors")]
    if files is None:
        files = _sharded(folder, "pytorch_model.bin.index.json", "bin")
    if files is None and (folder / "pytorch_model.bin").is_file():
        files = [WeightFile(folder / "pytorch_model.bin", "bin")]
    if files is None:
        others = sorted(p.name for p in folder.glob("*") if p.suffix in
                        {".h5", ".msgpack", ".onnx", ".gguf", ".ckpt", ".pt", ".pth"})
        extra = (f" It has {', '.join(others)}, which this app does not read."
                 if others else "")
        raise ModelLoadError(
            f"The folder '{folder}' has no weights (model.safetensors or pytorch_model.bin)."
            + extra, reason="no_weights")
    for wf in files:
        if wf.kind == "safetensors":
            header = _read_header(wf.path)
            wf.tensors = {name: (tag, numel) for name, (tag, numel, _s) in header.items()}
            wf.shapes = {name: shape for name, (_t, _n, shape) in header.items()}
        elif wf.size == 0:
            raise ModelLoadError(f"The weights file {wf.path.name} is empty. Download it again.",
                                 reason="corrupt_weights", files=[wf.path.name])
    return files


def available_memory(device: str = "cpu") -> int | None:
    """Bytes free for a new model on ``device`` (None when unknown)."""
    if device.startswith("cuda"):
        try:
            import torch

            free, _total = torch.cuda.mem_get_info(torch.device(device))
            return int(free)
        except Exception:
            return None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def job_room(free: int | None, device: str = "cpu") -> tuple[int | None, str]:
    """(bytes one circuits job may take, how to say that limit): 80 % of ``free`` (what
    :func:`available_memory` found), and on the CPU at most the engine's memory budget
    (:func:`engine.memory.memory_budget`: ``ATTN_EXPLORER_MEMORY_BUDGET``, or a share of the
    machine, its cgroup and ``ulimit -v``), like every other run. (None, "") when unknown."""
    from ..memory import format_bytes, memory_budget

    room = None if free is None else int(0.8 * free)
    said = "" if free is None else f"only {format_bytes(free)} is free"
    if str(device).startswith("cuda"):
        return room, said
    from ..config import ConfigError
    from .errors import InspectError

    try:
        budget = memory_budget()
    except ConfigError as exc:  # a malformed ATTN_EXPLORER_MEMORY_BUDGET: one line, as everywhere
        raise InspectError(str(exc)) from None
    if room is None or budget < room:
        return budget, f"the memory budget is {format_bytes(budget)} ({_budget_source(budget)})"
    return room, said


def _budget_source(budget: int) -> str:
    """Which limit :func:`engine.memory.memory_budget` took its value from, in words."""
    from ..memory import ADDRESS_SPACE_FRACTION, BUDGET_ENV, address_space_left

    if os.environ.get(BUDGET_ENV, "").strip():
        return BUDGET_ENV
    left = address_space_left()
    if left is not None and int(ADDRESS_SPACE_FRACTION * left) == budget:
        return "3/4 of what the address-space limit, ulimit -v, leaves"
    return f"a share of this machine's memory; {BUDGET_ENV} sets it"
