"""Reading the residual stream in the vocabulary: the logit lens and direct logit attribution.

**Logit lens** (nostalgebraist 2020): the residual stream after every layer, put through the
model's final norm and unembedding as if it were the last layer, gives that layer's guess of
the next token. Row 0 is the embeddings (token + learned positions, the input of layer 0),
row l the stream after layer l; row L is the model's own output.

**Direct logit attribution** (Elhage et al. 2021; TransformerLens' ``decompose_resid`` /
``logit_attrs``): in a pre-norm model the final residual stream at a position is a sum,

    x = embeddings + Σ_l (Σ_h z_lh W_O^(l,h) + b_O^l) + Σ_l mlp_l,

where z_lh is head h's output before W_O. The final norm is linear once its scale is frozen
at the value of the real run (LayerNorm: (x − mean x)/σ·γ + β; RMSNorm: x/rms·γ), so the
target's logit splits exactly into one term per head, per MLP, for the embeddings and for the
biases (b_O, the norm's β and the unembedding's bias). In a post-norm model every block's norm
rescales the stream after each sum, so no such split exists: refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from .agreement import CHECKED_POSITIONS
from .anatomy import anatomy_of, first_output, hooked, input_of, resolve_token
from .cancel import checked
from .errors import InspectError, is_whole


@dataclass(eq=False)
class LogitLens:
    """``tokens`` (S), ``token_ids``; ``top_ids`` (L+1, S, k) int64 and ``top_probs``
    (L+1, S, k) float32, sorted descending; ``top_tokens`` the same ids as token strings;
    ``next_probs`` (L+1, S): each row's probability of the text's real next token (NaN at the
    last position). Row 0: the embeddings; row l: after layer l; row L: the model's output."""

    tokens: list[str]
    token_ids: list[int]
    top_ids: np.ndarray
    top_probs: np.ndarray
    top_tokens: list[list[list[str]]]
    next_probs: np.ndarray
    notice: str | None = None

    @property
    def n_rows(self) -> int:
        return self.top_ids.shape[0]


@dataclass(eq=False)
class LogitAttribution:
    """The logit of ``target`` at ``position`` split into parts that add up to it.

    ``heads`` (L, H): each head's direct contribution; ``parts``: "embeddings", "mlp 0" …
    "mlp L−1" (absent in attention-only models) and "biases"; ``logit``: the model's own logit;
    ``total``: the sum of ``heads`` and ``parts`` (equal to ``logit`` up to rounding);
    ``norm_scale``: the frozen 1/σ (or 1/rms) of the final norm, None without one.
    """

    tokens: list[str]
    position: int
    target_id: int
    target: str
    heads: np.ndarray
    parts: dict[str, float]
    logit: float
    total: float
    norm_scale: float | None
    notes: list[str] = field(default_factory=list)


def residual_streams(loaded, ids: list[int], *, own_positions: int = 0, hidden_states: bool = False
                     ) -> tuple[torch.Tensor, torch.Tensor | None, tuple | None]:
    """From one forward pass of the model (its own causal LM where it has one): the (L+1, S, d)
    residual streams (row 0 the input of layer 0), float32 on the model's device; the model's own
    logits (n, V) at the last ``own_positions`` positions (None for 0 or without an LM head); and
    with ``hidden_states`` the model's own ``hidden_states`` tuple (None when it reports none)."""
    an = anatomy_of(loaded)
    rows: list[torch.Tensor] = []

    def pre0(_m, args, kwargs):
        rows.append(input_of(args, kwargs)[0].detach())

    def post(_m, _args, output):
        rows.append(first_output(output)[0].detach())

    x = torch.tensor([ids])
    own = hidden = None
    with torch.inference_mode(), hooked(pre=[(an.blocks[0], pre0)],
                                        post=[(b, post) for b in an.blocks]):
        if own_positions:
            got = an.own_logits(x, keep=min(own_positions, len(ids)), hidden_states=hidden_states)
            if got is not None:
                own, hidden = got[0][0], got[1]
        if own is None:
            rows.clear()
            try:
                hidden = getattr(an.forward(x, hidden_states=hidden_states), "hidden_states", None)
            except TypeError:  # a model that takes no output_hidden_states: run it without
                rows.clear()
                an.forward(x)
            hidden = hidden if hidden_states else None
    return torch.stack([r.float() for r in rows]), own, hidden


def logit_lens(loaded, text: str, *, k: int | None = None, max_tokens: int | None = None,
               progress: Callable[[int, int], object] | None = None) -> LogitLens:
    """The logit lens of ``text`` (see the module docstring); causal LMs only.

    Every row, the last included, is the residual stream through the final norm and the
    unembedding found by :mod:`.anatomy`; the last row is checked against the model's own
    logits at the text's last :data:`CHECKED_POSITIONS` positions, and the lens is refused
    (InspectError naming max |Δp|) where it differs, or where the model's opening check
    (:mod:`.fidelity`) failed.

    ``k``: the top tokens per cell (default 5, or the whole vocabulary when it is smaller).
    ``progress(done, total)`` is called after the forward pass and after each block of rows
    put through the unembedding (at most 128 MiB of logits each), and with the same count
    inside the forward pass (:func:`.cancel.checked`); raising from it cancels within a block."""
    an = anatomy_of(loaded)
    an.require_unembedding("The logit lens")
    loaded.require_fidelity("lens")
    n_vocab = an.unembedding()[0].shape[1]
    if k is None:  # (a CLI --logit-lens names no k: a vocabulary of 1 is not a bad k)
        k = min(5, n_vocab)
    if not is_whole(k) or not 1 <= k <= min(100, n_vocab):
        raise InspectError(f"k must be between 1 and {min(100, n_vocab)}, not {k!r}")
    k = int(k)
    ids, notice, _n = loaded.tokenize(text, max_tokens=max_tokens)
    L, s = loaded.n_layers, len(ids)
    chunk = max(1, 2**25 // n_vocab)  # rows of logits held at once (128 MiB of float32)
    total = 1 + -(-(L + 1) * s // chunk)
    with checked(loaded, progress) as report:  # a cancel is seen inside the forward pass too
        report(0, total)
        resid, own, _ = residual_streams(loaded, ids, own_positions=CHECKED_POSITIONS)
        report(1, total)
        top_ids, top_probs, next_probs = _lens_rows(loaded, an, resid, own, ids, k, chunk, total, report)
    ti = top_ids.numpy().astype(np.int64)
    names = loaded.tokens_of(ti.reshape(-1).tolist())
    nested = [[names[(r * s + p) * k:(r * s + p + 1) * k] for p in range(s)] for r in range(L + 1)]
    return LogitLens(tokens=loaded.tokens_of(ids), token_ids=list(ids), top_ids=ti,
                     top_probs=top_probs.numpy().astype(np.float32),
                     top_tokens=nested, next_probs=next_probs.numpy(),
                     notice=notice)


def _lens_rows(loaded, an, resid, own, ids, k, chunk, total, report):
    """The lens's (L+1, S, k) top ids and probabilities and (L+1, S) next-token probabilities
    from the residual streams (L+1, S, d), ``chunk`` rows of logits at a time, reported."""
    from .agreement import compare_logits, lens_failure, logits_close

    L, s = loaded.n_layers, len(ids)
    nxt = torch.tensor([*ids[1:], 0], dtype=torch.long)
    with torch.inference_mode():
        normed = an.apply_final_norm(resid).float()  # (L+1, S, d)
        if own is not None:  # the lens's last row must be the model's own output
            dl, dp = compare_logits(an.logits(normed[L, s - own.shape[0]:]), own)
            if not logits_close(loaded, dl, dp, own):
                raise InspectError(lens_failure(an, dp, None))
        flat = normed.reshape((L + 1) * s, -1)
        want = nxt.repeat(L + 1)
        vals, idx, nextp = [], [], []
        for start in range(0, flat.shape[0], chunk):
            logits = an.logits(flat[start:start + chunk]).cpu()
            lse = torch.logsumexp(logits, dim=-1, keepdim=True)
            v, i = logits.topk(k, dim=-1)
            vals.append(torch.exp(v - lse))
            idx.append(i)
            w = want[start:start + chunk]
            nextp.append(torch.exp(logits.gather(-1, w[:, None]) - lse)[:, 0])
            report(2 + start // chunk, total)
        top_ids = torch.cat(idx).reshape(L + 1, s, k)
        top_probs = torch.cat(vals).reshape(L + 1, s, k)
        next_probs = torch.cat(nextp).reshape(L + 1, s)
        next_probs[:, -1] = float("nan")
    return top_ids, top_probs, next_probs


def token_position(position, s: int) -> int:
    """``position`` (an int, negative from the end) of a text of ``s`` tokens as 0..s−1;
    InspectError (one line) for anything else."""
    if not is_whole(position) or not -s <= position < s:
        raise InspectError(f"position {position!r} does not exist: the text has tokens 0..{s - 1}")
    return int(position) % s


def top_prediction(loaded, text: str, *, position: int = -1, max_tokens: int | None = None,
                   progress: Callable[[int, int], object] | None = None) -> int:
    """The id of the model's most likely next token after ``position`` of ``text`` (negative:
    from the end): its own output, one forward pass (the last row of the logit lens, without
    the other rows); causal LMs only. ``progress(0, 1)`` is called inside the forward pass
    (:func:`.cancel.checked`); raising from it cancels."""
    an = anatomy_of(loaded)
    an.require_unembedding("A next-token prediction")
    ids, _notice, _n = loaded.tokenize(text, max_tokens=max_tokens)
    p = token_position(position, len(ids))
    with torch.inference_mode(), checked(loaded, progress):
        return int(own_logit_at(loaded, ids, p).argmax())


def own_logit_at(loaded, ids: list[int], p: int) -> torch.Tensor:
    """The model's own logits (V,) after position ``p`` (its own forward pass, LM head and all)."""
    an = anatomy_of(loaded)
    got = an.own_logits(torch.tensor([ids]), keep=torch.tensor([p]))
    if got is not None:
        return got[0][0, 0]
    final = an.forward(torch.tensor([ids])).last_hidden_state[0, p].float()  # (d,)
    return an.logits(final[None])[0]


# ---- direct logit attribution -------------------------------------------------------------
def _frozen_norm(norm, x: torch.Tensor, y: torch.Tensor, tol: float = 1e-3, what: str = "the final norm"):
    """(f, offset, scale): the final norm with its statistics frozen at input ``x`` (d,), as a
    linear map f plus an offset (d,), checked against the real output ``y``."""
    x = x.double()
    name = type(norm).__name__.lower()
    eps = float(getattr(norm, "eps", getattr(norm, "variance_epsilon", 1e-5)) or 0.0)
    w = getattr(norm, "weight", None)
    gamma = torch.ones_like(x) if w is None else w.detach().double().to(x.device)
    b = getattr(norm, "bias", None)
    beta = torch.zeros_like(x) if not isinstance(b, torch.Tensor) else b.detach().double().to(x.device)
    candidates = []
    if "rms" in name:
        scale = float(1.0 / torch.sqrt((x * x).mean() + eps))
        for g in (gamma, 1.0 + gamma):  # Gemma-style norms scale by (1 + weight)
            candidates.append((lambda c, g=g, s=scale: c.double() * s * g, beta, scale))
    else:
        scale = float(1.0 / torch.sqrt(x.var(unbiased=False) + eps))
        candidates.append((lambda c, s=scale: (c.double() - c.double().mean()) * s * gamma,
                           beta, scale))
    ref = y.double()
    for f, off, s in candidates:
        if torch.allclose(f(x) + off, ref, rtol=tol, atol=tol * 0.1 * float(ref.abs().max() + 1)):
            return f, off, s
    raise InspectError(f"{what} ({type(norm).__name__}) could not be reproduced, so its "
                       "scale cannot be frozen for the attribution")


def logit_attribution(loaded, text: str, target, *, position: int = -1,
                      max_tokens: int | None = None,
                      progress: Callable[[int, int], object] | None = None) -> LogitAttribution:
    """Direct logit attribution of ``target`` (token string or id) at ``position`` of ``text``
    (see the module docstring). Pre-norm (or norm-free) causal LMs only. Refused (InspectError
    naming |Δ|) where the parts do not add up to the model's own logit, or where the model's
    opening check (:mod:`.fidelity`) failed. ``progress(done, total)`` is called inside its
    forward pass (:func:`.cancel.checked`) and once the parts are split; raising from it cancels."""
    from .agreement import number, tolerance

    anatomy_of(loaded).require_unembedding("Logit attribution")
    loaded.require_fidelity("attribution")
    with checked(loaded, progress) as report:
        report(0, 1)
        att = attribute(loaded, text, target, position=position, max_tokens=max_tokens)
        report(1, 1)
    gap = abs(anatomy_of(loaded).cap(att.total) - att.logit)
    if gap > 10 * tolerance(loaded) * max(1.0, abs(att.logit)):
        raise InspectError(f"the logit attribution's parts do not add up to the model's own logit: "
                           f"|Δ| {number(gap)} (of {att.logit:.4g}), so they are not shown")
    return att


def attribute(loaded, text: str, target, *, position: int = -1,
              max_tokens: int | None = None) -> LogitAttribution:
    """:func:`logit_attribution` without its checks (what :mod:`.fidelity` measures)."""
    an = anatomy_of(loaded)
    w_u, b_u = an.require_unembedding("Logit attribution")
    if an.norm == "post":
        raise InspectError("Logit attribution needs a pre-norm model: this one normalises the "
                           "residual stream after every block (post-norm), so the logit is not a "
                           "sum of the heads' and MLPs' outputs")
    an.require_heads("Logit attribution")
    ids, notice, _n = loaded.tokenize(text, max_tokens=max_tokens)
    s = len(ids)
    p = token_position(position, s)
    t = resolve_token(loaded, target, "target")
    L, H, dh = loaded.n_layers, loaded.n_heads, loaded.summary.head_dim
    got: dict = {"z": {}, "a": {}, "ain": {}, "m": {}, "in": {}, "out": {}}

    def keep(kind, layer, tensor):
        if tensor.dim() == 2:  # OPT runs its MLP on the flattened (B·S, d) stream
            tensor = tensor.reshape(1, -1, tensor.shape[-1])
        got[kind][layer] = tensor[0, p].detach().double().cpu()

    pre, post = [], []
    for layer in range(L):
        pre.append((an.blocks[layer], lambda _m, a, kw, i=layer: keep("in", i, input_of(a, kw))))
        post.append((an.blocks[layer], lambda _m, _a, o, i=layer: keep("out", i, first_output(o))))
        pre.append((an.out_projs[layer], lambda _m, a, kw, i=layer: keep("z", i, input_of(a, kw, "input"))))
        # what the layer adds to the stream: the attention's output (through Gemma-2's norm after
        # it, whose input is kept to freeze its scale) and the MLP's (through its norm after it)
        attn_post, mlp_post = an.attn_post_norms[layer], an.mlp_post_norms[layer]
        post.append((an.out_projs[layer], lambda _m, _a, o, i=layer: keep("ain", i, first_output(o))))
        post.append((attn_post or an.out_projs[layer], lambda _m, _a, o, i=layer: keep("a", i, first_output(o))))
        if mlp_post is not None or an.mlps[layer] is not None:
            post.append((mlp_post or an.mlps[layer], lambda _m, _a, o, i=layer: keep("m", i, first_output(o))))
    norm_io: dict = {}
    if an.final_norm is not None:
        pre.append((an.final_norm, lambda _m, a, kw: norm_io.__setitem__("x", input_of(a, kw)[0, p])))
        post.append((an.final_norm, lambda _m, _a, o: norm_io.__setitem__("y", first_output(o)[0, p])))
    with torch.inference_mode(), hooked(pre=pre, post=post):
        logit = float(own_logit_at(loaded, ids, p)[t])  # the model's own, after any softcap
    u = w_u[:, t].detach().double().cpu()
    if an.logit_scale is not None:  # Cohere's logit_scale, Granite's 1 / logits_scaling
        u = u * an.logit_scale
    if an.final_proj is not None:  # OPT's project_out after the final norm: u in the stream's space
        u = an.final_proj.weight.detach().double().cpu().t() @ u
    zero = torch.zeros_like(u)

    # the residual stream must be a plain sum of what the heads and MLPs write (up to the
    # rounding of the model's dtype, relative to the stream's size)
    dtype = next(loaded.model.parameters()).dtype
    tol = max(1e-3, 4 * torch.finfo(dtype).eps) if dtype.is_floating_point else 1e-3

    def close(a, b, scale) -> bool:
        return bool(torch.allclose(a, b, rtol=tol, atol=tol * (float(scale.abs().max()) + 1e-6)))

    for layer in range(L):
        delta = got["out"][layer] - got["in"][layer]
        if not close(an.residual_scale * (got["a"][layer] + got["m"].get(layer, zero)), delta, got["out"][layer]):
            raise InspectError(f"layer {layer} adds more to the residual stream than its attention "
                               "and MLP outputs (a post-norm model, or extra norms), so the logit "
                               "does not split into them")
    resid = got["out"][L - 1]
    if an.final_norm is not None:
        f, offset, scale = _frozen_norm(an.final_norm, norm_io["x"].detach().cpu(),
                                        norm_io["y"].detach().cpu(), tol)
    else:
        f, offset, scale = (lambda c: c.double()), zero, None
    heads = np.zeros((L, H))
    parts: dict[str, float] = {"embeddings": float(f(got["in"][0]) @ u)}
    bias_total = float(offset @ u) + (0.0 if b_u is None else float(b_u[t]) * (an.logit_scale or 1.0))
    rs = an.residual_scale  # Granite: the stream gets rs × what attention and MLP output
    for layer in range(L):
        z = got["z"][layer].reshape(H, dh)
        w_o, b_o = an.output_weights(layer)  # (H, Dh, d), (d,)
        contrib = rs * torch.einsum("hd,hde->he", z, w_o.double())  # (H, d)
        f_a = None
        if an.attn_post_norms[layer] is not None:  # its scale frozen at this run's attention output
            f_a, off_a, _s = _frozen_norm(an.attn_post_norms[layer], got["ain"][layer], got["a"][layer],
                                          tol, f"the norm after layer {layer}'s attention")
            bias_total += float(f(rs * off_a) @ u)

        def g(c, f_a=f_a):
            return f(c if f_a is None else f_a(c))

        for h in range(H):
            heads[layer, h] = float(g(contrib[h]) @ u)
        if b_o is not None:
            bias_total += float(g(rs * b_o.double()) @ u)
        if layer in got["m"]:
            parts[f"mlp {layer}"] = float(f(rs * got["m"][layer]) @ u)
    parts["biases"] = bias_total
    total = float(heads.sum() + sum(parts.values()))
    notes = [] if notice is None else [notice]
    if dtype in (torch.float16, torch.bfloat16):
        notes.append(f"the model runs in {str(dtype).replace('torch.', '')}: the parts add up to "
                     "the logit only to that precision")
    if not close(got["in"][0] + rs * (sum(got["a"].values()) + sum(got["m"].values(), zero)), resid, resid):
        notes.append("the parts do not add up to the final residual stream exactly")
    if an.softcap is not None:
        notes.append(f"this model caps its logits ({an.softcap:g} · tanh(z / {an.softcap:g})): the "
                     f"parts add up to z = {total:.4g}, which the cap turns into its logit {logit:.4g}")
    return LogitAttribution(tokens=loaded.tokens_of(ids), position=p, target_id=t,
                            target=loaded.tokens_of([t])[0], heads=heads, parts=parts,
                            logit=logit, total=total, norm_scale=scale, notes=notes)
