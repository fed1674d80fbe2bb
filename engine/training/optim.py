"""AdamW written here: the same update as ``torch.optim.AdamW`` (tested equal), without
the ~2 s torch spends importing its compiler stack the first time one of its optimisers is
built (a student's first Start would wait for it).

Update of each parameter p with gradient g at step t (Loshchilov & Hutter 2019)::

    p ← p · (1 − lr · weight_decay)
    m ← β1 m + (1 − β1) g          v ← β2 v + (1 − β2) g²
    p ← p − lr · (m / (1 − β1ᵗ)) / (√(v / (1 − β2ᵗ)) + ε)
"""

from __future__ import annotations

import math

import torch


class AdamW:
    """``groups``: dicts with ``params`` and ``weight_decay``; ``param_groups[i]["lr"]`` is
    read at every step (the trainer's schedule sets it)."""

    def __init__(self, groups: list[dict], lr: float, betas: tuple[float, float], eps: float) -> None:
        self.param_groups = [{"params": list(g["params"]), "weight_decay": float(g.get("weight_decay", 0.0)),
                              "lr": lr} for g in groups]
        self.betas = betas
        self.eps = eps
        self.steps_taken = 0
        self.exp_avg = [[torch.zeros_like(p) for p in g["params"]] for g in self.param_groups]
        self.exp_avg_sq = [[torch.zeros_like(p) for p in g["params"]] for g in self.param_groups]

    def zero_grad(self) -> None:
        for g in self.param_groups:
            for p in g["params"]:
                p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.steps_taken += 1
        b1, b2 = self.betas
        bc1 = 1.0 - b1 ** self.steps_taken
        bc2 = 1.0 - b2 ** self.steps_taken
        for group, ms, vs in zip(self.param_groups, self.exp_avg, self.exp_avg_sq, strict=True):
            ps = group["params"]
            grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in ps]
            lr, wd = group["lr"], group["weight_decay"]
            if wd:
                torch._foreach_mul_(ps, 1.0 - lr * wd)
            torch._foreach_lerp_(ms, grads, 1.0 - b1)
            torch._foreach_mul_(vs, b2)
            torch._foreach_addcmul_(vs, grads, grads, value=1.0 - b2)
            denom = torch._foreach_sqrt(vs)
            torch._foreach_div_(denom, math.sqrt(bc2))
            torch._foreach_add_(denom, self.eps)
            torch._foreach_addcdiv_(ps, ms, denom, value=-lr / bc1)

    # ---- keeping the state ------------------------------------------------------------
    def state_tensors(self) -> dict[str, torch.Tensor]:
        """The moments and the step count, by group and parameter index."""
        out = {"step": torch.tensor(self.steps_taken, dtype=torch.int64)}
        for gi, (ms, vs) in enumerate(zip(self.exp_avg, self.exp_avg_sq, strict=True)):
            for pi, (m, v) in enumerate(zip(ms, vs, strict=True)):
                out[f"exp_avg.{gi}.{pi}"] = m.detach().clone()
                out[f"exp_avg_sq.{gi}.{pi}"] = v.detach().clone()
        return out

    def load_state_tensors(self, state: dict[str, torch.Tensor]) -> None:
        """Inverse of state_tensors; ValueError naming what does not fit."""
        expected = set(self.state_tensors())
        if set(state) != expected:
            odd = sorted(set(state) ^ expected)
            raise ValueError(f"optimiser state does not fit the model (e.g. {odd[0]})")
        for gi, (ms, vs) in enumerate(zip(self.exp_avg, self.exp_avg_sq, strict=True)):
            for pi, (m, v) in enumerate(zip(ms, vs, strict=True)):
                for name, dst in (("exp_avg", m), ("exp_avg_sq", v)):
                    src = state[f"{name}.{gi}.{pi}"]
                    if src.shape != dst.shape:
                        raise ValueError(f"optimiser state {name}.{gi}.{pi} has shape {tuple(src.shape)}, "
                                         f"the model needs {tuple(dst.shape)}")
                    dst.copy_(src)
        self.steps_taken = int(state["step"])
