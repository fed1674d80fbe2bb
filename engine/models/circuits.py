"""What a head computes from its weights: the QK and OV circuits, and the Q/K space.

Row-vector convention throughout, as TransformerLens writes it: a residual vector x (d,)
gives the query x @ W_Q, the key x @ W_K, the value x @ W_V, and a head output z gives
z @ W_O. So the attention score of a query vector x_q on a key vector x_k is
x_q @ W_QK @ x_kᵀ with **W_QK = W_Q W_Kᵀ** (d, d), and what a key vector writes into the
residual stream when fully attended is x_k @ W_OV with **W_OV = W_V W_O** (d, d)
(Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits"). Biases are not part
of the circuits; neither are RoPE's rotations (a RoPE model's scores also depend on the
distance between the tokens), the 1/√Dh scale or the norms before the attention.

With token embeddings W_E (V, d) and an unembedding W_U (d, V), the *full* circuits are
W_E W_QK W_Eᵀ (query token × key token) and W_E W_OV W_U (attended token × output token).
The **copying score** is Σλ / Σ|λ| over the eigenvalues λ of W_E W_OV W_U (Elhage et al.):
near 1 when attending to a token raises that same token's logit. Its non-zero eigenvalues
are those of the Dh × Dh matrix W_O W_U W_E W_V (eig(AB) = eig(BA) away from 0), which is
what is computed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import torch

from ..qk_space import project_qk as _project_qk
from .anatomy import anatomy_of, cache_of, special_ids, vocab_size
from .cancel import checked
from .errors import InspectError, is_whole

#: vocabularies up to this size are searched whole for the top token pairs; larger ones
#: over their first PAIR_VOCAB ordinary ids (for byte-level BPE, the earliest merges)
PAIR_VOCAB = 8192


@dataclass(frozen=True)
class TokenPair:
    """One entry of a full circuit: ``row`` token (query / attended), ``col`` token (key /
    output) and the entry's value."""

    row_id: int
    col_id: int
    row: str
    col: str
    value: float


@dataclass(eq=False)
class HeadCircuits:
    """The circuits of one head. Matrices are float32 NumPy arrays.

    ``w_q``, ``w_k``, ``w_v`` (d, Dh), ``w_o`` (Dh, d); for GQA ``w_k``/``w_v`` belong to
    ``kv_head``, the KV head this query head reads. ``qk`` = w_q @ w_k.T and ``ov`` =
    w_v @ w_o (d, d), computed on first access. ``qk_singular``/``ov_singular`` (Dh,): their
    non-zero singular values, descending (both have rank ≤ Dh). ``ov_eigenvalues`` (Dh,)
    complex, the non-zero eigenvalues of the full OV circuit W_E·OV·W_U, and
    ``copying_score`` Σλ/Σ|λ|: None without embeddings and unembedding. ``qk_pairs`` /
    ``ov_pairs``: the largest entries of the full QK / OV circuits over ``pair_vocab`` tokens
    (None where the model lacks W_E, resp. W_U).
    """

    layer: int
    head: int
    kv_head: int
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    qk_singular: np.ndarray
    ov_singular: np.ndarray
    ov_eigenvalues: np.ndarray | None
    copying_score: float | None
    qk_pairs: list[TokenPair] | None = None
    ov_pairs: list[TokenPair] | None = None
    pair_vocab: int = 0
    notes: list[str] = field(default_factory=list)

    @cached_property
    def qk(self) -> np.ndarray:
        return self.w_q @ self.w_k.T

    @cached_property
    def ov(self) -> np.ndarray:
        return self.w_v @ self.w_o


def product_singular_values(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Singular values of a @ b.T for a, b (d, r), r ≤ d, without forming the (d, d) product:
    with a = Q_a R_a and b = Q_b R_b, a bᵀ = Q_a (R_a R_bᵀ) Q_bᵀ."""
    _qa, ra = np.linalg.qr(a.astype(np.float64))
    _qb, rb = np.linalg.qr(b.astype(np.float64))
    return np.linalg.svd(ra @ rb.T, compute_uv=False)


def unembed_embed(w_u: torch.Tensor, w_e: torch.Tensor, check: Callable[[], None] = lambda: None
                  ) -> torch.Tensor:
    """W_U W_E (d, d) in float64 for W_U (d, V) and W_E (V', d), over their first
    min(V, V') tokens, summed a block of tokens at a time: no float64 copy of either matrix
    (GPT-2's would be 2 × 309 MB), at most 16 MiB of them at once; ``check()`` before each
    block (a cancel raises from it)."""
    n = min(w_u.shape[1], w_e.shape[0])
    out = torch.zeros(w_u.shape[0], w_e.shape[1], dtype=torch.float64)
    step = max(1, 2**21 // max(w_u.shape[0], w_e.shape[1]))  # tokens per block
    for a in range(0, n, step):
        check()
        out += w_u[:, a:a + step].double() @ w_e[a:a + step].double()
    return out


def check_head(loaded, layer, head) -> tuple[int, int]:
    for name, value, n in (("layer", layer, loaded.n_layers), ("head", head, loaded.n_heads)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise InspectError(f"{name} must be an integer, not {value!r}")
        if not -n <= value < n:
            raise InspectError(f"{name} {value} does not exist: this model has {name}s 0..{n - 1}")
    return int(layer) % loaded.n_layers, int(head) % loaded.n_heads


def _pair_ids(loaded, vocab) -> np.ndarray:
    if vocab is not None:
        return _vocab_ids(vocab, vocab_size(loaded))
    cache = cache_of(loaded)
    if "pair_ids" not in cache:
        specials = special_ids(loaded.tokenizer)
        ids = [i for i in range(vocab_size(loaded)) if i not in specials]
        cache["pair_ids"] = np.asarray(ids[:PAIR_VOCAB], dtype=np.int64)
    return cache["pair_ids"]


def _vocab_ids(vocab, n: int) -> np.ndarray:
    """The distinct token ids (ascending) of ``vocab``, an iterable of ids in 0..n−1;
    InspectError (one line) for anything else, before a long iterable is read."""
    def refuse(why: str):
        return InspectError(f"vocab must hold token ids (whole numbers in 0..{n - 1}): {why}")

    if isinstance(vocab, str | bytes) or not hasattr(vocab, "__iter__"):
        raise refuse(f"got {type(vocab).__name__}")
    if isinstance(vocab, range):  # checked by its ends, not read id by id
        if len(vocab) and (min(vocab[0], vocab[-1]) < 0 or max(vocab[0], vocab[-1]) >= n):
            raise refuse(f"{vocab!r} goes outside them")
    size = len(vocab) if hasattr(vocab, "__len__") else None
    if size is not None and size > 4 * n:
        raise refuse(f"it has {size} entries for {n} ids")
    items = []
    for item in vocab:  # (an endless iterator stops at 4·n entries)
        items.append(item)
        if len(items) > 4 * n:
            raise refuse(f"more than {4 * n} entries for {n} ids")
    bad = next((x for x in items if not is_whole(x)), None)
    if bad is not None:
        raise refuse(f"{bad!r} is not an id")
    ids = np.unique(np.asarray(items, dtype=np.int64))
    if ids.size == 0:
        raise refuse("it is empty")
    if ids.min() < 0 or ids.max() >= n:
        raise refuse(f"{int(ids.min() if ids.min() < 0 else ids.max())} is not one")
    return ids


def _top_pairs(loaded, left: torch.Tensor, right: torch.Tensor, ids: np.ndarray, k: int,
               check: Callable[[], None] = lambda: None) -> list[TokenPair]:
    """The k largest entries of left @ right.T (n, n), computed in row chunks (``check()``
    before each). A chunk's k largest are among its rows' k largest: each row's top k
    first, then the top k of those (a top k of the flat block was ~7× slower on this CPU)."""
    best_v = torch.empty(0)
    best_i = torch.empty(0, dtype=torch.long)
    n = left.shape[0]
    chunk = max(1, 2**22 // max(n, 1))
    for start in range(0, n, chunk):
        check()
        block = left[start:start + chunk] @ right.T  # (c, n)
        row_v, row_j = block.topk(min(k, block.shape[1]), dim=1)  # (c, k') each row's best
        v, pick = row_v.reshape(-1).topk(min(k, row_v.numel()))
        rows = pick // row_v.shape[1] + start  # (k,) rows of the whole product
        i = rows * n + row_j.reshape(-1)[pick]
        best_v = torch.cat([best_v, v])
        best_i = torch.cat([best_i, i])
        keep = best_v.topk(min(k, best_v.numel()))
        best_v, best_i = keep.values, best_i[keep.indices]
    rows, cols = (best_i // n).numpy(), (best_i % n).numpy()
    row_ids, col_ids = ids[rows], ids[cols]
    names = loaded.tokens_of([int(x) for x in np.concatenate([row_ids, col_ids])])
    m = len(row_ids)
    return [TokenPair(int(row_ids[j]), int(col_ids[j]), names[j], names[m + j], float(best_v[j]))
            for j in range(m)]


def head_circuits(loaded, layer: int, head: int, *, top: int = 10, vocab=None,
                  progress: Callable[[int, int], object] | None = None) -> HeadCircuits:
    """The circuits of (``layer``, ``head``); see :class:`HeadCircuits` and the module
    docstring. ``top``: how many token pairs; ``vocab``: token ids to search the full
    circuits over (default: the whole vocabulary up to :data:`PAIR_VOCAB` ordinary tokens).
    ``progress(0, 1)`` is called before each block of W_U·W_E and of the token-pair search;
    raising from it cancels."""
    layer, head = check_head(loaded, layer, head)
    if not is_whole(top) or top < 0:
        raise InspectError(f"top must be an integer >= 0, not {top!r}")
    top = int(top)

    def check() -> None:
        if progress is not None:
            progress(0, 1)

    an = anatomy_of(loaded)
    hw = an.head_weights(layer)
    kv = loaded.kv_head_of[head]
    w_q, w_k, w_v, w_o = hw.w_q[head], hw.w_k[kv], hw.w_v[kv], hw.w_o[head]
    notes = []
    cfg = loaded.model.config
    if getattr(cfg, "rope_theta", None) is not None or getattr(cfg, "rope_parameters", None):
        notes.append("RoPE rotates queries and keys by position: the QK circuit is the "
                     "score of two tokens at the same position")
    w_e = an.embedding_matrix()
    unemb = an.unembedding() if an.causal else None
    w_u = None if unemb is None else unemb[0].detach().float().cpu()
    eig = copying = None
    if w_e is not None and w_u is not None:
        cache = cache_of(loaded)
        if "w_ue" not in cache:  # W_U W_E (d, d), the same for every head
            cache["w_ue"] = unembed_embed(w_u, w_e, check)
        small = w_o.double() @ cache["w_ue"] @ w_v.double()  # (Dh, Dh)
        eig = np.linalg.eigvals(small.numpy())
        total = float(np.abs(eig).sum())
        copying = float(eig.sum().real / total) if total > 0 else 0.0
    qk_pairs = ov_pairs = None
    ids = np.zeros(0, dtype=np.int64)
    if w_e is not None and top > 0:
        ids = _pair_ids(loaded, vocab)
        e = w_e[torch.as_tensor(ids)]
        qk_pairs = _top_pairs(loaded, e @ w_q, e @ w_k, ids, top, check)
        if w_u is not None:
            ov_pairs = _top_pairs(loaded, e @ w_v @ w_o, w_u[:, torch.as_tensor(ids)].T.contiguous(),
                                  ids, top, check)
    return HeadCircuits(
        layer=layer, head=head, kv_head=kv,
        w_q=w_q.numpy(), w_k=w_k.numpy(), w_v=w_v.numpy(), w_o=w_o.numpy(),
        qk_singular=product_singular_values(w_q.numpy(), w_k.numpy()),
        ov_singular=product_singular_values(w_v.numpy(), w_o.numpy().T),
        ov_eigenvalues=eig, copying_score=copying, qk_pairs=qk_pairs, ov_pairs=ov_pairs,
        pair_vocab=int(ids.size), notes=notes,
    )


# ---- Q/K space ------------------------------------------------------------------------------
@dataclass(eq=False)
class QKEmbedding:
    """The queries and keys of one head over one or several texts, in one PCA space.

    ``points`` (n_q + n_k, dims): every text's queries first (text by text), then every
    text's keys; ``kinds[i]`` "query" or "key", ``tokens[i]`` its token, ``text_index[i]``
    which text, ``positions[i]`` its position there. ``explained`` (dims,): the share of the
    total variance each component explains, descending. ``components`` (dims, Dh) and
    ``mean`` (Dh,) map a vector v to (v − mean) @ components.T. Queries and keys are what the
    model multiplies (after RoPE, before the 1/√Dh scale).
    """

    layer: int
    head: int
    kv_head: int
    points: np.ndarray
    kinds: list[str]
    tokens: list[str]
    text_index: list[int]
    positions: list[int]
    explained: np.ndarray
    components: np.ndarray
    mean: np.ndarray


def project_qk(queries, keys, *, dims: int = 2
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`engine.qk_space.project_qk` (one PCA over queries (n_q, Dh) and keys (n_k, Dh)
    together: points (n_q + n_k, dims) queries first, explained variance ratios (dims,),
    components (dims, Dh), mean (Dh,)), refusing with InspectError. The sliders' layer
    (``trace.q[b, h]``, ``trace.k[b, kv]``) has `engine.qk_space.head_qk_space`."""
    try:
        return _project_qk(queries, keys, dims=dims)
    except ValueError as exc:
        raise InspectError(str(exc)) from None


def qk_embedding(loaded, texts, layer: int, head: int, *, dims: int = 2,
                 max_tokens: int | None = None,
                 progress: Callable[[int, int], object] | None = None) -> QKEmbedding:
    """One PCA over the queries of ``head`` and the keys of its KV head, for every text.

    ``progress(done, total)`` (total: the texts + 1) is called before each text's forward
    pass and before the PCA, and with the same count inside each forward pass
    (:func:`.cancel.checked`): raising from it cancels within a block."""
    layer, head = check_head(loaded, layer, head)
    if isinstance(texts, str):
        texts = [texts]
    texts = list(texts)
    if not texts:
        raise InspectError("give at least one text")
    kv = loaded.kv_head_of[head]
    qs, ks, toks, where = [], [], [], []
    total = len(texts) + 1
    with checked(loaded, progress) as report:  # a cancel is seen inside each forward pass too
        for ti, text in enumerate(texts):
            report(ti, total)
            trace = loaded.inspect(text, layers=[layer], max_tokens=max_tokens)
            qs.append(trace.queries[0][head].float().cpu())
            ks.append(trace.keys[0][kv].float().cpu())
            toks.append(trace.tokens)
            where.append(ti)
        report(len(texts), total)
    points, explained, comps, mean = project_qk(torch.cat(qs), torch.cat(ks), dims=dims)
    flat_tokens = [t for tt in toks for t in tt]
    text_index = [ti for ti, tt in zip(where, toks, strict=True) for _ in tt]
    positions = [p for tt in toks for p in range(len(tt))]
    nq = len(flat_tokens)
    return QKEmbedding(
        layer=layer, head=head, kv_head=kv, points=points.astype(np.float32),
        kinds=["query"] * nq + ["key"] * nq, tokens=flat_tokens * 2, text_index=text_index * 2,
        positions=positions * 2, explained=explained.astype(np.float64),
        components=comps.astype(np.float32), mean=mean.astype(np.float32),
    )
