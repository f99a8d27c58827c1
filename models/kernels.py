"""The models' kernels (the contract: ``minigrad/kernels.py``) and the one switch,
``use_kernels`` / ``use_core``, which applies ``ALL_KERNELS`` (minigrad's, attention's and this
``KERNELS``); the application switches them on in one place (``models/app/build.py``)::

    model = use_kernels(Seq2Seq(config, rng))   # use_core(model) switches back

Shape letters: B batch, S source length, V vocabulary, E embedding, H hidden, G the cell's gate
width (3H for a GRU, 4H for an LSTM).

* ``FusedGRUCell``: ``GRUCell.step`` as one op (``models/fused.py``).
* ``FusedFeedForward``: the Transformer's feed-forward block with GELU as one op.
* One-hot input tables (the encoder and the decoders). For a cell input ``x = [E[y] ; rest]``,
  ``W_ih x + b_ih = (W_ih^emb E[y] + b_ih) + W_ih^rest rest``; the first term is computed for
  the whole vocabulary once per batch, the table (G, V), and each step picks its columns with
  a one-hot matmul, whose gradient is a matmul too.
* Whole sequences as one op (``models/fused_seq.py``): the encoder with GRU cells resetting
  after, and the teacher-forced Bahdanau decoder with the additive (or concat) tanh score and
  none of attention's options; under ``no_grad`` its ``step`` is ``bahdanau_step``, in NumPy.
* ``NumpyLogProbs`` (every kernel decoder): under ``no_grad``, ``log_probs`` in NumPy.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import minigrad as mg
from minigrad import functional as F
from minigrad.kernels import KERNELS as MINIGRAD_KERNELS, fused_gelu, swap
from minigrad.modes import mode

from attention.kernels import KERNELS as ATTENTION_KERNELS
from attention.scores import AdditiveScore
from models.decoders import BahdanauDecoder, PlainDecoder
from models.recurrent import BiGRUEncoder, Encoded, annotate
from models.fused import gru_step
from models.fused_seq import bahdanau_sequence, bahdanau_step, bigru_sequence, exp_2k, one_hot
from models.luong import LuongDecoder
from models.recurrent import GRUCell
from models.transformer_layers import FeedForward
from models.vocab import PAD


def no_graph(array: np.ndarray) -> mg.Tensor:
    """A fresh array computed without a graph (decoding) as a Tensor, not copied or checked."""
    return mg.Tensor._from_op(array, (), None, "no_graph")


class FusedGRUCell(GRUCell):
    """``GRUCell`` whose step is ``models.fused.gru_step``: one graph node per step."""

    def step(self, gi, h) -> mg.Tensor:
        return gru_step(gi, h, self.weight_hh, self.bias_hh, self.reset_after)  # h' (B, H)


# ---- one-hot input tables -----------------------------------------------------------------

def input_table(embedding, weight_ih, bias_ih, columns: slice = slice(None)) -> mg.Tensor:
    """(G, V): column y is ``W_ih E[y] + b_ih``, the input projection of token y; ``columns``
    selects the part of ``W_ih`` that reads the embedding when the input is ``[E y ; rest]``."""
    return F.linear(embedding, weight_ih[:, columns], bias_ih).T  # (G, V)


def decoder_tables(decoder) -> tuple:
    """(table (G, V), W_rest (G, I − E) or None): the decoder cell's input weights split at
    the embedding."""
    E = decoder.embedding.weight.shape[1]
    W = decoder.cell.weight_ih                                           # (G, E + ·)
    table = input_table(decoder.embedding.weight, W, decoder.cell.bias_ih, slice(0, E))  # (G, V)
    return table, (W[:, E:] if W.shape[1] > E else None)


def embedded_input(ctx, y_prev) -> mg.Tensor:
    """W_ih^emb E[y_{t−1}] + b_ih (B, G): columns y_prev of the context's table."""
    onehot = one_hot(y_prev, ctx.table.shape[1], ctx.table.dtype)       # (B, V)
    return F.linear(onehot, ctx.table)                                   # (B, G)


class FastBiGRUEncoder(BiGRUEncoder):
    """``BiGRUEncoder`` as one op (``bigru_sequence``) for GRU cells resetting after; else one
    node per step, each direction's input projection read from a one-hot table."""

    def forward(self, src, mask=None, rng=None):
        mask = src != PAD if mask is None else mask                        # (B, S), as the core
        if whole_sequence(self.forward_cell) and whole_sequence(self.backward_cell):
            annotations = bigru_sequence(src, mask, self.embedding.weight, self.forward_cell,
                                         self.backward_cell)              # (B, S, 2H)
            return encoded(annotations, mask, self.hidden_size)
        return self.per_step(src, mask)

    def per_step(self, src, mask) -> Encoded:
        """The encoder one step (one ``cell.step`` node) at a time, from checked ids and mask."""
        V, dtype = self.embedding.weight.shape[0], self.embedding.weight.dtype
        onehot = one_hot(src.T, V, dtype)  # (S, B, V), time first: onehot[j] is contiguous
        S = src.shape[1]
        fwd = self.run(self.forward_cell, onehot, mask, range(S))               # S × (B, H)
        bwd = self.run(self.backward_cell, onehot, mask, range(S - 1, -1, -1))  # S × (B, H)
        return annotate(fwd, bwd, mask)

    def run(self, cell, onehot, mask, order) -> list:
        table = input_table(self.embedding.weight, cell.weight_ih, cell.bias_ih)  # (3H, V)
        h = mg.Tensor(np.zeros((onehot.shape[1], self.hidden_size), dtype=table.dtype))  # (B, H)
        states = [None] * onehot.shape[0]
        for j in order:
            new = cell.step(F.linear(onehot[j], table), h)                 # (B, H)
            real = mask[:, j]                                              # (B,)
            h = new if real.all() else mg.where(real[:, None], new, h)     # held at padding
            states[j] = h
        return states


def whole_sequence(cell) -> bool:
    """Can ``models/fused_seq.py`` run ``cell`` over a whole sequence? (a GRU, reset after)"""
    return isinstance(cell, GRUCell) and cell.reset_after


def encoded(annotations, mask, H: int) -> Encoded:
    """``Encoded`` from annotations (B, S, 2H): the final [→h_{S_b} ; ←h_1] are annotations
    too (→h is held over the padding, so →h_{S_b} is the one at position S_b − 1)."""
    last = mask.sum(axis=1) - 1                                           # (B,)
    final = mg.concatenate([annotations[np.arange(len(last)), last, :H],
                            annotations[:, 0, H:]], axis=1)               # (B, 2H)
    return Encoded(annotations, mask, final)


def query_weight(attention):
    """W_q (A, H) of an additive tanh score (a concat score is one) when ``attention`` uses
    none of its options, else None: what ``bahdanau_sequence`` and ``bahdanau_step`` compute."""
    score = attention.score
    if (attention.temperature != 1.0 or attention.window is not None
            or (attention.dropout > 0 and attention.training)):
        return None
    if isinstance(score, AdditiveScore) and score.activation == "tanh":
        return score.W_q                                                  # (A, H)
    return None


class NumpyLogProbs:
    """A decoder's ``log_probs`` without a graph when none is recorded (decoding): the output
    layer and log softmax (``minigrad.ops.log_softmax_array``'s) in NumPy, in place."""

    def log_probs(self, features) -> mg.Tensor:
        if mode.grad_enabled:
            return super().log_probs(features)
        x = np.concatenate([f.data for f in features], axis=-1)          # (B, F)
        z = x @ self.out.weight.data.T                                   # (B, V)
        if self.out.bias is not None:
            z += self.out.bias.data
        m = z.max(axis=-1, keepdims=True)                                # (B, 1)
        z -= m if np.isfinite(m).all() else np.where(np.isfinite(m), m, 0)  # as log_softmax_array
        z -= np.log(np.exp(z).sum(axis=-1, keepdims=True))
        return no_graph(z)


class FastPlainContext(NamedTuple):
    c: mg.Tensor       # (B, K) the fixed context vector
    table: mg.Tensor   # (3H, V) column y: W_ih^emb E[y] + b_ih
    gi_c: mg.Tensor    # (B, 3H) W_ih^c c, the cell's input from c: the same at every step


class FastPlainDecoder(NumpyLogProbs, PlainDecoder):
    """``PlainDecoder`` reading W_ih^emb E[y_{t−1}] + b_ih from a table, W_ih^c c once per batch."""

    def start(self, encoded, rng=None) -> tuple:
        state, ctx = super().start(encoded, rng)
        table, W_c = decoder_tables(self)                                # (3H, V), (3H, K)
        return state, FastPlainContext(ctx.c, table, F.linear(ctx.c, W_c))  # gi_c (B, 3H)

    def step(self, y_prev, state, ctx: FastPlainContext, t):
        (s,) = state                                                     # (B, H)
        s = self.cell.step(embedded_input(ctx, y_prev) + ctx.gi_c, s)    # gi (B, 3H) -> (B, H)
        return (s,), (s, ctx.c), None


class FastAttentionContext(NamedTuple):
    """``models.decoders.AttentionContext``'s fields, then the input table."""
    keys: mg.Tensor
    mask: np.ndarray | None
    projected: mg.Tensor
    rng: np.random.Generator | None
    table: mg.Tensor             # (G, V) column y: W_ih^emb E[y] + b_ih
    W_rest: mg.Tensor | None     # (G, ·) the cell's input weights for the rest of its input
    e2k: np.ndarray | None = None  # e^{2k} (B, S, A) of the projected keys, when decoding fast


class FastBahdanauDecoder(NumpyLogProbs, BahdanauDecoder):
    """``BahdanauDecoder`` teacher-forced as one op (``bahdanau_sequence``) and decoding with
    ``bahdanau_step`` where they apply; else per step, the GRU input table[y_{t−1}] + W_ih^c c_t."""

    def forward(self, encoded, tgt_in, teacher_forcing: float = 1.0, rng=None) -> tuple:
        W_q = query_weight(self.attention)
        if W_q is None or teacher_forcing < 1 or not whole_sequence(self.cell):
            return super().forward(encoded, tgt_in, teacher_forcing, rng)
        (s0,), ctx = BahdanauDecoder.start(self, encoded, rng)           # s_0 (B, H), keys
        features, alpha = bahdanau_sequence(ctx.keys, ctx.projected, s0, ctx.mask, tgt_in, W_q,
                                            self.attention.score.v, self.embedding.weight,
                                            self.cell)                   # (B, T, H + K), (B, T, S)
        B, T, F_ = features.shape                                        # one 2-D product, not B
        return self.logits((features.reshape(B * T, F_),)).reshape(B, T, -1), alpha  # (B, T, V)

    def start(self, encoded, rng=None) -> tuple:
        state, ctx = super().start(encoded, rng)
        e2k = exp_2k(ctx.projected.data) if self.decodes_in_numpy() else None  # (B, S, A)
        return state, FastAttentionContext(*ctx, *decoder_tables(self), e2k)

    def decodes_in_numpy(self) -> bool:
        """Does ``step`` run ``bahdanau_step``? (no graph, and what it computes)"""
        return (not mode.grad_enabled and query_weight(self.attention) is not None
                and whole_sequence(self.cell))

    def step(self, y_prev, state, ctx: FastAttentionContext, t):
        (s,) = state                                                     # s_{t−1} (B, H)
        if self.decodes_in_numpy():
            v, cell = self.attention.score.v, self.cell
            s, c, alpha = bahdanau_step(y_prev, s.data, ctx.keys.data, ctx.projected.data,
                                        ctx.mask, query_weight(self.attention).data, v.data,
                                        ctx.table.data, ctx.W_rest.data, cell.weight_hh.data,
                                        cell.bias_hh.data, ctx.e2k)      # (B, H), (B, K), (B, S)
            s = no_graph(s)
            return (s,), (s, no_graph(c)), no_graph(alpha)
        c, alpha = self.attention(s, ctx.keys, mask=ctx.mask, projected=ctx.projected,
                                  position=t, rng=ctx.rng)               # (B, K), (B, S)
        gi = embedded_input(ctx, y_prev) + F.linear(c, ctx.W_rest)       # (B, 3H)
        s = self.cell.step(gi, s)                                        # s_t (B, H)
        return (s,), (s, c), alpha


class FastLuongDecoder(NumpyLogProbs, LuongDecoder):
    """``LuongDecoder`` whose RNN input is table[y_{t−1}] (+ W_ih^feed h̃_{t−1}); ``step`` runs
    the cell on it, then the core's ``attend``."""

    def start(self, encoded, rng=None) -> tuple:
        state, ctx = super().start(encoded, rng)
        return state, FastAttentionContext(*ctx, *decoder_tables(self))

    def step(self, y_prev, state, ctx: FastAttentionContext, t):
        n = len(self.cell.parts)
        fed, rnn = state[n:], state[:n]                                  # (h̃_{t−1},) or ()
        gi = embedded_input(ctx, y_prev)                                 # (B, G)
        if fed:
            gi = gi + F.linear(fed[0], ctx.W_rest)                       # + W_ih^feed h̃_{t−1}
        out = self.cell.step(gi, rnn if len(rnn) > 1 else rnn[0])       # s_t or (h_t, c_t)
        return self.attend(out if isinstance(out, tuple) else (out,), ctx, t)


class FusedFeedForward(FeedForward):
    """``FeedForward`` whose GELU is ``minigrad.kernels.fused_gelu``: one op, not eight."""

    def forward(self, x) -> mg.Tensor:
        if self.activation != "gelu":
            return super().forward(x)
        return self.fc2(fused_gelu(self.fc1(x)))                         # (…, D)


KERNELS = {GRUCell: FusedGRUCell, FeedForward: FusedFeedForward, BiGRUEncoder: FastBiGRUEncoder,
           PlainDecoder: FastPlainDecoder, BahdanauDecoder: FastBahdanauDecoder,
           LuongDecoder: FastLuongDecoder}                       # the models' own: core -> kernel
ALL_KERNELS = {**MINIGRAD_KERNELS, **ATTENTION_KERNELS, **KERNELS}   # what the switch applies


def use_kernels(module):
    """The one switch: every submodule of ``module`` (itself included) whose class one of the three
    tables names becomes its kernel, in place; returns ``module``."""
    return swap(module, ALL_KERNELS)


def use_core(module):
    """Every kernel in ``module`` back to its core class, in place; returns ``module``."""
    return swap(module, ALL_KERNELS, back=True)
