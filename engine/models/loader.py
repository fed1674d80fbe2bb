"""Loading a Hugging Face model safely and offline, and running it with capture.

:func:`load_model` checks everything it can before any weight is read (folder,
config.json, remote code, attention heads, weight files, memory), then loads
with transformers using :mod:`engine.models.capture`'s eager attention
implementation, and finally runs a short probe text to make sure every layer
really hands over its attention.
"""

from __future__ import annotations

import contextlib
import inspect as _inspect
import os
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from ..memory import format_bytes
from .capture import IMPLEMENTATION, StopForward, capturing, register
from .errors import InspectError, ModelLoadError, is_whole, one_line_reason
from .files import (
    FolderInfo,
    available_memory,
    check_regular_files,
    find_weights,
    offline_mode,
    path_exists,
    read_config,
    remote_code_files,
    resolve_source,
)
from .trace import DeletionResult, ModelTrace, deletion_change

PROBE_TEXT = "The cat sat on the mat."
_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# keys a base model may legitimately lack in a checkpoint (buffers, heads, pooler)
_MISSING_OK = ("pooler", "position_ids", "inv_freq", "masked_bias", "attn.bias", "lm_head",
               "token_type_ids")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.txt", "vocab.json",
                    "spiece.model", "sentencepiece.bpe.model", "tokenizer_config.json")
#: layers the config may claim when the weights' names do not tell how many they hold
#: (the largest models have a few hundred; building a skeleton of 10**5 takes minutes)
_MAX_UNCHECKED_LAYERS = 2048
# room for activations and the Python/torch runtime on top of the weights
_OVERHEAD_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class ModelSummary:
    """What the window and the CLI show about a loaded model."""

    model_type: str
    architecture: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    hidden_size: int
    max_length: int
    causal: bool
    n_params: int
    dtype: str
    device: str
    memory_bytes: int

    @property
    def is_decoder(self) -> bool:
        return self.causal

    @property
    def kv_group(self) -> int:
        return self.n_heads // self.n_kv_heads

    def to_dict(self) -> dict:
        return asdict(self)


_GENERIC_NAMES = {"model", "models", "checkpoint", "weights", "hf", "final", "main"}


def display_name(source: str, folder: Path) -> str:
    """A short name for titles: the hub id, ``org/name`` of a cache snapshot, or
    the folder name (with its parent when the name alone says nothing)."""
    parts = folder.parts
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        return parts[-3][len("models--"):].replace("--", "/")
    if not path_exists(source):
        return source
    if folder.name.lower() in _GENERIC_NAMES and folder.parent.name:
        return f"{folder.parent.name}/{folder.name}"
    return folder.name


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence transformers' progress bars and load reports (a GUI shows its own)."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


def _check_remote_code(folder: Path, config: dict, trust_remote_code: bool) -> list[str]:
    """Refuse a model that needs its own Python code unless trusted; return notices."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    files = remote_code_files(folder, config)
    model_type = config.get("model_type")
    known = isinstance(model_type, str) and model_type in CONFIG_MAPPING
    has_map = isinstance(config.get("auto_map"), dict)
    if not known:
        if has_map or files:
            if not trust_remote_code:
                names = ", ".join(files) or "the code named in auto_map"
                raise ModelLoadError(
                    f"This model needs its own Python code ({names}), which would run on your "
                    "computer. Attention Explorer does not run a model's code unless you "
                    "explicitly trust it: read those files first, then allow remote code.",
                    reason="remote_code", files=files)
            return [f"Remote code trusted and run: {', '.join(files)}."]
        if model_type is None or model_type == "":
            raise ModelLoadError(
                f"config.json in '{folder}' has no model_type, so this does not look like a "
                "Hugging Face model folder (a model's config.json names its architecture, "
                "e.g. \"model_type\": \"bert\").", reason="no_config")
        if not isinstance(model_type, str):
            raise ModelLoadError(
                f"config.json in '{folder}' is not a valid model config: its model_type is "
                f"not a name but {type(model_type).__name__}.", reason="no_config")
        import transformers

        raise ModelLoadError(
            f"transformers {transformers.__version__} does not know model type "
            f"'{model_type[:80]}', so the model cannot be built. A newer transformers may "
            "support it.", reason="unsupported")
    if files and not trust_remote_code:
        return [f"The folder also ships Python code ({', '.join(files)}); it was NOT run: "
                f"transformers' own '{model_type}' implementation is used."]
    if files:
        return [f"Remote code allowed: transformers may have run {', '.join(files)}."]
    return []


def _weight_names(info: FolderInfo) -> str:
    names = [wf.path.name for wf in info.weights]
    return ", ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")


def _positive_int(cfg, name: str) -> int | None:
    """The config attribute ``name`` as an int; None when absent or None; ModelLoadError
    when it is not a whole number >= 0."""
    value = getattr(cfg, name, None)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        shown = repr(value) if len(repr(value)) <= 40 else type(value).__name__
        raise ModelLoadError(
            f"config.json is not a valid model config: {name} must be a whole number, "
            f"not {shown}.", reason="bad_config", files=["config.json"])
    return value


def _check_shape_fields(cfg, raw_config: dict) -> None:
    """Refuse sizes in config.json that no model can have, naming the field (before
    transformers builds anything and blames something else)."""
    heads = _positive_int(cfg, "num_attention_heads")
    hidden = _positive_int(cfg, "hidden_size")
    kv = _positive_int(cfg, "num_key_value_heads")
    _positive_int(cfg, "num_hidden_layers")
    # a head_dim of its own (given, or a class default unrelated to hidden_size) needs no split
    head_dim = getattr(cfg, "head_dim", None)
    own_head_dim = raw_config.get("head_dim") is not None or (
        isinstance(head_dim, int) and bool(heads) and head_dim != (hidden or 0) // heads)
    if heads and hidden and not own_head_dim and hidden % heads:
        raise ModelLoadError(
            f"config.json is not a valid model config: its num_attention_heads ({heads}) does "
            f"not divide hidden_size ({hidden}), so the heads cannot split the width evenly. "
            "The config was edited or is corrupt.", reason="bad_config", files=["config.json"])
    if heads and kv and heads % kv:
        raise ModelLoadError(
            f"config.json is not a valid model config: its num_key_value_heads ({kv}) does not "
            f"divide num_attention_heads ({heads}). The config was edited or is corrupt.",
            reason="bad_config", files=["config.json"])


def _check_against_weights(cfg, info: FolderInfo, trust_remote_code: bool,
                           itemsize: int | None) -> int:
    """Build the model ``cfg`` describes on the meta device (shapes only, no memory) and
    compare it with the safetensors headers: a tensor found under the same name must have
    the same shape. Returns the bytes its parameters and buffers will take (0 when unknown).

    Raises ModelLoadError (``bad_config``) when the config cannot be built or disagrees
    with the weights; quantized checkpoints (packed shapes) are not compared.
    """
    from transformers import AutoModel

    try:
        with torch.device("meta"):
            skeleton = AutoModel.from_config(cfg, attn_implementation="eager",
                                             trust_remote_code=trust_remote_code)
    except Exception as exc:
        if "meta" in str(exc).lower():
            return 0  # this architecture needs real tensors to be built: from_pretrained checks
        raise ModelLoadError(
            f"config.json describes a model that cannot be built: {one_line_reason(exc)}",
            reason="bad_config", files=["config.json"]) from exc
    state = skeleton.state_dict()
    built = sum(t.numel() * (itemsize if itemsize and t.is_floating_point() else t.element_size())
                for t in state.values())
    stored = info.tensor_shapes()
    if not stored or getattr(cfg, "quantization_config", None):
        return built
    prefix = str(getattr(skeleton, "base_model_prefix", "") or "")
    for name, t in state.items():
        candidates = [name]
        if prefix:
            candidates.append(f"{prefix}.{name}")
            if name.startswith(prefix + "."):
                candidates.append(name[len(prefix) + 1:])
        found = next((c for c in candidates if c in stored), None)
        if found is None or tuple(stored[found]) == tuple(t.shape):
            continue
        raise ModelLoadError(
            f"config.json does not match the weights: by the config, {name} should have "
            f"shape {tuple(t.shape)}, but in {_weight_names(info)} it has "
            f"{tuple(stored[found])}. The config was edited or belongs to another model.",
            reason="bad_config", files=["config.json"])
    return built


def default_device() -> str:
    """``"cuda"`` when torch sees a GPU, else ``"cpu"``."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def model_code_files(source: str | os.PathLike) -> list[str]:
    """The Python files a model folder (or cached hub id) would run with
    ``trust_remote_code=True``, for the opt-in dialog. Never downloads, never
    runs anything. Raises :class:`ModelLoadError` when the source is not found."""
    with offline_mode(True):
        folder = resolve_source(source, allow_download=False)
    return remote_code_files(folder)


def _resolve_dtype(dtype: str | torch.dtype, device: str):
    if isinstance(dtype, torch.dtype):
        return dtype, torch.tensor([], dtype=dtype).element_size()
    if dtype == "auto":
        return "auto", None
    if dtype not in _DTYPES:
        raise ModelLoadError(f"dtype must be one of {', '.join(_DTYPES)} or 'auto', not {dtype!r}.",
                             reason="unsupported")
    td = _DTYPES[dtype]
    return td, torch.tensor([], dtype=td).element_size()


def load_model(
    source: str | os.PathLike,
    *,
    device: str = "cpu",
    allow_download: bool = False,
    trust_remote_code: bool = False,
    dtype: str | torch.dtype = "float32",
    n_layers: int | None = None,
    memory_limit: int | None = None,
    tqdm_class=None,
    check: Callable[[], None] | None = None,
) -> LoadedModel:
    """Load a Hugging Face model for inspection.

    ``source``: a local folder, or a hub id already in the local HF cache
    (downloaded only with ``allow_download=True``; ``tqdm_class`` then gets
    the hub's progress). ``device``: ``"cpu"``, ``"cuda"``/``"cuda:N"``, or
    ``"auto"`` (spread over GPUs and CPU; needs ``accelerate``). ``dtype``:
    weights dtype (``"auto"`` keeps the checkpoint's). ``n_layers``: load only
    the first n layers (less memory; only those can be inspected).
    ``memory_limit``: bytes allowed for the weights (default: what the device
    has free). Every refusal raises :class:`ModelLoadError`; the model's own
    Python code never runs unless ``trust_remote_code=True``.

    A download can be cancelled by raising from the ``tqdm_class``'s
    ``update``; a load by raising from ``check()``, which is called between its
    steps (config, the meta-device build, transformers' ``from_pretrained``, the
    tokenizer) and inside the opening check's forward passes (:mod:`.cancel`). Loading briefly switches process-wide state (HF offline flag,
    transformers' log level), so load one model at a time.
    """
    with offline_mode(not allow_download):
        _check_readable(source)
        _recover_training_run(source)
        folder = resolve_source(source, allow_download=allow_download, tqdm_class=tqdm_class)
        check = check or _no_check
        check()
        if _is_training_run(folder):  # a run saved by the training lab (engine.training)
            return _load_training_run(folder, source=os.fspath(source), device=device, check=check)
        raw_config = read_config(folder)
        notices = _check_remote_code(folder, raw_config, trust_remote_code)
        with _quiet():
            return _load(folder, raw_config, notices, source=os.fspath(source), device=device,
                         trust_remote_code=trust_remote_code, dtype=dtype, n_layers=n_layers,
                         memory_limit=memory_limit, check=check)


def _no_check() -> None:
    """A load that is not cancelled."""


def _check_readable(source: str | os.PathLike) -> None:
    """A local folder this user may not read is named before anything reads it
    (:func:`.files.check_readable`)."""
    from .files import check_readable, path_exists

    try:
        text = os.fspath(source).strip()
    except TypeError:
        return
    if text and path_exists(text) and Path(text).expanduser().is_dir():
        check_readable(Path(text).expanduser())


def _recover_training_run(source: str | os.PathLike) -> None:
    """A training-lab run whose save was killed midway is put back under its name first
    (:func:`engine.training.run_folder.recover_run`; a no-op for anything else)."""
    from ..training.run_folder import recover_run

    try:
        text = os.fspath(source).strip()
    except TypeError:
        return
    if text:
        recover_run(text)


def _is_training_run(folder: Path) -> bool:
    from ..training.run_folder import is_training_run

    return is_training_run(folder)


def _load_training_run(folder: Path, *, source: str, device: str,
                       check: Callable[[], None] | None = None) -> LoadedModel:
    """A training-lab run: its own tiny transformer (attention through :mod:`.capture` like a
    transformers model) and a tokenizer of the task's symbols."""
    from ..config import ConfigError
    from ..training.run_folder import RunFolderError
    from .training_run import open_for_inspection

    try:
        model, tokenizer, notices = open_for_inspection(folder)
    except (RunFolderError, ConfigError) as exc:
        raise ModelLoadError(f"This training run cannot be opened: {exc}", reason="corrupt_weights") from exc
    if device not in ("cpu", "auto") and not (device.startswith("cuda") and torch.cuda.is_available()):
        raise ModelLoadError(f"A training run opens on 'cpu' or a CUDA GPU torch sees, not {device!r}.",
                             reason="device")
    model = model.to("cpu" if device == "auto" else device)
    loaded = LoadedModel(name=display_name(source, folder), path=folder, model=model,
                         tokenizer=tokenizer, notices=notices, summary=None,  # type: ignore[arg-type]
                         memory_bytes=sum(p.numel() * p.element_size() for p in model.parameters()))
    loaded._probe()
    _check_fidelity(loaded, check)
    return loaded


def _load(folder, raw_config, notices, *, source, device, trust_remote_code, dtype, n_layers,
          memory_limit, check: Callable[[], None]) -> LoadedModel:
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    check()
    try:
        cfg = AutoConfig.from_pretrained(folder, trust_remote_code=trust_remote_code,
                                         local_files_only=True)
    except Exception as exc:
        raise ModelLoadError(f"config.json cannot be understood: {one_line_reason(exc)}",
                             reason="no_config") from exc
    if getattr(cfg, "is_encoder_decoder", False):
        raise ModelLoadError(
            f"'{cfg.model_type}' is an encoder-decoder model; only encoders (BERT-like) and "
            "decoders (GPT-, Llama-like) can be inspected so far.", reason="unsupported")
    heads = getattr(cfg, "num_attention_heads", None)
    if not heads:
        sub = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
        if sub is not cfg and getattr(sub, "num_attention_heads", None):
            raise ModelLoadError(
                f"'{cfg.model_type}' is a multimodal model; only text models can be inspected "
                "so far.", reason="unsupported")
        raise ModelLoadError(
            f"This model ('{cfg.model_type}') has no attention layers (its config has no "
            "attention heads), so there is nothing to show.", reason="no_attention")
    _check_shape_fields(cfg, raw_config)
    check()
    total_layers = int(getattr(cfg, "num_hidden_layers", 0) or 0)
    if getattr(cfg, "num_hidden_layers", None) == 0:
        raise ModelLoadError(
            f"This '{cfg.model_type}' model has no layers (config.json says num_hidden_layers "
            "is 0), so there is no attention to show.", reason="no_attention")
    if n_layers is not None:
        if not 1 <= n_layers <= total_layers:
            raise ModelLoadError(f"n_layers must be between 1 and {total_layers}.",
                                 reason="unsupported")
        if n_layers < total_layers:
            cfg.num_hidden_layers = n_layers
            if isinstance(getattr(cfg, "layer_types", None), list):
                cfg.layer_types = cfg.layer_types[:n_layers]
            notices.append(f"Only the first {n_layers} of {total_layers} layers were loaded.")

    info = FolderInfo(folder, raw_config, find_weights(folder), remote_code_files(folder))
    wanted_layers = total_layers if n_layers is None else n_layers
    stored = info.stored_layers()
    if stored is None and wanted_layers > _MAX_UNCHECKED_LAYERS:
        raise ModelLoadError(
            f"config.json says the model has {total_layers} layers, far more than any model "
            "this app can show, and the weights' tensor names do not say how many they hold. "
            "The config was edited or is corrupt.", reason="bad_config", files=["config.json"])
    if stored is not None and wanted_layers > stored:
        raise ModelLoadError(
            f"config.json does not match the weights: it says the model has {total_layers} "
            f"layers, but the weights ({_weight_names(info)}) hold only {stored}. The config "
            "was edited or belongs to another model.", reason="bad_config",
            files=["config.json"])
    if stored is not None and total_layers < stored:  # (n_layers cuts the config's count, not this)
        raise _more_layers_than_config(total_layers, stored, info)
    check_regular_files(folder)  # a FIFO vocab.txt made every token [UNK]
    if not any((folder / n).is_file() for n in _TOKENIZER_FILES):
        raise ModelLoadError(
            "This model folder has no tokenizer (tokenizer.json, or vocabulary files such as "
            "vocab.txt or tokenizer.model), so text cannot be turned into tokens. Copy the "
            "tokenizer files of the model into the folder.", reason="no_tokenizer")
    torch_dtype, itemsize = _resolve_dtype(dtype, device)
    weight_bytes = info.weight_bytes(itemsize, n_layers)
    # what the config builds, on the meta device (no memory): compared with the weights'
    # shapes, and its size counted, before anything real is allocated
    built_bytes = _check_against_weights(cfg, info, trust_remote_code, itemsize)
    need = int(max(weight_bytes, built_bytes) * 1.1) + _OVERHEAD_BYTES
    check()

    device_map = None
    if device == "auto":
        try:
            import accelerate  # noqa: F401
        except ImportError as exc:
            raise ModelLoadError("device='auto' spreads a model over GPUs and CPU and needs the "
                                 "'accelerate' package, which is not installed.",
                                 reason="device") from exc
        device_map = "auto"
    elif device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ModelLoadError("A GPU (cuda) was asked for, but torch sees no CUDA device here.",
                                 reason="device")
    elif device != "cpu":
        raise ModelLoadError(f"Unknown device {device!r}: use 'cpu', 'cuda' or 'auto'.",
                             reason="device")
    # the weights are read into RAM first, then moved to the GPU when one is asked for
    checks = [("RAM", memory_limit if memory_limit is not None else available_memory("cpu"))]
    if device.startswith("cuda"):
        checks.append(("GPU memory", memory_limit if memory_limit is not None
                       else available_memory(device)))
    for where, limit in checks:
        if device_map is None and limit is not None and need > limit:
            raise ModelLoadError(
                f"This model needs about {format_bytes(need)} of memory but only "
                f"{format_bytes(limit)} of {where} is available. Try a smaller model, fewer "
                "layers, half precision, or a machine with more memory.", reason="too_large")

    head = _causal_lm_class(cfg)
    if head is not None and not getattr(cfg, "tie_word_embeddings", False):
        vocab, width = getattr(cfg, "vocab_size", 0) or 0, getattr(cfg, "hidden_size", 0) or 0
        need += int(vocab) * int(width) * (itemsize or 4) if isinstance(vocab, int) and isinstance(width, int) else 0

    register()
    kwargs = {
        "config": cfg,
        "attn_implementation": IMPLEMENTATION,
        "trust_remote_code": trust_remote_code,
        "local_files_only": True,
        "weights_only": True,
        "dtype": torch_dtype,
        "output_loading_info": True,
    }
    if device_map is not None:
        kwargs["device_map"] = device_map
    try:
        with warnings.catch_warnings():  # a refusal of a pickle .bin is one line, no torch warning
            warnings.filterwarnings("ignore", message=_UNPICKLER_WARNING, category=UserWarning)
            lm, loading = (head or AutoModel).from_pretrained(folder, **kwargs)
    except ModelLoadError:
        raise
    except Exception as exc:
        names = ", ".join(wf.path.name for wf in info.weights)
        if info.weight_kind == "bin":
            msg = (f"The weights file {names} could not be read safely: it is corrupt, or it "
                   "holds Python objects besides tensors (these are never executed here). "
                   f"Prefer a model.safetensors file. ({type(exc).__name__})")
        else:
            msg = f"The weights ({names}) could not be loaded: {one_line_reason(exc)}"
        raise ModelLoadError(msg, reason="corrupt_weights",
                             files=[wf.path.name for wf in info.weights]) from exc
    check()
    unexpected = [m.group(1) for k in loading.get("unexpected_keys", ())
                  if (m := _LAYER_NAME.search(str(k))) and int(m.group(1)) >= total_layers]
    if unexpected and n_layers is None:  # (.bin weights: their layer count is known only now)
        raise _more_layers_than_config(total_layers, max(map(int, unexpected)) + 1, info)
    model, lm, head_missing = _split_head(lm, head, loading)
    if head_missing:
        notices.append("The checkpoint has no language-model head (lm_head): the logit lens, "
                       "attribution and patching need one.")
    missing = sorted(k for k in loading.get("missing_keys", ())
                     if not any(ok in k for ok in _MISSING_OK))
    mismatched = sorted(str(k) for k in loading.get("mismatched_keys", ()))
    if missing or mismatched:
        bad = missing or mismatched
        raise ModelLoadError(
            f"The weights do not fit this model: {len(bad)} tensors are "
            f"{'missing' if missing else 'of the wrong shape'} (e.g. {bad[0]}). The weight file "
            "probably belongs to a different model.", reason="corrupt_weights")
    if device_map is None:
        (lm if lm is not None else model).to(device)
    model.eval()
    if lm is not None:
        lm.eval()
    check()

    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=trust_remote_code,
                                                  local_files_only=True)
    except Exception as exc:
        reason = "remote_code" if "trust_remote_code" in str(exc) else "no_tokenizer"
        raise ModelLoadError(
            f"The tokenizer of this model could not be loaded ({one_line_reason(exc)})."
            " The folder needs tokenizer.json or the tokenizer's vocabulary files.",
            reason=reason) from exc

    loaded = LoadedModel(
        name=display_name(source, folder),
        path=folder, model=model, tokenizer=tokenizer, notices=notices,
        summary=None,  # type: ignore[arg-type]  # filled by _probe
        memory_bytes=need, lm=lm,
    )
    check()
    loaded._probe()
    loaded.notices.extend(_tokenizer_notice(loaded))
    _check_fidelity(loaded, check)
    return loaded


def _check_fidelity(loaded: LoadedModel, check: Callable[[], None] | None = None) -> None:
    """Measure on the probe text whether the circuits lens reproduces the model's own forward
    pass; a failure is kept (the lens, attribution and patching then refuse) and noticed.
    ``check()`` is called inside its forward passes: what it raises cancels the load (it is
    not taken for a failure of the check)."""
    from .cancel import checked
    from .fidelity import measure_safely

    stop: list[BaseException] = []

    def progress(_done, _total) -> None:
        try:
            (check or _no_check)()
        except BaseException as exc:
            stop.append(exc)
            raise

    with checked(loaded, progress if check is not None else None) as report:
        report(0, 1)
        fidelity = measure_safely(loaded, PROBE_TEXT)
    if stop:
        raise stop[0]
    loaded.fidelity = fidelity
    if not loaded.fidelity.ok:
        loaded.notices.append(f"Warning: the circuits lens {loaded.fidelity.summary}.")


#: what torch's weights-only unpickler warns of a pickle it reads (a plain pickle .bin: "Detected
#: pickle protocol 4 in the checkpoint…"), two lines on stderr besides the refusal (issue 46, item 14)
_UNPICKLER_WARNING = r"Detected pickle protocol"

_LAYER_NAME = re.compile(r"(?:^|\.)(?:layers|layer|h|blocks|block)\.(\d+)\.")


def _more_layers_than_config(total_layers: int, stored: int, info: FolderInfo) -> ModelLoadError:
    return ModelLoadError(
        f"config.json does not match the weights: it says the model has {total_layers} layers, but "
        f"the weights ({_weight_names(info)}) hold {stored}; loading it would silently drop "
        f"{stored - total_layers}. The config was edited or belongs to another model.",
        reason="bad_config", files=["config.json"])


def _causal_lm_class(cfg):
    """transformers' causal-LM class for ``cfg`` (its LM head gives the model's own output, which
    :mod:`.fidelity` checks the circuits lens against), or None for encoders, models of unknown
    type and checkpoints saved for another task (classification heads)."""
    from transformers import AutoModelForCausalLM
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    model_type = getattr(cfg, "model_type", None)
    if model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return None
    archs = [a for a in (getattr(cfg, "architectures", None) or []) if isinstance(a, str)]
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        return AutoModelForCausalLM
    if archs and not all(a.endswith("Model") for a in archs):  # ForMaskedLM, ForSequenceClassification …
        return None
    return None if model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES else AutoModelForCausalLM


def _split_head(lm, head, loading) -> tuple[torch.nn.Module, torch.nn.Module | None, bool]:
    """(the base model the panels run, the causal LM around it or None, whether a head the
    checkpoint lacks was left randomly initialised — then it is dropped)."""
    if head is None:
        return lm, None, False
    base = lm.base_model
    if base is lm or not isinstance(base, torch.nn.Module):  # no base model to run the panels on
        raise ModelLoadError(f"transformers' {type(lm).__name__} holds no separate base model, so its "
                             "layers cannot be inspected.", reason="unsupported")
    out = lm.get_output_embeddings()
    tied = out is not None and out.weight is lm.get_input_embeddings().weight
    missing = {str(k) for k in loading.get("missing_keys", ())}
    head_missing = not tied and any(k.startswith(("lm_head.", "embed_out.")) for k in missing)
    return base, (None if head_missing else lm), head_missing


def _tokenizer_notice(loaded: LoadedModel) -> list[str]:
    """A warning when the tokenizer knows a single token (every text becomes that token)."""
    from .anatomy import vocab_size

    try:
        n_tok = len(loaded.tokenizer)
    except TypeError:
        return []
    n_emb = int(loaded.model.get_input_embeddings().weight.shape[0])
    if n_tok > 1 or vocab_size(loaded) == n_emb == 1:
        return []
    name = loaded.tokens_of([0])[0] if n_tok == 1 else "nothing"
    return [f"Warning: this tokenizer knows only {n_tok} token ({name!r}) while the model has "
            f"{n_emb} token embeddings: every text becomes {name!r} repeated, so the model's "
            "answers say nothing about the text. The tokenizer files belong to another model?"]


def check_text(text: str) -> None:
    """InspectError unless ``text`` is valid Unicode text (no lone surrogates, which is what
    bytes that are not UTF-8 become on a command line: Python's surrogateescape)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InspectError(
            f"The text is not valid UTF-8 (character {exc.start} is not text: bytes from a "
            "file or terminal in another encoding?). Give the text as UTF-8.") from None


@dataclass(eq=False)
class LoadedModel:
    """A model ready for :meth:`inspect`. ``summary`` holds its shape facts,
    ``notices`` what the user should know (code not run, layers skipped)."""

    name: str
    path: Path
    model: torch.nn.Module
    tokenizer: object
    summary: ModelSummary
    notices: list[str] = field(default_factory=list)
    memory_bytes: int = 0
    #: transformers' causal LM around ``model`` (its LM head: the model's own output), or None
    lm: torch.nn.Module | None = None
    #: how well the circuits lens reproduces the model's own forward pass, measured on opening
    #: (:class:`engine.models.fidelity.Fidelity`); None until measured
    fidelity: object | None = None

    # -- facts ---------------------------------------------------------------------------
    @property
    def n_layers(self) -> int:
        return self.summary.n_layers

    @property
    def n_heads(self) -> int:
        return self.summary.n_heads

    @property
    def n_kv_heads(self) -> int:
        return self.summary.n_kv_heads

    @property
    def max_length(self) -> int:
        return self.summary.max_length

    @property
    def kv_head_of(self) -> list[int]:
        g = self.summary.kv_group
        return [h // g for h in range(self.n_heads)]

    @property
    def input_device(self) -> torch.device:
        return self.model.get_input_embeddings().weight.device

    # -- running -------------------------------------------------------------------------
    def _max_positions(self) -> int:
        cfg = self.model.config
        limits = []
        tok_max = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(tok_max, int) and 0 < tok_max < 10**7:
            limits.append(tok_max)
        for attr in ("max_position_embeddings", "n_positions", "max_sequence_length"):
            v = getattr(cfg, attr, None)
            if isinstance(v, int) and v > 0:
                limits.append(v)
                break
        return min(limits) if limits else 2048

    def _probe(self) -> None:
        cfg = self.model.config
        expected = int(cfg.num_hidden_layers)
        self._forward_kwargs = {}
        params = _inspect.signature(self.model.forward).parameters
        if "use_cache" in params:
            self._forward_kwargs["use_cache"] = False
        ids = self.tokenizer(PROBE_TEXT)["input_ids"][:8] or [0]
        try:
            with torch.inference_mode(), capturing() as cap:
                self.model(input_ids=torch.tensor([ids], device=self.input_device),
                           attention_mask=torch.ones(1, len(ids), dtype=torch.long,
                                                     device=self.input_device),
                           **self._forward_kwargs)
        except Exception as exc:
            raise ModelLoadError(f"The model failed on a test sentence: {one_line_reason(exc)}",
                                 reason="unsupported") from exc
        if cap.calls == 0:
            raise ModelLoadError(
                f"No attention layer of this '{cfg.model_type}' model reported its weights: "
                "its attention does not go through transformers' attention interface, so it "
                "cannot be inspected.", reason="no_attention")
        if cap.calls != expected:
            raise ModelLoadError(
                f"The model ran {cap.calls} attention computations for {expected} layers (cross-"
                "attention or an unusual architecture); it cannot be inspected layer by layer.",
                reason="unsupported")
        q, k, _v, w = cap.records[0]
        causal_attrs = [getattr(m, "is_causal", None) for m in cap.modules]
        if all(isinstance(c, bool) for c in causal_attrs):
            causal = all(causal_attrs)
        else:
            s = w.shape[-1]
            causal = s > 1 and bool((torch.triu(w[0].float(), 1) == 0).all())
        self.summary = ModelSummary(
            model_type=str(cfg.model_type),
            architecture=type(self.model).__name__,
            n_layers=expected,
            n_heads=int(q.shape[1]),
            n_kv_heads=int(k.shape[1]),
            head_dim=int(q.shape[-1]),
            hidden_size=int(getattr(cfg, "hidden_size", 0) or 0),
            max_length=self._max_positions(),
            causal=bool(causal),
            n_params=sum(p.numel() for p in self.model.parameters()),
            dtype=str(next(self.model.parameters()).dtype).replace("torch.", ""),
            device=str(self.input_device),
            memory_bytes=self.memory_bytes,
        )

    def tokenize(self, text: str, *, max_tokens: int | None = None
                 ) -> tuple[list[int], str | None, int]:
        """(token ids, truncation notice or None, number of tokens in the whole text)."""
        if not isinstance(text, str):
            raise InspectError("text must be a string")
        check_text(text)
        limit = self.max_length if max_tokens is None else min(self.max_length, int(max_tokens))
        if limit < 1:
            raise InspectError("max_tokens must be at least 1")
        with _quiet():
            ids = list(self.tokenizer(text)["input_ids"])
            n_all = len(ids)
            notice = None
            if n_all > limit:
                ids = list(self.tokenizer(text, truncation=True, max_length=limit)["input_ids"])
                ids = ids[:limit]
                notice = (f"The text has {n_all} tokens; only the first {len(ids)} are shown "
                          f"(the limit is {limit}).")
        if not ids:
            raise InspectError("The text gives no tokens: type some text.")
        return ids, notice, n_all

    def tokens_of(self, ids: list[int]) -> list[str]:
        return [str(t) for t in self.tokenizer.convert_ids_to_tokens(list(ids))]

    def resolve_layers(self, layers) -> list[int]:
        """Layer indices (negative ones count from the end), sorted, without repeats."""
        if layers is None:
            return list(range(self.n_layers))
        if is_whole(layers):
            layers = [layers]
        out = set()
        for layer in layers:
            if not is_whole(layer):
                raise InspectError(f"layer {layer!r} is not an integer")
            layer = int(layer)
            if not -self.n_layers <= layer < self.n_layers:
                raise InspectError(f"layer {layer} does not exist: this model has layers "
                                   f"0..{self.n_layers - 1}")
            out.add(layer % self.n_layers)
        if not out:
            raise InspectError("no layers given")
        return sorted(out)

    def _check_memory(self, s: int, n_captured: int) -> None:
        h = self.n_heads
        stored = n_captured * h * s * s * 4
        transient = 3 * h * s * s * 4
        need = stored + transient
        free = available_memory(str(self.input_device))
        if free is not None and need > 0.8 * free:
            raise InspectError(
                f"Inspecting {s} tokens over {n_captured} layers needs about {format_bytes(need)} "
                f"for the attention matrices but only {format_bytes(free)} is free: choose fewer "
                "layers or a shorter text.")

    def _run(self, ids: list[int], layer_list: list[int], *, need_hidden: bool,
             attention_mask: list[int] | None = None) -> tuple[dict, torch.Tensor | None, int]:
        self._check_memory(len(ids), len(layer_list))
        dev = self.input_device
        input_ids = torch.tensor([ids], device=dev)
        mask = torch.tensor([attention_mask if attention_mask is not None else [1] * len(ids)],
                            device=dev)
        last = layer_list[-1]
        stop = None if need_hidden or last == self.n_layers - 1 else last
        wanted = None if len(layer_list) == self.n_layers else set(layer_list)
        hidden = None
        with torch.inference_mode(), capturing(wanted, stop) as cap:
            try:
                out = self.model(input_ids=input_ids, attention_mask=mask, **self._forward_kwargs)
                hidden = out.last_hidden_state[0]
            except StopForward:
                pass
        expected = self.n_layers if stop is None else stop + 1
        if cap.calls != expected or any(layer not in cap.records for layer in layer_list):
            raise RuntimeError(f"expected attention from {expected} layers, got {cap.calls}: "
                               "the model did not report every layer's attention")
        return cap.records, hidden, cap.calls

    def _trace(self, text: str, ids: list[int], layer_list: list[int], notice, n_all,
               *, need_hidden: bool, attention_mask=None) -> ModelTrace:
        records, hidden, _ = self._run(ids, layer_list, need_hidden=need_hidden,
                                       attention_mask=attention_mask)
        rec = [records[layer] for layer in layer_list]
        attn = torch.stack([r[3][0] for r in rec])
        if attn.dtype != torch.float32 or attn.device.type != "cpu":
            attn = attn.to("cpu", torch.float32)
        on_cpu = self.input_device.type == "cpu"

        def host(t: torch.Tensor) -> torch.Tensor:
            return t if on_cpu else t.cpu()

        return ModelTrace(
            model_name=self.name,
            text=text,
            tokens=self.tokens_of(ids),
            token_ids=list(ids),
            attentions=attn,
            layers=list(layer_list),
            n_heads=self.n_heads,
            n_kv_heads=self.n_kv_heads,
            head_dim=self.summary.head_dim,
            queries=[host(r[0][0]) for r in rec],
            keys=[host(r[1][0]) for r in rec],
            values=[host(r[2][0]) for r in rec],
            causal=self.summary.causal,
            hidden=None if hidden is None else host(hidden),
            notice=notice,
            n_tokens_in_text=n_all,
            kv_head_of=self.kv_head_of,
        )

    def inspect(self, text: str, *, layers=None, max_tokens: int | None = None) -> ModelTrace:
        """Run ``text`` through the model and capture the wanted ``layers``
        (None = all). Texts longer than the model's maximum length (or
        ``max_tokens``) are truncated and ``trace.notice`` says so. The pass
        stops after the last wanted layer, so ``trace.hidden`` is None unless
        the last layer is wanted."""
        layer_list = self.resolve_layers(layers)
        ids, notice, n_all = self.tokenize(text, max_tokens=max_tokens)
        return self._trace(text, ids, layer_list, notice, n_all, need_hidden=False)

    def deletion_test(self, text: str, token_index: int, *, layers=None, mode: str = "remove",
                      max_tokens: int | None = None) -> DeletionResult:
        """Delete (``mode="remove"``) or hide (``mode="mask"``) token ``token_index``
        of ``text`` and measure how each head's attention and the final hidden
        state change; see :class:`DeletionResult` for the exact measures."""
        if mode not in ("remove", "mask"):
            raise InspectError(f"mode must be 'remove' or 'mask', not {mode!r}")
        layer_list = self.resolve_layers(layers)
        ids, notice, n_all = self.tokenize(text, max_tokens=max_tokens)
        s = len(ids)
        if s < 2:
            raise InspectError("The deletion test needs at least two tokens.")
        if not is_whole(token_index) \
                or not -s <= token_index < s:
            raise InspectError(f"token {token_index} does not exist: the text has tokens 0..{s - 1}")
        t = int(token_index) % s
        before = self._trace(text, ids, layer_list, notice, n_all, need_hidden=True)
        if mode == "remove":
            after = self._trace(text, ids[:t] + ids[t + 1:], layer_list, notice, n_all,
                                need_hidden=True)
        else:
            mask = [1] * s
            mask[t] = 0
            after = self._trace(text, ids, layer_list, notice, n_all, need_hidden=True,
                                attention_mask=mask)
        mean_tv, max_tv, kept = deletion_change(before, after, t, mode)
        h0 = before.hidden[kept].double()
        h1 = after.hidden.double() if mode == "remove" else after.hidden[kept].double()
        diff = h1 - h0
        hidden_change = float(diff.norm() / h0.norm().clamp_min(1e-30))
        per_token = (diff.norm(dim=-1) / h0.norm(dim=-1).clamp_min(1e-30)).numpy()
        return DeletionResult(
            mode=mode, removed_index=t, removed_token=before.tokens[t], kept=kept,
            layers=layer_list, attention_change=mean_tv, attention_change_max=max_tv,
            hidden_change=hidden_change, hidden_change_per_token=per_token,
            before=before, after=after,
        )

    # -- fidelity: the circuits lens against the model's own forward (engine.models.fidelity) --
    def check_fidelity(self, text: str = PROBE_TEXT, *, max_tokens: int | None = None):
        """Measure on ``text`` whether the lens, the residual stream and the attribution
        reproduce the model's own forward pass (:func:`engine.models.fidelity.measure`)."""
        from .fidelity import measure

        return measure(self, text, max_tokens=max_tokens)

    def require_fidelity(self, what: str) -> None:
        """InspectError naming the measured difference when the opening check failed for
        ``what`` ("lens", "attribution", "patching")."""
        if self.fidelity is not None:
            self.fidelity.require(what)

    # -- circuits: what a head does (engine.models.detectors / circuits / lens / patching) ----
    def head_scores(self, kind: str, *, n_tokens: int | None = None, batch: int = 4,
                    seed: int = 0, progress=None):
        """(L, H) detector scores in [0, 1]: ``kind`` "previous_token", "duplicate_token" or
        "induction" (see :func:`engine.models.detectors.head_scores`)."""
        from .detectors import head_scores

        return head_scores(self, kind, n_tokens=n_tokens, batch=batch, seed=seed, progress=progress)

    def all_head_scores(self, *, n_tokens: int | None = None, batch: int = 4, seed: int = 0,
                        progress=None):
        """Every detector's (L, H) scores from one forward pass: dict kind → array
        (``progress`` as :func:`engine.models.detectors.all_head_scores` calls it)."""
        from .detectors import all_head_scores

        return all_head_scores(self, n_tokens=n_tokens, batch=batch, seed=seed, progress=progress)

    def circuits(self, layer: int, head: int, *, top: int = 10, vocab=None, progress=None):
        """The QK and OV circuits of one head (:class:`engine.models.circuits.HeadCircuits`;
        ``progress`` as it calls it: raising cancels)."""
        from .circuits import head_circuits

        return head_circuits(self, layer, head, top=top, vocab=vocab, progress=progress)

    def logit_lens(self, text: str, *, k: int | None = None, max_tokens: int | None = None, progress=None):
        """Every layer's top-k next tokens (:class:`engine.models.lens.LogitLens`);
        ``progress(done, total)`` as the lens calls it (raising cancels)."""
        from .lens import logit_lens

        return logit_lens(self, text, k=k, max_tokens=max_tokens, progress=progress)

    def top_prediction(self, text: str, *, position: int = -1, max_tokens: int | None = None,
                       progress=None) -> int:
        """The id of the model's top next token after ``position`` (:func:`engine.models.lens.top_prediction`)."""
        from .lens import top_prediction

        return top_prediction(self, text, position=position, max_tokens=max_tokens, progress=progress)

    def logit_attribution(self, text: str, target, *, position: int = -1,
                          max_tokens: int | None = None, progress=None):
        """``target``'s logit split into heads, MLPs, embeddings and biases
        (:class:`engine.models.lens.LogitAttribution`)."""
        from .lens import logit_attribution

        return logit_attribution(self, text, target, position=position, max_tokens=max_tokens,
                                 progress=progress)

    def activation_patching(self, clean: str, corrupted: str, answer, *, wrong=None,
                            over: str = "heads", method: str = "exact", batch: int = 16,
                            progress=None, max_tokens: int | None = None):
        """Clean → corrupted patching of every head or position
        (:class:`engine.models.patching.PatchResult`)."""
        from .patching import activation_patching

        return activation_patching(self, clean, corrupted, answer, wrong=wrong, over=over,
                                   method=method, batch=batch, progress=progress,
                                   max_tokens=max_tokens)

    def attribution_patching(self, clean: str, corrupted: str, answer, *, wrong=None,
                             over: str = "heads", max_tokens: int | None = None):
        """The one-backward-pass estimate of :meth:`activation_patching`."""
        from .patching import attribution_patching

        return attribution_patching(self, clean, corrupted, answer, wrong=wrong, over=over,
                                    max_tokens=max_tokens)

    def qk_embedding(self, texts, layer: int, head: int, *, dims: int = 2,
                     max_tokens: int | None = None, progress=None):
        """One head's queries and keys in one PCA space
        (:class:`engine.models.circuits.QKEmbedding`; ``progress`` as it calls it: raising
        cancels)."""
        from .circuits import qk_embedding

        return qk_embedding(self, texts, layer, head, dims=dims, max_tokens=max_tokens, progress=progress)
