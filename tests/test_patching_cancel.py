"""Exact patching stops within a fraction of a second of a cancel (issue 46, item 8): the
cancel was checked only between batched forward passes, 10–20 s apart on a long text."""

from __future__ import annotations

import time

import models_fixtures as mf
import numpy as np
import pytest

#: tokens of the long text: one old batched forward pass of it took seconds here
S = 1536


@pytest.fixture(scope="module")
def long_llama(tmp_path_factory):
    from engine.models import load_model

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mf, "MAX_LEN", 2 * S)  # positions (and the tokenizer's limit) for the long text
        folder = mf.build_llama(tmp_path_factory.mktemp("llama_long"), heads=4, kv_heads=2)
    return load_model(folder)


class Stop(Exception):
    """What a job's progress raises once it is cancelled."""


def test_exact_patching_stops_within_a_fraction_of_a_second_of_a_cancel(long_llama):
    words = (mf.WORDS * (S // len(mf.WORDS) + 1))[: S - 1]
    clean = " ".join(words)
    corrupted = " ".join("dog" if w == "cat" else w for w in words)
    calls: list[float] = []
    requested: list[float] = []

    def progress(done: int, total: int) -> None:
        calls.append(time.perf_counter())
        if requested:
            raise Stop  # the job sees its cancel at this report
        if len(calls) == 6:  # a forward pass is under way (the same count reported again)
            requested.append(time.perf_counter())

    t0 = time.perf_counter()
    with pytest.raises(Stop):
        long_llama.activation_patching(clean, corrupted, "mat", over="positions", progress=progress)
    stopped = time.perf_counter()
    assert requested, "the cancel was never requested"
    gaps = np.diff([t0, *calls])
    # the bug: seconds between checks (a whole batched forward); the goal 0.5 s, generous here
    # for a loaded machine
    assert stopped - requested[0] < 2.0, f"stopped {stopped - requested[0]:.2f} s after the cancel"
    assert gaps.max() < 2.0, f"{gaps.max():.2f} s without a cancel check"


def test_a_checked_run_gives_the_same_effects(long_llama, monkeypatch):
    """The pieces a cancellable run cuts its forward passes into change no number beyond
    float32 rounding."""
    import engine.models.cancel as cancel

    monkeypatch.setattr(cancel, "PIECE_ELEMENTS", 64)  # this short text's attention in pieces too
    text = "the cat sat on the mat and the dog ran in the park . the cat sat on the"
    corrupted = text.replace("cat", "dog")
    plain = long_llama.activation_patching(text, corrupted, "mat", over="positions")
    seen = []
    checked = long_llama.activation_patching(text, corrupted, "mat", over="positions",
                                             progress=lambda d, t: seen.append(d))
    assert seen and seen[-1] == max(seen)
    assert np.abs(plain.effect).max() > 0.1  # (something to compare)
    np.testing.assert_allclose(checked.effect, plain.effect, rtol=1e-4, atol=1e-5)
    assert checked.clean_metric == pytest.approx(plain.clean_metric, rel=1e-5, abs=1e-5)


def test_closing_the_window_during_exact_patching_stops_its_worker_at_once(qapp, long_llama):
    """Closing the window (the model worker stopped) while the patching panel's job ran froze
    it 10–26 s: the worker waited for the batched forward pass. Now it stops at once."""
    from explorer.models.worker import ModelWorker
    from explorer.panels.patching import patch_job
    from explorer.work.base import run_events_until

    words = (mf.WORDS * (S // len(mf.WORDS) + 1))[: S - 1]
    clean = " ".join(words)
    corrupted = " ".join("dog" if w == "cat" else w for w in words)
    worker = ModelWorker()
    reported, outcome = [], []
    worker.progress.connect(lambda *a: reported.append(a))
    worker.done.connect(lambda *a: outcome.append("done"))
    try:
        worker.submit("patching", patch_job(long_llama, clean, corrupted, "mat", "", "exact"))
        assert run_events_until(lambda: bool(reported), 120), "the patching job never reported"
        t0 = time.perf_counter()
        worker.stop()  # what MainWindow.shutdown does through the model controller
        took = time.perf_counter() - t0
    finally:
        worker.stop()
    assert not worker.isRunning() and not outcome
    assert took < 2.0, f"the worker took {took:.1f} s to stop"
