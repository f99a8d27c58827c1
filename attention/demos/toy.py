"""A toy attention model, trained in about a second, for the demos that need "a trained model".

Source 000 §4.3 builds an encoder, a decoder and Bahdanau attention for a toy *identity*
task (6 source words, 6 decoder steps) and prints the alignment matrix: before training it is
near uniform, after training near diagonal. This package may not import ``models`` (the layer
above), so here is the same experiment in miniature, from ``attention`` and ``minigrad`` alone:

    keys      h_j = tanh(E x_j + P_j)                 a token and its position j   (B, S, D)
    queries   s_t = Q_t                               the decoder's state at step t (T, Dq)
    scores    e_tj = vᵀ tanh(W_q s_t + W_k h_j + b)   Bahdanau's additive score     (B, T, S)
    read      α_t = softmax(e_t),  c_t = Σ_j α_tj h_j
    output    p(y_t) = softmax(W_o c_t + b_o),        trained so that y_t = x_t (copy)

In source 000 §4.3 the decoder state s_t depends only on t (the GRU cell is fed random
inputs); here s_t is a learned vector per step, which is the same thing made trainable. To
copy x_t the read must land on position t, so a trained model's alignment is the diagonal.

Shape letters: B batch, T decoder steps, S source positions (T = S = 6), V vocabulary,
D key width, Dq query width, A attention width.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention.scores import AdditiveScore
from attention.kernels import KERNELS
from attention.read import read
from minigrad import functional as F
from minigrad import no_grad, optim
from minigrad.kernels import swap
from minigrad.nn import Embedding, Linear, Module, Parameter
from minigrad.tensor import Tensor

TOKENS = ("I", "like", "green", "cats", "and", "tea", "a", "dog")


class ToyCopy(Module):
    """The model above; ``scores(x)`` gives e (B, T, S), ``forward(x)`` logits and α."""

    def __init__(self, rng: np.random.Generator, length: int = 6, vocab: int = len(TOKENS),
                 width: int = 16, attn: int = 16):
        self.length = length
        self.embed = Embedding(vocab, width, rng=rng)
        self.pos = Parameter(rng.standard_normal((length, width)))            # (S, D)
        self.queries = Parameter(rng.standard_normal((length, width)))        # (T, Dq)
        self.score = AdditiveScore(width, width, attn, rng=rng)
        self.out = Linear(width, vocab, rng=rng)

    def keys(self, x: np.ndarray) -> Tensor:
        return (self.embed(x) + self.pos).tanh()                              # (B, S, D)

    def scores(self, x: np.ndarray) -> tuple:
        """(scores e (B, T, S), keys h (B, S, D)) for token ids x (B, S)."""
        h = self.keys(x)                                                      # (B, S, D)
        q = self.queries.expand_dims(0) + np.zeros((len(x), 1, 1))            # (B, T, Dq)
        return self.score(q, h), h                                            # (B, T, S)

    def forward(self, x: np.ndarray) -> tuple:
        e, h = self.scores(x)
        context, weights = read(e, h)                                         # (B, T, D), (B, T, S)
        return self.out(context), weights                                     # (B, T, V)


@dataclass
class Toy:
    model: ToyCopy
    untrained: np.ndarray      # α (T, S) of the example before training
    example: np.ndarray        # (S,) token ids of the held-out example
    accuracy: float            # held-out token accuracy after training
    steps: int


def batch(rng: np.random.Generator, n: int, length: int = 6) -> np.ndarray:
    """n sequences of distinct tokens (so each output names one source position)."""
    return np.stack([rng.permutation(len(TOKENS))[:length] for _ in range(n)])  # (n, S)


def train_toy(seed: int = 0, steps: int = 150, batch_size: int = 32,
              kernels: bool = False) -> Toy:
    """Train ``ToyCopy`` with Adam on random 6-token sequences; deterministic for a seed.
    ``kernels``: train with attention's kernels switched on (same numbers, faster steps): this
    package may not import the one switch (``models.kernels.use_kernels``), and ``ToyCopy``'s
    only module with a kernel is its ``AdditiveScore``, so attention's table is all it takes."""
    rng = np.random.default_rng(seed)
    model = ToyCopy(rng)
    if kernels:
        swap(model, KERNELS)
    example = batch(np.random.default_rng(seed + 1), 1)                      # (1, S) held out
    with no_grad():
        untrained = model(example)[1].data[0]                                # (T, S)
    opt = optim.Adam(model.parameters(), lr=0.05)
    for _ in range(steps):
        x = batch(rng, batch_size)                                           # (B, S)
        logits, _ = model(x)                                                 # (B, T, V)
        loss = F.cross_entropy(logits.reshape(-1, len(TOKENS)), x.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    test = batch(np.random.default_rng(seed + 2), 200)                       # (200, S)
    with no_grad():
        accuracy = float(np.mean(model(test)[0].data.argmax(-1) == test))
    return Toy(model, untrained, example[0], accuracy, steps)


def weights_of(model: ToyCopy, x: np.ndarray) -> np.ndarray:
    """α (T, S) of the model on one sequence x (S,)."""
    with no_grad():
        return model(x[None])[1].data[0]
