"""The scale a patching metric is judged against: how far apart the logits of a position lie.

Patching's effect is (patched − corrupted) / (clean − corrupted). When the clean and the
corrupted metric differ by a small fraction of how much logits differ from token to token
anyway (an untrained model: 3.313 vs 3.329), that division turns noise into large "effects",
and a ranking of heads by them means nothing. The scale used here is the standard deviation of
the model's own logits over the vocabulary at the last position of the clean text (one forward
pass); for a metric logit(answer) − logit(wrong), the spread of a difference of two logits,
√2 times that.

    scale = logit_spread(loaded, clean_text, difference=wrong is not None)
    noisy = abs(clean_metric - corrupted_metric) < NOISE_SHARE * scale
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from .anatomy import anatomy_of
from .cancel import checked

#: a clean–corrupted gap under this share of the metric's scale is within noise
NOISE_SHARE = 0.1


def logit_spread(loaded, text: str, *, difference: bool = False, max_tokens: int | None = None,
                 progress: Callable[[int, int], object] | None = None) -> float:
    """Standard deviation (logit units) of the model's logits over its vocabulary at the last
    position of ``text``; √2 times it with ``difference`` (the metric is a difference of two
    logits). Causal LMs with an unembedding only (InspectError otherwise, as patching).
    ``progress(0, 1)`` is called inside the forward pass (:func:`.cancel.checked`); raising
    from it cancels."""
    an = anatomy_of(loaded)
    an.require_unembedding("The patching metric's scale")
    ids, _notice, _n = loaded.tokenize(text, max_tokens=max_tokens)
    with torch.inference_mode(), checked(loaded, progress):
        final = an.forward(torch.tensor([ids])).last_hidden_state[0, -1].float()  # (d,)
        logits = an.logits(final[None])[0].double()  # (vocab,)
    spread = float(logits.std()) if logits.numel() > 1 else 0.0
    return spread * (math.sqrt(2.0) if difference else 1.0)


def within_noise(clean_metric: float, corrupted_metric: float, scale: float) -> bool:
    """Whether the clean–corrupted gap is under NOISE_SHARE of ``scale`` (never for scale 0)."""
    return scale > 0 and abs(clean_metric - corrupted_metric) < NOISE_SHARE * scale
