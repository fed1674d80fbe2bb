"""The seed's ways out of O(n²) (issue 45) checked against docs/contract.md's definitions, not the
engine's code: every reference below is written out here in float64 from the AttentionConfig
table (kernel, n_features, global_tokens, summary_block) and the "Efficient attention" section,
fed with the trace's own q, k, v (the public fields), and compared with the trace's weights,
context and output."""

from __future__ import annotations

import math

import pytest
import torch

import engine
from engine import AttentionConfig, ConfigError, run
from engine.seeding import generator


# ---- the definitions, written out ------------------------------------------------------------
def ref_mask(cfg: AttentionConfig) -> torch.Tensor:
    """(S, Skv) bool from the config table: causal bottom-right, window, pad, global tokens."""
    S, Skv, g = cfg.seq_len, cfg.key_len, cfg.global_tokens
    m = torch.zeros(S, Skv, dtype=torch.bool)
    for i in range(S):
        p = i + (Skv - S)
        for j in range(Skv):
            if j >= Skv - cfg.pad or (cfg.causal and j > p):
                continue
            if cfg.window is None:
                local = True
            elif cfg.causal:
                local = p - cfg.window < j <= p
            else:
                local = abs(p - j) < cfg.window
            m[i, j] = local or j < g or (g > 0 and p < g)
    return m


def elu_plus_one(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x > 0, x + 1.0, torch.exp(x))


def performer_phi(x: torch.Tensor, w: torch.Tensor, scale: float) -> torch.Tensor:
    """φ(x) = exp(W·x' − ‖x'‖²/2)/√m, x' = x·√scale (scale > 0 here)."""
    xs = x * math.sqrt(scale)
    return torch.exp(xs @ w.T - 0.5 * (xs * xs).sum(-1, keepdim=True)) / math.sqrt(w.shape[0])


def documented_w(cfg: AttentionConfig) -> torch.Tensor:
    """W as engine.efficient.features.performer_matrix documents its draw."""
    m, dh = cfg.n_features, cfg.head_dim
    return torch.randn(m, dh, generator=generator(cfg.seed, f"performer:{m}x{dh}")).double()


def heads(tr):
    """(b, h, Q, K, V) float64 for every batch row and query head (K, V of its KV head)."""
    cfg = tr.config
    for b in range(cfg.batch):
        for h in range(cfg.n_heads):
            kv = h // (cfg.n_heads // cfg.kv_heads)
            yield b, h, tr.q[b, h].double(), tr.k[b, kv].double(), tr.v[b, kv].double()


def kernel_weights(tr, phi) -> torch.Tensor:
    """(B, H, S, Skv): φ(q_i)·φ(k_j) / Σ over the visible keys j'."""
    cfg = tr.config
    mask = ref_mask(cfg)
    out = torch.zeros(cfg.batch, cfg.n_heads, cfg.seq_len, cfg.key_len, dtype=torch.float64)
    for b, h, q, k, _v in heads(tr):
        a = (phi(q) @ phi(k).T) * mask
        out[b, h] = a / a.sum(-1, keepdim=True)
    return out


def softmax_weights(tr, mask: torch.Tensor | None = None) -> torch.Tensor:
    cfg = tr.config
    mask = ref_mask(cfg) if mask is None else mask
    out = torch.zeros(cfg.batch, cfg.n_heads, cfg.seq_len, cfg.key_len, dtype=torch.float64)
    for b, h, q, k, _v in heads(tr):
        s = (q @ k.T) * cfg.effective_scale
        if cfg.positional == "alibi":
            slope = 2.0 ** (-8.0 * (h + 1) / cfg.n_heads)  # Press et al., H a power of two
            pos = torch.arange(cfg.seq_len) + cfg.key_len - cfg.seq_len
            s = s - slope * (pos[:, None] - torch.arange(cfg.key_len)[None, :]).abs()
        out[b, h] = torch.softmax(s.masked_fill(~mask, -math.inf), -1)
    return out


def hierarchical(tr) -> tuple[torch.Tensor, torch.Tensor]:
    """(weights (B, H, S, Skv), context (B, H, S, Dh)) of summary_block, row by row: the own
    block's keys exactly, one (mean key, mean value) per other block, one softmax; a summary's
    weight spread evenly over its block's keys."""
    cfg = tr.config
    S, Skv, bs = cfg.seq_len, cfg.key_len, cfg.summary_block
    real = Skv - cfg.pad
    blocks = [[j for j in range(c, min(c + bs, Skv)) if j < real] for c in range(0, Skv, bs)]
    W = torch.zeros(cfg.batch, cfg.n_heads, S, Skv, dtype=torch.float64)
    C = torch.zeros(cfg.batch, cfg.n_heads, S, cfg.head_dim, dtype=torch.float64)
    for b, h, q, k, v in heads(tr):
        for i in range(S):
            p = i + Skv - S
            own = p // bs
            logits, values, spread = [], [], []
            for c, keys in enumerate(blocks):
                if c == own:
                    for j in keys:
                        if not cfg.causal or j <= p:
                            logits.append(cfg.effective_scale * float(q[i] @ k[j]))
                            values.append(v[j])
                            spread.append([j])
                elif keys and (not cfg.causal or c < own):
                    logits.append(cfg.effective_scale * float(q[i] @ k[keys].mean(0)))
                    values.append(v[keys].mean(0))
                    spread.append(keys)
            w = torch.softmax(torch.tensor(logits, dtype=torch.float64), 0)
            for wt, val, keys in zip(w, values, spread, strict=True):
                C[b, h, i] += wt * val
                for j in keys:
                    W[b, h, i, j] += wt / len(keys)
    return W, C


def merged_output(tr, context: torch.Tensor) -> torch.Tensor:
    B, H, S, Dh = context.shape
    return context.transpose(1, 2).reshape(B, S, H * Dh) @ tr.weights_used.w_o.double()


def check(tr, weights: torch.Tensor, context: torch.Tensor | None = None, atol: float = 2e-5) -> None:
    """The trace's weights, context and output equal the reference's."""
    if context is None:  # weights · V, V of each query head's KV head
        context = torch.zeros(*weights.shape[:3], tr.config.head_dim, dtype=torch.float64)
        for b, h, _q, _k, v in heads(tr):
            context[b, h] = weights[b, h] @ v
    torch.testing.assert_close(tr.weights.double(), weights, atol=atol, rtol=1e-4)
    torch.testing.assert_close(tr.context.double(), context, atol=atol * 5, rtol=1e-4)
    torch.testing.assert_close(tr.output.double(), merged_output(tr, context), atol=atol * 20, rtol=1e-3)


# ---- the config ------------------------------------------------------------------------------
def test_new_fields_default_and_round_trip():
    cfg = AttentionConfig()
    assert (cfg.kernel, cfg.n_features, cfg.global_tokens, cfg.summary_block) == ("softmax", 64, 0, None)
    for c in (AttentionConfig(kernel="performer", n_features=16, window=4, global_tokens=2, causal=True),
              AttentionConfig(summary_block=3, causal=True, pad=1)):
        d = c.to_dict()
        assert AttentionConfig.from_dict(d) == c
        assert {"kernel", "n_features", "global_tokens", "summary_block"} <= set(d)
    old = {k: v for k, v in AttentionConfig(seq_len=12).to_dict().items()
           if k not in ("kernel", "n_features", "global_tokens", "summary_block")}
    assert AttentionConfig.from_dict(old) == AttentionConfig(seq_len=12)  # an old session's config
    with pytest.raises(ConfigError, match=r"unknown config field.*kernal"):
        AttentionConfig.from_dict({**old, "kernal": "linear"})


@pytest.mark.parametrize(("kw", "words"), [
    (dict(kernel="lin"), "kernel must be one of"),
    (dict(kernel="linear", positional="alibi"), "kernel='linear' cannot take positional='alibi'"),
    (dict(kernel="performer", positional="alibi"), "ALiBi is a bias inside the softmax"),
    (dict(summary_block=4, window=3), "summary_block cannot take a window"),
    (dict(summary_block=4, global_tokens=1), "summary_block cannot take global_tokens"),
    (dict(summary_block=4, kernel="linear"), "summary_block needs kernel='softmax'"),
    (dict(global_tokens=9), "global_tokens must be between 0 and 8"),
    (dict(global_tokens=-1), "global_tokens"),
    (dict(n_features=0), "n_features must be between 1"),
    (dict(n_features=2.5), "n_features must be an integer"),
    (dict(summary_block=0), "summary_block must be between 1"),
])
def test_combinations_without_a_definition_are_refused_by_name(kw, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(")):
        AttentionConfig(**kw)


# ---- linear and performer ---------------------------------------------------------------------
KERNEL_CASES = [
    dict(seq_len=11),
    dict(seq_len=11, causal=True, batch=2),
    dict(seq_len=9, kv_len=14, causal=True, n_kv_heads=2, pad=2),
    dict(seq_len=13, window=3),
    dict(seq_len=13, causal=True, window=4, global_tokens=2),
    dict(seq_len=90, causal=True, window=20, positional="rope"),
]
KERNEL_IDS = ["full", "causal-batch", "cross-gqa-pad", "window", "window-global", "long-window-rope"]


@pytest.mark.parametrize("kw", KERNEL_CASES, ids=KERNEL_IDS)
def test_linear_kernel_equals_its_definition(kw):
    tr = run(AttentionConfig(d_model=32, kernel="linear", seed=3, **kw))
    assert torch.equal(tr.mask, ref_mask(tr.config))
    check(tr, kernel_weights(tr, elu_plus_one))


@pytest.mark.parametrize("kw", KERNEL_CASES, ids=KERNEL_IDS)
def test_performer_equals_its_definition_with_the_documented_features(kw):
    cfg = AttentionConfig(d_model=32, kernel="performer", n_features=24, seed=7, **kw)
    tr = run(cfg)
    w = documented_w(cfg)
    check(tr, kernel_weights(tr, lambda x: performer_phi(x, w, cfg.effective_scale)))


def test_performer_error_against_softmax_falls_as_n_features_grows():
    """E[φ(q)·φ(k)] = exp(scale·q·k): the more random features, the closer to softmax. (The
    estimator's relative variance grows like exp(‖q' + k'‖²)/m: small weights (init_std 0.05)
    keep ‖q'‖ near 1, where a few hundred features already tell the trend apart from noise.)"""
    tv = {}
    for m in (4, 32, 512):
        errs = []
        for seed in range(4):
            tr = run(AttentionConfig(d_model=32, n_heads=2, seq_len=24, kernel="performer", n_features=m, seed=seed,
                                     init_std=0.05))
            errs.append(0.5 * (tr.weights.double() - softmax_weights(tr)).abs().sum(-1).mean())
        tv[m] = float(sum(errs) / len(errs))
    assert tv[4] > tv[32] > tv[512], tv
    assert tv[512] < tv[4] / 4, tv


# ---- local ∪ global ----------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [
    dict(seq_len=16, window=3, global_tokens=2),
    dict(seq_len=16, window=2, global_tokens=3, causal=True),
    dict(seq_len=7, kv_len=19, window=4, global_tokens=5, causal=True, pad=3, n_kv_heads=1),
    dict(seq_len=12, window=3, global_tokens=2, positional="alibi", batch=2),
    dict(seq_len=10, global_tokens=4, pad=2),
], ids=["bidirectional", "causal", "cross-pad-mqa", "alibi", "no-window"])
def test_local_and_global_is_softmax_over_the_union(kw):
    tr = run(AttentionConfig(d_model=32, seed=2, **kw))
    want = ref_mask(tr.config)
    assert torch.equal(tr.mask, want)
    assert torch.equal(tr.key_ranges.counts(), want.sum(-1))  # still ranges, O(S)
    check(tr, softmax_weights(tr, want))


def test_local_and_global_rows_of_the_first_positions_see_everything():
    tr = run(AttentionConfig(seq_len=12, window=2, global_tokens=3))
    m = tr.mask
    assert m[:3].all()  # global queries: every key
    assert m[:, :3].all()  # every query: the global keys
    assert m[8].tolist() == [True] * 3 + [False] * 4 + [True] * 3 + [False] * 2  # two ranges


def test_a_key_whose_scores_overflow_leaves_the_rows_that_may_not_see_it_alone():
    """Key 10's embedding is 1e38 everywhere: its key and value stay finite, but its score with
    some rows overflows float32 to +inf. The rows whose mask hides it (all but 10 and 11: window 2,
    causal) still equal softmax over the keys they see, though key 10 lies inside the window of
    keys their block of rows reads."""
    cfg = AttentionConfig(d_model=32, seq_len=16, window=2, global_tokens=1, causal=True, seed=7)
    x = torch.randn(1, 16, 32, generator=torch.Generator().manual_seed(7))
    x[0, 10] = 1e38
    tr = run(cfg, x)
    mask = ref_mask(cfg)
    rows = [i for i in range(16) if not mask[i, 10]]
    assert rows == [i for i in range(16) if i not in (10, 11)]
    assert bool(torch.isfinite(tr.k).all()) and bool(torch.isfinite(tr.v).all())
    hidden = (tr.q[0, :, rows] * cfg.effective_scale @ tr.k[0, :, 10, :, None]).squeeze(-1)  # (H, rows)
    assert bool((hidden == math.inf).any())  # masked scores that overflow
    for _b, h, q, k, v in heads(tr):
        for i in rows:
            seen = mask[i]
            w = torch.softmax((k[seen] @ q[i]) * cfg.effective_scale, 0)
            torch.testing.assert_close(tr.context[0, h, i].double(), w @ v[seen], atol=1e-5, rtol=1e-4)


# ---- hierarchical ------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [
    dict(seq_len=10, summary_block=3),
    dict(seq_len=10, summary_block=3, causal=True),
    dict(seq_len=4, kv_len=11, summary_block=4, causal=True, pad=2, n_kv_heads=2),
    dict(seq_len=9, summary_block=1, causal=True),
    dict(seq_len=9, summary_block=20),
], ids=["bidirectional", "causal-short-last-block", "cross-pad-gqa", "blocks-of-one", "one-block"])
def test_hierarchical_equals_its_definition(kw):
    tr = run(AttentionConfig(d_model=32, seed=4, **kw))
    weights, context = hierarchical(tr)
    check(tr, weights, context)
    assert torch.allclose(tr.weights.double().sum(-1), torch.ones(1, dtype=torch.float64), atol=1e-5)


def test_one_block_is_full_attention_and_blocks_of_one_too():
    """A block as long as the sequence has no other block; blocks of one key have summaries
    equal to their key: both are exactly full softmax attention."""
    for kw in (dict(summary_block=64), dict(summary_block=1)):
        tr = run(AttentionConfig(seq_len=12, causal=True, **kw))
        full = run(AttentionConfig(seq_len=12, causal=True))
        torch.testing.assert_close(tr.weights, full.weights, atol=1e-6, rtol=1e-5)


# ---- every panel reads the implicit matrix --------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(kernel="linear", causal=True), dict(window=3, global_tokens=2),
                                dict(summary_block=4, causal=True)], ids=["linear", "local+global", "hier"])
def test_grids_are_lazy_and_agree_head_by_head(kw):
    tr = run(AttentionConfig(seq_len=20, **kw))
    assert not tr.holds_grids  # nothing held until a grid is read
    h1 = tr.head_grid("weights", 1)
    torch.testing.assert_close(h1, tr.weights[0, 1])
    torch.testing.assert_close(torch.softmax(tr.scores.float(), -1), tr.weights.float(), atol=1e-6, rtol=1e-5)
    ent = -(tr.weights * tr.weights.clamp_min(1e-30).log()).sum(-1)
    torch.testing.assert_close(tr.entropy, ent, atol=1e-5, rtol=1e-4)
    assert tr.backend_max_abs_diff is None  # eager: nothing to compare with (the contract)


@pytest.mark.parametrize("kw", [dict(kernel="linear", causal=True), dict(kernel="performer"),
                                dict(window=3, global_tokens=2), dict(summary_block=4, causal=True)],
                         ids=["linear", "performer", "local+global", "hier"])
def test_a_variants_max_abs_diff_is_none_on_eager_and_its_formula_on_a_fused_backend(kw):
    """docs/contract.md: backend_max_abs_diff is None for the eager backend, a variant's too;
    on sdpa or flash the variant's own algorithm is checked against the eager formula of its
    own attention matrix (its weights · V through W_O), not against full softmax."""
    eager = run(AttentionConfig(seq_len=20, **kw))
    assert eager.backend_max_abs_diff is None and eager.eager_output is None
    for backend in ("sdpa", "flash"):
        tr = run(AttentionConfig(seq_len=20, backend=backend, **kw))
        context = tr.weights @ torch.repeat_interleave(tr.v, tr.config.n_heads // tr.config.kv_heads, dim=1)
        torch.testing.assert_close(tr.context, context, atol=1e-5, rtol=1e-4)
        assert 0 <= tr.backend_max_abs_diff < 1e-5
        full = run(AttentionConfig(seq_len=20, backend=backend, causal=kw.get("causal", False)))
        off = float((tr.output - full.output).abs().max())
        assert off > 1e-3 and tr.backend_max_abs_diff < off / 100  # not the distance to full softmax


def test_fully_masked_rows_follow_the_mask_value():
    for mv, nan in (("-inf", True), ("min", False)):
        tr = run(AttentionConfig(seq_len=6, pad=6, kernel="linear", mask_value=mv))
        assert bool(torch.isnan(tr.context).all()) == nan
        if not nan:  # a softmax of equal scores: the mean value
            torch.testing.assert_close(tr.context[0, 0], tr.v[0, 0].mean(0).expand(6, -1))


# ---- the report ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(kernel="linear", causal=True), dict(kernel="performer", n_features=32),
                                dict(window=4, global_tokens=2, causal=True), dict(summary_block=5)],
                         ids=["linear", "performer", "local+global", "hierarchical"])
def test_approximation_report_equals_the_error_of_the_two_runs(kw):
    cfg = AttentionConfig(d_model=32, seq_len=30, seed=1, **kw)
    rep = engine.approximation_report(cfg)
    # docs/contract.md: the same config with kernel="softmax", window=None, global_tokens=0, summary_block=None
    full = AttentionConfig.from_dict({**cfg.to_dict(), "kernel": "softmax", "window": None, "global_tokens": 0,
                                      "summary_block": None})
    a, f = run(cfg), run(full)
    rel = float((a.output.double() - f.output.double()).norm() / f.output.double().norm())
    tv = float(0.5 * (a.weights.double() - f.weights.double()).abs().sum(-1).mean())
    assert rep.full_config == full
    assert rep.output_rel_error == pytest.approx(rel, rel=1e-6)
    assert rep.weights_tv == pytest.approx(tv, rel=1e-5)
    assert rep.flops > 0 and rep.flops_full > 0 and rep.bytes > 0 and rep.bytes_full > 0


def test_at_length_the_variants_cost_less_than_full_attention():
    for kw in (dict(kernel="linear"), dict(window=64, global_tokens=4), dict(summary_block=64)):
        cfg = AttentionConfig(d_model=64, seq_len=4096, causal=True, **kw)
        full = cfg.replace(kernel="softmax", window=None, global_tokens=0, summary_block=None)
        est, est_full = engine.memory_estimate(cfg), engine.memory_estimate(full)
        assert est["total"] < est_full["total"] / 4, kw
        from engine.efficient.costs import flops

        assert flops(cfg) < flops(full) / 2, kw


@pytest.mark.parametrize("kw", [dict(kernel="linear"), dict(kernel="performer", n_features=16),
                                dict(window=3, global_tokens=4), dict(summary_block=4, pad=2)],
                         ids=["linear", "performer", "local+global", "hierarchical"])
def test_decoding_through_the_kv_cache_equals_the_causal_run(kw):
    """docs/contract.md: engine.decode(config) equals run(replace(config, causal=True)).output, for the
    variants too (a token at a time: the global keys reached so far, the summaries of the blocks
    complete so far)."""
    cfg = AttentionConfig(d_model=32, seq_len=13, causal=True, seed=9, **kw)
    torch.testing.assert_close(engine.decode(cfg), run(cfg).output, atol=2e-5, rtol=1e-4)
