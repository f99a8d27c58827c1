"""Luong et al. 2015's attention decoder: RNN first, then attention, then the "attentional
hidden state". Shape letters as in ``models/decoders.py`` (H decoder hidden, K annotation width).

Source 003 §3.1 gives the plain form, the default here:

    s_t  = RNN(s_{t−1}, E y_{t−1})                   the RNN's input is y_{t−1} alone, "no c_t"
    e_tj = score(s_t, h_j)                           dot sᵀh,  general sᵀW h,  concat vᵀtanh(W[s; h])
    α_t  = softmax(e_t),   c_t = Σ_j α_tj h_j
    h̃_t  = tanh(W_c [c_t ; s_t])                     combine="concat" (no bias, as in the paper)
    p(y_t | y_<t, x) = softmax(W_o h̃_t + b_o)

or, with ``combine="gate"`` (003 §3.1: "a learned gate controls how much of c_t and s_t is
mixed"; the source gives no formula, this is ours):

    z_t  = σ(W_g [c_t ; s_t] + b_g),    h̃_t = z_t ⊙ tanh(W_c c_t) + (1 − z_t) ⊙ s_t

so z_t → 0 keeps the decoder's own state and z_t → 1 takes the attended content.

Input feeding (``input_feeding=True``) is not in the sources: it comes from the Luong et al.
2015 paper (§3.3), which feeds h̃_{t−1} back, s_t = RNN(s_{t−1}, [E y_{t−1} ; h̃_{t−1}]), so the
next step knows what was attended. Compared with Bahdanau's order (attend with s_{t−1}, then
update) the state s_t is computed *without* the current context and corrected by h̃_t.

Local attention (``score="local-m"`` / ``"local-p"``) reads only a window [p_t − D, p_t + D]:
local-m takes p_t = t (monotonic alignment), local-p predicts p_t = S·σ(v_pᵀ tanh(W_p s_t)) and
weights the window with a Gaussian around it; both use the general score inside the window.
Global attention takes source 003 §6's options instead: ``temperature``, ``attn_dropout`` and
``truncate`` (a window |j − t| ≤ W around the decoder step, see ``attention.Attention``).
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import init
from minigrad.nn import Embedding, Linear, check_sizes

from attention import Attention, GeneralScore, LocalAttention
from models.decoders import (AttentionContext, Decoder, attention_context, make_score,
                             masked_mean)
from models.recurrent import GRUCell, LSTMCell

LUONG_SCORES = ("dot", "general", "concat", "local-m", "local-p")
COMBINES = ("concat", "gate")


class LuongDecoder(Decoder):
    """Luong's decoder with a GRU (default) or an LSTM (``cell="lstm"``, as in the paper).

    State: ``(s,)`` for the GRU, ``(h, c)`` for the LSTM, followed by h̃ with input feeding.
    ``s_0 = tanh(W_init · mean_j h_j + b_init)`` as in ``BahdanauDecoder``; the LSTM's memory
    starts at 0. ``attention`` (global) takes ``temperature``, ``dropout`` and ``window``.
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, key_dim: int,
                 score: str = "general", attn_dim: int = 64, input_feeding: bool = False,
                 cell: str = "gru", window: int = 2, reset_after: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64,
                 combine: str = "concat", attention: dict | None = None):
        check_sizes("LuongDecoder", vocab_size=vocab_size, embed_dim=embed_dim,
                    hidden_size=hidden_size, key_dim=key_dim, attn_dim=attn_dim)
        rng = init.generator("LuongDecoder", rng)
        _check(score, cell, combine, attention)
        self.input_feeding, self.local, self.mix = input_feeding, score.startswith("local"), combine
        self.embedding = Embedding(vocab_size, embed_dim, rng=rng, dtype=dtype)
        in_dim = embed_dim + (hidden_size if input_feeding else 0)
        self.cell = (GRUCell(in_dim, hidden_size, reset_after, rng=rng, dtype=dtype) if cell == "gru"
                     else LSTMCell(in_dim, hidden_size, rng=rng, dtype=dtype))
        if self.local:
            self.attention = LocalAttention(GeneralScore(hidden_size, key_dim, rng=rng, dtype=dtype),
                                            window, predictive=score == "local-p",
                                            query_dim=hidden_size, rng=rng, dtype=dtype)
        else:
            self.attention = Attention(make_score(score, hidden_size, key_dim, attn_dim, rng, dtype),
                                       **(attention or {}))
        if combine == "concat":                                          # W_c (H, K + H)
            self.combine = Linear(key_dim + hidden_size, hidden_size, bias=False, rng=rng, dtype=dtype)
        else:                                                            # W_c (H, K), W_g, b_g
            self.combine = Linear(key_dim, hidden_size, bias=False, rng=rng, dtype=dtype)
            self.gate = Linear(key_dim + hidden_size, hidden_size, rng=rng, dtype=dtype)
        self.init = Linear(key_dim, hidden_size, rng=rng, dtype=dtype)
        self.out = Linear(hidden_size, vocab_size, rng=rng, dtype=dtype)

    def start(self, encoded, rng=None):
        s0 = mg.tanh(self.init(masked_mean(encoded)))                    # s_0 (B, H)
        zeros = mg.Tensor(np.zeros_like(s0.data))                        # (B, H)
        state = (s0,) + (zeros,) * (len(self.cell.parts) - 1)            # (s_0,) or (s_0, c_0 = 0)
        if self.input_feeding:
            state += (zeros,)                                            # h̃_0 = 0
        return state, attention_context(self.attention, encoded, rng)

    def step(self, y_prev, state, ctx: AttentionContext, t):
        n = len(self.cell.parts)
        return self.attend(self.rnn(y_prev, state[n:], state[:n]), ctx, t)  # RNN, then attend

    def rnn(self, y_prev, fed: tuple, rnn: tuple) -> tuple:
        """s_t = RNN(s_{t−1}, [E y_{t−1} ; h̃_{t−1}]) on the cell's part of the state, ``rnn``:
        a GRU takes and returns s, an LSTM (h, c). ``fed`` is (h̃_{t−1},) with input feeding,
        else ()."""
        e = self.embedding(y_prev)                                       # E y_{t−1} (B, E)
        x = mg.concatenate([e, *fed], axis=-1) if fed else e             # (B, E [+ H])
        out = self.cell(x, rnn if len(rnn) > 1 else rnn[0])
        return out if isinstance(out, tuple) else (out,)

    def attend(self, rnn: tuple, ctx: AttentionContext, t) -> tuple:
        """The rest of a step from the RNN's output ``rnn``, (s_t,) or (h_t, c_t): attend with s_t,
        then h̃_t. Returns the new state, the features (h̃_t,) and α_t (B, S)."""
        s = rnn[0]                                                       # s_t (B, H)
        if not self.local:                                               # global: t for a window
            c, alpha = self.attention(s, ctx.keys, mask=ctx.mask, projected=ctx.projected,
                                      position=t, rng=ctx.rng)           # (B, K), (B, S)
        elif not self.attention.predictive:                              # local-m: p_t = t
            c, alpha = self.attention(s, ctx.keys, mask=ctx.mask, position=t,
                                      projected=ctx.projected)           # (B, K), (B, S)
        else:                                                            # local-p predicts p_t
            c, alpha = self.attention(s, ctx.keys, mask=ctx.mask, projected=ctx.projected)
        h_tilde = self.attentional(c, s)                                 # (B, H)
        return rnn + ((h_tilde,) if self.input_feeding else ()), (h_tilde,), alpha

    def attentional(self, c, s) -> mg.Tensor:
        """h̃_t from c_t (B, K) and s_t (B, H): tanh(W_c [c_t; s_t]), or the gate's mix."""
        cs = mg.concatenate([c, s], axis=-1)                             # (B, K + H)
        if self.mix == "concat":
            return mg.tanh(self.combine(cs))                             # (B, H)
        z = self.gate(cs).sigmoid()                                      # (B, H): z_t
        return z * mg.tanh(self.combine(c)) + (1 - z) * s                # (B, H)


def _check(score: str, cell: str, combine: str, attention) -> None:
    """The constructor's choices, or a ValueError that names the bad one."""
    if score not in LUONG_SCORES:
        raise ValueError(f"LuongDecoder: unknown score {score!r}; choose from {LUONG_SCORES}")
    if cell not in ("gru", "lstm"):
        raise ValueError(f"LuongDecoder: cell must be 'gru' or 'lstm', got {cell!r}")
    if combine not in COMBINES:
        raise ValueError(f"LuongDecoder: combine must be one of {COMBINES}, got {combine!r}")
    if attention and score.startswith("local"):
        raise ValueError(f"LuongDecoder: {sorted(attention)} apply to global attention, not "
                         f"{score!r}")
