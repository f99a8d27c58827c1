"""Luong et al. 2015's attention decoder: RNN first, then attention, then the attentional
hidden state. Shape letters as in ``models/decoders.py`` (H decoder hidden, K annotation width).
Source 003 §3.1's plain form, the default::

    s_t  = RNN(s_{t−1}, E y_{t−1})
    e_tj = score(s_t, h_j)                   dot sᵀh,  general sᵀW h,  concat vᵀtanh(W[s; h])
    α_t  = softmax(e_t),   c_t = Σ_j α_tj h_j
    h̃_t  = tanh(W_c [c_t ; s_t])             combine="concat" (no bias, as in the paper)
    p(y_t | y_<t, x) = softmax(W_o h̃_t + b_o)

``combine="gate"`` (003 §3.1 names a learned gate without a formula; this one is ours, and
z_t → 0 keeps the decoder's own state)::

    z_t = σ(W_g [c_t ; s_t] + b_g),    h̃_t = z_t ⊙ tanh(W_c c_t) + (1 − z_t) ⊙ s_t

Input feeding (the paper's §3.3): s_t = RNN(s_{t−1}, [E y_{t−1} ; h̃_{t−1}]). Local attention
(``score="local-m"`` / ``"local-p"``, §3.2) reads only [p_t − D, p_t + D], D = ``local_window``,
with the general score: local-m takes p_t = t, local-p predicts p_t and weights the window with
a Gaussian around it (``attention/local.py``).
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import functional as F, init
from minigrad.nn import Embedding, Linear, check_sizes

from attention import Attention, LocalAttention
from attention.checks import check_choice
from models.decoders import (AttentionContext, Decoder, attention_context, make_score,
                             masked_mean)
from models.recurrent import GRUCell, LSTMCell

LUONG_SCORES = ("dot", "general", "concat", "local-m", "local-p")
COMBINES = ("concat", "gate")
CELLS = ("gru", "lstm")


class LuongDecoder(Decoder):
    """Luong's decoder with a GRU (default) or an LSTM (``cell="lstm"``, as in the paper).
    State: ``(s,)`` for the GRU, ``(h, c)`` for the LSTM, then h̃ with input feeding;
    ``s_0 = tanh(W_init · mean_j h_j + b_init)`` as in ``BahdanauDecoder``, the LSTM's memory and
    h̃_0 at 0. ``attention``: the options of global ``attention.Attention``.
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, key_dim: int,
                 score: str = "general", attn_dim: int = 64, input_feeding: bool = False,
                 cell: str = "gru", local_window: int = 2, reset_after: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64,
                 combine: str = "concat", attention: dict | None = None):
        check_sizes("LuongDecoder", vocab_size=vocab_size, embed_dim=embed_dim,
                    hidden_size=hidden_size, key_dim=key_dim, attn_dim=attn_dim)
        rng = init.generator("LuongDecoder", rng)
        for name, value, choices in (("score", score, LUONG_SCORES), ("cell", cell, CELLS),
                                     ("combine", combine, COMBINES)):
            check_choice("LuongDecoder", name, value, choices)
        local = score.startswith("local")
        if attention and local:
            raise ValueError(f"LuongDecoder: {sorted(attention)} apply to global attention, not "
                             f"{score!r}")
        self.input_feeding = input_feeding
        self.embedding = Embedding(vocab_size, embed_dim, rng=rng, dtype=dtype)
        in_dim = embed_dim + (hidden_size if input_feeding else 0)
        self.cell = (GRUCell(in_dim, hidden_size, reset_after, rng=rng, dtype=dtype)
                     if cell == "gru" else LSTMCell(in_dim, hidden_size, rng=rng, dtype=dtype))
        scorer = make_score("general" if local else score, hidden_size, key_dim, attn_dim, rng,
                            dtype)                                       # local: the general score
        self.attention = (LocalAttention(scorer, local_window, predictive=score == "local-p",
                                         query_dim=hidden_size, rng=rng, dtype=dtype) if local
                          else Attention(scorer, **(attention or {})))
        gated = combine == "gate"
        self.combine = Linear(key_dim if gated else key_dim + hidden_size, hidden_size, bias=False,
                              rng=rng, dtype=dtype)                      # W_c (H, K) or (H, K + H)
        self.gate = (Linear(key_dim + hidden_size, hidden_size, rng=rng, dtype=dtype) if gated
                     else None)
        self.init = Linear(key_dim, hidden_size, rng=rng, dtype=dtype)
        self.out = Linear(hidden_size, vocab_size, rng=rng, dtype=dtype)

    def start(self, encoded, rng=None):
        s0 = mg.tanh(self.init(masked_mean(encoded)))                    # s_0 (B, H)
        zeros = mg.Tensor(np.zeros_like(s0.data))                        # (B, H)
        extra = len(self.cell.parts) - 1 + int(self.input_feeding)       # c_0 = 0 (LSTM), h̃_0 = 0
        return (s0,) + (zeros,) * extra, attention_context(self.attention, encoded, rng)

    def step(self, y_prev, state, ctx: AttentionContext, t):
        n = len(self.cell.parts)
        return self.attend(self.rnn(y_prev, state[n:], state[:n]), ctx, t)  # RNN, then attend

    def rnn(self, y_prev, fed: tuple, rnn: tuple) -> tuple:
        """(s_t,) or (h_t, c_t) from the cell's part of the state ``rnn`` and ``fed``: (h̃_{t−1},)
        with input feeding, else ()."""
        e = self.embedding(y_prev)                                       # E y_{t−1} (B, E)
        x = mg.concatenate([e, *fed], axis=-1) if fed else e             # (B, E [+ H])
        gi = F.linear_op(x, self.cell.weight_ih, self.cell.bias_ih)      # W_ih x + b_ih (B, 3H|4H)
        out = self.cell.step(gi, rnn if len(rnn) > 1 else rnn[0])
        return out if isinstance(out, tuple) else (out,)

    def attend(self, rnn: tuple, ctx: AttentionContext, t) -> tuple:
        """The new state, the features (h̃_t,) and α_t (B, S) from the RNN's output ``rnn``."""
        s = rnn[0]                                                       # s_t (B, H)
        local = isinstance(self.attention, LocalAttention)               # local-p predicts p_t
        options = ({"position": None if self.attention.predictive else t} if local
                   else {"position": t, "rng": ctx.rng})
        c, alpha = self.attention.step(s, ctx.keys, mask=ctx.mask, projected=ctx.projected,
                                       **options)                        # (B, K), (B, S)
        h_tilde = self.attentional(c, s)                                 # (B, H)
        return rnn + ((h_tilde,) if self.input_feeding else ()), (h_tilde,), alpha

    def attentional(self, c, s) -> mg.Tensor:
        """h̃_t (B, H) from c_t (B, K) and s_t (B, H): tanh(W_c [c_t ; s_t]), or the gate's mix."""
        cs = mg.concatenate([c, s], axis=-1)                             # (B, K + H)
        if self.gate is None:
            return mg.tanh(self.combine(cs))                             # (B, H)
        z = self.gate(cs).sigmoid()                                      # z_t (B, H)
        return z * mg.tanh(self.combine(c)) + (1 - z) * s                # (B, H)
