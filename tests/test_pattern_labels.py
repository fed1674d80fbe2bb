"""The "long-range" pattern label (issue 27): a head whose weight sits on distant keys is
labelled so by engine.models.metrics, and `inspect` prints the label."""

from __future__ import annotations

import torch

import main
from engine.models import PATTERN_LABELS, matrix_metrics
from engine.models.metrics import LONG_RANGE_MIN

try:
    from models_fixtures import minilm_folder
except ImportError:  # tests/ imported as a package
    from tests.models_fixtures import minilm_folder

S = 16


def _one_key_per_row(keys: list[int]) -> torch.Tensor:
    w = torch.zeros(len(keys), len(keys))
    w[torch.arange(len(keys)), torch.tensor(keys)] = 1.0
    return w


def test_long_range_is_a_label_of_its_own():
    assert "long-range" in PATTERN_LABELS
    assert PATTERN_LABELS[-1] == "mixed"  # still the fallback


def test_a_head_that_attends_half_the_text_away_is_long_range():
    m = matrix_metrics(_one_key_per_row([(i + S // 2) % S for i in range(S)]))
    assert m["distance_ratio"] >= LONG_RANGE_MIN
    assert m["pattern"] == "long-range"


def test_a_causal_head_that_looks_far_back_is_long_range():
    """Row i attends to key i // 4: three quarters of the way back, a different key every four
    rows (no single key collects the rows, so it is not a sink)."""
    w = _one_key_per_row([i // 4 for i in range(S)])
    m = matrix_metrics(w)
    assert m["causal"] and m["vertical"] < 0.4
    assert m["pattern"] == "long-range"


def test_local_and_spread_heads_are_not_long_range():
    assert matrix_metrics(torch.eye(S))["pattern"] == "diagonal"
    near = matrix_metrics(_one_key_per_row([min(S - 1, i + 1) for i in range(S)]))
    assert near["distance_ratio"] < LONG_RANGE_MIN and near["pattern"] != "long-range"
    assert matrix_metrics(torch.full((S, S), 1 / S))["pattern"] == "broad"
    # sharp, changing every row, but at about the distance of uniform attention: mixed
    perm = matrix_metrics(_one_key_per_row([(i * 5 + 3) % S for i in range(S)]))
    assert perm["distance_ratio"] < LONG_RANGE_MIN and perm["pattern"] == "mixed"


def test_inspect_prints_long_range_for_a_real_head(capsys):
    """MiniLM's layer 2 head 9 on a sample sentence looks far (distance 1.37× uniform): the
    table `inspect` prints labels it long-range."""
    text = "老师把书给了学生，因为他想读。"
    assert main.main(["inspect", "--model", str(minilm_folder()), "--text", text, "--layers", "2"]) == 0
    out = capsys.readouterr().out
    rows = {tuple(line.split()[:2]): line.split()[3] for line in out.splitlines()
            if line.split()[:1] == ["2"]}
    assert len(rows) == 12
    assert rows[("2", "9")] == "long-range"
    assert "long-range" not in {rows[("2", str(h))] for h in range(12) if h != 9}
