"""Source 003's practical options inside the models: Luong's plain form (the default) and
input feeding, the gate (003 §3.1), temperature, attention dropout and truncated attention
(003 §6). Each variant's loss is gradchecked with respect to every parameter."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.runtime import blas
from models.app.train import Trainer, TrainConfig
from models.luong import LuongDecoder
from models.seq2seq import ModelConfig
from models.vocab import BOS, PAD
from model_helpers import batch, gradcheck_params, tiny_model

VARIANTS = {
    "luong-gate": dict(decoder="luong", score="general", combine="gate"),
    "luong-gate-feeding-lstm": dict(decoder="luong", score="concat", combine="gate",
                                    input_feeding=True, cell="lstm"),
    "luong-temperature-window": dict(decoder="luong", score="general", temperature=0.5,
                                     truncate=1),
    "bahdanau-temperature-window": dict(decoder="bahdanau", score="additive", temperature=2.0,
                                        truncate=1),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_loss_gradcheck_wrt_every_parameter(name):
    model = tiny_model(**VARIANTS[name])
    src, src_mask, tgt, tgt_mask = batch()
    assert gradcheck_params(model, lambda: model.loss(src, tgt, src_mask, tgt_mask))
    more = np.pad(src, ((0, 0), (0, 3)), constant_values=PAD)        # padding changes nothing
    assert abs(model.loss(src, tgt, src_mask, tgt_mask).item()
               - model.loss(more, tgt, more != PAD, tgt_mask).item()) < 1e-12


def test_attention_dropout_gradchecks_with_a_fixed_mask_and_leaves_evaluation_alone():
    model = tiny_model(decoder="bahdanau", dropout=0.3)
    src, src_mask, tgt, tgt_mask = batch()
    # a fresh generator of the same seed at every call: the same dropout mask every time
    fixed = lambda: model.loss(src, tgt, src_mask, tgt_mask, rng=np.random.default_rng(5))
    assert gradcheck_params(model, fixed)
    dropped = fixed().item()
    with pytest.raises(ValueError, match=r"^Attention: dropout=0\.3 in training mode needs rng="):
        model.loss(src, tgt, src_mask, tgt_mask)                     # no generator: an error
    model.eval()                                                     # evaluation: no dropout
    plain = model.loss(src, tgt, src_mask, tgt_mask).item()
    assert dropped != plain
    assert model.loss(src, tgt, src_mask, tgt_mask, rng=np.random.default_rng(5)).item() == plain
    without = tiny_model(decoder="bahdanau")
    assert without.loss(src, tgt, src_mask, tgt_mask).item() == plain  # p is not a weight
    model.train()
    out = model.greedy(src, 4, src_mask)                             # decoding never drops
    assert model.training                                            # and leaves the mode
    np.testing.assert_allclose([o.weights.sum(-1) for o in out][0], 1.0)


def test_luong_plain_form_is_the_default_by_hand():
    """Source 003 §3.1: s_t = RNN(s_{t−1}, y_{t−1}) -- the RNN's input is y_{t−1} alone."""
    assert ModelConfig(5, 5).input_feeding is False
    model = tiny_model(decoder="luong", score="dot", dec_hidden=4)
    d = model.decoder
    assert d.cell.weight_ih.shape[1] == d.embedding.weight.shape[1]  # E wide: no h̃ fed back
    src, src_mask, tgt, _ = batch()
    logits, alignment = model(src, tgt, src_mask)
    h, m = model.encoder(src, src_mask).annotations.data, src_mask
    s0 = np.tanh((h.sum(1) / m.sum(1, keepdims=True)) @ d.init.weight.data.T + d.init.bias.data)
    s1 = d.cell(mg.tensor(d.embedding.weight.data[np.full(2, BOS)]), mg.tensor(s0)).data
    e = np.where(m, np.einsum("bk,bsk->bs", s1, h), -np.inf)
    alpha = np.exp(e - e.max(1, keepdims=True))
    alpha /= alpha.sum(1, keepdims=True)
    np.testing.assert_allclose(alignment[:, 0], alpha, atol=1e-12)


def test_luong_gate_by_hand():
    """z_t = σ(W_g [c_t; s_t] + b_g),  h̃_t = z_t ⊙ tanh(W_c c_t) + (1 − z_t) ⊙ s_t."""
    model = tiny_model(decoder="luong", score="dot", dec_hidden=4, combine="gate")
    d = model.decoder
    src, src_mask, tgt, _ = batch()
    logits, alignment = model(src, tgt, src_mask)
    h = model.encoder(src, src_mask).annotations.data
    state, ctx = d.start(model.encoder(src, src_mask))
    state, _, alpha = d.step(np.full(2, BOS), state, ctx, 0)
    s1 = state[0].data
    c1 = np.einsum("bs,bsk->bk", alpha.data, h)
    z = 1 / (1 + np.exp(-(np.concatenate([c1, s1], 1) @ d.gate.weight.data.T + d.gate.bias.data)))
    h_tilde = z * np.tanh(c1 @ d.combine.weight.data.T) + (1 - z) * s1
    np.testing.assert_allclose(logits.data[:, 0], h_tilde @ d.out.weight.data.T + d.out.bias.data,
                               atol=1e-12)


def test_truncated_attention_puts_no_weight_outside_the_window():
    model = tiny_model(decoder="bahdanau", truncate=1)
    src, src_mask, tgt, _ = batch(src_lengths=(4, 4), tgt_lengths=(3, 3))
    _, alignment = model(src, tgt, src_mask)                          # (B, T, S)
    t, j = np.meshgrid(np.arange(3), np.arange(4), indexing="ij")
    assert np.all(alignment[:, np.abs(j - t) > 1] == 0)
    np.testing.assert_allclose(alignment.sum(-1), 1.0)


def test_temperature_only_rescales_the_scores():
    a, b = tiny_model(decoder="luong", score="general"), tiny_model(decoder="luong", score="general",
                                                                   temperature=0.5)
    src, src_mask, tgt, _ = batch()
    wa, wb = a(src, tgt, src_mask)[1], b(src, tgt, src_mask)[1]      # same weights, T differs
    assert np.all(wb.max(-1) >= wa.max(-1) - 1e-12)                  # sharper at T < 1


def test_config_errors_for_the_options():
    for bad, match in ((dict(temperature=0.0), "temperature"), (dict(dropout=1.0), "dropout"),
                       (dict(truncate=-1), "truncate"),
                       (dict(decoder="luong", score="general", combine="add"), "combine"),
                       (dict(decoder="bahdanau", combine="gate"), "combine"),
                       (dict(decoder="luong", score="local-m", truncate=2), "truncate"),
                       (dict(decoder="luong", score="local-p", temperature=2.0), "temperature")):
        with pytest.raises(ValueError, match=match):
            ModelConfig(5, 5, **bad)
    with pytest.raises(ValueError, match="combine"):
        LuongDecoder(5, 3, 4, 4, combine="sum")


def test_a_saved_config_loads_as_it_was_trained():
    """Configs saved before the plain form became the default were trained with input
    feeding: without the field they load with it; with it, as saved (both ways)."""
    old = ModelConfig(5, 5, decoder="luong", score="general", input_feeding=True).to_dict()
    del old["input_feeding"]
    assert ModelConfig.from_dict(old).input_feeding is True
    for feeding in (True, False):
        saved = ModelConfig(5, 5, decoder="luong", score="general", input_feeding=feeding).to_dict()
        assert ModelConfig.from_dict(saved).input_feeding is feeding
    assert ModelConfig(5, 5, decoder="luong", score="general").input_feeding is False  # new default


def test_a_config_saved_with_a_fields_old_name_loads():
    """``window`` (local attention's half-width D) is now ``local_window``: not ``truncate``'s W."""
    saved = ModelConfig(5, 5, decoder="luong", score="local-m", local_window=3).to_dict()
    saved["window"] = saved.pop("local_window")
    assert ModelConfig.from_dict(saved).local_window == 3


@pytest.mark.slow
def test_the_gate_trains_on_reverse():
    cfg = TrainConfig(task="reverse", n_train=2000, n_val=200, min_len=3, max_len=7,
                      batch_size=32, epochs=12, target=0.9, seed=0)
    trainer = Trainer.create(cfg, dict(embed=16, hidden=32, dec_hidden=32, attn=32,
                                       dtype="float32", decoder="luong", score="general",
                                       combine="gate"))
    with blas.threads(1):
        trainer.run(log=lambda line: None)
    assert trainer.state.history[-1]["val_exact"] >= 0.9


def test_cli_options_reach_the_model_and_translate_takes_a_temperature(tmp_path, capsys):
    import json
    from models.app.cli import main
    args = ["train", "--task", "copy", "--n-train", "64", "--n-val", "8", "--epochs", "1",
            "--embed", "8", "--hidden", "8", "--dec-hidden", "8", "--attn", "8",
            "--decoder", "luong", "--combine", "gate", "--temperature", "0.5", "--window", "3",
            "--attn-dropout", "0.1", "--out", str(tmp_path / "run")]
    with blas.threads(1):
        assert main(args) == 0
    config = json.loads((tmp_path / "run" / "checkpoint.json").read_text())["model"]
    assert (config["combine"], config["temperature"], config["truncate"], config["dropout"],
            config["input_feeding"], config["local_window"]) == ("gate", 0.5, 3, 0.1, False, 2)
    capsys.readouterr()
    assert main(["translate", str(tmp_path / "run"), "abc", "--temperature", "2",
                 "--no-heatmap"]) == 0
    assert "'abc' ->" in capsys.readouterr().out
    assert main(["translate", str(tmp_path / "run"), "abc", "--temperature", "0"]) == 2
    assert "translate: --temperature: temperature must be" in capsys.readouterr().err
    local = ["train", "--task", "copy", "--n-train", "64", "--n-val", "8", "--epochs", "1",
             "--embed", "8", "--hidden", "8", "--dec-hidden", "8", "--decoder", "luong",
             "--score", "local-m", "--window", "1", "--out", str(tmp_path / "local")]
    with blas.threads(1):
        assert main(local) == 0                                     # --window is D for local
    assert json.loads((tmp_path / "local" / "checkpoint.json").read_text())["model"]["local_window"] == 1
    assert main(local[:-2] + ["--temperature", "2", "--out", str(tmp_path / "x")]) == 2
    assert "apply to the global attention" in capsys.readouterr().err
    assert main(["translate", str(tmp_path / "local"), "abc", "--temperature", "2"]) == 2
    assert "needs global attention" in capsys.readouterr().err
