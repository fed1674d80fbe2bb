"""engine.models.capture's fallback attention (for a modeling module without an
``eager_attention_forward``) is transformers' own eager formula, number for number: the KV
heads repeated by the engine's one repeat_kv, not a copy of it."""

from __future__ import annotations

import pytest
import torch


@pytest.mark.parametrize(("heads", "kv_heads"), [(8, 2), (4, 1), (4, 4)])
def test_the_fallback_attention_is_transformers_llama_eager_formula(heads, kv_heads):
    from transformers.models.llama.modeling_llama import eager_attention_forward

    from engine.models.capture import generic_eager_attention

    torch.manual_seed(heads * 10 + kv_heads)
    b, s, dh = 2, 7, 16
    q = torch.randn(b, heads, s, dh)
    k, v = torch.randn(b, kv_heads, s, dh), torch.randn(b, kv_heads, s, dh)
    mask = torch.triu(torch.full((s, s), float("-inf")), 1)[None, None].expand(b, 1, s, s)
    module = torch.nn.Module().eval()
    module.num_key_value_groups = heads // kv_heads
    want_out, want_w = eager_attention_forward(module, q, k, v, mask, scaling=dh**-0.5)
    out, w = generic_eager_attention(module, q, k, v, mask, scaling=dh**-0.5)
    assert torch.equal(w, want_w)
    assert torch.equal(out, want_out)
