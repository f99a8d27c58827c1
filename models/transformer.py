"""An encoder–decoder Transformer (Vaswani et al. 2017) behind the RNN decoders' interface.
Shape letters: B batch, S source length, T target length, D model width, h heads, d = D / h,
V vocabulary, t the decoder step.

    encoder:  x = E_src[x_j] + PE(j),   L × EncoderLayer,   memory = LN(x)      (B, S, D)
    decoder:  y = E_tgt[y_{t−1}] + PE(t),   L × DecoderLayer(memory),
              p(y_t | y_<t, x) = softmax(W_o LN(y_t) + b_o)

Nothing is recurrent: teacher forcing runs all T positions in one pass. The encoder returns an
``Encoded`` (annotations = the memory, 0 at padding); the decoder's ``start`` / ``step`` state
is each layer's cache (B, h, t, d).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import minigrad as mg
from minigrad import init
from minigrad.nn import Embedding, LayerNorm, Linear, Module, check_sizes

from attention.checks import check_choice
from attention.positional import LearnedPositions, SinusoidalPositions
from models.decoders import Decoder
from models.recurrent import Encoded
from models.transformer_layers import DecoderLayer, EncoderLayer
from models.vocab import PAD

POSITIONS = ("sinusoidal", "learned")


class Stack(Module):
    """Embedding, positions, L pre-norm ``Layer``s, a final LayerNorm (and a decoder's output)."""

    def __init__(self, vocab_size: int, dim: int, heads: int, ff: int, layers: int,
                 dropout: float = 0.0, activation: str = "relu", position: str = "sinusoidal",
                 max_len: int = 128, rng=None, dtype=np.float64):
        who = type(self).__name__
        check_sizes(who, vocab_size=vocab_size, dim=dim, heads=heads, ff=ff, layers=layers,
                    max_len=max_len)
        check_choice(who, "position", position, POSITIONS)
        rng = init.generator(who, rng)
        self.embedding = Embedding(vocab_size, dim, rng=rng, dtype=dtype)
        self.pos = (SinusoidalPositions(dim, dtype) if position == "sinusoidal"
                    else LearnedPositions(max_len, dim, rng, dtype))
        self.layers = [self.Layer(dim, heads, ff, dropout, activation, rng, dtype)
                       for _ in range(layers)]
        self.norm = LayerNorm(dim, dtype=dtype)
        if isinstance(self, Decoder):
            self.out = Linear(dim, vocab_size, rng=rng, dtype=dtype)

    def embed(self, ids, start: int = 0) -> mg.Tensor:
        """E[ids] + PE(start ..), (B, L, D). The paper multiplies embeddings initialised with
        variance 1/D by √D; ours start N(0, 1), already at the scale of the sinusoids."""
        return self.embedding(ids) + self.pos(ids.shape[1], start)       # (B, L, D)


class TransformerEncoder(Stack):
    """Token and position embedding, L pre-norm encoder layers, a final LayerNorm."""

    Layer = EncoderLayer

    def encode(self, src, mask=None, rng=None) -> tuple:
        """(Encoded, [self-attention weights (B, h, S, S) of each layer])."""
        mask = src != PAD if mask is None else mask                      # (B, S)
        x = self.embed(src)                                              # (B, S, D)
        weights = []
        for layer in self.layers:
            x, w = layer(x, mask, rng)                                   # (B, S, D)
            weights.append(w.data)
        real = mask[:, :, None].astype(x.dtype)                          # (B, S, 1)
        memory = self.norm(x) * real                                     # (B, S, D), 0 at padding
        final = memory.sum(axis=1) / real.sum(axis=1)                    # (B, D) mean over real
        return Encoded(memory, mask, final), weights

    def forward(self, src, mask=None, rng=None) -> Encoded:
        return self.encode(src, mask, rng)[0]


class Cache(NamedTuple):
    memory_kv: list          # per layer (k, v), each (B, h, S, d): cross-attention keys, values
    mask: np.ndarray | None  # (B, S) True = real; None when nothing is padding


class TransformerDecoder(Stack, Decoder):
    """Target embedding and positions, L pre-norm decoder layers, LayerNorm, output layer."""

    Layer = DecoderLayer

    def start(self, encoded: Encoded) -> tuple:
        """No cache yet (the state grows by each layer's keys and values), and the cross keys
        and values."""
        memory = encoded.annotations                                     # (B, S, D)
        kv = [layer.cross_attn.project_kv(memory, memory) for layer in self.layers]
        return (), Cache(kv, None if encoded.mask.all() else encoded.mask)

    def step(self, y_prev, state, ctx: Cache, t: int):
        """The new token attends to the t cached ones and to the source; the alignment (B, S)
        is the last layer's cross-attention averaged over the heads."""
        y = self.embed(np.asarray(y_prev)[:, None], start=t)             # (B, 1, D)
        grown = []
        for i, layer in enumerate(self.layers):
            cache = state[2 * i:2 * i + 2] or None                       # (k, v) of t positions
            y, kv, _, cross = layer(y, ctx.memory_kv[i], ctx.mask, cache=cache)  # (B, 1, D)
            grown += kv
        features = self.norm(y)[:, 0]                                    # (B, D)
        return tuple(grown), (features,), cross.mean(axis=1)[:, 0]       # (B, S)

    def attend_all(self, encoded: Encoded, tgt_in: np.ndarray, rng=None) -> tuple:
        """All T positions at once: logits (B, T, V), and per layer the self weights
        (B, h, T, T) and cross weights (B, h, T, S) as arrays."""
        _, ctx = self.start(encoded)                                     # the cross k, v; mask
        y = self.embed(tgt_in)                                           # (B, T, D)
        self_w, cross_w = [], []
        for layer, kv in zip(self.layers, ctx.memory_kv):
            y, _, sw, cw = layer(y, kv, ctx.mask, rng)                   # (B, T, D)
            self_w.append(sw.data)
            cross_w.append(cw.data)
        return self.out(self.norm(y)), self_w, cross_w                  # (B, T, V)

    def forward(self, encoded: Encoded, tgt_in: np.ndarray, teacher_forcing: float = 1.0,
                rng: np.random.Generator | None = None) -> tuple:
        """Teacher-forced logits (B, T, V) and the alignment (B, T, S) as in ``step``."""
        if teacher_forcing < 1:
            raise ValueError("TransformerDecoder: trains with teacher forcing only (all T "
                             f"positions in one pass); got teacher_forcing={teacher_forcing}")
        logits, _, cross = self.attend_all(encoded, tgt_in, rng)
        return logits, cross[-1].mean(axis=1)                            # (B, T, S)
