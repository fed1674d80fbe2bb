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

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from .anatomy import anatomy_of, hooked, input_of, replace_input, resolve_token
from .errors import InspectError

PATCH_OVER = ("heads", "positions")
PATCH_METHODS = ("exact", "attribution")
#: sequences patched in one forward pass
DEFAULT_BATCH = 16


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


class _Setup:
    """What both methods need: ids, the metric, the clean run's activations."""

    def __init__(self, loaded, clean, corrupted, answer, wrong, over, max_tokens):
        self.an = an = anatomy_of(loaded)
        an.require_unembedding("Activation patching")
        if over not in PATCH_OVER:
            raise InspectError(f"over must be one of {', '.join(PATCH_OVER)}, not {over!r}")
        if over == "heads":
            an.require_heads("Patching heads")
        self.loaded, self.over = loaded, over
        self.clean_ids, _n1, _a = loaded.tokenize(clean, max_tokens=max_tokens)
        self.corr_ids, _n2, _b = loaded.tokenize(corrupted, max_tokens=max_tokens)
        if len(self.clean_ids) != len(self.corr_ids):
            raise InspectError(f"the clean text has {len(self.clean_ids)} tokens and the corrupted "
                               f"one {len(self.corr_ids)}: patching needs texts of the same token length")
        self.answer = resolve_token(loaded, answer, "answer")
        self.wrong = None if wrong is None else resolve_token(loaded, wrong, "wrong")
        if self.wrong == self.answer:
            raise InspectError("answer and wrong are the same token: their difference is always 0")
        self.s = len(self.clean_ids)

    def metric(self, last_hidden: torch.Tensor) -> torch.Tensor:
        """(B, S, d) final hidden → (B,) metric at the last position."""
        logits = self.an.logits(last_hidden[:, -1])
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
        with ctx, hooked(pre=pre, post=self._grad_hooks() if grad else []):
            out = self.an.forward(torch.tensor([self.clean_ids, self.corr_ids]))
            metric = self.metric(out.last_hidden_state)
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

    ``progress(done, total)`` is called after each forward pass; raising from it cancels.
    Refused (InspectError): encoders and models without an unembedding, texts of different
    token lengths, texts whose metrics are equal (nothing to restore)."""
    if method not in PATCH_METHODS:
        raise InspectError(f"method must be one of {', '.join(PATCH_METHODS)}, not {method!r}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InspectError(f"batch must be a positive integer, not {batch!r}")
    t0 = time.perf_counter()
    st = _Setup(loaded, clean, corrupted, answer, wrong, over, max_tokens)
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
            out = st.an.forward(ids)
            m = st.metric(out.last_hidden_state).double().cpu().numpy()
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
