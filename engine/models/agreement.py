"""How close the app's numbers are to a model's own forward pass: the tolerances per weights
dtype, the logits compared, and the one-line refusal of a lens whose last row is not the model's
output. Used by :mod:`.fidelity` (the check on opening) and by :mod:`.lens` (each run checks its
own text's last row), so neither imports the other's module for them."""

from __future__ import annotations

import torch

#: relative tolerance per weights dtype: float32 rounding, or the half precisions'
_RTOL = {torch.float32: 1e-4, torch.float64: 1e-8, torch.float16: 2e-2, torch.bfloat16: 4e-2}
#: positions at the end of the text whose logits are compared (bounds the (n, V) logits held)
CHECKED_POSITIONS = 64


def tolerance(loaded) -> float:
    """The relative difference allowed for a model of this weights dtype."""
    dtype = next(loaded.model.parameters()).dtype
    return _RTOL.get(dtype, 1e-3)


def number(x: float) -> str:
    """A measured difference, short: 0, 3e-7, 0.97."""
    if x == 0:
        return "0"
    if x >= 0.01:
        return f"{x:.2g}"
    return f"{x:.0e}".replace("e-0", "e-")


def lens_failure(an, dp: float, final_ok: bool | None) -> str:
    """The refusal when the lens's last row is not the model's output: measured |Δp| and the
    likely cause."""
    if final_ok is False or (final_ok is None and an.final_norm is None and an.causal):
        cause = ("its final norm was not found" if an.final_norm is None else
                 f"its final norm ({type(an.final_norm).__name__}) does not give the model's "
                 "final hidden state")
    else:
        cause = ("its unembedding, or what the model does after it (e.g. logit softcapping), "
                 "differs from the model's own")
    return f"the logit lens does not reproduce this model's output: max |Δp| {number(dp)}; {cause}"


def compare_logits(ours: torch.Tensor, own: torch.Tensor) -> tuple[float, float]:
    """(max |Δ logit|, max |Δp|) of two (…, V) logit arrays."""
    ours, own = ours.double(), own.double()
    dl = float((ours - own).abs().max())
    dp = float((torch.softmax(ours, -1) - torch.softmax(own, -1)).abs().max())
    return dl, dp


def logits_close(loaded, dl: float, dp: float, own: torch.Tensor) -> bool:
    tol = tolerance(loaded)
    return dp <= tol and dl <= tol * max(1.0, float(own.abs().max()))
