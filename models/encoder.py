"""The padding-aware bidirectional GRU encoder of Bahdanau et al.

Shape letters: B batch, S source length, V source vocabulary, E embedding size, H hidden size
per direction.

Each source position j gets an *annotation* ``h_j = [→h_j ; ←h_j]`` (B, S, 2H): the forward GRU
has read x_1..x_j, the backward GRU x_j..x_{S_b} (S_b = sequence b's own length), so h_j
summarises the whole sentence with a focus around x_j.

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
from minigrad import functional as F, init
from minigrad.nn import Embedding, Module
from minigrad.viz.trace import scope

from models.vocab import PAD
from models.recurrent import GRUCell


class Encoded(NamedTuple):
    """What the encoder hands to a decoder."""
    annotations: mg.Tensor  # (B, S, 2H), zero at padding
    mask: np.ndarray        # (B, S) bool, True = real token
    final: mg.Tensor        # (B, 2H): [→h_{S_b} ; ←h_1], from 0-based positions S_b − 1 and 0


def check_source(src, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``src (B, S)`` integer ids and ``mask`` (derived as src != PAD when None)."""
    src = np.asarray(src)                                         # (B, S)
    if src.ndim != 2 or src.dtype.kind not in "iu":
        raise ValueError(f"source: expected integer ids of shape (B, S), got {src.dtype} {src.shape}")
    if src.shape[1] == 0 or src.shape[0] == 0:
        raise ValueError(f"source: empty batch of shape {src.shape}")
    mask = src != PAD if mask is None else np.asarray(mask, dtype=bool)  # (B, S)
    if mask.shape != src.shape:
        raise ValueError(f"source: mask of shape {mask.shape} vs ids of shape {src.shape}")
    if not mask[:, 0].all():
        raise ValueError("source: every sequence needs at least one real token "
                         "(mask[:, 0] must be True; sources are right-padded)")
    if (mask[:, 1:] & ~mask[:, :-1]).any():
        raise ValueError("source: padding must come after the real tokens (right-padding); "
                         "the mask has a real token after a padded one")
    return src, mask


def one_hot(ids, n: int, dtype, role: str) -> np.ndarray:
    """(..., n) rows of the identity: one_hot(ids) @ E = E[ids]. ``role`` ("source" or
    "targets") names the ids in the error for an id outside the vocabulary."""
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        bad = ids[(ids < 0) | (ids >= n)][0]
        raise ValueError(f"{role}: token id {bad} is out of range for a vocabulary of {n}")
    return np.eye(n, dtype=dtype)[ids]  # (..., n)


def input_table(embedding, weight_ih, bias_ih, columns: slice = slice(None)) -> mg.Tensor:
    """(G, V): column x is ``W_ih E[x] + b_ih``, the input projection of token x.

    A recurrent cell's input projection does not depend on the recurrence, and for a token
    it depends only on the token, so it is computed for the whole vocabulary once per batch.
    At each step ``F.linear(one_hot(x_t), table)`` picks the columns: a (B, V) @ (V, G) matmul
    whose gradient is a matmul too (a scatter-add into the embedding is several times slower).
    ``columns`` selects the part of ``W_ih`` that reads the embedding when the cell's input
    is ``[E x ; other]``.
    """
    return F.linear(embedding, weight_ih[:, columns], bias_ih).T  # (G, V)


class BiGRUEncoder(Module):
    """Embedding (V, E) followed by a forward and a backward ``GRUCell(E, H)``."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, reset_after: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        rng = init.generator("BiGRUEncoder", rng)
        self.hidden_size = hidden_size
        self.embedding = Embedding(vocab_size, embed_dim, rng=rng, dtype=dtype)
        self.forward_cell = GRUCell(embed_dim, hidden_size, reset_after, rng=rng, dtype=dtype)
        self.backward_cell = GRUCell(embed_dim, hidden_size, reset_after, rng=rng, dtype=dtype)

    def _run(self, cell: GRUCell, onehot, mask, order, name: str) -> tuple[list, mg.Tensor]:
        """One direction over the positions in ``order``; returns the hidden states (by
        position) and the last one. See ``input_table`` for how the input projection is
        computed; at padding every part of the cell's state is held."""
        table = input_table(self.embedding.weight, cell.weight_ih, cell.bias_ih)  # (G, V)
        state = cell.zero_state(onehot.shape[1])                                  # (h,): (B, H)
        outputs = [None] * onehot.shape[0]
        for t in order:
            with scope(f"{name} {t}"):  # a group in minigrad.viz's drawings (free otherwise)
                new = cell.step(F.linear(onehot[t], table), state)  # each (B, H)
                real = mask[:, t]                                   # (B,)
                state = new if real.all() else tuple(mg.where(real[:, None], a, b)
                                                     for a, b in zip(new, state))  # held at padding
            outputs[t] = state[0]                                   # h (B, H)
        return outputs, state[0]

    def forward(self, src, mask=None, rng=None) -> Encoded:
        """Annotations (B, S, 2H) for token ids ``src (B, S)`` with ``mask`` (True = real).
        ``rng`` is unused (no dropout here): every encoder is called alike."""
        src, mask = check_source(src, mask)
        S = src.shape[1]
        V, dtype = self.embedding.weight.shape[0], self.embedding.weight.dtype
        onehot = one_hot(src.T, V, dtype, "source")  # (S, B, V), time first: onehot[t] is contiguous
        fwd, h_last = self._run(self.forward_cell, onehot, mask, range(S),
                                "forward")                               # S × (B, H), (B, H)
        bwd, h_first = self._run(self.backward_cell, onehot, mask, range(S - 1, -1, -1),
                                "backward")  # the same
        annotations = mg.concatenate([mg.stack(fwd, axis=1), mg.stack(bwd, axis=1)],
                                     axis=2)                                     # (B, S, 2H)
        if not mask.all():  # the forward direction held its state over the padding: zero it
            annotations = annotations * mask[:, :, None].astype(annotations.dtype)  # (B, S, 2H)
        final = mg.concatenate([h_last, h_first], axis=1)  # (B, 2H)
        return Encoded(annotations, mask, final)
