"""The padding-aware bidirectional GRU encoder of Bahdanau et al.

Shape letters: B batch, S source length, V source vocabulary, E embedding, H hidden size per
direction. Each source position j gets an annotation h_j = [→h_j ; ←h_j] (B, S, 2H)::

    →h_j = GRU(E x_j, →h_{j−1}),   ←h_j = GRU'(E x_j, ←h_{j+1}),   →h_0 = ←h_{S_b+1} = 0

Positions count from 1 in the formulas, from 0 in the arrays: h_j is ``annotations[:, j − 1]``.
Sources are right-padded; at padding each direction keeps its state, so the backward direction
starts at each sequence's own last real token, and real positions see exactly what they would
see without padding. Annotations at padding are zero.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import minigrad as mg
from minigrad import init
from minigrad.nn import Embedding, Module

from models.recurrent import GRUCell
from models.vocab import PAD


class Encoded(NamedTuple):
    """What the encoder hands to a decoder."""
    annotations: mg.Tensor  # (B, S, 2H), zero at padding
    mask: np.ndarray        # (B, S) bool, True = real token
    final: mg.Tensor        # (B, 2H): [→h_{S_b} ; ←h_1]


class BiGRUEncoder(Module):
    """Embedding (V, E) followed by a forward and a backward ``GRUCell(E, H)``."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, reset_after: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        rng = init.generator("BiGRUEncoder", rng)
        self.hidden_size = hidden_size
        self.embedding = Embedding(vocab_size, embed_dim, rng=rng, dtype=dtype)
        self.forward_cell = GRUCell(embed_dim, hidden_size, reset_after, rng=rng, dtype=dtype)
        self.backward_cell = GRUCell(embed_dim, hidden_size, reset_after, rng=rng, dtype=dtype)

    def forward(self, src, mask=None, rng=None) -> Encoded:
        """Ids ``src (B, S)`` and ``mask`` (None: src != PAD) as ``Seq2Seq`` checked them;
        ``rng`` unused (every encoder is called alike)."""
        mask = src != PAD if mask is None else mask                        # (B, S)
        x = self.embedding(src)                                            # E x_j (B, S, E)
        S = src.shape[1]
        fwd = self.run(self.forward_cell, x, mask, range(S))               # S × →h_j (B, H)
        bwd = self.run(self.backward_cell, x, mask, range(S - 1, -1, -1))  # S × ←h_j (B, H)
        return annotate(fwd, bwd, mask)

    def run(self, cell: GRUCell, x, mask, order) -> list:
        """One direction over the positions in ``order``, the state held at padding."""
        h = mg.Tensor(np.zeros((x.shape[0], self.hidden_size), dtype=x.dtype))  # h_0 = 0 (B, H)
        states = [None] * x.shape[1]
        for j in order:
            new = cell(x[:, j], h)                                         # (B, H)
            real = mask[:, j]                                              # (B,)
            h = new if real.all() else mg.where(real[:, None], new, h)     # held at padding
            states[j] = h
        return states


def annotate(fwd: list, bwd: list, mask: np.ndarray) -> Encoded:
    """Annotations from each direction's states by position, and the final [→h_{S_b} ; ←h_1]
    (→h is held over the padding, so its last is →h_{S_b})."""
    annotations = mg.concatenate([mg.stack(fwd, axis=1), mg.stack(bwd, axis=1)], axis=2)  # (B, S, 2H)
    if not mask.all():
        annotations = mg.where(mask[:, :, None], annotations, 0.0)       # (B, S, 2H)
    final = mg.concatenate([fwd[-1], bwd[0]], axis=1)                     # (B, 2H)
    return Encoded(annotations, mask, final)
