"""engine.training: the training lab's engine (issue 17). Qt-free; training on one thread.

The whole file takes ~40 s on 2 cores: the induction run (~450 steps, trained once per test
run and shared with the circuits tests: models_fixtures.induction_run_path) and the warmup
contrast (2 × 150 steps) are the long ones.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from engine import ConfigError
from engine.training import (
    RunFolderError,
    TrainConfig,
    Trainer,
    first_reached,
    head_scores,
    is_training_run,
)
from engine.training.tasks import IGNORE, make_batch

try:
    from models_fixtures import induction_run_path
except ImportError:  # tests/ imported as a package
    from tests.models_fixtures import induction_run_path

__all__ = ["induction_run_path"]  # a fixture

ROOT = Path(__file__).resolve().parent.parent


def history_dicts(trainer: Trainer) -> list[dict]:
    out = []
    for s in trainer.history:
        d = s.to_dict()
        d.pop("elapsed_s")
        out.append(d)
    return out


@pytest.fixture(scope="module")
def induction_run(induction_run_path):
    """The default config trained until the induction milestone (models_fixtures.train_induction,
    trained once per test run and saved), opened as the Trainer it was with its whole history."""
    return Trainer.load(induction_run_path)


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    tr = Trainer(TrainConfig(seed=3))
    tr.step(30)
    folder = tmp_path_factory.mktemp("runs") / "run"
    tr.save(folder)
    return tr, folder


# ---- layering ------------------------------------------------------------------------
@pytest.mark.slow
def test_engine_training_never_imports_qt():
    for path in (ROOT / "engine" / "training").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for name in ("PySide6", "pyqtgraph", "explorer"):
            assert f"import {name}" not in text and f"from {name}" not in text, (path, name)
    code = ("import sys, engine.training, engine.training.cli; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'explorer')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# ---- the config ------------------------------------------------------------------------
def test_config_round_trip_defaults_and_unknown_keys():
    c = TrainConfig(task="copy", n_heads=4, n_kv_heads=2, scale=0.5, norm="pre", attn_only=False)
    d = json.loads(json.dumps(c.to_dict()))
    assert TrainConfig.from_dict(d) == c
    assert TrainConfig.from_dict({}) == TrainConfig()
    assert TrainConfig.from_dict({"lr": 1, "scale": 2}).scale == 2.0  # JSON ints for floats
    with pytest.raises(ConfigError, match=r"unknown training config field.*learning_rate"):
        TrainConfig.from_dict({"learning_rate": 0.1})
    with pytest.raises(ConfigError, match="JSON object"):
        TrainConfig.from_dict([1, 2])


@pytest.mark.parametrize("changes, field", [
    ({"task": "translate"}, "task"),
    ({"n_heads": 3}, "n_heads"),  # does not divide d_model 64
    ({"n_heads": 4, "n_kv_heads": 3}, "n_kv_heads"),
    ({"n_layers": 0}, "n_layers"),
    ({"n_layers": True}, "n_layers"),
    ({"vocab": 10}, "vocab"),  # fewer symbols than the longest prefix (16) needs
    ({"seq_len": 3}, "seq_len"),
    ({"norm": "middle"}, "norm"),
    ({"scale": "cube"}, "scale"),
    ({"scale": -1.0}, "scale"),
    ({"scale": float("nan")}, "scale"),
    ({"dropout": 1.0}, "dropout"),
    ({"lr": 0.0}, "lr"),
    ({"lr": 10**400}, "lr"),
    ({"lr": "fast"}, "lr"),
    ({"init_std": 0.0}, "init_std"),
    ({"warmup_steps": -1}, "warmup_steps"),
    ({"schedule": "linear"}, "schedule"),
    ({"steps": 0}, "steps"),
    ({"seed": -1}, "seed"),
    ({"batch": 4096, "seq_len": 512, "vocab": 300}, "batch"),  # the memory budget
])
def test_bad_settings_are_refused_naming_the_field(changes, field):
    with pytest.raises(ConfigError) as info:
        TrainConfig(**changes)
    message = str(info.value)
    assert message.startswith(field) or f" {field} " in f" {message} ", message
    assert len(message.splitlines()) == 1


# ---- tasks and scores ---------------------------------------------------------------------
def test_induction_batches_repeat_a_prefix_of_random_length():
    c = TrainConfig()
    b = make_batch(c, np.random.default_rng(0), batch=64)
    lmin, lmax = c.prefix_range
    assert (lmin, lmax) == (8, 16)
    assert len(set(b.prefix.tolist())) > 4  # drawn per sequence, not fixed
    for row in range(64):
        L = int(b.prefix[row])
        ids = b.inputs[row].tolist()
        assert ids[0] == 0 and ids[1:1 + L] == ids[1 + L:1 + 2 * L]
        assert len(set(ids[1:1 + L])) == L  # distinct symbols
        # predictable: the repeat's x2..xL, the targets of queries L+1 .. 2L-1
        assert b.predictable[row].nonzero().flatten().tolist() == list(range(L + 1, 2 * L))
        assert (b.targets[row, 2 * L:] == IGNORE).all()
        # the induction key of query L+1+j (holding x_{j+1}) is the key after x_{j+1}: 2+j
        assert b.induction_key[row, L + 1:2 * L + 1].tolist() == list(range(2, L + 2))
        assert (b.induction_key[row, :L + 1] == -1).all()


@pytest.mark.parametrize("task", ["copy", "reverse", "sort"])
def test_other_tasks_put_the_answer_after_a_separator(task):
    c = TrainConfig(task=task)
    b = make_batch(c, np.random.default_rng(1), batch=8)
    for row in range(8):
        L = int(b.prefix[row])
        ids = b.inputs[row].tolist()
        first, sep, second = ids[1:1 + L], ids[1 + L], ids[2 + L:2 + 2 * L]
        assert sep == 1
        expected = {"copy": first, "reverse": first[::-1], "sort": sorted(first)}[task]
        assert second == expected
        assert b.predictable[row].nonzero().flatten().tolist() == list(range(L + 1, 2 * L + 1))


def test_scores_of_ideal_heads():
    c = TrainConfig()
    b = make_batch(c, np.random.default_rng(2), batch=4)
    t = c.seq_len
    prev = torch.zeros(4, 1, t, t)
    prev[:, :, 0, 0] = 1
    prev[:, :, torch.arange(1, t), torch.arange(0, t - 1)] = 1.0  # every query on i-1
    ind = prev.clone()
    for row in range(4):
        for i, key in enumerate(b.induction_key[row].tolist()):
            if key >= 0:
                ind[row, 0, i] = 0
                ind[row, 0, i, key] = 1.0
    causal = torch.tril(torch.ones(t, t))
    uniform = (causal / causal.sum(-1, keepdim=True)).expand(4, 1, t, t)
    sc = head_scores([prev, ind, uniform], b)
    assert sc["previous_token"][0, 0] == pytest.approx(1.0)
    assert sc["induction"][1, 0] == pytest.approx(1.0)
    assert sc["induction"][0, 0] < 0.1  # a previous-token head is not an induction head
    assert sc["entropy_norm"][2, 0] == pytest.approx(1.0, abs=1e-5)
    assert sc["entropy_norm"][0, 0] == pytest.approx(0.0, abs=1e-5)
    assert sc["max_weight"][0, 0] == pytest.approx(1.0)
    assert sc["entropy"].shape == (3, 1)


# ---- training -----------------------------------------------------------------------------
def test_same_seed_same_history_and_threads_restored():
    c = TrainConfig(dropout=0.1, steps=20)
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # (the trainer's one thread is not the caller's)
    try:
        a, b = Trainer(c), Trainer(c)
        a.step(12)
        torch.manual_seed(123)  # other code using torch's global RNG must not change the run
        torch.rand(5)
        b.step(5)
        b.step(7)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert history_dicts(a) == history_dicts(b)
    other = Trainer(c.replace(seed=1))
    other.step(3)
    assert history_dicts(other)[0]["loss"] != history_dicts(a)[0]["loss"]
    s = a.history[-1]
    assert s.step == 12 and s.entropy.shape == (2, 2) and s.scores["induction"].shape == (2, 2)
    for name in ("induction", "previous_token"):
        assert ((s.scores[name] >= 0) & (s.scores[name] <= 1)).all()


@pytest.mark.slow
def test_default_run_forms_an_induction_head(induction_run):
    tr = induction_run
    hit = first_reached(tr.history)
    assert hit is not None and hit.step <= 600, "no induction head within 600 steps"
    assert hit.best("induction", layer=1) > 0.5 and hit.best("previous_token", layer=0) > 0.3
    assert hit.loss_predictable < 1.5  # the repeated half has become predictable
    assert tr.history[0].loss == pytest.approx(math.log(48), abs=0.5)  # it started knowing nothing
    check = tr.check_circuit()
    assert check.verdict in ("induction", "learning"), check.message
    probe = tr.probe()
    S = 1 + 2 * 16
    assert probe.attentions.shape == (2, 2, S, S) and probe.attentions.dtype == np.float32
    assert len(probe.tokens) == S and probe.tokens[0] == "<bos>"
    assert probe.tokens[1:17] == probe.tokens[17:]
    # causal: no weight on the future, rows sum to 1
    assert np.abs(np.triu(probe.attentions, 1)).max() == 0.0
    assert np.allclose(probe.attentions.sum(-1), 1.0, atol=1e-5)
    assert probe.scores["induction"][1].max() > 0.5


@pytest.mark.slow
def test_no_warmup_at_lr_1e2_collapses_and_warmup_learns():
    base = TrainConfig(norm="pre", lr=1e-2, seed=0)
    cold, warm = Trainer(base), Trainer(base.replace(warmup_steps=200))
    cold.step(150)
    warm.step(150)
    c, w = cold.history[-1], warm.history[-1]
    assert c.entropy_norm[0].min() < 0.3 < 0.6 < w.entropy_norm[0].min()  # layer 0 collapsed
    assert c.loss > math.log(48) - 0.4  # still near knowing nothing
    assert w.loss_predictable < c.loss_predictable - 0.3
    assert warm.history[9].lr == pytest.approx(1e-2 * 10 / 200)


@pytest.mark.slow
def test_scale_none_saturates_the_softmax_and_stalls_learning():
    sqrt_tr, none_tr = Trainer(TrainConfig(norm="pre")), Trainer(TrainConfig(norm="pre", scale="none"))
    sqrt, none = sqrt_tr.probe(), none_tr.probe()
    assert sqrt.max_weight.max() < 0.3 and sqrt.entropy_norm.min() > 0.9
    assert none.max_weight.min() > 0.55 and none.entropy_norm.max() < 0.5  # saturated at init
    sqrt_tr.step(150)
    none_tr.step(150)
    s, n = sqrt_tr.history[-1], none_tr.history[-1]
    assert n.max_weight.mean() > 0.8 > 0.5 > s.max_weight.mean()  # each query on one key
    assert n.loss > math.log(48) - 0.15 and s.loss < n.loss - 0.4  # its loss refuses to go down
    assert Trainer(TrainConfig(scale=16.0)).probe().max_weight[1].min() > 0.95  # ×16: one-hot


def test_architecture_variants_train():
    for c in (TrainConfig(n_heads=4, n_kv_heads=2, attn_only=False, norm="pre", dropout=0.1, batch=8),
              TrainConfig(task="reverse", norm="none", n_layers=1, schedule="cosine", steps=4, batch=8)):
        tr = Trainer(c)
        steps = tr.step(4)
        assert all(math.isfinite(s.loss) for s in steps)
        assert steps[-1].entropy.shape == (c.n_layers, c.n_heads)
        assert tr.probe().attentions.shape[:2] == (c.n_layers, c.n_heads)
    assert Trainer(TrainConfig(schedule="cosine", steps=100, warmup_steps=10)).lr_at(100) == pytest.approx(3e-4)


# ---- saving and opening -------------------------------------------------------------------
def test_saved_run_continues_exactly(saved_run, tmp_path):
    tr, folder = saved_run
    assert is_training_run(folder)
    again = Trainer.load(folder)
    assert history_dicts(again) == history_dicts(tr)
    ref = Trainer(tr.config)
    ref.step(40)
    again.step(10)
    assert history_dicts(again) == history_dicts(ref)
    again.save(folder.parent / "run")  # replacing a saved run is allowed
    assert Trainer.load(folder).steps_done == 40


def test_saved_run_opens_in_the_model_panels(saved_run):
    from engine.models import load_model

    _, folder = saved_run
    m = load_model(folder)
    assert (m.n_layers, m.n_heads, m.summary.causal) == (2, 2, True)
    trace = m.inspect("ABCDEFGH ABCDEFGH")
    assert trace.tokens == ["<bos>", *"ABCDEFGH", *"ABCDEFGH"]
    assert tuple(trace.attentions.shape) == (2, 2, 17, 17)
    assert trace.attentions.dtype == torch.float32
    assert tuple(trace.queries[0].shape) == (2, 17, 32) and tuple(trace.keys[1].shape) == (2, 17, 32)
    assert trace.metrics["entropy"].shape == (2, 2)
    assert m.deletion_test("ABCDABCD", 2, mode="mask").hidden_change > 0


def test_unusable_folders_are_refused_clearly(saved_run, tmp_path):
    from engine.models import ModelLoadError, load_model

    tr, folder = saved_run
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(RunFolderError, match="is a file"):
        tr.save(a_file)
    with pytest.raises(RunFolderError, match="is a file"):
        tr.save(a_file / "run")
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_text("x")
    with pytest.raises(RunFolderError, match="holds other files"):
        tr.save(other)
    assert (other / "cat.jpg").exists()
    with pytest.raises(RunFolderError, match="not a saved training run"):
        Trainer.load(other)
    broken = tmp_path / "broken"
    tr.save(broken)
    (broken / "model.safetensors").write_bytes(b"\x00" * 10)
    with pytest.raises(RunFolderError, match=r"model\.safetensors"):
        Trainer.load(broken)
    with pytest.raises(ModelLoadError, match="training run"):
        load_model(broken)
    head = json.loads((folder / "training_run.json").read_text())
    newer = tmp_path / "newer"
    tr.save(newer)
    (newer / "training_run.json").write_text(json.dumps({**head, "version": 99}))
    with pytest.raises(RunFolderError, match="newer"):
        Trainer.load(newer)


# ---- the CLI ------------------------------------------------------------------------------
def run_main(argv, capsys):
    import main

    try:
        rc = main.main(argv)
    except SystemExit as exc:  # argparse's own refusals exit through SystemExit
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_trains_saves_and_prints_json_lines(tmp_path, capsys):
    out_dir = tmp_path / "run"
    rc, out, err = run_main(["train", "--steps", "6", "--seed", "2", "--out", str(out_dir), "--json"], capsys)
    assert rc == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["event"] == "start" and lines[-1]["event"] == "saved"
    steps = [r for r in lines if r["event"] == "step"]
    assert steps[-1]["step"] == 6 and len(steps[-1]["heads"]["induction"]) == 2
    assert next(r for r in lines if r["event"] == "done")["circuit"] == "learning"
    assert Trainer.load(out_dir).steps_done == 6 and Trainer.load(out_dir).config.seed == 2


def test_cli_text_progress_and_config_file(tmp_path, capsys):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"task": "copy", "n_layers": 1, "batch": 4}))
    rc, out, err = run_main(["train", "--config", str(cfg), "--steps", "3"], capsys)
    assert rc == 0, err
    assert "copy" in out.splitlines()[0] and "done: 3 steps" in out


@pytest.mark.parametrize("argv, code, says", [
    (["train", "--task", "translate"], 2, "task must be one of"),
    (["train", "--steps", "0"], 2, "--steps"),
    (["train", "--steps", "many"], 2, "--steps"),
    (["train", "--config", "/no/such/file.json"], 2, "no such file"),
    (["train", "--config", ""], 2, "--config"),
    (["train", "--out", ""], 2, "--out"),
])
def test_cli_bad_arguments_exit_2_with_one_line(argv, code, says, capsys):
    rc, _, err = run_main(argv, capsys)
    assert rc == code
    assert says in err and len(err.strip().splitlines()) == 1


def test_cli_bad_config_files_exit_2(tmp_path, capsys):
    for text, says in (('{"lr": 5}', "lr must be"), ('{"speed": 1}', "speed"), ("[1", "not a readable JSON"),
                       ("[1, 2]", "JSON object")):
        cfg = tmp_path / "c.json"
        cfg.write_text(text)
        rc, _, err = run_main(["train", "--config", str(cfg)], capsys)
        assert rc == 2 and says in err and len(err.strip().splitlines()) == 1, (text, err)


def test_cli_unusable_out_exits_1_before_training(tmp_path, capsys):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    rc, out, err = run_main(["train", "--out", str(a_file / "run")], capsys)
    assert rc == 1 and "is a file" in err and out == ""


@pytest.mark.slow
def test_own_adamw_matches_torch():
    from engine.training.model import TinyTransformer
    from engine.training.optim import AdamW

    c = TrainConfig(batch=4)
    batch = make_batch(c, np.random.default_rng(0))
    models = [TinyTransformer(c, torch.Generator().manual_seed(0)) for _ in range(2)]
    ours = AdamW([{"params": list(models[0].parameters()), "weight_decay": 0.01}], 3e-3, (0.9, 0.95), 1e-8)
    ref = torch.optim.AdamW(models[1].parameters(), lr=3e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.01)
    for _ in range(5):
        for model, opt in zip(models, (ours, ref), strict=True):
            logits = model(batch.inputs).logits
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, c.vocab), batch.targets.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
    for a, b in zip(models[0].parameters(), models[1].parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-6)
