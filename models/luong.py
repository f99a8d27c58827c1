"""Luong et al. 2015's attention decoder: RNN first, then attention, then the "attentional
hidden state". Shape letters as in ``models/decoders.py`` (H decoder hidden, K annotation width).

    s_t  = RNN(s_{t−1}, [E y_{t−1} ; h̃_{t−1}])      (input feeding; without it: E y_{t−1} alone)
    e_tj = score(s_t, h_j)                           dot sᵀh,  general sᵀW h,  concat vᵀtanh(W[s; h])
    α_t  = softmax(e_t),   c_t = Σ_j α_tj h_j
    h̃_t  = tanh(W_c [c_t ; s_t])                     (no bias, as in the paper)
    p(y_t | y_<t, x) = softmax(W_o h̃_t + b_o)

Compared with Bahdanau's order (attend with s_{t−1}, then update) the state s_t is computed
*without* the current context and corrected afterwards by h̃_t; input feeding passes h̃_{t−1}
back into the RNN so the next step knows what was attended ("coverage" in the paper).

Local attention (``score="local-m"`` / ``"local-p"``) reads only a window [p_t − D, p_t + D]:
local-m takes p_t = t (monotonic alignment), local-p predicts p_t = S·σ(v_pᵀ tanh(W_p s_t)) and
weights the window with a Gaussian around it; both use the general score inside the window.
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import functional as F, init
from minigrad.nn import Embedding, Linear

from attention import Attention, GeneralScore, LocalAttention
from models.decoders import AttentionContext, Decoder, make_score, masked_mean
from models.recurrent import GRUCell, LSTMCell

LUONG_SCORES = ("dot", "general", "concat", "local-m", "local-p")


class LuongDecoder(Decoder):
    """Luong's decoder with a GRU (default) or an LSTM (``cell="lstm"``, as in the paper).

    State: ``(s, h̃)`` for the GRU, ``(h, c, h̃)`` for the LSTM (h̃ only with input feeding).
    ``s_0 = tanh(W_init · mean_j h_j + b_init)`` as in ``BahdanauDecoder``; the LSTM's memory
    starts at 0.
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, key_dim: int,
                 score: str = "general", attn_dim: int = 64, input_feeding: bool = True,
                 cell: str = "gru", window: int = 2, reset_after: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        rng = init.generator("LuongDecoder", rng)
        if score not in LUONG_SCORES:
            raise ValueError(f"LuongDecoder: unknown score {score!r}; choose from {LUONG_SCORES}")
        if cell not in ("gru", "lstm"):
            raise ValueError(f"LuongDecoder: cell must be 'gru' or 'lstm', got {cell!r}")
        self.input_feeding, self.local = input_feeding, score.startswith("local")
        self.embedding = Embedding(vocab_size, embed_dim, rng=rng, dtype=dtype)
        in_dim = embed_dim + (hidden_size if input_feeding else 0)
        self.cell = (GRUCell(in_dim, hidden_size, reset_after, rng=rng, dtype=dtype) if cell == "gru"
                     else LSTMCell(in_dim, hidden_size, rng=rng, dtype=dtype))
        if self.local:
            self.attention = LocalAttention(GeneralScore(hidden_size, key_dim, rng=rng, dtype=dtype),
                                            window, predictive=score == "local-p",
                                            query_dim=hidden_size, rng=rng, dtype=dtype)
        else:
            self.attention = Attention(make_score(score, hidden_size, key_dim, attn_dim, rng, dtype))
        self.combine = Linear(key_dim + hidden_size, hidden_size, bias=False, rng=rng, dtype=dtype)
        self.init = Linear(key_dim, hidden_size, rng=rng, dtype=dtype)
        self.out = Linear(hidden_size, vocab_size, rng=rng, dtype=dtype)

    def start(self, encoded):
        keys = encoded.annotations                                       # (B, S, K)
        mask = None if encoded.mask.all() else encoded.mask              # (B, S) or None
        table, W_feed = self._input_table()                              # (G, V), (G, H) or None
        ctx = AttentionContext(table, W_feed, keys, mask, self.attention.project_keys(keys))
        s0 = mg.tanh(self.init(masked_mean(encoded)))                    # (B, H)
        state = self.cell.initial_state(s0)                              # (s_0,) or (s_0, c_0 = 0)
        if self.input_feeding:
            state += (mg.Tensor(np.zeros_like(s0.data)),)                # h̃_0 = 0
        return state, ctx

    def step(self, y_prev, state, ctx: AttentionContext, t):
        parts = len(self.cell.parts)
        rnn, fed = state[:parts], state[parts:]                          # fed: (h̃_{t−1},) or ()
        gi = self._embedded_input(ctx, y_prev)                           # (B, G)
        if self.input_feeding:
            gi = gi + F.linear(fed[0], ctx.W_extra)                      # (B, G): + W_ih^feed h̃_{t−1}
        rnn = self.cell.step(gi, rnn)                                    # (s_t,) or (h_t, c_t)
        s = rnn[0]                                                       # s_t (B, H)
        if self.local and not self.attention.predictive:                # local-m: p_t = t
            c, alpha = self.attention(s, ctx.keys, mask=ctx.mask, position=t,
                                      projected=ctx.projected)           # (B, K), (B, S)
        else:                                                  # global, or local-p (predicts p_t)
            c, alpha = self.attention(s, ctx.keys, mask=ctx.mask, projected=ctx.projected)  # (B, K), (B, S)
        h_tilde = mg.tanh(self.combine(mg.concatenate([c, s], axis=-1)))  # (B, H)
        return rnn + ((h_tilde,) if self.input_feeding else ()), (h_tilde,), alpha
