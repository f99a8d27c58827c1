"""Decoders: the attention-free baseline and Bahdanau's attention decoder.

Shape letters: B batch, S source length, T target length, E embedding, H decoder hidden,
K annotation width (2 × the encoder's hidden size), A attention width, V target vocabulary.

A decoder is driven one step at a time, so the same code serves teacher forcing, greedy and
beam search:

    state, ctx = decoder.start(encoded)              # s_0 and per-batch constants
    state, features, weights = decoder.step(y_prev, state, ctx, t)
    logits = decoder.logits(features)                # (B, V), or (B, T, V) for stacked features

``state`` is a tuple of (B, ·) tensors (beam search reorders it by indexing): ``(s,)`` for a
GRU, ``(h, c)`` for an LSTM and, for Luong's input feeding, h̃ after it; ``ctx`` holds what
``start`` computed once and ``step`` reads (the keys' projection for the score); ``features``
is the tuple of tensors the output layer reads; ``weights`` the alignment α_t (B, S) or None.
``forward`` runs the teacher-forced loop and applies the output layer once to all T steps.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import minigrad as mg
from minigrad import functional as F, init
from minigrad.nn import Embedding, Linear, Module, check_sizes

from attention import (AdditiveScore, Attention, ConcatScore, DotScore, GeneralScore,
                       ScaledDotScore)
from models.encoder import Encoded
from models.recurrent import GRUCell

SCORES = ("additive", "dot", "general", "concat", "scaled-dot")


def make_score(kind: str, query_dim: int, key_dim: int, attn_dim: int,
               rng: np.random.Generator, dtype) -> Module:
    """A score module from ``attention`` by name (see SCORES)."""
    if kind in ("dot", "scaled-dot") and query_dim != key_dim:
        raise ValueError(f"score {kind!r}: the decoder state (H={query_dim}) and the annotations "
                         f"(K={key_dim}) must have equal widths; use 'general' or set the "
                         f"decoder hidden size to {key_dim}")
    if kind == "additive":
        return AdditiveScore(query_dim, key_dim, attn_dim, bias=True, rng=rng, dtype=dtype)
    if kind == "concat":
        return ConcatScore(query_dim, key_dim, attn_dim, rng=rng, dtype=dtype)
    if kind == "general":
        return GeneralScore(query_dim, key_dim, rng=rng, dtype=dtype)
    if kind == "dot":
        return DotScore()
    if kind == "scaled-dot":
        return ScaledDotScore()
    raise ValueError(f"unknown score {kind!r}; choose from {SCORES}")


def masked_mean(encoded: Encoded) -> mg.Tensor:
    """(1/S_b) Σ_{j ≤ S_b} h_j over each sequence's real positions (annotations are 0 at padding)."""
    lengths = encoded.mask.sum(axis=1, keepdims=True).astype(encoded.annotations.dtype)  # (B, 1)
    return encoded.annotations.sum(axis=1) / lengths  # (B, K)


class PlainContext(NamedTuple):
    """``PlainDecoder``'s per-batch constant (computed once in ``start``)."""
    c: mg.Tensor       # (B, K) the fixed context vector [→h_{S_b} ; ←h_1]


class AttentionContext(NamedTuple):
    """Per-batch constants of a decoder that attends (computed once in ``start``)."""
    keys: mg.Tensor                     # (B, S, K) annotations
    mask: np.ndarray | None             # (B, S) True = real; None when nothing is padding
    projected: mg.Tensor                # (B, S, ·) the score's key projection
    rng: np.random.Generator | None     # the training generator (attention dropout)


def attention_context(attention: Module, encoded: Encoded, rng) -> AttentionContext:
    """The keys, their mask (None when nothing is padding) and the score's projection of them."""
    keys = encoded.annotations                                           # (B, S, K)
    mask = None if encoded.mask.all() else encoded.mask                  # (B, S) or None
    return AttentionContext(keys, mask, attention.project_keys(keys), rng)


class Decoder(Module):
    """Base class: the teacher-forced loop and the output layer. Subclasses define
    ``start`` and ``step``, and set ``out`` (the output Linear)."""

    def logits(self, features) -> mg.Tensor:
        """W_o [features] + b_o: (B, V) from one step, (B, T, V) from stacked steps."""
        # [s_t ; c_t] (B, [T,] H+K); Luong's features are h̃_t alone (B, [T,] H)
        x = features[0] if len(features) == 1 else mg.concatenate(list(features), axis=-1)
        return self.out(x)                                               # (B, [T,] V)

    def log_probs(self, features) -> mg.Tensor:
        """log p(y | y_<t, x) = log softmax(W_o [features] + b_o) (B, V), one decoding step."""
        return F.log_softmax(self.logits(features))

    def forward(self, encoded: Encoded, tgt_in: np.ndarray, teacher_forcing: float = 1.0,
                rng: np.random.Generator | None = None) -> tuple:
        """Run T steps on decoder inputs ``tgt_in (B, T)`` (BOS, y_1 .. y_{T−1}).

        With ``teacher_forcing < 1`` each input after the first is, per example and with
        probability 1 − teacher_forcing, the model's own previous argmax instead (needs
        ``rng``). Returns logits (B, T, V) and the alignment α (B, T, S) as an array, or None.
        """
        if teacher_forcing < 1 and rng is None:
            raise ValueError("teacher_forcing < 1 draws which inputs to replace: pass rng")
        state, ctx = self.start(encoded, rng)  # rng: attention dropout draws from it
        B, T = tgt_in.shape
        steps, weights = [], []
        for t in range(T):
            y = tgt_in[:, t]                                             # (B,)
            if t > 0 and teacher_forcing < 1:
                with mg.no_grad():
                    guess = self.logits(steps[-1]).data.argmax(axis=-1)  # (B,)
                y = np.where(rng.random(B) < teacher_forcing, y, guess)  # (B,)
            state, features, alpha = self.step(y, state, ctx, t)
            steps.append(features)
            weights.append(alpha)
        stacked = [mg.stack(list(parts), axis=1) for parts in zip(*steps)]  # each (B, T, ·)
        logits = self.logits(stacked)                                    # (B, T, V)
        if weights[0] is None:
            return logits, None
        return logits, np.stack([w.data for w in weights], axis=1)       # (B, T, S)


class PlainDecoder(Decoder):
    """No attention: the Cho et al. 2014 / Sutskever et al. baseline. One fixed vector
    ``c = [→h_{S_b} ; ←h_1]`` (the encoder's final states) stands for the whole source::

        s_0 = tanh(W_init c + b_init)
        s_t = GRU([E y_{t−1} ; c], s_{t−1})
        p(y_t | y_<t, x) = softmax(W_o [s_t ; c] + b_o)
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, key_dim: int,
                 reset_after: bool = True, rng: np.random.Generator | None = None,
                 dtype=np.float64):
        check_sizes("PlainDecoder", vocab_size=vocab_size, embed_dim=embed_dim,
                    hidden_size=hidden_size, key_dim=key_dim)
        rng = init.generator("PlainDecoder", rng)
        self.embedding = Embedding(vocab_size, embed_dim, rng=rng, dtype=dtype)
        self.cell = GRUCell(embed_dim + key_dim, hidden_size, reset_after, rng=rng, dtype=dtype)
        self.init = Linear(key_dim, hidden_size, rng=rng, dtype=dtype)
        self.out = Linear(hidden_size + key_dim, vocab_size, rng=rng, dtype=dtype)

    def start(self, encoded: Encoded, rng=None) -> tuple:
        c = encoded.final                                                # (B, K)
        return (mg.tanh(self.init(c)),), PlainContext(c)                 # (s_0,) (B, H)

    def step(self, y_prev, state, ctx: PlainContext, t):
        (s,) = state                                                     # s_{t−1} (B, H)
        x = mg.concatenate([self.embedding(y_prev), ctx.c], axis=-1)     # [E y_{t−1} ; c] (B, E+K)
        s = self.cell(x, s)                                              # s_t (B, H)
        return (s,), (s, ctx.c), None


class BahdanauDecoder(Decoder):
    """Bahdanau et al. 2015: attend with the *previous* state, then update the GRU::

        e_tj = score(s_{t−1}, h_j)   (additive: vᵀ tanh(W_q s_{t−1} + W_k h_j + b))
        α_t  = softmax(e_t),   c_t = Σ_j α_tj h_j
        s_t  = GRU([E y_{t−1} ; c_t], s_{t−1})
        p(y_t | y_<t, x) = softmax(W_o [s_t ; c_t] + b_o)
        s_0  = tanh(W_init · mean_j h_j + b_init)   (mean over the real positions)

    ``score`` is any of SCORES; ``attn_dim`` is A for the additive and concat scores;
    ``attention`` holds source 003 §6's options for ``attention.Attention`` (``temperature``,
    ``dropout``, ``window``: a window |j − t| ≤ W around the decoder step t).
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, key_dim: int,
                 attn_dim: int = 64, score: str = "additive", reset_after: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64,
                 attention: dict | None = None):
        rng = init.generator("BahdanauDecoder", rng)
        self.embedding = Embedding(vocab_size, embed_dim, rng=rng, dtype=dtype)
        self.attention = Attention(make_score(score, hidden_size, key_dim, attn_dim, rng, dtype),
                                   **(attention or {}))
        self.cell = GRUCell(embed_dim + key_dim, hidden_size, reset_after, rng=rng, dtype=dtype)
        self.init = Linear(key_dim, hidden_size, rng=rng, dtype=dtype)
        self.out = Linear(hidden_size + key_dim, vocab_size, rng=rng, dtype=dtype)

    def start(self, encoded: Encoded, rng=None) -> tuple:
        s0 = mg.tanh(self.init(masked_mean(encoded)))                    # s_0 (B, H)
        return (s0,), attention_context(self.attention, encoded, rng)

    def step(self, y_prev, state, ctx: AttentionContext, t):
        (s,) = state                                                     # s_{t−1} (B, H)
        c, alpha = self.attention(s, ctx.keys, mask=ctx.mask, projected=ctx.projected,
                                  position=t, rng=ctx.rng)               # c_t (B, K), α_t (B, S)
        x = mg.concatenate([self.embedding(y_prev), c], axis=-1)         # [E y_{t−1} ; c_t] (B, E+K)
        s = self.cell(x, s)                                              # s_t (B, H)
        return (s,), (s, c), alpha
