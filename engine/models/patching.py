"""Activation patching: which heads (or residual-stream positions) carry the clean answer?

A *clean* and a *corrupted* text of the same token length; a metric at the last position,
logit(answer) − logit(wrong) (or logit(answer) alone). Run the corrupted text again with one
activation taken from the clean run:

* ``over="heads"``: head h of layer l, its output before W_O at every position (TransformerLens'
  ``get_act_patch_attn_head_out_all_pos``, on ``hook_z``);
* ``over="positions"``: the residual stream entering layer l at position p (``resid_pre``,
  TransformerLens' ``get_act_patch_resid_pre``).

effect = (patched − corrupted) / (clean − corrupted): 1 = this activation alone restores the
clean metric, 0 = it changes nothing (Meng et al. 2022; Heimersheim & Nanda 2024).

``method="attribution"`` is the fast linear estimate (Nanda 2023, "attribution patching"):
one clean forward, one corrupted forward and one backward pass give
∂metric/∂a · (a_clean − a_corrupted) for every activation a at once, normalised the same way.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from ..memory import format_bytes
from .anatomy import (
    anatomy_of,
    cache_of,
    hooked,
    input_of,
    replace_input,
    resolve_token,
    vocab_size,
)
from .cancel import checkpoints
from .errors import InspectError, is_whole
from .files import available_memory, job_room

PATCH_OVER = ("heads", "positions")
PATCH_METHODS = ("exact", "attribution")
#: sequences patched in one forward pass
DEFAULT_BATCH = 16
#: a run with progress (one that can be cancelled) patches at most this many mask elements
#: (batch · S², the (B, 1, S, S) attention mask transformers builds before the first layer,
#: one uninterruptible operation: 1.3 s for 16 × 2,048² here) in one forward pass; a text
#: of up to 1,024 tokens keeps DEFAULT_BATCH
CHECKED_MASK = 2**24


@dataclass(eq=False)
class PatchResult:
    """``effect``: (L, H) for ``over="heads"``, (L, S) for ``"positions"``; ``clean_metric``
    and ``corrupted_metric``; ``method`` "exact" or "attribution" (the linear estimate)."""

    effect: np.ndarray
    clean_metric: float
    corrupted_metric: float
    over: str
    method: str
    clean_tokens: list[str]
    corrupted_tokens: list[str]
    answer_id: int
    answer: str
    wrong_id: int | None
    wrong: str | None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def metric_name(self) -> str:
        return f"logit({self.answer})" + ("" if self.wrong is None else f" − logit({self.wrong})")


@contextlib.contextmanager
def _frozen_weights(model: torch.nn.Module):
    """The model's parameters out of the autograd graph while the attribution estimate runs:
    its gradient is of the activations only, so the forward pass need not keep what the
    weights' gradients would need (their requires_grad flags are put back after)."""
    params = [p for p in model.parameters() if p.requires_grad]
    for p in params:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p in params:
            p.requires_grad_(True)


class _Setup:
    """What both methods need: ids, the metric, the clean run's activations."""

    def __init__(self, loaded, clean, corrupted, answer, wrong, over, max_tokens):
        self.an = an = anatomy_of(loaded)
        an.require_unembedding("Activation patching")
        if over not in PATCH_OVER:
            raise InspectError(f"over must be one of {', '.join(PATCH_OVER)}, not {over!r}")
        if over == "heads":
            an.require_heads("Patching heads")
        loaded.require_fidelity("patching")
        self.loaded, self.over = loaded, over
        self.clean_ids, _n1, n_clean = loaded.tokenize(clean, max_tokens=max_tokens)
        self.corr_ids, _n2, n_corr = loaded.tokenize(corrupted, max_tokens=max_tokens)
        limit = loaded.max_length if max_tokens is None else min(loaded.max_length, int(max_tokens))
        if max(n_clean, n_corr) > limit:  # cut texts would be compared at a token neither ends on
            raise InspectError(f"the clean text has {n_clean} tokens and the corrupted one {n_corr}, "
                               f"but this model reads at most {limit}: patching compares the last "
                               "tokens of whole texts, so shorten both to at most that")
        if len(self.clean_ids) != len(self.corr_ids):
            raise InspectError(f"the clean text has {len(self.clean_ids)} tokens and the corrupted "
                               f"one {len(self.corr_ids)}: patching needs texts of the same token length")
        self.answer = resolve_token(loaded, answer, "answer")
        self.wrong = None if wrong is None else resolve_token(loaded, wrong, "wrong")
        if self.wrong == self.answer:
            raise InspectError("answer and wrong are the same token: their difference is always 0")
        self.s = len(self.clean_ids)

    def run(self, ids: torch.Tensor) -> torch.Tensor:
        """(B,) metric at the last position of (B, S) ids, from the model's own logits (its own
        forward pass: LM head, softcapping and all)."""
        got = self.an.own_logits(ids, keep=1)
        if got is not None:
            logits = got[0][:, -1]
        else:
            logits = self.an.logits(self.an.forward(ids).last_hidden_state[:, -1])
        m = logits[:, self.answer]
        return m if self.wrong is None else m - logits[:, self.wrong]

    def sites(self) -> list:
        an = self.an
        return an.out_projs if self.over == "heads" else an.blocks

    def site_name(self) -> str:
        return "input" if self.over == "heads" else "hidden_states"

    def record(self, *, grad: bool = False):
        """The clean and the corrupted run in one batch: (metrics (2,), activations per layer
        (2, S, ·)), row 0 clean, row 1 corrupted; with ``grad`` in the autograd graph."""
        acts: list[torch.Tensor] = [None] * self.loaded.n_layers  # type: ignore[list-item]
        name = self.site_name()

        def grab(i):
            def fn(_m, args, kwargs):
                acts[i] = input_of(args, kwargs, name)
            return fn

        pre = [(m, grab(i)) for i, m in enumerate(self.sites())]
        ctx = torch.enable_grad() if grad else torch.inference_mode()
        whole = self.loaded.lm if self.loaded.lm is not None else self.loaded.model
        frozen = _frozen_weights(whole) if grad else contextlib.nullcontext()
        with ctx, frozen, hooked(pre=pre, post=self._grad_hooks() if grad else []):
            metric = self.run(torch.tensor([self.clean_ids, self.corr_ids]))
        return metric, acts

    def _grad_hooks(self):
        """Make the embeddings require grad, so the activations do whatever the parameters."""
        def fn(_m, _a, output):
            return output.detach().requires_grad_(True)

        return [(self.loaded.model.get_input_embeddings(), fn)]


def activation_patching(loaded, clean: str, corrupted: str, answer, *, wrong=None,
                        over: str = "heads", method: str = "exact", batch: int = DEFAULT_BATCH,
                        progress: Callable[[int, int], object] | None = None,
                        max_tokens: int | None = None) -> PatchResult:
    """Patch every head (or residual-stream position) from ``clean`` into ``corrupted`` and
    measure the normalised effect on the metric (see the module docstring).

    ``progress(done, total)`` is called after each forward pass, and again with the same
    count while one runs (at most every ``cancel.CHECK_EVERY_S``, between its modules and its
    attention's pieces: :mod:`.cancel`); raising from it cancels within a fraction of a second.
    Refused (InspectError): encoders and models without an unembedding, texts of different
    token lengths, texts whose metrics are equal (nothing to restore)."""
    if method not in PATCH_METHODS:
        raise InspectError(f"method must be one of {', '.join(PATCH_METHODS)}, not {method!r}")
    if not is_whole(batch) or batch < 1:
        raise InspectError(f"batch must be a positive integer, not {batch!r}")
    batch = int(batch)
    t0 = time.perf_counter()
    st = _Setup(loaded, clean, corrupted, answer, wrong, over, max_tokens)
    batch = _batch_that_fits(loaded, st.s, method, batch)
    if progress is not None:  # a cancel within a fraction of a second: see CHECKED_MASK
        batch = max(1, min(batch, CHECKED_MASK // (st.s * st.s)))
    whole = loaded.lm if loaded.lm is not None else loaded.model
    with checkpoints(whole, progress) as report:  # a cancel is seen inside each forward pass
        return _patch(st, method, batch, report if progress is not None else None, t0)


def _patch(st: _Setup, method: str, batch: int, progress, t0: float) -> PatchResult:
    loaded, over = st.loaded, st.over
    metrics, acts = st.record(grad=method == "attribution")
    c, r = (float(v) for v in metrics.detach())
    denom = c - r
    if abs(denom) <= 1e-6 * max(1.0, abs(c)):
        raise InspectError(f"the clean and corrupted texts give the same metric ({c:.4g}): there "
                           "is nothing for patching to restore; corrupt the text differently")
    if method == "exact":
        effect = _exact(st, [a[0] for a in acts], r, denom, batch, progress)
    else:  # the gradient of the corrupted row's metric, at the corrupted activations
        grads = torch.autograd.grad(metrics[1], acts)
        effect = np.zeros((loaded.n_layers, _width(st)))
        for layer, (g, a) in enumerate(zip(grads, acts, strict=True)):
            a = a.detach().float()
            diff = (a[0] - a[1]) * g[1].float()  # (S, ·)
            if st.over == "heads":
                per = diff.reshape(st.s, loaded.n_heads, -1).sum((0, 2))
            else:
                per = diff.sum(-1)
            effect[layer] = per.cpu().double().numpy() / denom
        if progress is not None:
            progress(1, 1)
    tok = loaded.tokens_of
    return PatchResult(
        effect=effect, clean_metric=c, corrupted_metric=r, over=over, method=method,
        clean_tokens=tok(st.clean_ids), corrupted_tokens=tok(st.corr_ids),
        answer_id=st.answer, answer=tok([st.answer])[0], wrong_id=st.wrong,
        wrong=None if st.wrong is None else tok([st.wrong])[0],
        seconds=time.perf_counter() - t0)


def _batch_that_fits(loaded, s: int, method: str, batch: int, free: int | None = None) -> int:
    """`batch`, made smaller until one forward pass fits in the room :func:`.files.job_room`
    gives (80 % of the free memory, at most the engine's memory budget); refused
    (InspectError) when none does. A sequence of s tokens holds ~3 · H · s² float32 (one
    layer's scores, weights and their copy, the eager attention the hooks read); the
    attribution estimate keeps that for both texts in every layer for its backward pass."""
    free = available_memory(str(loaded.input_device)) if free is None else free
    room, said = job_room(free, str(loaded.input_device))
    if room is None:
        return batch
    per_seq = 3 * loaded.n_heads * s * s * 4
    if method == "attribution":
        need = 2 * loaded.n_layers * per_seq
        if need > room:
            raise InspectError(f"Attribution patching of {s} tokens needs about {format_bytes(need)} for "
                               f"its backward pass but {said}: use a shorter text")
        return batch
    fit = int(room // (per_seq * 2))  # (the patched batch, and the two texts' record before it)
    if fit < 1:
        raise InspectError(f"Patching {s} tokens needs about {format_bytes(2 * per_seq)} per forward pass "
                           f"but {said}: use a shorter text")
    return min(batch, fit)


def _width(st: _Setup) -> int:
    return st.loaded.n_heads if st.over == "heads" else st.s


def _exact(st: _Setup, clean_acts, corr_metric: float, denom: float, batch: int,
           progress) -> np.ndarray:
    loaded = st.loaded
    L, width = loaded.n_layers, _width(st)
    dh = loaded.summary.head_dim
    effect = np.zeros((L, width))
    name = st.site_name()
    # one forward pass patches up to `batch` heads (or positions) of one layer, one per sequence
    chunks = [(layer, list(range(i, min(i + batch, width))))
              for layer in range(L) for i in range(0, width, batch)]
    done = 0
    for layer, which in chunks:
        src = clean_acts[layer]  # (S, ·)

        def patch(_m, args, kwargs, which=which, src=src):
            x = input_of(args, kwargs, name).clone()
            for b, j in enumerate(which):
                if st.over == "heads":
                    x[b, :, j * dh:(j + 1) * dh] = src[:, j * dh:(j + 1) * dh]
                else:
                    x[b, j] = src[j]
            return replace_input(args, kwargs, x, name)

        ids = torch.tensor([st.corr_ids] * len(which))
        with torch.inference_mode(), hooked(pre=[(st.sites()[layer], patch)]):
            m = st.run(ids).double().cpu().numpy()
        effect[layer, which] = (m - corr_metric) / denom
        done += 1
        if progress is not None:
            progress(done, len(chunks))
    return effect


def attribution_patching(loaded, clean: str, corrupted: str, answer, *, wrong=None,
                         over: str = "heads", max_tokens: int | None = None) -> PatchResult:
    """The one-backward-pass estimate of :func:`activation_patching` (``method="attribution"``)."""
    return activation_patching(loaded, clean, corrupted, answer, wrong=wrong, over=over,
                               method="attribution", max_tokens=max_tokens)


# ---- a corrupted text for patching -----------------------------------------------------------
def corrupt_text(loaded, text: str, seed: int = 0, *, max_tokens: int | None = None,
                 attempts: int = 32) -> str:
    """``text`` with the first half of its tokens swapped for other tokens: a corrupted text of
    the same token length for :func:`activation_patching`.

    Of the n tokens between the special tokens the tokenizer adds (BOS, EOS), the first
    ⌈n/2⌉ are replaced, each by a token drawn (numpy generator seeded with ``seed``) from the
    vocabulary's ordinary tokens of the same kind (letters, digits, punctuation; with or
    without a leading-space marker "Ġ"/"▁") that do not occur in ``text``. The new tokens are
    written back as text (the tokenizer's ``decode``; a training run's symbols word by word)
    and tokenized again; a draw whose text does not give the same number of tokens is drawn
    again, ``attempts`` times. Returns the corrupted text (str); InspectError (one line) for a
    text without ordinary tokens or when no draw keeps the length."""
    if not is_whole(seed) or seed < 0:
        raise InspectError(f"seed must be a whole number >= 0, not {seed!r}")
    if not is_whole(attempts) or attempts < 1:
        raise InspectError(f"attempts must be a whole number >= 1, not {attempts!r}")
    ids, _notice, _n = loaded.tokenize(text, max_tokens=max_tokens)
    tok = loaded.tokenizer
    symbols, names, special, groups = _vocab_groups(loaded)
    lead = 0
    while lead < len(ids) and ids[lead] in special:
        lead += 1
    trail = 0
    while trail < len(ids) - lead and ids[len(ids) - 1 - trail] in special:
        trail += 1
    body = list(range(lead, len(ids) - trail))
    if not body:
        raise InspectError("the text has no ordinary tokens to corrupt: type some text")
    swap = body[:(len(body) + 1) // 2]
    used = set(ids)
    rng = np.random.default_rng(seed)
    for _ in range(max(1, attempts)):
        new = list(ids)
        taken: set[int] = set()
        for p in swap:
            pool = _pool(groups, _kind(names[ids[p]]), used | taken, ids[p])
            if not len(pool):
                raise InspectError("this vocabulary has no other tokens to corrupt the text with")
            new[p] = int(pool[int(rng.integers(len(pool)))])
            taken.add(new[p])
        out = _symbol_text(tok, text, new, lead) if symbols else tok.decode(
            new[lead:len(new) - trail], clean_up_tokenization_spaces=False)
        got, _notice, _n = loaded.tokenize(out, max_tokens=max_tokens)
        kept = lead + len(swap)  # the tokens after the swapped half must stay as they were
        if len(got) == len(ids) and got[kept:] == ids[kept:] and got[:lead] == ids[:lead]:
            return out
    raise InspectError(f"no corruption of this text kept its {len(ids)} tokens in {attempts} "
                       "draws: type a corrupted text of the same token length")


def _vocab_groups(loaded) -> tuple[bool, list[str], set[int], dict[tuple, np.ndarray]]:
    """(a training run's symbols?, every id's token string, the special ids, the ordinary ids
    by :func:`_kind`, ascending): read once per model (GPT-2's 50,257 token strings take a
    tenth of a second to sort into kinds)."""
    cache = cache_of(loaded)
    if "corrupt_vocab" not in cache:
        tok = loaded.tokenizer
        symbols = isinstance(getattr(tok, "ids", None), dict)  # a training run's SymbolTokenizer
        names = list(tok.vocab) if symbols else tok.convert_ids_to_tokens(list(range(vocab_size(loaded))))
        special = ({i for i, s in enumerate(names) if s.startswith("<") and s.endswith(">")} if symbols
                   else set(getattr(tok, "all_special_ids", []) or []))
        groups: dict[tuple, list[int]] = {}
        for i, s in enumerate(names):
            if i not in special and (not symbols or len(s) == 1):
                groups.setdefault(_kind(s), []).append(i)
        cache["corrupt_vocab"] = (symbols, names, special,
                                  {k: np.asarray(v, dtype=np.int64) for k, v in groups.items()})
    return cache["corrupt_vocab"]


def _kind(token: str) -> tuple[bool, str]:
    """(leading-space marker, "alpha" | "digit" | "punct" | "other") of a token string."""
    marker = token[:1] in ("Ġ", "▁", " ")
    s = token[1:] if marker else token
    if s.isascii() and s.isalpha():
        return marker, "alpha"
    if s.isascii() and s.isdigit():
        return marker, "digit"
    if s and s.isascii() and s.isprintable() and not any(c.isalnum() or c.isspace() for c in s):
        return marker, "punct"
    return marker, "other"


def _pool(groups: dict, kind: tuple, avoid: set[int], original: int) -> np.ndarray:
    """Candidates of `kind` not in `avoid`; else of the same marker's letters; else any but
    `original`."""
    out = np.fromiter(avoid, dtype=np.int64, count=len(avoid))
    for key in (kind, (kind[0], "alpha"), (not kind[0], "alpha")):
        group = groups.get(key)
        if group is not None:
            pool = group[~np.isin(group, out)]
            if pool.size:
                return pool
    every = np.concatenate(list(groups.values())) if groups else np.zeros(0, dtype=np.int64)
    return every[every != original]


def _symbol_text(tok, text: str, new: list[int], start: int) -> str:
    """The words of ``text`` with their symbols replaced by ``new`` (from position ``start``):
    a SymbolTokenizer reads a word that is a symbol as one token, any other word one token
    per character it knows."""
    words, pos = [], start
    for word in text.split():
        n = len(tok.encode(word)) - 1
        if n <= 0 or pos + n > len(new):  # (past the tokens read: a text longer than the run's)
            words.append(word)
            pos += max(n, 0)
            continue
        if word in tok.ids:
            words.append(tok.vocab[new[pos]])
        else:
            known = [c for c in word if c in tok.ids or c.swapcase() in tok.ids]
            words.append("".join(tok.vocab[i] for i in new[pos:pos + len(known)]))
        pos += n
    return " ".join(words)
