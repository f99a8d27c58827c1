"""The padding-aware bidirectional encoder."""
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minigrad as mg
from minigrad.gradcheck import gradcheck
from models.vocab import PAD
from models.recurrent import BiGRUEncoder
from model_helpers import batch, random_batch, tiny_model

V, E, H = 11, 4, 3


def encoder(seed=0, reset_after=True):
    return BiGRUEncoder(V, E, H, reset_after=reset_after, rng=np.random.default_rng(seed))


@given(st.lists(st.integers(1, 7), min_size=1, max_size=4), st.integers(1, 4), st.integers(0, 99))
def test_extra_padding_changes_nothing_and_equals_the_unpadded_run(lengths, extra, seed):
    rng = np.random.default_rng(seed)
    enc = encoder()
    src, mask = random_batch(rng, lengths, V)
    out = enc(src, mask)
    padded = np.pad(src, ((0, 0), (0, extra)), constant_values=PAD)
    out2 = enc(padded, padded != PAD)
    S = src.shape[1]
    np.testing.assert_allclose(out2.annotations.data[:, :S], out.annotations.data, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(out2.annotations.data[:, S:], 0)
    np.testing.assert_allclose(out2.final.data, out.final.data, rtol=0, atol=1e-12)
    for b, n in enumerate(lengths):  # each example alone, with no padding at all
        alone = enc(src[b:b + 1, :n])
        np.testing.assert_allclose(out.annotations.data[b, :n], alone.annotations.data[0],
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(out.final.data[b], alone.final.data[0], rtol=0, atol=1e-12)


def test_annotations_are_zero_at_padding_and_directions_are_right():
    rng = np.random.default_rng(1)
    enc = encoder()
    src, mask = random_batch(rng, [5, 2], V)
    out = enc(src, mask)
    assert out.annotations.shape == (2, 5, 2 * H)
    np.testing.assert_array_equal(out.annotations.data[1, 2:], 0)
    # forward half at the last real token = final forward state; backward half at 0 = final backward
    np.testing.assert_array_equal(out.final.data[1, :H], out.annotations.data[1, 1, :H])
    np.testing.assert_array_equal(out.final.data[1, H:], out.annotations.data[1, 0, H:])
    # the backward direction at the last real token has read only that token
    cell = enc.backward_cell
    x = enc.embedding.weight.data[src[1, 1]][None]
    first = cell(mg.tensor(x)).data[0]
    np.testing.assert_allclose(out.annotations.data[1, 1, H:], first, atol=1e-14)


def test_mask_is_derived_from_pad_when_omitted():
    rng = np.random.default_rng(2)
    enc = encoder()
    src, mask = random_batch(rng, [4, 3, 1], V)
    np.testing.assert_array_equal(enc(src).annotations.data, enc(src, mask).annotations.data)


@pytest.mark.parametrize("reset_after", [True, False])
def test_encoder_gradcheck_wrt_every_parameter(reset_after):
    rng = np.random.default_rng(3)
    enc = encoder(reset_after=reset_after)
    src, mask = random_batch(rng, [3, 2], V)
    u = rng.standard_normal((2, 3, 2 * H))
    params = enc.parameters()

    def f(*values):
        for p, v in zip(params, values):
            p.data = v.data
        out = enc(src, mask)
        return (out.annotations * u).sum() + out.final.sum()

    originals = [p.data for p in params]
    assert gradcheck(f, params)
    for p, d in zip(params, originals):
        p.data = d


@pytest.mark.parametrize("entry", ["loss", "forward", "greedy", "beam"])
def test_bad_sources_are_refused_at_every_entry_point(entry):
    """The model's entry points check the source once; the encoder takes it as checked."""
    model = tiny_model()                                                 # 9 source ids
    call = {"loss": lambda src, mask: model.loss(src, np.array([[4, 2]]), mask),
            "forward": lambda src, mask: model(src, np.array([[4, 2]]), mask),
            "greedy": lambda src, mask: model.greedy(src, 3, mask),
            "beam": lambda src, mask: model.beam(src, 2, src_mask=mask)}[entry]
    for src, mask, message in (
            (np.array([[5, 0, 6, 2]]), np.array([[True, False, True, True]]), "right-padding"),
            (np.array([[0, 0]]), None, "at least one real token"),
            (np.array([[1.0, 2.0]]), None, "integer ids"),
            (np.zeros((1, 0), dtype=np.int64), None, "empty"),
            (np.array([[12, 2]]), None,
             "source: token id 12 is out of range for a vocabulary of 9"),
            (np.array([[5, 2]]), np.array([[True]]),
             r"source: mask of shape \(1, 1\) vs ids of shape \(1, 2\)")):
        with pytest.raises(ValueError, match=message):
            call(src, mask)


def test_a_target_mask_that_does_not_fit_the_targets_is_refused_by_the_loss():
    model = tiny_model()
    src, src_mask, tgt, tgt_mask = batch()                               # tgt (2, 3)
    for bad in (tgt_mask[:1], tgt_mask[:, :1]):                          # would broadcast
        with pytest.raises(ValueError, match=re.escape(f"targets: mask of shape {bad.shape} vs "
                                                       "ids of shape (2, 3)")):
            model.loss(src, tgt, src_mask, bad)
