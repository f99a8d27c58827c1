"""Decoders: the attention-free baseline and Bahdanau's attention decoder. A decoder runs one
step at a time, so one code serves teacher forcing, greedy and beam search::

    state, ctx = decoder.start(encoded)              # s_0, and what every step reads
    state, features, alpha = decoder.step(y_prev, state, ctx, t)
    logits = decoder.logits(features)                # (B, V), or (B, T, V) for stacked steps

``state`` is a tuple of (B, ·) tensors (beam search reorders it by indexing); ``features`` the
tensors the output layer reads; ``alpha`` the alignment α_t (B, S) or None. Shape letters:
B batch, S source length, T target length, E embedding, H decoder hidden, K annotation width
(2 × the encoder's hidden), A attention width, V target vocabulary.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import minigrad as mg
from minigrad import functional as F, init
from minigrad.nn import Embedding, Linear, Module

from attention import (AdditiveScore, Attention, ConcatScore, DotScore, GeneralScore,
                       ScaledDotScore)
from attention.checks import check_choice
from models.recurrent import Encoded, GRUCell

SCORES = ("additive", "dot", "general", "concat", "scaled-dot")


def make_score(kind: str, query_dim: int, key_dim: int, attn_dim: int,
               rng: np.random.Generator, dtype) -> Module:
    """A score module of ``attention`` by name (see SCORES)."""
    check_choice("make_score", "kind", kind, SCORES)
    if kind in ("dot", "scaled-dot") and query_dim != key_dim:
        raise ValueError(f"score {kind!r}: the decoder state (H={query_dim}) and the annotations "
                         f"(K={key_dim}) must have equal widths (or use 'general')")
    scores = {"additive": lambda: AdditiveScore(query_dim, key_dim, attn_dim, bias=True,
                                                rng=rng, dtype=dtype),
              "concat": lambda: ConcatScore(query_dim, key_dim, attn_dim, rng=rng, dtype=dtype),
              "general": lambda: GeneralScore(query_dim, key_dim, rng=rng, dtype=dtype),
              "dot": DotScore, "scaled-dot": ScaledDotScore}
    return scores[kind]()


def masked_mean(encoded: Encoded) -> mg.Tensor:
    """(1/S_b) Σ_{j ≤ S_b} h_j over the real positions (annotations are 0 at padding)."""
    lengths = encoded.mask.sum(axis=1, keepdims=True).astype(encoded.annotations.dtype)  # (B, 1)
    return encoded.annotations.sum(axis=1) / lengths                     # (B, K)


class PlainContext(NamedTuple):
    c: mg.Tensor                        # (B, K) the fixed context [→h_{S_b} ; ←h_1]


class AttentionContext(NamedTuple):
    keys: mg.Tensor                     # (B, S, K) annotations
    mask: np.ndarray | None             # (B, S) True = real; None when nothing is padding
    projected: mg.Tensor                # (B, S, ·) the score's projection of the keys
    rng: np.random.Generator | None     # the training generator (attention dropout)


def attention_context(attention: Module, encoded: Encoded, rng) -> AttentionContext:
    keys = encoded.annotations                                           # (B, S, K)
    mask = None if encoded.mask.all() else encoded.mask                  # (B, S) or None
    return AttentionContext(keys, mask, attention.project_keys(keys), rng)


class Decoder(Module):
    """The teacher-forced loop and the output layer ``out``; subclasses define start and step."""

    def logits(self, features) -> mg.Tensor:
        """W_o [features] + b_o: (B, V) from one step, (B, T, V) from stacked steps."""
        x = features[0] if len(features) == 1 else mg.concatenate(list(features), axis=-1)
        return self.out(x)                                               # (B, [T,] V)

    def log_probs(self, features) -> mg.Tensor:
        return F.log_softmax(self.logits(features))                      # log p(y | y_<t, x) (B, V)

    def forward(self, encoded: Encoded, tgt_in: np.ndarray, teacher_forcing: float = 1.0,
                rng: np.random.Generator | None = None) -> tuple:
        """Logits (B, T, V) and the alignment (B, T, S) or None for inputs ``tgt_in (B, T)``."""
        state, ctx = self.start(encoded, rng)  # rng: attention dropout draws from it
        steps, weights = [], []
        for t in range(tgt_in.shape[1]):
            y = tgt_in[:, t]                                             # (B,)
            if t > 0 and teacher_forcing < 1:
                y = self.own_guess(y, steps[-1], teacher_forcing, rng)   # (B,)
            state, features, alpha = self.step(y, state, ctx, t)
            steps.append(features)
            weights.append(alpha)
        logits = self.logits([mg.stack(list(parts), axis=1) for parts in zip(*steps)])  # (B, T, V)
        return logits, None if weights[0] is None else np.stack([w.data for w in weights], axis=1)

    def own_guess(self, y, features, teacher_forcing: float, rng: np.random.Generator):
        """y (B,), each replaced with probability 1 − teacher_forcing by the last step's argmax."""
        with mg.no_grad():
            guess = self.logits(features).data.argmax(axis=-1)          # (B,)
        return np.where(rng.random(len(y)) < teacher_forcing, y, guess)  # (B,)


class PlainDecoder(Decoder):
    """No attention (Cho et al. 2014, Sutskever et al.): one fixed vector c = [→h_{S_b} ; ←h_1]
    stands for the whole source::

        s_0 = tanh(W_init c + b_init)
        s_t = GRU([E y_{t−1} ; c], s_{t−1})
        p(y_t | y_<t, x) = softmax(W_o [s_t ; c] + b_o)
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, key_dim: int,
                 reset_after: bool = True, rng: np.random.Generator | None = None,
                 dtype=np.float64, make_attention=None):
        rng = init.generator(type(self).__name__, rng)
        self.embedding = Embedding(vocab_size, embed_dim, rng=rng, dtype=dtype)
        if make_attention is not None:                                   # a subclass's, drawn
            self.attention = make_attention(rng)                         # after the embedding
        self.cell = GRUCell(embed_dim + key_dim, hidden_size, reset_after, rng=rng, dtype=dtype)
        self.init = Linear(key_dim, hidden_size, rng=rng, dtype=dtype)
        self.out = Linear(hidden_size + key_dim, vocab_size, rng=rng, dtype=dtype)

    def start(self, encoded: Encoded, rng=None) -> tuple:
        c = encoded.final                                                # (B, K)
        return (mg.tanh(self.init(c)),), PlainContext(c)                 # (s_0,) (B, H)

    def step(self, y_prev, state, ctx, t):
        (s,) = state                                                     # s_{t−1} (B, H)
        c, alpha = self.context(s, ctx, t)                               # (B, K), α_t or None
        x = mg.concatenate([self.embedding(y_prev), c], axis=-1)        # [E y_{t−1} ; c] (B, E+K)
        s = self.cell.step(F.linear_op(x, self.cell.weight_ih, self.cell.bias_ih), s)  # s_t (B, H)
        return (s,), (s, c), alpha

    def context(self, s, ctx: PlainContext, t) -> tuple:
        return ctx.c, None                                               # the fixed c (B, K)


class BahdanauDecoder(PlainDecoder):
    """Bahdanau et al. 2015: attend with the *previous* state, then update the GRU::

        e_tj = score(s_{t−1}, h_j)   (additive: vᵀ tanh(W_q s_{t−1} + W_k h_j + b))
        α_t  = softmax(e_t),   c_t = Σ_j α_tj h_j
        s_t  = GRU([E y_{t−1} ; c_t], s_{t−1})
        p(y_t | y_<t, x) = softmax(W_o [s_t ; c_t] + b_o)
        s_0  = tanh(W_init · mean_j h_j + b_init)   (mean over the real positions)

    ``attention``: the options of ``attention.Attention`` (source 003 §6).
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, key_dim: int,
                 attn_dim: int = 64, score: str = "additive", reset_after: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64,
                 attention: dict | None = None):
        super().__init__(vocab_size, embed_dim, hidden_size, key_dim, reset_after, rng, dtype,
                         lambda rng: Attention(make_score(score, hidden_size, key_dim, attn_dim,
                                                          rng, dtype), **(attention or {})))

    def start(self, encoded: Encoded, rng=None) -> tuple:
        s0 = mg.tanh(self.init(masked_mean(encoded)))                    # s_0 (B, H)
        return (s0,), attention_context(self.attention, encoded, rng)

    def context(self, s, ctx: AttentionContext, t) -> tuple:
        """c_t (B, K) and α_t (B, S) from s_{t−1} (B, H)."""
        return self.attention.step(s, ctx.keys, mask=ctx.mask, projected=ctx.projected,
                                   position=t, rng=ctx.rng)
