"""Decoders behind Seq2Seq: the loss is gradchecked with respect to every parameter, and the
Bahdanau and Luong orderings are recomputed by hand."""
import numpy as np
import pytest

import minigrad as mg
from models.kernels import use_kernels
from models.vocab import BOS, PAD
from models.seq2seq import ModelConfig, decoder_inputs
from model_helpers import batch, gradcheck_params, tiny_model

VARIANTS = {
    "bahdanau-additive": dict(decoder="bahdanau", score="additive"),
    "bahdanau-general": dict(decoder="bahdanau", score="general"),
    "bahdanau-reset-before": dict(decoder="bahdanau", score="additive", reset_after=False),
    "luong-dot": dict(decoder="luong", score="dot", dec_hidden=4),
    "luong-general": dict(decoder="luong", score="general"),
    "luong-concat-lstm": dict(decoder="luong", score="concat", cell="lstm"),
    "luong-feeding": dict(decoder="luong", score="general", input_feeding=True),
    "luong-local-m": dict(decoder="luong", score="local-m", local_window=1),
    "luong-local-p": dict(decoder="luong", score="local-p", local_window=1),
    "plain": dict(decoder="plain"),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_loss_gradcheck_wrt_every_parameter(name):
    model = tiny_model(**VARIANTS[name])
    src, src_mask, tgt, tgt_mask = batch()
    assert gradcheck_params(model, lambda: model.loss(src, tgt, src_mask, tgt_mask))
    for p in model.parameters():  # and every parameter does get a gradient
        p.grad = None
    model.loss(src, tgt, src_mask, tgt_mask).backward()
    assert all(p.grad is not None and np.abs(p.grad).sum() > 0 for p in model.parameters())


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_source_padding_does_not_change_the_loss(name):
    model = tiny_model(**VARIANTS[name])
    src, src_mask, tgt, tgt_mask = batch()
    more = np.pad(src, ((0, 0), (0, 3)), constant_values=PAD)
    a = model.loss(src, tgt, src_mask, tgt_mask).item()
    b = model.loss(more, tgt, more != PAD, tgt_mask).item()
    assert abs(a - b) < 1e-12


def test_masks_default_to_ids_not_pad():
    """The issue's call ``loss(src, tgt)``: both masks are derived as ids != PAD."""
    model = tiny_model()
    src, src_mask, tgt, tgt_mask = batch()
    assert model.loss(src, tgt).item() == model.loss(src, tgt, src_mask, tgt_mask).item()
    np.testing.assert_array_equal(model(src, tgt)[0].data, model(src, tgt, src_mask)[0].data)


def test_target_padding_is_not_counted():
    model = tiny_model()
    src, src_mask, tgt, tgt_mask = batch()
    logits, _ = model(src, tgt, src_mask)
    logp = mg.functional.log_softmax(logits).data
    rows, cols = np.nonzero(tgt_mask)
    want = -logp[rows, cols, tgt[rows, cols]].mean()
    assert abs(model.loss(src, tgt, src_mask, tgt_mask).item() - want) < 1e-12


def test_bahdanau_ordering_by_hand():
    """s_0 = tanh(W_init mean h + b_init); c_1 from score(s_0, h); s_1 = GRU([E y_0; c_1], s_0);
    logits_1 = W_o [s_1; c_1] + b_o."""
    model = tiny_model(decoder="bahdanau", score="additive")
    src, src_mask, tgt, _ = batch()
    logits, alignment = model(src, tgt, src_mask)
    d = model.decoder
    enc = model.encoder(src, src_mask)
    h, m = enc.annotations.data, src_mask
    mean = h.sum(1) / m.sum(1, keepdims=True)
    s0 = np.tanh(mean @ d.init.weight.data.T + d.init.bias.data)
    sc = d.attention.score
    e = np.tanh((s0 @ sc.W_q.data.T)[:, None] + h @ sc.W_k.data.T + sc.b.data) @ sc.v.data
    e = np.where(m, e, -np.inf)
    alpha = np.exp(e - e.max(1, keepdims=True))
    alpha /= alpha.sum(1, keepdims=True)
    c1 = np.einsum("bs,bsk->bk", alpha, h)
    x = np.concatenate([d.embedding.weight.data[np.full(2, BOS)], c1], axis=1)
    s1 = d.cell(mg.tensor(x), mg.tensor(s0)).data
    want = np.concatenate([s1, c1], 1) @ d.out.weight.data.T + d.out.bias.data
    np.testing.assert_allclose(alignment[:, 0], alpha, atol=1e-12)
    np.testing.assert_allclose(logits.data[:, 0], want, atol=1e-12)


def test_luong_ordering_by_hand():
    """With input feeding: s_1 = GRU([E y_0; h̃_0 = 0], s_0); c_1 from score(s_1, h);
    h̃_1 = tanh(W_c [c_1; s_1]); logits_1 = W_o h̃_1 + b_o."""
    model = tiny_model(decoder="luong", score="dot", dec_hidden=4, input_feeding=True)
    src, src_mask, tgt, _ = batch()
    logits, alignment = model(src, tgt, src_mask)
    d = model.decoder
    h, m = model.encoder(src, src_mask).annotations.data, src_mask
    s0 = np.tanh((h.sum(1) / m.sum(1, keepdims=True)) @ d.init.weight.data.T + d.init.bias.data)
    x = np.concatenate([d.embedding.weight.data[np.full(2, BOS)], np.zeros((2, 4))], axis=1)
    s1 = d.cell(mg.tensor(x), mg.tensor(s0)).data
    e = np.where(m, np.einsum("bk,bsk->bs", s1, h), -np.inf)
    alpha = np.exp(e - e.max(1, keepdims=True))
    alpha /= alpha.sum(1, keepdims=True)
    c1 = np.einsum("bs,bsk->bk", alpha, h)
    h_tilde = np.tanh(np.concatenate([c1, s1], 1) @ d.combine.weight.data.T)
    want = h_tilde @ d.out.weight.data.T + d.out.bias.data
    np.testing.assert_allclose(alignment[:, 0], alpha, atol=1e-12)
    np.testing.assert_allclose(logits.data[:, 0], want, atol=1e-12)


def test_plain_ordering_by_hand():
    """c = [→h_{S_b}; ←h_1]; s_0 = tanh(W_init c + b_init); s_1 = GRU([E y_0; c], s_0);
    logits_1 = W_o [s_1; c] + b_o. The context keeps c, and nothing an attention decoder needs
    (the kernel's context adds the per-batch product W_ih^c c, gi_c)."""
    model = tiny_model(decoder="plain")
    src, src_mask, tgt, _ = batch()
    logits, _ = model(src, tgt, src_mask)
    d = model.decoder
    encoded = model.encoder(src, src_mask)
    c = encoded.final.data
    s0 = np.tanh(c @ d.init.weight.data.T + d.init.bias.data)
    x = np.concatenate([d.embedding.weight.data[np.full(2, BOS)], c], axis=1)
    s1 = d.cell(mg.tensor(x), mg.tensor(s0)).data
    want = np.concatenate([s1, c], 1) @ d.out.weight.data.T + d.out.bias.data
    np.testing.assert_allclose(logits.data[:, 0], want, atol=1e-12)
    _, ctx = d.start(encoded)
    np.testing.assert_array_equal(ctx.c.data, c)
    assert ctx._fields == ("c",)
    _, ctx = use_kernels(d).start(encoded)
    E = d.embedding.weight.shape[1]
    np.testing.assert_allclose(ctx.gi_c.data, c @ d.cell.weight_ih.data[:, E:].T, atol=1e-12)
    assert set(ctx._fields) == {"table", "c", "gi_c"}


def test_plain_decoder_has_no_alignment():
    model = tiny_model(decoder="plain")
    src, src_mask, tgt, _ = batch()
    logits, alignment = model(src, tgt, src_mask)
    assert alignment is None and logits.shape == (2, 3, 8)


def test_teacher_forcing():
    model = tiny_model()
    src, src_mask, tgt, tgt_mask = batch()
    full = model.loss(src, tgt, src_mask, tgt_mask).item()
    rng = np.random.default_rng(0)
    assert model.loss(src, tgt, src_mask, tgt_mask, 1.0, rng).item() == full
    free = model.loss(src, tgt, src_mask, tgt_mask, 0.0, np.random.default_rng(0)).item()
    assert free != full  # the model's own (wrong) guesses were fed back
    with pytest.raises(ValueError, match="rng"):
        model.loss(src, tgt, src_mask, tgt_mask, 0.5)


@pytest.mark.parametrize("ratio", [-0.1, 1.5, float("nan")])  # NaN used to act as 1.0
def test_teacher_forcing_outside_0_1_is_refused(ratio):
    model = tiny_model()
    src, _, tgt, _ = batch()
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"teacher_forcing must be in \[0, 1\]"):
        model(src, tgt, teacher_forcing=ratio, rng=rng)
    with pytest.raises(ValueError, match=r"teacher_forcing must be in \[0, 1\]"):
        model.loss(src, tgt, teacher_forcing=ratio, rng=rng)


def test_decoder_inputs_shift_right():
    tgt = np.array([[5, 6, 2], [7, 2, 0]])
    np.testing.assert_array_equal(decoder_inputs(tgt), [[BOS, 5, 6], [BOS, 7, 2]])


def test_config_errors():
    with pytest.raises(ValueError, match="equal widths"):
        tiny_model(decoder="luong", score="dot", dec_hidden=3)  # 2 × hidden = 4
    with pytest.raises(ValueError, match="decoder"):
        ModelConfig(5, 5, decoder="gpt")
    with pytest.raises(ValueError, match="score"):
        ModelConfig(5, 5, decoder="luong", score="additive")
    with pytest.raises(ValueError, match="hidden"):
        ModelConfig(5, 5, hidden=0)
    with pytest.raises(ValueError, match="unknown field"):
        ModelConfig.from_dict({"src_vocab": 5, "tgt_vocab": 5, "depth": 2})


def test_float32_model_stays_float32():
    model = tiny_model(dtype="float32")
    src, src_mask, tgt, tgt_mask = batch()
    loss = model.loss(src, tgt, src_mask, tgt_mask)
    assert loss.dtype == np.float32
    loss.backward()
    assert {p.grad.dtype for p in model.parameters()} == {np.dtype(np.float32)}


def test_targets_must_fit_sources():
    model = tiny_model()
    src, src_mask, tgt, tgt_mask = batch()
    with pytest.raises(ValueError, match="targets"):
        model.loss(src, tgt[:1], src_mask, tgt_mask[:1])


def test_bad_targets_are_named_as_targets():
    model = tiny_model()
    src, src_mask, tgt, _ = batch()
    for bad in (tgt.astype(np.float64), src_mask):  # floats; or the masks in the old order
        with pytest.raises(ValueError, match="targets: expected integer ids"):
            model.loss(src, bad)
    wrong = tgt.copy()
    wrong[0, 0] = 55
    with pytest.raises(ValueError, match="targets: token id 55 is out of range for a vocabulary of 8"):
        model.loss(src, wrong)
    wrong = src.copy()
    wrong[0, 0] = 55
    with pytest.raises(ValueError, match="source: token id 55 is out of range for a vocabulary of 9"):
        model.loss(wrong, tgt)
