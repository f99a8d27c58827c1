"""Greedy and beam decoding on untrained tiny models: shapes, scores, and agreement."""
import itertools

import numpy as np
import pytest

import minigrad as mg
from models.vocab import BOS, EOS, PAD
from models.decoding import length_penalty_gnmt
from model_helpers import random_batch, tiny_model

MODELS = [dict(), dict(decoder="luong", score="general"), dict(decoder="luong", score="local-p"),
          dict(decoder="plain")]


def sources(seed=0, lengths=(5, 3, 1)):
    return random_batch(np.random.default_rng(seed), lengths, 9)


def rescore(model, src, mask, tokens) -> float:
    """log p(tokens | src) under teacher forcing."""
    tgt = np.array([tokens])
    logits, _ = model(src, tgt, mask)
    logp = mg.functional.log_softmax(logits).data[0]
    return float(logp[np.arange(len(tokens)), tokens].sum())


@pytest.mark.parametrize("overrides", MODELS)
def test_greedy_shapes_and_scores(overrides):
    model = tiny_model(seed=1, **overrides)
    src, mask = sources()
    outs = model.greedy(src, 6, mask)
    assert len(outs) == 3
    for b, out in enumerate(outs):
        assert 1 <= len(out.tokens) <= 6
        assert EOS not in out.tokens[:-1] and PAD not in out.tokens and BOS not in out.tokens
        if out.weights is not None:
            assert out.weights.shape == (len(out.tokens), mask[b].sum())
            if overrides.get("score") != "local-p":  # local-p's gaussian weights do not sum to 1
                np.testing.assert_allclose(out.weights.sum(axis=1), 1, atol=1e-12)
        assert abs(out.score - rescore(model, src[b:b + 1], mask[b:b + 1], out.tokens)) < 1e-9


@pytest.mark.parametrize("overrides", MODELS)
def test_greedy_of_a_batch_equals_each_example_alone(overrides):
    model = tiny_model(seed=2, **overrides)
    src, mask = sources(1)
    together = model.greedy(src, 6, mask)
    for b, out in enumerate(together):
        n = mask[b].sum()
        alone = model.greedy(src[b:b + 1, :n], max_len=6)[0]
        assert alone.tokens == out.tokens
        if out.weights is not None:
            np.testing.assert_allclose(alone.weights, out.weights, atol=1e-12)


@pytest.mark.parametrize("overrides", MODELS)
def test_greedy_takes_the_most_likely_token_at_every_step(overrides):
    """Greedy is beam search of width 1: token t is argmax_y p(y | y_<t, x), never PAD or BOS."""
    model = tiny_model(seed=3, **overrides)
    src, mask = sources(2)
    for b, out in enumerate(model.greedy(src, 6, mask)):
        logits, _ = model(src[b:b + 1], np.array([out.tokens]), mask[b:b + 1])  # (1, L, V)
        logp = logits.data[0].copy()
        logp[:, [PAD, BOS]] = -np.inf
        assert list(logp.argmax(axis=-1)) == out.tokens


@pytest.mark.parametrize("beam_size", [1, 2])
def test_a_tie_goes_to_the_lower_id_in_greedy_and_in_the_beam(beam_size):
    """With the output layer zeroed every token has log p = −log V: greedy (argmax) and the beam
    (a stable sort) both take the lowest id they may emit, EOS, so each ends at once."""
    model = tiny_model(seed=5)
    for p in model.decoder.out.parameters():
        p.data[...] = 0.0
    src, mask = sources(4)
    V = model.decoder.out.weight.shape[0]
    for out in model.beam(src, beam_size, 0.0, 6, mask):
        assert out.tokens == [EOS] and abs(out.score + np.log(V)) < 1e-12


@pytest.mark.parametrize("overrides", MODELS)
def test_beam_scores_are_the_models_log_probabilities(overrides):
    model = tiny_model(seed=4, **overrides)
    src, mask = sources(3)
    outs = model.beam(src, beam_size=4, length_penalty=0.6, max_len=6, src_mask=mask)
    for b, out in enumerate(outs):
        assert abs(out.score - rescore(model, src[b:b + 1], mask[b:b + 1], out.tokens)) < 1e-9
        if out.weights is not None:
            assert out.weights.shape == (len(out.tokens), mask[b].sum())


def test_a_beam_wide_enough_to_keep_everything_is_exact_search():
    """With K ≥ (number of tokens)^max_len nothing is ever pruned, so the beam's best finished
    hypothesis is the most likely of all sequences of at most max_len tokens ending in EOS."""
    model = tiny_model(seed=5, tgt_vocab=6)  # emitted tokens: EOS, UNK, 4, 5
    src, mask = sources(4)
    tokens, max_len = [EOS, 3, 4, 5], 3
    seqs = [list(p) + [EOS] for n in range(max_len) for p in itertools.product(tokens[1:], repeat=n)]
    for b, out in enumerate(model.beam(src, beam_size=4 ** max_len, length_penalty=0.0,
                                       max_len=max_len, src_mask=mask)):
        best = max(rescore(model, src[b:b + 1], mask[b:b + 1], s) for s in seqs)
        assert out.tokens[-1] == EOS
        assert abs(out.score - best) < 1e-9


def test_beam_accept_picks_the_best_accepted_hypothesis():
    """accept(ids) reorders only: the winner is the best hypothesis it approves; when it
    approves none (or all), the plain beam's winner."""
    model = tiny_model(seed=7)
    src, mask = sources(6)
    plain = model.beam(src, 4, 0.6, 6, mask)
    for verdict in (lambda ids: False, lambda ids: True):
        got = model.beam(src, 4, 0.6, 6, mask, accept=verdict)
        assert [t.tokens for t in got] == [t.tokens for t in plain]
    seen = []
    def not_the_winner(ids):
        seen.append(list(ids))
        return all(list(ids) != p.tokens for p in plain)
    got = model.beam(src, 4, 0.6, 6, mask, accept=not_the_winner)
    assert len(seen) == 4 * len(plain)  # every final hypothesis was judged
    for g, p in zip(got, plain):
        assert g.tokens != p.tokens and g.tokens in seen
        assert g.score <= p.score + 1e-9 or len(g.tokens) != len(p.tokens)


def test_the_source_mask_defaults_to_ids_not_pad():
    """The issue's calls greedy(src, max_len) and beam(src, beam_size, length_penalty, max_len)."""
    model = tiny_model(seed=6)
    src, mask = sources(5)
    for a, b in [(model.greedy(src, 6), model.greedy(src, 6, mask)),
                 (model.beam(src, 3, 0.6, 6), model.beam(src, 3, 0.6, 6, mask))]:
        assert [t.tokens for t in a] == [t.tokens for t in b]
        assert [t.score for t in a] == [t.score for t in b]


def test_length_penalty_formula():
    assert length_penalty_gnmt(1, 0.0) == 1.0
    np.testing.assert_allclose(length_penalty_gnmt([1, 7], 1.0), [1.0, 2.0])


def test_decoding_argument_errors():
    model = tiny_model()
    src, mask = sources()
    with pytest.raises(ValueError, match="^decoding: .*beam_size=0"):
        model.beam(src, beam_size=0, src_mask=mask)
    with pytest.raises(ValueError, match="^decoding: .*max_len=0"):
        model.greedy(src, max_len=0, src_mask=mask)
    for bad in (-1, float("nan"), float("inf")):  # NaN ranked the hypotheses at random
        with pytest.raises(ValueError, match=r"^decoding: .*length_penalty=[-\w]+ a finite number"):
            model.beam(src, length_penalty=bad, src_mask=mask)
