"""python -m models inspect RUN: source 003 §6's debugging checks. An untrained model is
flagged (uniform, not diagonal), a trained one passes; the gradient split is exact."""
import os

import numpy as np
import pytest

import minigrad as mg
from minigrad.runtime import blas
from model_helpers import random_batch, tiny_model
from models.app.cli import main
from models.app.diagnose import LAZY, checks, split_gradients
from models.app.train import Trainer, TrainConfig
from models.seq2seq import decoder_inputs, masked_cross_entropy

SMALL = dict(embed=16, hidden=32, dec_hidden=32, attn=32, dtype="float32")


def copy_trainer(**kw):
    cfg = dict(task="copy", n_train=1500, n_val=100, min_len=3, max_len=6, batch_size=32,
               epochs=20, target=0.95, seed=0)
    cfg.update(kw)
    return Trainer.create(TrainConfig(**cfg), SMALL)


def verdicts(out: str) -> dict:
    """{check name: verdict} from the printed table."""
    found = {}
    for line in out.splitlines():
        for name in ("diagonality", "monotonicity", "lazy attention", "padding", "entropy",
                     "gradient through attention"):
            if line.startswith("  " + name + " "):
                found[name] = next(w for w in line.split() if w in ("pass", "FLAG", "info"))
    return found


@pytest.mark.parametrize("decoder,score", [("bahdanau", "additive"), ("luong", "general")])
def test_the_two_gradient_paths_add_up_to_the_whole_gradient(decoder, score):
    model = tiny_model(decoder=decoder, score=score)
    rng = np.random.default_rng(1)
    src, src_mask = random_batch(rng, [5, 3, 4], 9)
    tgt, tgt_mask = random_batch(rng, [4, 2, 3], 8)
    alpha, g_att, g_rec = split_gradients(model, src, src_mask, tgt, tgt_mask)
    # the whole gradient, with one annotations tensor feeding both paths
    with mg.no_grad():
        encoded = model.encoder(src, src_mask)
    h = mg.Tensor(encoded.annotations.data.copy(), requires_grad=True)
    logits, weights = model.decoder(encoded._replace(annotations=h), decoder_inputs(tgt))
    (masked_cross_entropy(logits, tgt, tgt_mask) * int(tgt_mask.sum())).backward()
    np.testing.assert_allclose(alpha, weights, atol=1e-12)
    whole = np.sqrt((h.grad ** 2).sum(-1))                                   # (B, S)
    assert np.all(whole <= g_att + g_rec + 1e-12)                            # triangle inequality
    assert np.all(g_att[~src_mask] == 0) and g_att[src_mask].min() > 0
    assert g_rec[src_mask].min() > 0                                         # via the mean


def test_checks_flag_lazy_attention_and_weight_on_padding():
    m = {"alpha": np.full((1, 2, 3), 1 / 3), "S": np.array([3]), "T": np.array([2]),
         "entropy": 0.3, "eos_mass": LAZY + 0.1, "pad_mass": 0.2, "att_share": 0.05}
    by_name = {c.name: c for c in checks("dates", m)}
    assert by_name["lazy attention"].verdict == "FLAG" and "LAZY" in by_name["lazy attention"].words
    assert by_name["padding"].verdict == "FLAG"
    assert by_name["gradient through attention"].verdict == "FLAG"
    assert by_name["diagonality"].verdict == "info"                         # dates reorder
    assert by_name["entropy"].verdict == "pass"


def test_an_untrained_model_is_flagged(tmp_path, capsys):
    trainer = copy_trainer()
    trainer.save(tmp_path)                                                   # no training
    with blas.threads(1):
        assert main(["inspect", str(tmp_path), "--n", "50"]) == 0
    out = capsys.readouterr().out
    v = verdicts(out)
    assert v["entropy"] == "FLAG" and "UNIFORM" in out
    assert v["diagonality"] == "FLAG" and v["padding"] == "pass"
    assert "verdict: FLAGGED" in out and "entropy" in out.split("verdict: FLAGGED")[1]
    assert "per decoder step" in out and "through the recurrent state" in out
    svgs = sorted(f for f in os.listdir(tmp_path) if f.endswith(".svg"))
    assert svgs == ["inspect-entropy.svg", "inspect-gradient.svg"]
    with blas.threads(1):
        assert main(["inspect", str(tmp_path), "--n", "20"]) == 0            # keeps the first
    assert "inspect-entropy-2.svg" in os.listdir(tmp_path)


@pytest.mark.slow
def test_a_trained_model_passes(tmp_path, capsys):
    trainer = copy_trainer()
    with blas.threads(1):
        trainer.run(log=lambda line: None, folder=tmp_path)
        assert main(["inspect", str(tmp_path), "--n", "100", "--no-svg"]) == 0
    out = capsys.readouterr().out
    assert set(verdicts(out).values()) == {"pass"}, out
    assert "verdict: healthy" in out
    assert not any(f.endswith(".svg") and f.startswith("inspect") for f in os.listdir(tmp_path))


def test_inspect_refuses_what_it_cannot_inspect(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    Trainer.create(TrainConfig(task="copy", n_train=50, n_val=10), dict(decoder="plain")).save(tmp_path)
    assert main(["inspect", str(tmp_path)]) == 2
    assert "no attention" in capsys.readouterr().err
