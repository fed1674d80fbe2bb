"""Every circuits job stops at block granularity when cancelled (issue 46, item 7/8): the logit
lens, the head detectors, logit attribution, the next-token prediction, the patching metric's
scale and the Q/K space run their forward passes inside engine.models.cancel's checks, so a
cancel asked while one block runs is seen before the next block starts. Counted in blocks, not
seconds: a hook on every decoder layer counts the blocks that start after the cancel."""

from __future__ import annotations

import models_fixtures as mf
import pytest

from engine.models.metric_scale import logit_spread

LAYERS = 6
TEXT = "the cat sat on the mat and the dog ran in the park . the cat sat on the"


@pytest.fixture(scope="module")
def deep_llama(tmp_path_factory):
    from engine.models import load_model

    return load_model(mf.build_llama(tmp_path_factory.mktemp("llama_deep"), heads=4, kv_heads=2,
                                     layers=LAYERS))


class Stop(Exception):
    """What a job's progress raises once it is cancelled."""


class CancelAt:
    """A cancel asked while block ``at`` runs; counts every block that starts after it.
    ``progress`` is the job's callback: it raises once the cancel was asked."""

    def __init__(self, loaded, at: int = 1) -> None:
        self.at, self.asked, self.after, self.started = at, False, 0, 0
        self.handles = [layer.register_forward_pre_hook(self._start)
                        for layer in loaded.model.layers]

    def _start(self, _module, _args):
        self.started += 1
        if self.asked:
            self.after += 1
        if self.started == self.at + 1:  # block `at` (0-based) starts: the user presses Cancel
            self.asked = True

    def progress(self, _done, _total) -> None:
        if self.asked:
            raise Stop

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()


@pytest.fixture(autouse=True)
def check_at_every_module(monkeypatch):
    """Every submodule's start checks (no 50 ms between checks: the count does not depend on
    how fast this machine runs a tiny block)."""
    import engine.models.cancel as cancel

    monkeypatch.setattr(cancel, "CHECK_EVERY_S", 0.0)


JOBS = {
    "logit lens": lambda m, p: m.logit_lens(TEXT, progress=p),
    "head detectors": lambda m, p: m.all_head_scores(seed=7, progress=p),
    "logit attribution": lambda m, p: m.logit_attribution(TEXT, "mat", progress=p),
    "top prediction": lambda m, p: m.top_prediction(TEXT, progress=p),
    "patching scale": lambda m, p: logit_spread(m, TEXT, progress=p),
    # the last layer's head (the pass stops after the wanted layer), over two texts
    "Q/K space": lambda m, p: m.qk_embedding([TEXT, "a bird sang in the tree"], LAYERS - 1, 1, progress=p),
}


@pytest.mark.parametrize("name", list(JOBS))
def test_a_cancel_stops_the_job_before_the_next_block(deep_llama, name):
    with CancelAt(deep_llama) as c, pytest.raises(Stop):
        JOBS[name](deep_llama, c.progress)
    assert c.asked, f"{name}: the cancel was never asked (no block 1 ran)"
    assert c.after == 0, f"{name}: {c.after} of {LAYERS} blocks ran after the cancel"


@pytest.mark.parametrize("name", list(JOBS))
def test_an_uncancelled_job_gives_the_numbers_of_an_unchecked_one(deep_llama, name):
    """The checks change no result (the detectors are cached per seed: run with a fresh one
    the cache cleared between)."""
    import numpy as np

    seen = []
    if name == "head detectors":
        checked = deep_llama.all_head_scores(seed=12, progress=lambda d, t: seen.append(d))
        from engine.models.anatomy import cache_of

        cache_of(deep_llama)["head_scores"].clear()
        ref = deep_llama.all_head_scores(seed=12)
    else:
        checked = JOBS[name](deep_llama, lambda d, t: seen.append(d))
        ref = JOBS[name](deep_llama, None)
    assert seen, f"{name}: progress was never called"
    if name == "logit lens":
        np.testing.assert_allclose(checked.top_probs, ref.top_probs, rtol=1e-5, atol=1e-6)
        assert (checked.top_ids == ref.top_ids).all()
    elif name == "head detectors":
        for k in ref:
            np.testing.assert_allclose(checked[k], ref[k], rtol=1e-5, atol=1e-6)
    elif name == "logit attribution":
        np.testing.assert_allclose(checked.heads, ref.heads, rtol=1e-5, atol=1e-6)
        assert checked.logit == pytest.approx(ref.logit, rel=1e-6)
    elif name == "Q/K space":
        np.testing.assert_allclose(checked.points, ref.points, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(checked.explained, ref.explained, rtol=1e-6)
        assert checked.tokens == ref.tokens and checked.positions == ref.positions
    else:
        assert checked == pytest.approx(ref, rel=1e-6)


def test_head_circuits_stop_at_their_next_block(deep_llama):
    """The QK/OV circuits run no forward pass: W_U·W_E and the token-pair search are summed in
    blocks, and a cancel is seen before the next block (here: at the second check)."""
    import numpy as np

    from engine.models.anatomy import cache_of

    cache_of(deep_llama).pop("w_ue", None)
    calls = []

    def cancel_at_second(_done, _total):
        calls.append(1)
        if len(calls) == 2:
            raise Stop

    with pytest.raises(Stop):
        deep_llama.circuits(1, 2, top=5, progress=cancel_at_second)
    assert len(calls) == 2
    seen = []
    cache_of(deep_llama).pop("w_ue", None)
    checked = deep_llama.circuits(1, 2, top=5, progress=lambda d, t: seen.append(d))
    plain = deep_llama.circuits(1, 2, top=5)
    assert len(seen) >= 3  # W_U·W_E and both pair searches
    assert [(p.row_id, p.col_id) for p in checked.qk_pairs] == [(p.row_id, p.col_id) for p in plain.qk_pairs]
    np.testing.assert_allclose(checked.ov_eigenvalues, plain.ov_eigenvalues)
