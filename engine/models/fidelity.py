"""Does the app reproduce the model's own forward pass? (issue 46)

The circuits lens reads a model through its parts (:mod:`.anatomy`): the residual stream
between blocks, the final norm, the unembedding, the heads' outputs. A part found wrongly
(OPT's final norm at ``decoder.final_layer_norm``, Gemma-2's logit softcapping, GPT-NeoX's
``embed_out``) gives numbers that look right and are not. So every model is checked against
transformers' own forward pass (its causal-LM class, ``output_hidden_states=True``) on a text:

* **hidden**: the residual stream the lens reads after layer l (row 0: the embeddings) equals
  the model's ``hidden_states[l]``; row L, through the final norm found here, equals its last
  hidden state;
* **lens**: the lens's last row (row L through the unembedding and softcapping found here)
  equals the model's own logits, and its softmax the model's output distribution (at the
  text's last :data:`CHECKED_POSITIONS` positions);
* **attribution**: the direct logit attribution's parts add up to the model's own logit of its
  top token at the last position (through the softcap where the model caps its logits).

:func:`measure` returns a :class:`Fidelity` (Qt-free): each check's max |Δ|, and a one-line
message for each check that fails beyond the rounding of the model's dtype, which the lens,
the attribution and patching raise (:meth:`Fidelity.require`) instead of returning numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from .agreement import (
    CHECKED_POSITIONS,
    compare_logits,
    lens_failure,
    logits_close,
    number,
    tolerance,
)
from .anatomy import anatomy_of
from .errors import InspectError, one_line_reason

#: which failed checks make each analysis refuse
GATES = {"lens": ("hidden", "lens"), "attribution": ("hidden", "lens", "attribution"),
         "patching": ("hidden", "lens")}


@dataclass(frozen=True)
class Fidelity:
    """What :func:`measure` found on ``n_tokens`` tokens of a text.

    ``hidden``: max |Δ| between the residual stream read here and the model's own hidden
    states (row L through the final norm); ``logits``: max |Δ| between the lens's last row and
    the model's own logits, ``probs`` the same for their softmax (|Δp|); ``attribution``:
    |Δ| between the attribution's total (softcapped) and the model's own logit. None: not
    measured (see ``notes``). ``failures``: check name → the one-line refusal."""

    n_tokens: int
    hidden: float | None = None
    logits: float | None = None
    probs: float | None = None
    attribution: float | None = None
    failures: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def summary(self) -> str:
        """One line for the model header and the CLI."""
        if self.failures:
            return next(iter(self.failures.values()))
        if self.logits is not None:
            extra = [f"{name} {number(v)}" for name, v in (("hidden states", self.hidden),
                                                          ("attribution", self.attribution))
                     if v is not None]
            return (f"reproduces the model's own logits: max |Δ| {number(self.logits)}"
                    + (f" ({', '.join(extra)})" if extra else ""))
        if self.hidden is not None:
            tail = "; " + self.notes[0] if self.notes else ""
            return f"reproduces the model's own hidden states: max |Δ| {number(self.hidden)}{tail}"
        return "not checked against the model's own forward: " + (self.notes[0] if self.notes else "?")

    def require(self, what: str) -> None:
        """InspectError (the first failure's line) when a check ``what`` ("lens",
        "attribution", "patching") depends on failed."""
        for check in GATES[what]:
            if check in self.failures:
                raise InspectError(self.failures[check])

    def to_dict(self) -> dict:
        """JSON-safe: a difference that is no number (NaN, infinite) is None."""
        def num(x: float | None) -> float | None:
            return x if x is None or math.isfinite(x) else None

        return {"ok": self.ok, "summary": self.summary, "n_tokens": self.n_tokens,
                "hidden_max_abs_diff": num(self.hidden), "logits_max_abs_diff": num(self.logits),
                "probs_max_abs_diff": num(self.probs), "attribution_abs_diff": num(self.attribution),
                "failures": dict(self.failures), "notes": list(self.notes)}


def measure(loaded, text: str, *, max_tokens: int | None = None) -> Fidelity:
    """Check what the app computes from ``loaded``'s parts against its own forward pass on
    ``text`` (see the module docstring). Raises InspectError only for a bad text."""
    from .lens import residual_streams

    an = anatomy_of(loaded)
    ids, _notice, _n = loaded.tokenize(text, max_tokens=max_tokens)
    want_head = an.causal and an.unembedding() is not None
    resid, own_logits, hidden_states = residual_streams(
        loaded, ids, own_positions=CHECKED_POSITIONS if want_head else 0, hidden_states=True)
    has_head = own_logits is not None  # (n, V): the text's last n positions
    own = [own_logits] if has_head else []
    if not all(bool(torch.isfinite(t).all()) for t in [*own, *(hidden_states or ())]):
        # (a diverged run's NaN weights: its loader already warns; a NaN compares as no number)
        return Fidelity(n_tokens=len(ids), notes=("the model's own output is NaN or infinite, so "
                                                  "there is nothing to check the lens against",))
    notes: list[str] = []
    L = loaded.n_layers
    failures: dict[str, str] = {}
    with torch.inference_mode():
        final = an.apply_final_norm(resid[L]).float()  # (S, d')
    hidden = final_ok = None
    tol = tolerance(loaded)
    if hidden_states is not None and len(hidden_states) == L + 1:
        diffs = [float((resid[i] - hidden_states[i][0].float()).abs().max()) for i in range(L)]
        scales = [float(hidden_states[i][0].float().abs().max()) for i in range(L + 1)]
        last = float((final - hidden_states[L][0].float()).abs().max())
        hidden = max([*diffs, last])
        bad = [i for i in range(L) if diffs[i] > tol * max(1.0, scales[i])]
        final_ok = last <= tol * max(1.0, scales[L])
        if bad:
            where = f"after layer {bad[0] - 1}" if bad[0] else "at the embeddings"
            failures["hidden"] = ("the residual stream read between the layers does not reproduce "
                                  f"the model's hidden states: max |Δ| {number(diffs[bad[0]])} {where}")
    elif hidden_states is None and not has_head:
        notes.append("the model reports no hidden states")
    if not has_head and an.causal:
        notes.append("no LM head to check the logits against")
    logits = probs = attribution = None
    if has_head:
        with torch.inference_mode():
            ours = an.logits(final[len(ids) - own_logits.shape[0]:])
        logits, probs = compare_logits(ours, own_logits)
        if not logits_close(loaded, logits, probs, own_logits):
            failures["lens"] = lens_failure(an, probs, final_ok)
        elif final_ok is False:  # the norm differs but not enough to move the logits: still wrong
            failures["hidden"] = lens_failure(an, probs, False)
        attribution = _attribution_gap(loaded, text, int(own_logits[-1].argmax()), max_tokens,
                                       notes, failures)
    return Fidelity(n_tokens=len(ids), hidden=hidden, logits=logits, probs=probs,
                    attribution=attribution, failures=failures, notes=tuple(notes))


def _attribution_gap(loaded, text, target, max_tokens, notes, failures) -> float | None:
    from .lens import attribute

    try:
        att = attribute(loaded, text, target, max_tokens=max_tokens)
    except InspectError as exc:
        notes.append(f"attribution not checked: {one_line_reason(exc)}")
        return None
    gap = abs(anatomy_of(loaded).cap(att.total) - att.logit)
    if gap > 10 * tolerance(loaded) * max(1.0, abs(att.logit)):
        failures["attribution"] = ("the logit attribution's parts do not add up to the model's own "
                                   f"logit: |Δ| {number(gap)} (of {att.logit:.4g})")
    return gap


def measure_safely(loaded, text: str) -> Fidelity:
    """:func:`measure`, with anything that goes wrong said in the notes (loading goes on)."""
    try:
        return measure(loaded, text)
    except Exception as exc:  # the check must never make a model unopenable
        return Fidelity(n_tokens=0, notes=(f"the check failed to run: {one_line_reason(exc)}",))
