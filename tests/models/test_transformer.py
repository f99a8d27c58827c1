"""The Transformer: its loss gradchecked end to end, the causal mask and key padding really
hide what they hide, cached decoding equals the uncached computation, it overfits a small
batch, and (slow) it learns ``reverse``."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad.runtime import blas
from model_helpers import gradcheck_params, random_batch, tiny_model
from models.vocab import BOS, EOS, PAD
from models.seq2seq import ModelConfig, Seq2Seq, decoder_inputs
from models.app.train import Trainer, TrainConfig

TINY = dict(decoder="transformer", layers=2, heads=2, d_model=4, ff=6)


def tiny(seed=0, **kw):
    return tiny_model(seed, **{**TINY, **kw})


@pytest.mark.parametrize("options", [dict(), dict(activation="gelu", positions="learned",
                                                   max_positions=8)])
def test_the_whole_models_loss_gradchecks(options):
    """One layer per stack (the layers are composed alike), float64, every parameter."""
    model = tiny(src_vocab=6, tgt_vocab=6, ff=3, layers=1, **options)
    rng = np.random.default_rng(1)
    src, src_mask = random_batch(rng, [4, 2, 3], 6)
    tgt, tgt_mask = random_batch(rng, [3, 4, 1], 6)
    assert gradcheck_params(model, lambda: model.loss(src, tgt, src_mask, tgt_mask),
                            atol=1e-6, rtol=1e-4)


def test_the_causal_mask_hides_the_future():
    """Changing target token k changes no logit at a position ≤ k (input k+1 is y_k)."""
    model = tiny()
    rng = np.random.default_rng(2)
    src, mask = random_batch(rng, [5, 3], 9)
    tgt, _ = random_batch(rng, [6, 6], 8)
    base, _ = model(src, tgt, mask)
    for k in range(5):
        changed = tgt.copy()
        changed[:, k] = 4 + (changed[:, k] - 3) % 4                     # another real token
        logits, _ = model(src, changed, mask)
        np.testing.assert_array_equal(logits.data[:, :k + 1], base.data[:, :k + 1])
        assert not np.allclose(logits.data[:, k + 1:], base.data[:, k + 1:])


def test_key_padding_hides_padding():
    """A padded source position's token, or more padding, changes nothing; a real one does."""
    model = tiny()
    rng = np.random.default_rng(3)
    src, mask = random_batch(rng, [5, 3], 9)
    tgt, _ = random_batch(rng, [4, 4], 8)
    base, align = model(src, tgt, mask)
    padded = src.copy()
    padded[1, 3:] = [7, 8]                                              # junk where mask is False
    longer = np.concatenate([padded, np.full((2, 2), 5)], axis=1)       # two more padded columns
    longer_mask = np.concatenate([mask, np.zeros((2, 2), bool)], axis=1)
    for s, m in ((padded, mask), (longer, longer_mask)):
        logits, a = model(s, tgt, m)
        np.testing.assert_allclose(logits.data, base.data, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(a[1, :, 3:], 0)                   # no weight on padding
    real = src.copy()
    real[1, 0] = 4 + (real[1, 0] - 3) % 5
    assert not np.allclose(model(real, tgt, mask)[0].data[1], base.data[1])


def test_cached_steps_equal_the_full_causal_pass():
    """start/step with the K/V cache gives the teacher-forced logits and alignment."""
    model = tiny(layers=3).eval()
    rng = np.random.default_rng(4)
    src, mask = random_batch(rng, [5, 3, 4], 9)
    tgt, _ = random_batch(rng, [6, 2, 4], 8)
    tgt_in = decoder_inputs(tgt)
    with mg.no_grad():
        full, align = model(src, tgt, mask)
        state, ctx = model.decoder.start(model.encoder(src, mask))
        for t in range(tgt.shape[1]):
            state, features, alpha = model.decoder.step(tgt_in[:, t], state, ctx, t)
            np.testing.assert_allclose(model.decoder.logits(features).data, full.data[:, t],
                                       rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(alpha.data, align[:, t], rtol=1e-10, atol=1e-12)
            assert state[0].shape == (3, 2, t + 1, 2)                   # (B, h, t+1, d)


def uncached_greedy(model, src, mask, max_len):
    """Greedy decoding that re-runs the whole prefix at every step (no cache)."""
    ys = np.full((src.shape[0], 1), BOS)
    done = np.zeros(src.shape[0], bool)
    with mg.no_grad():
        encoded = model.encoder(src, mask)
        for _ in range(max_len):
            logits, _, _ = model.decoder.attend_all(encoded, ys)
            last = logits.data[:, -1].astype(np.float64)
            last[:, [PAD, BOS]] = -np.inf
            y = np.where(done, PAD, last.argmax(axis=-1))
            ys = np.concatenate([ys, y[:, None]], axis=1)
            done |= y == EOS
            if done.all():
                break
    return [list(row[1:]) for row in ys]


def test_a_decoder_layer_fed_in_chunks_equals_the_full_pass_and_refuses_bad_input():
    from models.transformer_layers import DecoderLayer
    layer = DecoderLayer(dim=8, heads=2, ff=16, rng=np.random.default_rng(0))
    memory = np.random.default_rng(1).normal(size=(2, 5, 8))            # (B, S, D)
    kv = layer.cross_attn.project_kv(memory, memory)                    # (B, h, S, d) each
    y = np.random.default_rng(2).normal(size=(2, 4, 8))                 # (B, T, D)
    full = layer(y, kv, None)[0].data                                   # (B, T, D)
    first, cache, _, _ = layer(y[:, :2], kv, None, cache=None)          # the first two positions
    rest = layer(y[:, 2:], kv, None, cache=cache)[0]                    # then two more, cached
    np.testing.assert_allclose(np.concatenate([first.data, rest.data], axis=1), full, atol=1e-12)
    with pytest.raises(ValueError, match=r"^DecoderLayer: y \(2, 8\) does not fit \(B, T, D=8\)"):
        layer(np.ones((2, 8)), kv, None)
    y[0, 2] = np.inf   # hidden from positions 0 and 1 by the causal mask: refused, not NaN there
    with pytest.raises(ValueError, match=r"^DecoderLayer: k .* hold inf or NaN at a masked"), \
            np.errstate(invalid="ignore"):                              # inf − inf in layer norm
        layer(y, kv, None)


def test_greedy_and_beam_with_the_cache_equal_uncached_decoding():
    model = tiny(seed=5, d_model=8, heads=2, ff=8).eval()
    rng = np.random.default_rng(6)
    src, mask = random_batch(rng, [6, 3, 5, 2], 9)
    want = uncached_greedy(model, src, mask, 7)
    for out, tokens in zip(model.greedy(src, 7, mask), want):
        assert out.tokens == [t for t in tokens if t != PAD][:len(out.tokens)]
        assert len(out.tokens) == (tokens.index(EOS) + 1 if EOS in tokens else 7)
    assert [o.tokens for o in model.beam(src, 1, 0.0, 7, mask)] == \
           [o.tokens for o in model.greedy(src, 7, mask)]               # K = 1 is greedy
    # the log p beam search reports (from cached steps) is the teacher-forced one of its tokens
    for b, out in enumerate(model.beam(src, 3, 0.6, 7, mask)):
        logits, _ = model(src[[b]], np.array([out.tokens]), mask[[b]])   # (1, n, V)
        logp = mg.functional.log_softmax(logits[0]).data                 # (n, V)
        assert np.isclose(out.score, logp[np.arange(len(out.tokens)), out.tokens].sum(),
                          atol=1e-9)


def test_attention_dropout_needs_rng_and_is_off_in_eval():
    model = tiny(dropout=0.5)
    rng = np.random.default_rng(7)
    src, mask = random_batch(rng, [4, 3], 9)
    tgt, _ = random_batch(rng, [3, 3], 8)
    with pytest.raises(ValueError, match="dropout: pass rng"):
        model.loss(src, tgt)
    a = model.loss(src, tgt, rng=np.random.default_rng(0)).item()
    b = model.loss(src, tgt, rng=np.random.default_rng(1)).item()
    assert a != b                                                       # the masks differ
    model.eval()
    assert model.loss(src, tgt).item() == model.loss(src, tgt).item()


def test_learned_positions_refuse_positions_past_their_table():
    model = tiny(positions="learned", max_positions=4).eval()
    src, mask = random_batch(np.random.default_rng(8), [3], 9)
    with pytest.raises(ValueError, match=r"LearnedPositions: positions 0\.\.5 go past the 4"):
        model.loss(np.full((1, 6), 5), np.full((1, 2), 5))
    model.greedy(src, 4, mask)                                          # 4 steps fit
    with pytest.raises(ValueError, match=r"positions 4\.\.4 go past"):
        model.greedy(src, 5, mask)


@pytest.mark.parametrize("field, value, message", [
    ("heads", 3, "d_model 4 must be a multiple of heads 3"),
    ("dropout", 1.0, r"dropout must be a number in \[0, 1\)"),
    ("activation", "tanh", "activation must be one of"),
    ("positions", "rotary", "positions must be one of"),
    ("layers", 0, "layers must be a positive int"),
])
def test_bad_transformer_config_is_refused(field, value, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(9, 8, **{**TINY, field: value})


def test_teacher_forcing_below_one_is_refused_with_a_reason():
    model = tiny()
    src, mask = random_batch(np.random.default_rng(9), [3], 9)
    with pytest.raises(ValueError, match="teacher forcing only"):
        model.loss(src, src[:, :2] % 8, teacher_forcing=0.5, rng=np.random.default_rng(0))


def test_overfits_a_small_batch():
    model = Seq2Seq(ModelConfig(12, 12, **{**TINY, "d_model": 16, "ff": 32}),
                    np.random.default_rng(0))
    rng = np.random.default_rng(10)
    src, mask = random_batch(rng, [6, 5, 4, 6, 3, 5, 6, 4], 12)
    tgt, tgt_mask = random_batch(rng, [5, 6, 4, 3, 6, 5, 4, 6], 12)
    opt = mg.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(150):
        loss = model.loss(src, tgt, mask, tgt_mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.02
    model.eval()
    for b, out in enumerate(model.greedy(src, 8, mask)):
        assert out.tokens == [int(t) for t in tgt[b, :tgt_mask[b].sum()]]


@pytest.fixture(scope="module")
def one_blas_thread():
    with blas.threads(1):
        yield


def trainer(**kw):
    config = dict(task="reverse", n_train=320, n_val=20, min_len=3, max_len=6, batch_size=32,
                  lr=3e-3, epochs=1, target=2.0, seed=0)
    config.update(kw)
    model = dict(decoder="transformer", layers=1, heads=2, d_model=16, ff=32, dropout=0.1,
                 dtype="float32")
    return Trainer.create(TrainConfig(**config), model)


@pytest.mark.slow
def test_resume_with_attention_dropout_equals_uninterrupted(tmp_path, one_blas_thread):
    """The dropout masks are drawn from the trainer's generator, which checkpoints save."""
    whole = trainer()
    whole.run(log=lambda line: None)
    first = trainer()
    first.run(log=lambda line: None, folder=tmp_path, max_steps=4)
    resumed = Trainer.resume(tmp_path)
    resumed.run(log=lambda line: None, folder=tmp_path)
    assert resumed.state.step == whole.state.step == 10
    a, b = whole.model.state_dict(), resumed.model.state_dict()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


@pytest.mark.slow
def test_reverse_reaches_99_percent_held_out(one_blas_thread):
    """Sources of 3-6 symbols; a Transformer, unlike the GRUs, has no built-in sense of
    order, so it needs more pairs (6000) rather than more passes over fewer. Held-out exact
    match swings by a few points from epoch to epoch (92-99% after epoch 3), so up to 8
    epochs; it stops at the first that reaches 99% (epoch 7 here: about 45 s on a loaded
    2-core machine)."""
    config = TrainConfig(task="reverse", n_train=6000, n_val=500, min_len=3, max_len=6,
                         batch_size=32, lr=2e-3, epochs=8, target=0.99, seed=0)
    trainer = Trainer.create(config, dict(decoder="transformer", layers=1, heads=2, d_model=32,
                                          ff=64, dtype="float32"))
    trainer.run(log=lambda line: None)
    assert trainer.state.history[-1]["val_exact"] >= 0.99
    assert trainer.evaluate()["exact"] >= 0.99
