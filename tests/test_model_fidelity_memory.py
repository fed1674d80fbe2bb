"""Circuits jobs hold to the engine's memory budget (issue 46 item 9).

Exact patching sized its batches to 80 % of MemAvailable, whatever ``ulimit -v`` or
``ATTN_EXPLORER_MEMORY_BUDGET`` said: under a cap a long text failed inside torch ("can't
allocate memory"). Each run here is a child process under RLIMIT_AS: the budget is what the
address-space limit leaves, a long text is refused in one line with the estimate, a shorter
one fits (fewer sequences per forward pass) and gives the same effects as an unlimited run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
#: the address space the child may add after loading the model (its budget: 3/4 of it)
HEADROOM = 512 * 1024**2


def build_long_llama(folder: Path) -> Path:
    """A 2-layer, 32-wide Llama with 8 heads reading 8,192 positions, and a word tokenizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = ["<unk>", "<s>", "the", "cat", "dog", "sat", "on", "mat"]
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(words), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=8192,
                      bos_token_id=1, eos_token_id=0)
    LlamaForCausalLM(cfg).save_pretrained(folder)
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", bos_token="<s>",
                            model_max_length=8192).save_pretrained(folder)
    return folder


CHILD = textwrap.dedent("""
    import json, resource, sys
    from engine.models import InspectError, load_model
    from engine.memory import memory_budget

    model = load_model(sys.argv[1])

    def patch(n_tokens):
        clean = " ".join(["the", "cat", "sat", "on", "the", "mat"] * (n_tokens // 6))
        passes = []
        try:
            res = model.activation_patching(clean, clean.replace("cat", "dog"), "cat", wrong="dog",
                                            progress=lambda d, t: passes.append(t))
            return {"effect": res.effect.tolist(), "passes": passes[-1], "budget": memory_budget()}
        except InspectError as exc:
            return {"refused": str(exc), "budget": memory_budget()}

    out = {"free": patch(600)}
    # what the process holds now, plus the headroom: torch cannot take more
    with open("/proc/self/status") as fh:
        vm = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + int(sys.argv[2]), resource.RLIM_INFINITY))
    out["long"] = patch(6000)
    out["short"] = patch(600)
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def long_llama(tmp_path_factory) -> Path:
    return build_long_llama(tmp_path_factory.mktemp("long_llama"))


def test_patching_under_an_address_space_limit_refuses_or_fits(long_llama):
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1",
           "HOME": str(long_llama)}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(long_llama), str(HEADROOM)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    # 6,000 tokens: 3 · 8 heads · S² float32 = 3.5 GB per sequence, past the budget
    long = out["long"]
    assert "refused" in long, long
    msg = long["refused"]
    assert len(msg.splitlines()) == 1
    assert msg.startswith("Patching 6000 tokens needs about ") and "per forward pass" in msg
    assert "the memory budget is" in msg and "ulimit -v" in msg
    assert long["budget"] <= HEADROOM
    # 600 tokens: 35 MB per sequence (69 MB with the record): a few heads per forward pass fit
    # the budget, not all 8 of a layer as without the limit, and the effects are the same
    short, free = out["short"], out["free"]
    assert "effect" in short, short
    assert free["passes"] == 2 and short["passes"] > 2
    assert torch.allclose(torch.tensor(short["effect"]), torch.tensor(free["effect"]), atol=1e-5)
