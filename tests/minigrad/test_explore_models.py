"""``python -m models explore RUN``: a trained run's explorer page, with its attention panel.
The fast test builds the page of an untrained model; the slow ones train a tiny run on the
command line and write its page into the run (``test_explore_browser.py`` clicks on it)."""
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from models.app.data import make_task
from models.app.explore import explore_pair
from models.seq2seq import ModelConfig, Seq2Seq


def data_of(page: str) -> dict:
    return json.loads(re.search(r'id="data">(.*?)</script>', page, re.S).group(1))


def test_the_attention_panel_holds_alpha_and_the_read_formula_with_the_engines_numbers():
    task = make_task("dates", np.random.default_rng(0), 4, 2, 3, 10)
    model = Seq2Seq(ModelConfig(len(task.src_vocab), len(task.tgt_vocab), embed=8, hidden=8,
                                dec_hidden=8, attn=8), np.random.default_rng(1))
    pair = task.val[0]
    page = explore_pair(model, task.src_vocab, task.tgt_vocab, pair, "t")
    d = page.data
    a = d["attention"]
    T, S = len(pair[1]) + 1, len(pair[0]) + 1                     # + <eos>
    assert np.shape(a["alpha"]) == (T, S) and len(a["steps"]) == T
    assert a["src"][-1] == a["tgt"][-1] == "<eos>" and "".join(a["tgt"][:-1]) == pair[1]
    np.testing.assert_allclose(np.sum(a["alpha"], axis=1), 1, rtol=1e-5)
    for t, st in enumerate(a["steps"]):
        node = d["nodes"][st["node"]]
        assert node["t"] == "read" and node["sc"][:2] == ["decoder", f"step {t}"]
        formula = np.array(a["alpha"][t]) * (np.array(st["gh"]) - st["gc"][0])
        np.testing.assert_allclose(formula, st["de"], rtol=1e-4, atol=1e-9)  # α g·(h − c)
        assert abs(sum(st["de"])) <= 1e-5 * sum(map(abs, st["de"]))  # Σ_j ∂L/∂e_j = 0
    assert data_of(page.html)["attention"] == a


@pytest.mark.parametrize("decoder, score", [("luong", "dot"), ("luong", "general"),
                                            ("luong", "concat"), ("luong", "local-m")])
def test_every_luong_score_links_each_weight_to_its_read_and_formula(decoder, score):
    task = make_task("dates", np.random.default_rng(0), 4, 2, 3, 10)
    config = ModelConfig(len(task.src_vocab), len(task.tgt_vocab), embed=8, hidden=8,
                         dec_hidden=16, attn=8, decoder=decoder, score=score)
    pair = task.val[0]
    a = explore_pair(Seq2Seq(config, np.random.default_rng(1)), task.src_vocab, task.tgt_vocab,
                     pair, "t").data["attention"]
    assert len(a["steps"]) == len(a["alpha"]) == len(pair[1]) + 1
    for alpha, st in zip(a["alpha"], a["steps"]):
        np.testing.assert_allclose(np.array(alpha) * (np.array(st["gh"]) - st["gc"][0]),
                                   st["de"], rtol=1e-4, atol=1e-9)   # α_j g·(h_j − c)



def test_local_p_links_each_weight_to_its_softmax_and_the_gaussian_weighted_formula():
    """local-p (Luong et al. 2015 §3.2) reads c_t = Σ_j α_tj G_tj h_j, α_t = softmax(e_t),
    G_tj = exp(−(j − p_t)²/2σ²), σ = D/2: ∂L/∂e_tj = α_tj (G_tj g·h_j − g·c_t), not the plain
    α_tj g·(h_j − c_t). The page's numbers must equal the engine's ∂L/∂e."""
    task = make_task("dates", np.random.default_rng(0), 4, 2, 3, 10)
    config = ModelConfig(len(task.src_vocab), len(task.tgt_vocab), embed=8, hidden=8,
                         dec_hidden=16, attn=8, decoder="luong", score="local-p", local_window=2)
    pair = task.val[0]
    page = explore_pair(Seq2Seq(config, np.random.default_rng(1)), task.src_vocab,
                        task.tgt_vocab, pair, "t")
    d, a = page.data, page.data["attention"]
    assert len(a["steps"]) == len(a["alpha"]) == len(pair[1]) + 1
    plain = []
    for t, (shown, st) in enumerate(zip(a["alpha"], a["steps"])):
        node = d["nodes"][st["node"]]
        assert node["t"] == "softmax" and node["sc"][:2] == ["decoder", f"step {t}"]
        alpha, G, gh, de = (np.array(st[k]) for k in ("a", "G", "gh", "de"))      # (S,) each
        np.testing.assert_allclose(alpha * G, shown, rtol=1e-5, atol=1e-9)  # the weights read
        np.testing.assert_allclose(alpha.sum(), 1, rtol=1e-5)      # α: softmax over the window
        j = np.arange(len(G))
        assert np.polyfit(j, np.log(G), 2)[0] == pytest.approx(-1 / (2 * 1.0 ** 2), rel=1e-4)
        np.testing.assert_allclose(alpha * (G * gh - st["gc"][0]), de, rtol=1e-4, atol=1e-9)
        assert abs(de.sum()) <= 1e-5 * np.abs(de).sum() and np.abs(de).max() > 0  # Σ_j = 0
        plain.append(np.allclose(alpha * (gh - st["gc"][0]), de, rtol=1e-4, atol=1e-9))
    assert not any(plain)                                    # the plain formula does not hold
    assert data_of(page.html)["attention"] == a

def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "models", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "dates"
    done = run("train", "--task", "dates", "--n-train", "200", "--n-val", "20", "--epochs", "1",
               "--batch-size", "50", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.slow
def test_the_page_goes_into_the_run_and_never_over_a_users_file(trained):
    first, second = run("explore", str(trained)), run("explore", str(trained), "--lang", "zh")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout == f"wrote {trained / 'explore.html'}\n"
    assert second.stdout == f"已写入 {trained / 'explore-2.html'}\n"       # a new name, in Chinese
    page = (trained / "explore.html").read_text(encoding="utf-8")
    assert len(page.encode()) <= 1_000_000 and len(data_of(page)["nodes"]) > 900
    again = trained.parent / "again.html"                     # the same run: the same bytes
    assert run("explore", str(trained), "--out", str(again)).returncode == 0
    assert again.read_bytes() == (trained / "explore.html").read_bytes()
    user = trained / "notes.html"
    user.write_text("mine")
    refused = run("explore", str(trained), "--out", str(user))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "notes.html exists and is not an explorer page" in refused.stderr
    assert user.read_text() == "mine"
    missing = run("explore", str(trained / "nothing"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1, missing.stderr



@pytest.mark.slow
def test_a_1200_node_seq2seq_loss_fits_in_one_megabyte():
    from minigrad.viz import explore, trace
    from models.app.graphs import demo_batch
    rng = np.random.default_rng(0)
    model = Seq2Seq(ModelConfig(20, 20, dtype="float32"), rng)
    src, src_mask, tgt, tgt_mask = demo_batch(rng, 32, 20, 20)            # (B, S), (B, T)
    with trace(model) as tr:
        loss = model.loss(src, tgt, src_mask, tgt_mask)
    page = explore(loss, tr)
    assert len(page.data["nodes"]) >= 1200 and len(page.html.encode()) <= 1_000_000
    assert page.data["naive"] == []                                       # too big to replay


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """Two epochs of a tiny copy run, saved: its history records keep the first pair's α."""
    from models.app.train import Trainer
    from models.app.train_config import TrainConfig
    folder = tmp_path_factory.mktemp("tiny") / "copy"
    trainer = Trainer.create(TrainConfig(task="copy", n_train=40, n_val=4, max_len=5, epochs=2,
                                         batch_size=20, target=2.0),
                             dict(embed=8, hidden=8, dec_hidden=8, attn=8))
    trainer.run(log=lambda line: None, folder=str(folder))
    return trainer, folder


def test_each_epoch_keeps_the_first_held_out_pairs_alignment(tiny_run):
    from models.app.train import first_alignment
    trainer, _folder = tiny_run
    history = trainer.state.history
    assert [h["epoch"] for h in history] == [1, 2] and all("alpha" in h for h in history)
    src, tgt = trainer.data.val[0]
    assert np.shape(history[-1]["alpha"]) == (len(tgt) + 1, len(src) + 1)   # + <eos>
    np.testing.assert_allclose(history[-1]["alpha"], first_alignment(trainer.model, trainer.data),
                               atol=0)                                       # the last weights'
    np.testing.assert_allclose(np.sum(history[-1]["alpha"], axis=1), 1, atol=3e-3)
    trainer.model.train()
    first_alignment(trainer.model, trainer.data)                 # in eval mode, then back
    assert trainer.model.training


def test_the_training_panel_holds_the_history_and_alpha_from_epoch_0(tiny_run):
    from models.app.explore import explore_run
    from models.app.train import first_alignment
    from models.app.train_config import seeds
    trainer, folder = tiny_run
    d = explore_run(str(folder)).data
    tr, a = d["training"], d["attention"]
    assert set(tr) == {"history", "alpha"}
    assert tr["history"] == [[h["epoch"], round(h["loss"], 3), round(h["val_exact"], 3)]
                             for h in trainer.state.history]
    assert [e for e, _ in tr["alpha"]] == [0, 1, 2]
    assert tr["alpha"][1:] == [[h["epoch"], h["alpha"]] for h in trainer.state.history]
    untrained = Seq2Seq(trainer.model.config, seeds(trainer.config.seed)[1])   # as create() did
    assert tr["alpha"][0][1] == first_alignment(untrained, trainer.data)
    np.testing.assert_allclose(tr["alpha"][-1][1], a["alpha"], atol=2e-3)  # the same pair
    assert data_of(explore_run(str(folder)).html)["training"] == tr


def test_a_damaged_or_old_history_cannot_break_the_page():
    from models.app.explore import training_panel
    task = make_task("copy", np.random.default_rng(0), 4, 2, 3, 5)
    model = Seq2Seq(ModelConfig(len(task.src_vocab), len(task.tgt_vocab), embed=8, hidden=8,
                                dec_hidden=8, attn=8), np.random.default_rng(1))
    shape = (len(task.val[0][1]) + 1, len(task.val[0][0]) + 1)
    good = np.full(shape, 1 / shape[1]).tolist()
    state = {"history": [{"epoch": 1, "loss": float("nan"), "val_exact": 0.5},  # an old run:
                         {"epoch": 2, "loss": 1.0, "val_exact": "x", "alpha": [[1, 2], [3]]},
                         {"epoch": 3, "loss": 0.5, "val_exact": 1.0, "alpha": good},
                         {"epoch": "<b>", "loss": 0.1, "val_exact": 1.0, "alpha": good}, 7]}
    tr = training_panel(state, model, task, shape)
    assert tr["history"] == [[1, None, 0.5], [2, 1.0, None], [3, 0.5, 1.0]]
    assert [e for e, _ in tr["alpha"]] == [0, 3]                 # ragged and unnamed: left out
    json.dumps(tr, allow_nan=False)                               # strict JSON: no NaN
    assert training_panel({}, model, task, shape)["history"] == []


def transformer_page():
    task = make_task("copy", np.random.default_rng(0), 4, 2, 3, 5)
    model = Seq2Seq(ModelConfig(len(task.src_vocab), len(task.tgt_vocab), decoder="transformer",
                                layers=2, heads=2, d_model=8, ff=16), np.random.default_rng(1))
    model.eval()
    return explore_pair(model, task.src_vocab, task.tgt_vocab, task.val[0], "t"), model, task


def test_a_transformers_page_holds_each_layers_cross_attention_head_by_head():
    page = transformer_page()[0]
    a = page.data["attention"]
    T, S = np.shape(a["alpha"])
    heads = np.array(a["heads"])                                          # (layers, h, T, S)
    assert heads.shape == (2, 2, T, S) and a["steps"] == []
    np.testing.assert_allclose(heads.mean(axis=1)[-1], a["alpha"], atol=1e-6)  # forward's α:
    np.testing.assert_allclose(heads.sum(axis=-1), 1, rtol=1e-5)        # the last layer's mean
    assert not np.allclose(heads[-1, 0], heads[-1, 1], atol=1e-4)        # two heads, not one
    assert data_of(page.html)["attention"]["heads"] == a["heads"]


def test_a_transformers_cross_attention_weights_link_to_their_read_and_formula_per_head():
    """Layer l's cross-attention read, head k: ∂L/∂e_tj = α_tj g·(v_j − c_t), g = ∂L/∂c of the
    head, v_j its value rows; the page's numbers equal the engine's ∂L/∂e on the scores."""
    import minigrad as mg
    from models.seq2seq import decoder_inputs
    from models.vocab import pad_batch
    page, model, task = transformer_page()
    d, a = page.data, page.data["attention"]
    heads = np.array(a["heads"])                                          # (layers, h, T, S)
    (src, mask), (tgt, _) = (pad_batch([v.encode(s)]) for v, s in
                             zip((task.src_vocab, task.tgt_vocab), task.val[0]))
    with mg.no_grad():                                # the decoder's own cross weights: the same
        cross = model.decoder.attend_all(model.encoder(src, mask), decoder_inputs(tgt))[2]
    np.testing.assert_allclose(heads, [w[0] for w in cross], rtol=1e-5, atol=1e-9)
    assert len(a["cross"]) == 2 and a["steps"] == []
    for l, c in enumerate(a["cross"]):
        node = d["nodes"][c["node"]]
        assert node["t"] == "read" and node["sc"] == ["decoder", f"decoder.layers.{l}"]
        gh, gc, de = (np.array(c[k]) for k in ("gh", "gc", "de"))  # (h, T, S), (h, T, 1), (..S)
        assert gh.shape == de.shape == heads.shape[1:] and gc.shape == heads.shape[1:3] + (1,)
        np.testing.assert_allclose(heads[l] * (gh - gc), de, rtol=1e-4, atol=1e-9)  # α g·(v − c)
        assert np.abs(de.sum(-1)).max() <= 1e-5 * np.abs(de).sum() and np.abs(de).max() > 0
    assert data_of(page.html)["attention"]["cross"] == a["cross"]
