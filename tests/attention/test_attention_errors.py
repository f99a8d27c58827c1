"""Bad input raises ValueError naming the module, the role and the shapes."""
import numpy as np
import pytest

from attention import (AdditiveScore, Attention, ConcatScore, DotScore, GeneralScore,
                       LocalAttention, MultiHeadAttention, ScaledDotScore, attend, masked_softmax,
                       read, scaled_dot_product_attention, score_grad)
from attention.kernels import additive_tanh

rng = np.random.default_rng(0)
Q16, KEYS8 = np.zeros((4, 16)), np.zeros((4, 7, 8))

CASES = [
    ("query width vs W_q", lambda: AdditiveScore(32, 8, 16, rng=rng)(Q16, KEYS8),
     "AdditiveScore: query (B=4, Dq=16) does not fit (B, [T], Dq=32), given W_q (A=16, Dq=32)"),
    ("3-D query width vs W_q", lambda: AdditiveScore(32, 8, 16, rng=rng)(np.zeros((4, 5, 16)), KEYS8),
     "AdditiveScore: query (B=4, T=5, Dq=16) does not fit (B, [T], Dq=32), given W_q (A=16, Dq=32)"),
    ("key width vs W_k", lambda: AdditiveScore(16, 16, 16, rng=rng)(Q16, KEYS8),
     "AdditiveScore: keys (B=4, S=7, Dk=8) does not fit (B=4, S, Dk=16), given W_q (A=16, Dq=16), "
     "W_k (A=16, Dk=16)"),
    ("dot on unequal widths", lambda: DotScore()(Q16, KEYS8),
     "DotScore: keys (B=4, S=7, D=8) does not fit (B=4, S, D=16), given query (B=4, D=16)"),
    ("scaled dot on unequal widths", lambda: ScaledDotScore()(Q16, KEYS8),
     "ScaledDotScore: keys (B=4, S=7, D=8) does not fit (B=4, S, D=16), given query (B=4, D=16)"),
    ("general query width", lambda: GeneralScore(12, 8, rng=rng)(Q16, KEYS8),
     "GeneralScore: query (B=4, Dq=16) does not fit (B, [T], Dq=12), given W (Dq=12, Dk=8)"),
    ("concat key width", lambda: ConcatScore(16, 6, 4, rng=rng)(Q16, KEYS8),
     "ConcatScore: keys (B=4, S=7, Dk=8) does not fit (B=4, S, Dk=6), given W[:, :Dq] (A=4, Dq=16), "
     "W[:, Dq:] (A=4, Dk=6)"),
    ("batch sizes", lambda: DotScore()(np.zeros((3, 8)), KEYS8),
     "DotScore: keys (B=4, S=7, D=8) does not fit (B=3, S, D=8), given query (B=3, D=8)"),
    ("query rank", lambda: DotScore()(np.zeros(8), KEYS8),
     "DotScore: query (8,) does not fit (B, [T], D)"),
    ("projected of the wrong width",
     lambda: AdditiveScore(16, 8, 5, rng=rng)(Q16, KEYS8, projected=np.zeros((4, 7, 8))),
     "AdditiveScore: projected (B=4, S=7, A=8) does not fit (B=4, S=7, A=5), given W_q (A=5, Dq=16), "
     "W_k (A=5, Dk=8), query (B=4, Dq=16), keys (B=4, S=7, Dk=8)"),
    ("mask not boolean", lambda: Attention(DotScore())(np.zeros((4, 8)), KEYS8, mask=np.ones((4, 7))),
     "Attention: mask (True = may be attended) must be boolean, got dtype float64"),
    ("mask not (B, S)",
     lambda: Attention(DotScore())(np.zeros((4, 8)), KEYS8, mask=np.ones((4, 6), bool)),
     "Attention: mask (4, 6) does not fit scores (B=4, S=7): expected (B, S) = (4, 7)"),
    ("mask not broadcastable to (B, T, S)",
     lambda: Attention(DotScore())(np.zeros((4, 3, 8)), KEYS8, mask=np.ones((4, 2, 7), bool)),
     "Attention: mask (4, 2, 7) does not fit scores (B=4, T=3, S=7)"),
    ("masked_softmax mask dtype", lambda: masked_softmax(np.zeros((4, 7)), np.ones((4, 7), int)),
     "masked_softmax: mask (True = may be attended) must be boolean"),
    ("read: values' length", lambda: read(np.zeros((4, 7)), np.zeros((4, 6, 8))),
     "read: scores (B=4, S=7) does not fit (B=4, [T], S=6), given values (B=4, S=6, D=8)"),
    ("Attention: values' length",
     lambda: Attention(DotScore())(np.zeros((4, 8)), KEYS8, np.zeros((4, 6, 8))),
     "Attention: scores (B=4, S=7) does not fit (B=4, [T], S=6), given values (B=4, S=6, D=8)"),
    ("attend: mask shape", lambda: attend(np.zeros((4, 7)), KEYS8, np.ones((7,), bool)),
     "attend: mask (7,) does not fit scores (B=4, S=7)"),
    ("sdpa widths",
     lambda: scaled_dot_product_attention(np.zeros((2, 3, 8)), np.zeros((2, 4, 6)), np.zeros((2, 4, 6))),
     "scaled_dot_product_attention: k (B=2, S=4, d=6) does not fit (B=2, S >= 1, d=8), given "
     "q (B=2, T=3, d=8)"),
    ("MHA key width",
     lambda: MultiHeadAttention(8, 2, rng=rng)(np.zeros((2, 3, 8)), np.zeros((2, 4, 6)), np.zeros((2, 4, 6))),
     "MultiHeadAttention: key (B=2, S=4, E=6) does not fit (B=2, S, E=8), given E=8"),
    ("MHA key padding mask",
     lambda: MultiHeadAttention(8, 2, rng=rng)(np.zeros((2, 3, 8)), np.zeros((2, 4, 8)),
                                               np.zeros((2, 4, 8)), mask=np.ones((2, 3), bool)),
     "MultiHeadAttention: mask (2, 3) does not fit the keys (B=2, S=4)"),
    ("MHA heads", lambda: MultiHeadAttention(8, 3), "embed_dim 8 must be a multiple of num_heads 3"),
    ("local mask", lambda: LocalAttention(DotScore(), 2)(np.zeros((4, 8)), KEYS8, position=1,
                                                         mask=np.ones((4, 7), np.int8)),
     "LocalAttention: mask (True = may be attended) must be boolean"),
    ("local-p query width",
     lambda: LocalAttention(GeneralScore(16, 8, rng=rng), 2, predictive=True, query_dim=12)(Q16, KEYS8),
     "LocalAttention: query (B=4, Dq=16) does not fit (B, [T], Dq=12), given W_p (Dq=12, Dq=12)"),
    ("score_grad: values' length",
     lambda: score_grad(np.ones((4, 7)), np.zeros((4, 6, 8)), np.zeros((4, 8)), np.zeros((4, 8))),
     "score_grad: weights (B=4, S=7) does not fit (B=4, [T], S=6), given values (B=4, S=6, D=8)"),
    ("score_grad: grad_context width",
     lambda: score_grad(np.ones((4, 7)), KEYS8, np.zeros((4, 8)), np.zeros((4, 5))),
     "score_grad: grad_context (B=4, D=5) does not fit (B=4, D=8), given values (B=4, S=7, D=8), "
     "weights (B=4, S=7)"),
    ("score_grad: context with a T axis",
     lambda: score_grad(np.ones((4, 3, 7)), KEYS8, np.zeros((4, 8)), np.zeros((4, 3, 8))),
     "score_grad: context (4, 8) does not fit (B=4, T=3, D=8), given values (B=4, S=7, D=8), "
     "weights (B=4, T=3, S=7)"),
    ("a (T, S) mask on (B, T, S) scores",
     lambda: Attention(DotScore())(np.zeros((4, 3, 8)), KEYS8, mask=np.ones((3, 7), bool)),
     "a 2-D mask is (B, S) key padding; give a per-query (T, S) mask as (1, T, S)"),
    ("local window not an int", lambda: LocalAttention(DotScore(), "2"),
     "LocalAttention: window must be an int >= 0, got '2'"),
    ("local-p window 0", lambda: LocalAttention(DotScore(), 0, predictive=True, query_dim=8),
     "LocalAttention: window D must be an int >= 1 for local-p (σ = D/2), got 0"),
    ("local-m negative position",
     lambda: LocalAttention(DotScore(), 2)(np.zeros((4, 8)), KEYS8, position=np.array([0, 1, -1, 2])),
     "LocalAttention: position -1 is negative: local-m reads around p_t = t, the decoder step "
     "t >= 0 (S=7 source positions, 0 … 6)"),
    ("sdpa width 0",
     lambda: scaled_dot_product_attention(np.zeros((2, 3, 0)), np.zeros((2, 4, 0)), np.zeros((2, 4, 5))),
     "scaled_dot_product_attention: q (B=2, T=3, d=0) does not fit (B, [h], T, d >= 1)"),
    ("scaled dot width 0", lambda: ScaledDotScore()(np.zeros((4, 0)), np.zeros((4, 7, 0))),
     "ScaledDotScore: query (B=4, D=0) does not fit (B, [T], D >= 1)"),
    ("scale not a number", lambda: ScaledDotScore(scale="8"),
     "ScaledDotScore: scale must be a finite number > 0 (None: √d), got '8'"),
    ("scale infinite (every score 0: uniform weights)", lambda: ScaledDotScore(scale=np.inf),
     "ScaledDotScore: scale must be a finite number > 0 (None: √d), got inf"),
    ("activation", lambda: AdditiveScore(4, 4, 4, activation="relu"),
     "activation must be 'tanh' or None"),
    ("additive_tanh: v's width",
     lambda: additive_tanh(np.zeros((4, 6)), np.zeros((4, 7, 6)), np.zeros(5)),
     "additive_tanh: q (B=4, 6), k (B=4, S=7, 6) and v (5,) do not fit"),
    ("additive_tanh: batch sizes",
     lambda: additive_tanh(np.zeros((3, 2, 6)), np.zeros((4, 7, 6)), np.zeros(6)),
     "additive_tanh: q (B=3, T=2, 6), k (B=4, S=7, 6) and v (6,) do not fit"),
]


@pytest.mark.parametrize("call, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_a_value_error_naming_role_and_shapes(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)


RNG_USERS = [("AdditiveScore", lambda r: AdditiveScore(4, 4, 4, rng=r)),
             ("ConcatScore", lambda r: ConcatScore(4, 4, 4, rng=r)),
             ("GeneralScore", lambda r: GeneralScore(4, 4, rng=r)),
             ("LocalAttention", lambda r: LocalAttention(DotScore(), 2, True, query_dim=4, rng=r)),
             ("MultiHeadAttention", lambda r: MultiHeadAttention(4, 2, rng=r))]


@pytest.mark.parametrize("who, make", RNG_USERS, ids=[u[0] for u in RNG_USERS])
def test_a_seed_for_rng_is_refused_by_every_attention_layer(who, make):
    for bad in (0, np.random.RandomState(0)):
        with pytest.raises(TypeError, match=rf"^{who}: rng must be an np\.random\.Generator"):
            make(bad)
    make(None), make(np.random.default_rng(0))  # the two that are accepted
