"""The training lab's experiments: configs the engine's tests and bench measured, each with a
paragraph on what to watch and an expectation the lab checks while it trains.

A preset is one or more runs (a contrast trains them one after the other, on the same seed,
and overlays their curves). ``Preset.check(runs)`` reads what was trained (the runs' step
records and probe snapshots) and says whether the expectation holds yet: "pending" while
there is too little to judge, then "met" or "not met", with the numbers in one sentence.

Texts are marked with QT_TRANSLATE_NOOP("TrainingPresets", ...) and translated when shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from engine.numbers import fixed
from engine.training import TrainConfig, first_reached


def _tr(text: str) -> str:
    return QCoreApplication.translate("TrainingPresets", text)


@dataclass(frozen=True)
class Verdict:
    """state: "pending" (too early to tell), "met" or "not met"; text: the numbers."""

    state: str
    text: str


@dataclass(frozen=True)
class PresetRun:
    """One run of a preset: its config and its name in the legend (English, translated)."""

    config: TrainConfig
    name: str


@dataclass(frozen=True)
class Preset:
    key: str
    title: str  # English; translated when shown
    explanation: str
    expectation: str
    runs: tuple[PresetRun, ...]
    check: Callable[[Sequence], Verdict] = field(repr=False)

    def display_title(self) -> str:
        return _tr(self.title)

    def display_explanation(self) -> str:
        return _tr(self.explanation)

    def display_expectation(self) -> str:
        return _tr(self.expectation)


# ---- the checks: each takes the preset's runs as trained so far (objects with .config,
# .history (list of TrainStep) and .snapshots (list of ProbeSnapshot, the first at step 0)) ----

def _done(run) -> bool:
    return run is not None and len(run.history) >= run.config.steps


def check_induction(runs: Sequence) -> Verdict:
    run = runs[0] if runs else None
    if run is None or not run.history:
        return Verdict("pending", "")
    hit = first_reached(run.history)
    if hit is not None:
        return Verdict("met", QCoreApplication.translate("TrainingPresets", "met at step {step}: best layer-1 induction score {ind}, best layer-0 "
                                  "previous-token score {prev}").format(
            step=hit.step, ind=fixed(hit.best('induction', layer=1)),
            prev=fixed(hit.best('previous_token', layer=0))))
    last = run.history[-1]
    if _done(run):
        return Verdict("not met", QCoreApplication.translate("TrainingPresets", "not met by step {step}: best induction score {ind}").format(
            step=last.step, ind=fixed(last.best('induction', layer=min(1, run.config.n_layers - 1)))))
    return Verdict("pending", "")


#: the warmup contrast: layer 0's least normalised entropy at the end of each run
COLLAPSED_BELOW = 0.3
HEALTHY_ABOVE = 0.6


def check_warmup(runs: Sequence) -> Verdict:
    if len(runs) < 2 or not (_done(runs[0]) and _done(runs[1])):
        return Verdict("pending", "")
    cold = float(runs[0].history[-1].entropy_norm[0].min())
    warm = float(runs[1].history[-1].entropy_norm[0].min())
    ok = cold < COLLAPSED_BELOW and warm > HEALTHY_ABOVE
    text = QCoreApplication.translate("TrainingPresets", "layer 0's least normalised entropy: {cold} without warmup, {warm} with it").format(
        cold=fixed(cold), warm=fixed(warm))
    return Verdict("met" if ok else "not met", text)


def check_scale(runs: Sequence) -> Verdict:
    if len(runs) < 2 or not (_done(runs[0]) and _done(runs[1])):
        return Verdict("pending", "")
    scaled, unscaled = runs[0].history[-1], runs[1].history[-1]
    ok = (float(unscaled.max_weight.mean()) > 0.8 and unscaled.loss > math.log(unscaled_vocab(runs[1])) - 0.15
          and scaled.loss < unscaled.loss - 0.4)
    text = QCoreApplication.translate("TrainingPresets", "loss {a} with 1/√d_k, {b} without; mean max weight {wa} against {wb}").format(
        a=fixed(scaled.loss), b=fixed(unscaled.loss), wa=fixed(float(scaled.max_weight.mean())),
        wb=fixed(float(unscaled.max_weight.mean())))
    return Verdict("met" if ok else "not met", text)


def unscaled_vocab(run) -> int:
    return run.config.vocab


def head_spread(attentions: np.ndarray) -> float:
    """How different the heads of a layer are: the largest, over layers and pairs of heads,
    of the mean total-variation distance between their attention rows (0 = identical heads,
    1 = disjoint keys). attentions (L, H, S, S) of one sequence; row 0 (one key) left out."""
    a = np.asarray(attentions, dtype=np.float64)
    best = 0.0
    for layer in a:
        h = layer.shape[0]
        for g in range(h):
            for k in range(g + 1, h):
                tv = 0.5 * np.abs(layer[g, 1:] - layer[k, 1:]).sum(-1).mean()
                best = max(best, float(tv))
    return best


#: the differentiation preset: heads at step 0 within this of uniform / of each other, and apart at the end
UNIFORM_ABOVE = 0.9
ALIKE_BELOW = 0.05
APART_ABOVE = 0.3


def check_differentiate(runs: Sequence) -> Verdict:
    run = runs[0] if runs else None
    if run is None or not run.snapshots or not _done(run):
        return Verdict("pending", "")
    start, end = run.snapshots[0], run.snapshots[-1]
    ent0 = float(start.entropy_norm.min())
    d0, d1 = head_spread(start.attentions), head_spread(end.attentions)
    ok = ent0 > UNIFORM_ABOVE and d0 < ALIKE_BELOW and d1 > APART_ABOVE
    text = QCoreApplication.translate("TrainingPresets", "at step 0 the least normalised entropy is {ent} and the heads differ by {d0}; at step "
               "{step} they differ by {d1}").format(ent=fixed(ent0), d0=fixed(d0), step=end.step,
                                                    d1=fixed(d1))
    return Verdict("met" if ok else "not met", text)


#: the dropout/norm contrast: no-norm's loss below the normed runs' by at least this (nats)
NO_NORM_LOSS_GAP = 0.5


def check_dropout_norm(runs: Sequence) -> Verdict:
    """Runs: pre-LN, pre-LN + dropout, no LayerNorm (same lr, seed, no warmup)."""
    if len(runs) < 3 or not all(_done(r) for r in runs[:3]):
        return Verdict("pending", "")
    last = [r.history[-1] for r in runs[:3]]
    ent = [float(s.entropy_norm[0].min()) for s in last]
    ok = (ent[0] < COLLAPSED_BELOW and ent[1] < COLLAPSED_BELOW and ent[2] > HEALTHY_ABOVE
          and last[2].loss < min(last[0].loss, last[1].loss) - NO_NORM_LOSS_GAP)
    text = QCoreApplication.translate(
        "TrainingPresets", "layer 0's least normalised entropy: {a} with pre-LN, {b} with pre-LN and dropout, "
        "{c} without LayerNorm; loss {la}, {lb} and {lc}").format(
        a=fixed(ent[0]), b=fixed(ent[1]), c=fixed(ent[2]), la=fixed(last[0].loss),
        lb=fixed(last[1].loss), lc=fixed(last[2].loss))
    return Verdict("met" if ok else "not met", text)


# ---- the presets ---------------------------------------------------------------------------

INDUCTION = Preset(
    key="induction",
    title=QT_TRANSLATE_NOOP("TrainingPresets", "An induction head forms"),
    explanation=QT_TRANSLATE_NOOP(
        "TrainingPresets",
        "A 2-layer, attention-only transformer (2 heads, d_model 64, post-LN) learns sequences "
        "that repeat: BOS, 8–16 random symbols, then the same symbols again. The second half is "
        "predictable only by looking back: a layer-0 head learns to attend to the previous token, "
        "and a layer-1 head uses it to find the token after the earlier copy of the current one "
        "(an induction head, Olsson et al. 2022). Watch the loss on the repeated half sit on a "
        "plateau, then drop as the two heads appear. Init: std 0.1 for every weight, not GPT-2's "
        "0.02: at 0.02 three of four seeds had no induction head by step 1000."),
    expectation=QT_TRANSLATE_NOOP(
        "TrainingPresets",
        "Within 600 steps the best layer-1 head's induction score passes 0.5 and the best layer-0 "
        "head's previous-token score passes 0.3 (seed 0: at step 397; seeds 0–7: 360–432)."),
    runs=(PresetRun(TrainConfig(), QT_TRANSLATE_NOOP("TrainingPresets", "induction")),),
    check=check_induction,
)

_HOT = TrainConfig(norm="pre", lr=1e-2, steps=200)
WARMUP = Preset(
    key="warmup",
    title=QT_TRANSLATE_NOOP("TrainingPresets", "Warmup vs none at lr 1e-2 (collapse)"),
    explanation=QT_TRANSLATE_NOOP(
        "TrainingPresets",
        "The same pre-LN model and seed, trained twice at a learning rate of 1e-2: first at full "
        "rate from step 1, then with the rate ramped up linearly over 200 steps. Without warmup "
        "the first large steps blow up the query and key weights: layer 0's attention collapses "
        "(each query locks onto one key, its entropy falls towards 0) and the loss stays near "
        "ln 48 ≈ 3.87, knowing nothing. With warmup the heads stay broad while they learn. "
        "Init: std 0.1, pre-LN (GPT-2's placement; post-LN collapses the same way, Xiong et al. 2020)."),
    expectation=QT_TRANSLATE_NOOP(
        "TrainingPresets",
        "After 200 steps layer 0's least normalised entropy is below 0.3 without warmup and above "
        "0.6 with it (seed 0: 0.15 against 0.75; seeds 1 and 2: 0.09 and 0.08 against 0.76 and 0.60)."),
    runs=(PresetRun(_HOT, QT_TRANSLATE_NOOP("TrainingPresets", "no warmup")),
          PresetRun(_HOT.replace(warmup_steps=200), QT_TRANSLATE_NOOP("TrainingPresets", "warmup 200"))),
    check=check_warmup,
)

_PRE = TrainConfig(norm="pre", steps=150)
SCALE = Preset(
    key="scale",
    title=QT_TRANSLATE_NOOP("TrainingPresets", "Forget √d_k"),
    explanation=QT_TRANSLATE_NOOP(
        "TrainingPresets",
        "The same model trained with softmax(QKᵀ/√d_k) and with softmax(QKᵀ): the scale is the one "
        "difference. With d_k = 32 the unscaled scores are √32 ≈ 5.7 times larger, so from the "
        "first step the softmax is almost one-hot, its gradient almost zero, and the loss refuses "
        "to go down. Init: std 0.1 with pre-LN, so W_Q and W_K see unit-variance inputs and the "
        "scores are large enough to saturate. With post-LN, or GPT-2's 0.02 init, the scores start "
        "small and dropping the scale does not hurt (it can even speed learning)."),
    expectation=QT_TRANSLATE_NOOP(
        "TrainingPresets",
        "After 150 steps the unscaled model's mean max weight is above 0.8 and its loss within "
        "0.15 of ln 48 ≈ 3.87, while the scaled one's loss is at least 0.4 lower."),
    runs=(PresetRun(_PRE, QT_TRANSLATE_NOOP("TrainingPresets", "with 1/√d_k")),
          PresetRun(_PRE.replace(scale="none"), QT_TRANSLATE_NOOP("TrainingPresets", "no 1/√d_k"))),
    check=check_scale,
)

DIFFERENTIATE = Preset(
    key="differentiate",
    title=QT_TRANSLATE_NOOP("TrainingPresets", "Heads differentiate from a uniform start"),
    explanation=QT_TRANSLATE_NOOP(
        "TrainingPresets",
        "Four heads per layer, all starting alike: with GPT-2's small init (std 0.02) every query "
        "and key is almost zero, so every head's attention is uniform over the keys it may see and "
        "the heads of a layer are indistinguishable. Training breaks the tie: small random "
        "differences in their weights grow, and the heads of layer 1 split into different "
        "patterns: one sharpens onto a few keys while another stays broad (their entropy curves "
        "part ways after ~150 steps). Scrub the timeline back to step 0 to see them identical. Init: std 0.02, chosen for the "
        "uniform start (the induction preset uses 0.1 to learn faster)."),
    expectation=QT_TRANSLATE_NOOP(
        "TrainingPresets",
        "At step 0 every head's normalised entropy is above 0.9 and the heads of a layer differ by "
        "less than 0.05 (mean total-variation distance of their rows); by step 300 two heads of "
        "one layer differ by more than 0.3 (seeds 0 and 1: 0.92 and 0.96)."),
    runs=(PresetRun(TrainConfig(n_heads=4, init_std=0.02, steps=300),
                    QT_TRANSLATE_NOOP("TrainingPresets", "4 heads, uniform start")),),
    check=check_differentiate,
)

_PRE_HOT = TrainConfig(norm="pre", lr=1e-2, steps=200)
DROPOUT_NORM = Preset(
    key="dropout_norm",
    title=QT_TRANSLATE_NOOP("TrainingPresets", "Dropout and norm against collapse"),
    explanation=QT_TRANSLATE_NOOP(
        "TrainingPresets",
        "Do LayerNorm and dropout protect attention from collapse? Three runs at lr 1e-2 without "
        "warmup, same seed: pre-LN, pre-LN with dropout 0.2 (on the attention weights, the "
        "embeddings and the residual branches), and no LayerNorm at all. Here the answer is no. "
        "Pre-LN hands W_Q and W_K inputs of unit variance, so the first full-rate steps grow "
        "the attention logits until each query of layer 0 locks onto one key; dropout adds noise "
        "but does not bound the logits, so it collapses too and learns slower. Without LayerNorm "
        "the inputs keep the small scale of the init (std 0.1), the logits grow slowly, and "
        "layer 0 stays broad while the model learns. That does not make the norm useless: at lr "
        "3e-2 the model without it collapses as well (seed 0: layer 1's entropy falls to 0.05), and the "
        "cure measured here is warmup (the preset “Warmup vs none”)."),
    expectation=QT_TRANSLATE_NOOP(
        "TrainingPresets",
        "After 200 steps layer 0's least normalised entropy is below 0.3 with pre-LN, with or "
        "without dropout, and above 0.6 without LayerNorm, whose loss is also at least 0.5 lower "
        "(seeds 0–3: pre-LN 0.08–0.15, with dropout 0.08–0.16, no norm 0.70–0.73; loss 2.3–2.5 "
        "against 3.4–3.9)."),
    runs=(PresetRun(_PRE_HOT, QT_TRANSLATE_NOOP("TrainingPresets", "pre-LN")),
          PresetRun(_PRE_HOT.replace(dropout=0.2), QT_TRANSLATE_NOOP("TrainingPresets", "pre-LN + dropout 0.2")),
          PresetRun(_PRE_HOT.replace(norm="none"), QT_TRANSLATE_NOOP("TrainingPresets", "no LayerNorm"))),
    check=check_dropout_norm,
)

PRESETS: dict[str, Preset] = {p.key: p for p in (INDUCTION, WARMUP, SCALE, DIFFERENTIATE, DROPOUT_NORM)}
