"""Where the parts of a loaded model are: blocks, per-head weights, norms, unembedding, hooks.

The circuits lens (:mod:`.detectors`, :mod:`.circuits`, :mod:`.lens`, :mod:`.patching`) reads
every architecture through one :class:`Anatomy`:

* ``blocks``: the L residual blocks (their input is the residual stream "resid_pre" of the
  layer, their output the residual stream after it);
* per layer, the attention's output projection ``out_proj`` whose *input* is the
  concatenation of every head's output before W_O, (B, S, H·Dh) with head h at columns
  h·Dh … (h+1)·Dh − 1, and the MLP module;
* :meth:`Anatomy.head_weights`: W_Q (H, d, Dh), W_K and W_V (Hkv, d, Dh), W_O (H, Dh, d) in
  the row-vector convention (``x @ W``), from GPT-2's fused ``Conv1D`` ``c_attn``, the
  ``q_proj``/``k_proj``/``v_proj``/``o_proj`` of Llama, Qwen2, Mistral (and similar), BERT's
  ``query``/``key``/``value``/``output.dense`` and the training lab's fused ``qkv_proj``;
* the final norm (found by the model's own structure: ``ln_f``, ``norm``, OPT's
  ``decoder.final_layer_norm``, GPT-NeoX's ``final_layer_norm``; OPT's ``project_out`` after
  it), the unembedding W_U (d, V) from the causal LM's ``get_output_embeddings()`` (GPT-NeoX's
  ``embed_out`` is transformers' ``lm_head``), and the steps after it (Cohere's ``logit_scale``
  and Granite's ``1 / logits_scaling``, a factor; Gemma-2's ``final_logit_softcapping``:
  cap · tanh(logits / cap)); Granite's ``residual_multiplier``, the factor on what every
  attention and MLP adds to the stream (``residual_scale``);
* :meth:`Anatomy.own_logits`: the model's *own* output (transformers' causal-LM forward), which
  :mod:`.fidelity` compares with what is computed here from the parts.

Nothing here changes the model; hooks are removed when their ``with`` block ends.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .errors import InspectError

_ATTN_NAMES = ("self_attn", "attn", "attention", "self_attention")
_OUT_NAMES = ("o_proj", "out_proj", "dense", "c_proj")
_FINAL_NORM_NAMES = ("ln_f", "norm", "final_layernorm", "norm_f", "final_layer_norm",
                     "decoder.final_layer_norm", "decoder.norm", "transformer.ln_f")
_MLP_NAMES = ("mlp", "feed_forward", "ffn")


def cache_of(loaded) -> dict:
    """A per-model dict for results that depend only on the weights (kept on the model)."""
    cache = getattr(loaded, "_circuits_cache", None)
    if cache is None:
        cache = {}
        loaded._circuits_cache = cache
    return cache


def anatomy_of(loaded) -> Anatomy:
    """The (cached) :class:`Anatomy` of a :class:`engine.models.LoadedModel`."""
    cache = cache_of(loaded)
    if "anatomy" not in cache:
        cache["anatomy"] = Anatomy(loaded)
    return cache["anatomy"]


#: layers whose :class:`HeadWeights` `Anatomy.head_weights` keeps
HEAD_WEIGHT_LAYERS = 4


@dataclass
class HeadWeights:
    """One layer's attention weights, row-vector convention, float32 on the CPU."""

    w_q: torch.Tensor  # (H, d, Dh)
    w_k: torch.Tensor  # (Hkv, d, Dh)
    w_v: torch.Tensor  # (Hkv, d, Dh)
    w_o: torch.Tensor  # (H, Dh, d)
    b_o: torch.Tensor | None  # (d,)


def _positive(value) -> float | None:
    """A config's number when it is a positive finite float (None otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if 0 < value < float("inf") else None


def _logit_scale(config) -> float | None:
    """What the causal LM multiplies its logits by after ``lm_head`` (None: nothing): Cohere's
    ``logit_scale`` (``logits * logit_scale``), Granite's ``logits_scaling`` (``logits /
    logits_scaling``)."""
    scale = _positive(getattr(config, "logit_scale", None))
    if scale is not None and scale != 1.0:
        return scale
    divisor = _positive(getattr(config, "logits_scaling", None))
    if divisor is not None and divisor != 1.0:
        return 1.0 / divisor
    return None


def _first_attr(module: nn.Module, names) -> nn.Module | None:
    """The first of ``names`` (dotted paths allowed) that is a submodule of ``module``."""
    for name in names:
        sub = module
        for part in name.split("."):
            sub = getattr(sub, part, None)
        if isinstance(sub, nn.Module):
            return sub
    return None


def _linear_t(layer: nn.Module) -> torch.Tensor:
    """The (in, out) matrix of an ``nn.Linear`` (y = x @ W) or a GPT-2 ``Conv1D``."""
    w = layer.weight.detach()
    if type(layer).__name__ == "Conv1D":  # transformers' Conv1D stores (in, out) already
        return w
    return w.t()


def _bias(layer: nn.Module | None) -> torch.Tensor | None:
    b = getattr(layer, "bias", None) if layer is not None else None
    return b.detach() if isinstance(b, torch.Tensor) else None


class Anatomy:
    """See the module docstring. Built from a :class:`engine.models.LoadedModel`."""

    def __init__(self, loaded) -> None:
        self.loaded = loaded
        model = loaded.model
        self.n_layers = loaded.n_layers
        self.n_heads = loaded.n_heads
        self.n_kv_heads = loaded.n_kv_heads
        self.head_dim = loaded.summary.head_dim
        self.causal = loaded.summary.causal
        core = getattr(model, "core", None)
        if getattr(model.config, "model_type", None) == "tiny-transformer" and core is not None:
            self.kind = "tiny"
            self.blocks = list(core.blocks)
            self.final_norm = core.ln_f
            self.norm = core.config.norm
            self._attns = [b.attn for b in self.blocks]
            self.out_projs = [b.attn.o_proj for b in self.blocks]
            self.mlps = [b.mlp for b in self.blocks]
            self.embed = core.tok_emb
            self.pos_embed = core.pos_emb
            self.final_proj = None
            self.softcap = None
            self.logit_scale, self.residual_scale = None, 1.0
            self.attn_post_norms = self.mlp_post_norms = [None] * len(self.blocks)
            return
        self.blocks = self._find_blocks(model)
        self.embed = model.get_input_embeddings()
        self.pos_embed = _first_attr(model, ("wpe", "embed_positions"))
        self._attns = [_first_attr(b, _ATTN_NAMES) for b in self.blocks]
        first = self._attns[0]
        if first is not None and hasattr(first, "c_attn"):
            self.kind = "gpt2"
        elif first is not None and all(hasattr(first, n) for n in ("q_proj", "k_proj", "v_proj")):
            self.kind = "separate"
        elif first is not None and hasattr(getattr(first, "self", None), "query"):
            self.kind = "bert"
        elif first is not None and hasattr(first, "query_key_value"):
            self.kind = "neox"  # GPT-NeoX / Pythia: per head, q | k | v of Dh each
        else:
            self.kind = "unknown"
        self.out_projs = [self._out_proj(a) for a in self._attns]
        # the MLP's output is what it adds to the stream; OPT's layers hold fc1/fc2 themselves
        self.mlps = [_first_attr(b, _MLP_NAMES) or _first_attr(b, ("fc2",)) for b in self.blocks]
        # Gemma-2's "sandwich" norms: what attention and MLP add is normalised first
        # (post_attention_layernorm is Llama's pre-MLP norm: only with pre/post_feedforward_layernorm)
        sandwich = [all(hasattr(b, n) for n in ("pre_feedforward_layernorm", "post_feedforward_layernorm",
                                                 "post_attention_layernorm")) for b in self.blocks]
        self.attn_post_norms = [b.post_attention_layernorm if s else None for b, s in zip(self.blocks, sandwich, strict=True)]
        self.mlp_post_norms = [b.post_feedforward_layernorm if s else None for b, s in zip(self.blocks, sandwich, strict=True)]
        self.final_proj = None
        softcap = getattr(model.config, "final_logit_softcapping", None)
        self.softcap = float(softcap) if isinstance(softcap, int | float) and softcap > 0 else None
        self.logit_scale = _logit_scale(model.config)
        self.residual_scale = _positive(getattr(model.config, "residual_multiplier", None)) or 1.0
        if self.kind == "bert" or not self.causal:
            self.final_norm, self.norm = None, "post"
        else:
            self.final_norm = _first_attr(model, _FINAL_NORM_NAMES)
            self.norm = "pre" if self.final_norm is not None else "none"
            proj = _first_attr(model, ("decoder.project_out", "project_out"))
            self.final_proj = proj if isinstance(proj, nn.Linear) else None

    # ---- structure ---------------------------------------------------------------------
    def _find_blocks(self, model: nn.Module) -> list[nn.Module]:
        for path in ("h", "layers", "encoder.layer", "decoder.layers", "transformer.h", "blocks"):
            obj = model
            for part in path.split("."):
                obj = getattr(obj, part, None)
            if isinstance(obj, nn.ModuleList) and len(obj) == self.n_layers:
                return list(obj)
        for _name, mod in model.named_modules():
            if isinstance(mod, nn.ModuleList) and len(mod) == self.n_layers:
                return list(mod)
        raise InspectError(f"the layers of this '{model.config.model_type}' model were not found")

    def _out_proj(self, attn: nn.Module | None) -> nn.Module | None:
        if attn is None:
            return None
        if self.kind == "bert":
            return attn.output.dense
        return _first_attr(attn, _OUT_NAMES)

    def require_heads(self, what: str) -> None:
        """InspectError unless every layer's head outputs (the W_O input) can be reached."""
        if self.kind == "unknown" or any(p is None for p in self.out_projs):
            raise InspectError(f"{what} is not supported for '{self.loaded.summary.model_type}' "
                               "models: their attention weights are laid out in an unknown way")

    # ---- weights -----------------------------------------------------------------------
    def head_weights(self, layer: int) -> HeadWeights:
        """W_Q, W_K, W_V, W_O of ``layer`` per head (see :class:`HeadWeights`); the last
        :data:`HEAD_WEIGHT_LAYERS` layers asked for are kept (a float32 copy of a big model's
        every attention weight would not fit beside the model)."""
        self.require_heads("Reading the circuits")
        cache = cache_of(self.loaded).setdefault("head_weights", {})
        if layer in cache:
            cache[layer] = cache.pop(layer)  # the most recent last
            return cache[layer]
        while len(cache) >= HEAD_WEIGHT_LAYERS:
            cache.pop(next(iter(cache)))
        h, hkv, dh = self.n_heads, self.n_kv_heads, self.head_dim
        attn = self._attns[layer]
        if self.kind == "gpt2":
            w = _linear_t(attn.c_attn)  # (d, 3·H·Dh): q | k | v
            q, k, v = w.split(h * dh, dim=1)
        elif self.kind == "separate":
            q, k, v = (_linear_t(getattr(attn, n)) for n in ("q_proj", "k_proj", "v_proj"))
        elif self.kind == "bert":
            q, k, v = (_linear_t(getattr(attn.self, n)) for n in ("query", "key", "value"))
        elif self.kind == "neox":  # (d, H·3·Dh): head h's q | k | v at columns h·3·Dh …
            w = _linear_t(attn.query_key_value).reshape(-1, h, 3, dh)
            q, k, v = (w[:, :, i].reshape(-1, h * dh) for i in range(3))
        else:  # tiny: qkv_proj rows are H query heads, then Hkv key heads, then Hkv value heads
            w = _linear_t(attn.qkv_proj)
            q, k, v = w.split((h * dh, hkv * dh, hkv * dh), dim=1)
        d = q.shape[0]

        def heads(m: torch.Tensor, n: int) -> torch.Tensor:  # (d, n·Dh) -> (n, d, Dh)
            return m.float().cpu().reshape(d, n, dh).permute(1, 0, 2).contiguous()

        hw = HeadWeights(heads(q, h), heads(k, hkv), heads(v, hkv), *self._read_output(layer))
        cache[layer] = hw
        return hw

    def output_weights(self, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """W_O (H, Dh, d) and b_O (d,) or None of ``layer``, float32 on the CPU: what the
        logit attribution needs, without the layer's W_Q, W_K, W_V (not cached)."""
        self.require_heads("Reading the circuits")
        held = cache_of(self.loaded).get("head_weights", {}).get(layer)
        return (held.w_o, held.b_o) if held is not None else self._read_output(layer)

    def _read_output(self, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """W_O (H, Dh, d) and b_O (d,) or None of ``layer``, read off its output projection."""
        out = self.out_projs[layer]
        b = _bias(out)
        wo = _linear_t(out).float().cpu().reshape(self.n_heads, self.head_dim, -1).contiguous()
        return wo, None if b is None else b.float().cpu()

    def embedding_matrix(self) -> torch.Tensor | None:
        """W_E (V, d) float32 on the CPU, or None."""
        w = getattr(self.embed, "weight", None)
        return None if w is None else w.detach().float().cpu()

    def unembedding(self) -> tuple[torch.Tensor, torch.Tensor | None] | None:
        """(W_U (d, V), b_U (V,) or None) on the model's device, float32; None when the model
        has no unembedding (an encoder, or a base checkpoint without ``lm_head``)."""
        cache = cache_of(self.loaded)
        if "unembedding" not in cache:
            cache["unembedding"] = self._read_unembedding()
        return cache["unembedding"]

    def _read_unembedding(self):
        if self.kind == "tiny":
            return self.loaded.model.core.unembed.weight.detach().float().t(), None
        lm = getattr(self.loaded, "lm", None)
        if not self.causal or lm is None:
            return None
        out = lm.get_output_embeddings()  # nn.Linear (V, d): lm_head, GPT-NeoX's embed_out
        w = getattr(out, "weight", None)
        if not isinstance(w, torch.Tensor):
            return None
        b = _bias(out)
        return w.detach().float().t(), None if b is None else b.float()

    def require_unembedding(self, what: str) -> tuple[torch.Tensor, torch.Tensor | None]:
        if not self.causal:
            raise InspectError(f"{what} needs a causal language model: this bidirectional encoder "
                               "does not predict a next token")
        unemb = self.unembedding()
        if unemb is None:
            raise InspectError(f"{what} needs the model's unembedding, and this checkpoint has no "
                               "lm_head (a base model without its language-model head)")
        return unemb

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The model's final hidden state (after its final norm) → logits, float32: the
        unembedding, its bias, the model's logit scaling (Cohere, Granite) and its logit
        softcapping (Gemma-2) where it has them."""
        w, b = self.unembedding()  # type: ignore[misc]
        out = hidden.to(w.device, torch.float32) @ w
        out = out if b is None else out + b
        out = out if self.logit_scale is None else out * self.logit_scale
        return out if self.softcap is None else self.cap(out)

    def cap(self, logits):
        """Gemma-2's final_logit_softcapping: cap · tanh(logits / cap) (identity without)."""
        if self.softcap is None:
            return logits
        if isinstance(logits, torch.Tensor):
            return torch.tanh(logits / self.softcap) * self.softcap
        return float(np.tanh(logits / self.softcap) * self.softcap)

    def apply_final_norm(self, resid: torch.Tensor) -> torch.Tensor:
        """The residual stream (…, d) → the model's final hidden state: its final norm, then
        (OPT with a narrower embedding) its ``project_out``."""
        x = resid
        for module in (self.final_norm, self.final_proj):
            if module is not None:
                p = next(module.parameters(), None)
                x = module(x if p is None else x.to(p.dtype))
        return x

    # ---- running -----------------------------------------------------------------------
    def forward(self, ids: torch.Tensor, *, hidden_states: bool = False):
        """One forward pass of (B, S) ids; returns the model's output (``last_hidden_state``,
        and ``hidden_states`` when asked: a model that does not take the argument raises
        TypeError)."""
        loaded = self.loaded
        ids = ids.to(loaded.input_device)
        mask = torch.ones_like(ids)
        kwargs = dict(getattr(loaded, "_forward_kwargs", {}))
        if hidden_states:
            kwargs["output_hidden_states"] = True
        return loaded.model(input_ids=ids, attention_mask=mask, **kwargs)

    def own_logits(self, ids: torch.Tensor, *, keep: int | torch.Tensor = 0,
                   hidden_states: bool = False):
        """The model's own output for (B, S) ids: transformers' causal-LM forward (its
        ``lm_head``, softcapping, everything it does after the last layer), or a training run's
        own logits. Returns (logits (B, S', V) float32 — the last ``keep`` positions, or the
        positions a 1-D tensor ``keep`` names; 0 = all —, hidden_states tuple or None).
        None when the model has no LM head."""
        loaded = self.loaded
        ids = ids.to(loaded.input_device)
        mask = torch.ones_like(ids)
        kwargs = dict(getattr(loaded, "_forward_kwargs", {}))
        if self.kind == "tiny":
            logits = loaded.model(input_ids=ids, attention_mask=mask).logits
            if isinstance(keep, torch.Tensor):
                logits = logits[:, keep.to(logits.device)]
            elif keep:
                logits = logits[:, -keep:]
            return logits.float(), None
        lm = getattr(loaded, "lm", None)
        if lm is None:
            return None
        if keep is not None and _accepts(lm, "logits_to_keep"):
            kwargs["logits_to_keep"] = keep.to(ids.device) if isinstance(keep, torch.Tensor) else keep
            keep = None
        out = lm(input_ids=ids, attention_mask=mask, output_hidden_states=hidden_states, **kwargs)
        logits = out.logits
        if isinstance(keep, torch.Tensor):
            logits = logits[:, keep.to(logits.device)]
        elif keep:
            logits = logits[:, -keep:]
        return logits.float(), (out.hidden_states if hidden_states else None)


def _accepts(module: nn.Module, name: str) -> bool:
    import inspect as _inspect

    try:
        return name in _inspect.signature(module.forward).parameters
    except (TypeError, ValueError):
        return False


def first_output(output):
    """A block's output tensor (blocks return a tensor or a tuple starting with it)."""
    return output[0] if isinstance(output, tuple | list) else output


def input_of(args: tuple, kwargs: dict, name: str = "hidden_states") -> torch.Tensor:
    return args[0] if args else kwargs[name]


def replace_input(args: tuple, kwargs: dict, new: torch.Tensor, name: str = "hidden_states"):
    if args:
        return (new, *args[1:]), kwargs
    return args, {**kwargs, name: new}


@contextlib.contextmanager
def hooked(pre: list[tuple[nn.Module, Callable]] = (), post: list[tuple[nn.Module, Callable]] = ()
           ) -> Iterator[None]:
    """Register forward pre-hooks (``fn(module, args, kwargs)``, may return (args, kwargs)) and
    forward hooks (``fn(module, args, output)``, may return a new output); removed on exit.

    The hooks act only in the thread that registered them, so a forward pass of the same model
    running meanwhile in another thread (the window's inspect) is left alone."""
    owner = threading.get_ident()

    def mine(fn):
        def hook(*args):
            return fn(*args) if threading.get_ident() == owner else None
        return hook

    handles = []
    try:
        for module, fn in pre:
            handles.append(module.register_forward_pre_hook(mine(fn), with_kwargs=True))
        for module, fn in post:
            handles.append(module.register_forward_hook(mine(fn)))
        yield
    finally:
        for h in handles:
            h.remove()


def special_ids(tokenizer) -> set[int]:
    ids = getattr(tokenizer, "all_special_ids", None)
    if ids is not None:
        return {int(i) for i in ids}
    vocab = getattr(tokenizer, "vocab", None)
    if isinstance(vocab, list):  # the training lab's SymbolTokenizer
        return {i for i, s in enumerate(vocab) if s.startswith("<") and s.endswith(">")}
    return set()


def vocab_size(loaded) -> int:
    n = int(loaded.model.get_input_embeddings().weight.shape[0])
    tok = loaded.tokenizer
    try:
        n = min(n, len(tok))
    except TypeError:
        vocab = getattr(tok, "vocab", None)
        if isinstance(vocab, list):
            n = min(n, len(vocab))
    return n


def bos_id(tokenizer) -> int | None:
    for attr in ("bos_token_id", "cls_token_id"):
        v = getattr(tokenizer, attr, None)
        if isinstance(v, int):
            return v
    ids = getattr(tokenizer, "ids", None)
    if isinstance(ids, dict) and "<bos>" in ids:
        return int(ids["<bos>"])
    return None


def resolve_token(loaded, token, what: str = "token") -> int:
    """A token id from an id or a string: an exact vocabulary entry, else a text that is
    exactly one token. InspectError (one line) otherwise."""
    n = vocab_size(loaded)
    if isinstance(token, bool):
        raise InspectError(f"{what} must be a token string or id, not {token!r}")
    if isinstance(token, int | np.integer):
        if not 0 <= int(token) < n:
            raise InspectError(f"{what} id {int(token)} does not exist: ids are 0..{n - 1}")
        return int(token)
    if not isinstance(token, str) or token == "":
        raise InspectError(f"{what} must be a token string or id, not {token!r}")
    tok = loaded.tokenizer
    ids_map = getattr(tok, "ids", None)
    if isinstance(ids_map, dict):  # SymbolTokenizer
        if token in ids_map:
            return int(ids_map[token])
        ids = tok.encode(token)[1:]
    else:
        cache = cache_of(loaded)
        if "vocab" not in cache:  # (get_vocab builds GPT-2's 50,257 entries anew: 30 ms a call)
            cache["vocab"] = tok.get_vocab() if hasattr(tok, "get_vocab") else {}
        vocab = cache["vocab"]
        if token in vocab and int(vocab[token]) < n:
            return int(vocab[token])
        ids = list(tok(token, add_special_tokens=False)["input_ids"])
    unk = getattr(tok, "unk_token_id", None)
    if len(ids) == 1 and ids[0] == unk and token != getattr(tok, "unk_token", None):
        raise InspectError(f"{what} {token!r} is not in this model's vocabulary "
                           f"(it becomes {getattr(tok, 'unk_token', 'the unknown token')})")
    if len(ids) == 1:
        return int(ids[0])
    if not ids:
        raise InspectError(f"{what} {token!r} gives no token of this model's vocabulary")
    parts = " ".join(repr(t) for t in loaded.tokens_of(ids)[:6])
    raise InspectError(f"{what} {token!r} is {len(ids)} tokens ({parts}): give a single token")
