"""The padding-aware bidirectional GRU encoder of Bahdanau et al.

Shape letters: B batch, S source length, V source vocabulary, E embedding size, H hidden size
per direction.

Each source position j gets an *annotation* ``h_j = [→h_j ; ←h_j]`` (B, S, 2H): the forward GRU
has read x_1..x_j, the backward GRU x_j..x_{S_b} (S_b = sequence b's own length), so h_j
summarises the whole sentence with a focus around x_j:

    →h_j = GRU(E x_j, →h_{j−1}),   ←h_j = GRU'(E x_j, ←h_{j+1}),   →h_0 = ←h_{S_b+1} = 0

Indexing. The formulas count positions from 1, as the papers do (x_1 .. x_{S_b}); the arrays
count from 0, so h_j is ``annotations[:, j − 1]``, and the final states →h_{S_b} and ←h_1 are
the ones at 0-based positions S_b − 1 and 0.

Padding. Sources are right-padded. The forward direction runs over the padding but keeps its
state there (``h ← where(real, h_new, h)``); the backward direction starts from zeros and, by
the same rule, stays at zero until it reaches each sequence's own last real token. Real
positions therefore see exactly what they would see without padding, and annotations at
padding are set to zero. The final states ``[→h_{S_b} ; ←h_1]`` (B, 2H) summarise the
sentence in one vector (what an attention-free decoder gets).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import minigrad as mg
from minigrad import init
from minigrad.nn import Embedding, Module

from models.vocab import PAD
from models.recurrent import GRUCell


class Encoded(NamedTuple):
    """What the encoder hands to a decoder."""
    annotations: mg.Tensor  # (B, S, 2H), zero at padding
    mask: np.ndarray        # (B, S) bool, True = real token
    final: mg.Tensor        # (B, 2H): [→h_{S_b} ; ←h_1], from 0-based positions S_b − 1 and 0


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
        """Annotations (B, S, 2H) for token ids ``src (B, S)`` with ``mask`` (True = real; None:
        src != PAD), as the model's entry points checked them (``models/checks.py``).
        ``rng`` is unused (no dropout here): every encoder is called alike."""
        src = np.asarray(src)                                              # (B, S)
        mask = src != PAD if mask is None else mask                        # (B, S)
        x = self.embedding(src)                                            # E x_j (B, S, E)
        S = src.shape[1]
        fwd = self.run(self.forward_cell, x, mask, range(S))               # S × →h_j (B, H)
        bwd = self.run(self.backward_cell, x, mask, range(S - 1, -1, -1))  # S × ←h_j (B, H)
        return annotate(fwd, bwd, mask)

    def run(self, cell: GRUCell, x, mask, order) -> list:
        """One direction: h = cell(x_j, h) at the positions in ``order``, h held at padding;
        returns the states by position."""
        h = mg.Tensor(np.zeros((x.shape[0], self.hidden_size), dtype=x.dtype))  # h_0 = 0 (B, H)
        states = [None] * x.shape[1]
        for j in order:
            new = cell(x[:, j], h)                                         # (B, H)
            real = mask[:, j]                                              # (B,)
            h = new if real.all() else mg.where(real[:, None], new, h)     # held at padding
            states[j] = h
        return states


def annotate(fwd: list, bwd: list, mask: np.ndarray) -> Encoded:
    """h_j = [→h_j ; ←h_j] (B, S, 2H), zero at padding, and the final [→h_{S_b} ; ←h_1] from
    the states of each direction by position (→h held over the padding, so its last is →h_{S_b})."""
    annotations = mg.concatenate([mg.stack(fwd, axis=1), mg.stack(bwd, axis=1)], axis=2)  # (B, S, 2H)
    if not mask.all():  # the forward direction held its state over the padding: zero it
        annotations = mg.where(mask[:, :, None], annotations, 0.0)       # (B, S, 2H)
    final = mg.concatenate([fwd[-1], bwd[0]], axis=1)                     # (B, 2H)
    return Encoded(annotations, mask, final)
