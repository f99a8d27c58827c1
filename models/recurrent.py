"""The recurrent cells and the bidirectional encoder built from them.
Shape letters: B batch, I input, H hidden (per direction), S source length, V vocabulary,
E embedding.

The cells have ``torch.nn.GRUCell`` / ``torch.nn.LSTMCell``'s equations, calls
(``h = gru(x, h)``, ``h, c = lstm(x, (h, c))``; a state left out is zeros), parameter names
and layout (rows r | z | n, and i | f | g | o). A call checks its input, then runs
``step(W_ih x + b_ih, state)``; the models, whose input is checked already, run ``step``.

The encoder is Bahdanau et al.'s; each source position j gets an annotation
h_j = [→h_j ; ←h_j] (B, S, 2H), ``annotations[:, j − 1]``::

    →h_j = GRU(E x_j, →h_{j−1}),   ←h_j = GRU'(E x_j, ←h_{j+1}),   →h_0 = ←h_{S_b+1} = 0

At right-padding each direction keeps its state, so the backward one starts at each sequence's
last real token and real positions see what they would without padding; annotations at padding
are zero.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import minigrad as mg
from minigrad import functional as F, init
from minigrad.ops import as_tensor
from minigrad.nn import Embedding, Module, Parameter, check_sizes

from models.vocab import PAD


class GRUCell(Module):
    """Gated recurrent unit, ``torch.nn.GRUCell``'s equations (``reset_after=True``)::

        r  = σ(W_ir x + b_ir + W_hr h + b_hr)            reset gate
        z  = σ(W_iz x + b_iz + W_hz h + b_hz)            update gate
        n  = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))   candidate
        h' = (1 − z) ⊙ n + z ⊙ h

    ``reset_after=False`` is Cho et al. 2014's form, used in Bahdanau et al.'s paper:
    ``n = tanh(W_in x + b_in + W_hn (r ⊙ h) + b_hn)``. Same parameters.
    """

    parts = ("h",)  # the state, as a call takes and returns it

    def __init__(self, input_size: int, hidden_size: int, reset_after: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        self.input_size, self.hidden_size, self.reset_after = input_size, hidden_size, reset_after
        _init_weights(self, 3, init.generator("GRUCell", rng), dtype)

    def forward(self, x, h=None) -> mg.Tensor:
        x, h = _check(self, x, _zeros(self, x) if h is None else h)
        return self.step(F.linear_op(x, self.weight_ih, self.bias_ih), h)  # gi = W_ih x + b_ih

    def step(self, gi, h) -> mg.Tensor:
        """h' (B, H) from the projected input gi (B, 3H) and h (B, H)."""
        H, W, b = self.hidden_size, self.weight_hh, self.bias_hh
        gh = F.linear_op(h, W, b)                                    # (B, 3H) = W_hh h + b_hh
        rz = mg.sigmoid(gi[:, :2 * H] + gh[:, :2 * H])               # (B, 2H): r | z
        r, z = rz[:, :H], rz[:, H:]                                  # (B, H) each
        hn = (r * gh[:, 2 * H:] if self.reset_after                  # (B, H): r ⊙ (W_hn h + b_hn)
              else F.linear_op(r * h, W[2 * H:], b[2 * H:]))         # Cho: W_hn (r ⊙ h) + b_hn
        n = mg.tanh(gi[:, 2 * H:] + hn)                              # (B, H)
        return n + z * (h - n)                           # h' (B, H) = (1 − z) ⊙ n + z ⊙ h


class LSTMCell(Module):
    """Long short-term memory, ``torch.nn.LSTMCell``'s equations; the state is ``(h, c)``::

        i = σ(W_ii x + b_ii + W_hi h + b_hi)     input gate
        f = σ(W_if x + b_if + W_hf h + b_hf)     forget gate
        g = tanh(W_ig x + b_ig + W_hg h + b_hg)  cell candidate
        o = σ(W_io x + b_io + W_ho h + b_ho)     output gate
        c' = f ⊙ c + i ⊙ g,   h' = o ⊙ tanh(c')
    """

    parts = ("h", "c")

    def __init__(self, input_size: int, hidden_size: int,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        self.input_size, self.hidden_size = input_size, hidden_size
        _init_weights(self, 4, init.generator("LSTMCell", rng), dtype)

    def forward(self, x, state: tuple | None = None) -> tuple:
        x, *state = _check(self, x, (_zeros(self, x),) * 2 if state is None else state)
        return self.step(F.linear_op(x, self.weight_ih, self.bias_ih), state)  # gi (B, 4H)

    def step(self, gi, state: tuple) -> tuple:
        """(h', c'), each (B, H), from the projected input gi (B, 4H) and (h, c)."""
        (h, c), H = state, self.hidden_size
        gates = gi + F.linear_op(h, self.weight_hh, self.bias_hh)  # (B, 4H)
        sig = mg.sigmoid(gates)                                  # (B, 4H); its g block is unused
        i, f, o = sig[:, :H], sig[:, H:2 * H], sig[:, 3 * H:]    # (B, H) each
        g = mg.tanh(gates[:, 2 * H:3 * H])                       # (B, H)
        c = f * c + i * g                                        # c' (B, H)
        return o * mg.tanh(c), c                                 # h' (B, H), c' (B, H)


def _init_weights(cell, gates: int, rng: np.random.Generator, dtype) -> None:
    """weight_ih (G, I), weight_hh (G, H), bias_ih and bias_hh (G,), G = gates·H, U(±1/√H)."""
    I, H = cell.input_size, cell.hidden_size
    check_sizes(type(cell).__name__, input_size=I, hidden_size=H)
    cell.weight_ih = Parameter(init.uniform(rng, H, (gates * H, I), dtype))
    cell.weight_hh = Parameter(init.uniform(rng, H, (gates * H, H), dtype))
    cell.bias_ih = Parameter(init.uniform(rng, H, (gates * H,), dtype))
    cell.bias_hh = Parameter(init.uniform(rng, H, (gates * H,), dtype))


def _zeros(cell, x) -> mg.Tensor:
    return mg.Tensor(np.zeros((x.shape[0], cell.hidden_size), dtype=cell.weight_hh.dtype))  # (B, H)


def _check(cell, x, state) -> tuple:
    """x (B, I) and the state's parts (h, or the tuple (h, c)), each (B, H), as Tensors."""
    parts = state if isinstance(state, tuple) else (state,)
    x, *parts = (as_tensor(t, cell.weight_hh) for t in (x, *parts))
    form = [isinstance(state, tuple)] + [t.data.shape[-1:] for t in (x, *parts)]  # tuple?, I, H…
    if form != [len(cell.parts) > 1, (cell.input_size,)] + [(cell.hidden_size,)] * len(cell.parts):
        _refuse_state(cell, state, x, parts)
    return (x, *parts)


def _refuse_state(cell, state, x, parts):
    who = type(cell).__name__
    if isinstance(state, tuple) != (len(cell.parts) > 1) or len(parts) != len(cell.parts):
        want = "the tuple (h, c)" if len(cell.parts) > 1 else "h, one tensor (B, H)"
        got = f"a tuple of {len(state)}" if isinstance(state, tuple) else type(state).__name__
        raise TypeError(f"{who}: the state must be {want}, as in torch.nn.{who}; got {got}")
    got = ", ".join(f"{n} {tuple(t.shape)}" for n, t in zip(("x",) + cell.parts, (x, *parts)))
    raise ValueError(f"{who}: {got} do not fit input_size={cell.input_size}, "
                     f"hidden_size={cell.hidden_size}")


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
        """Ids ``src (B, S)`` and ``mask`` (None: src != PAD), checked; ``rng`` unused."""
        mask = src != PAD if mask is None else mask                        # (B, S)
        x = self.embedding(src)                                            # E x_j (B, S, E)
        fwd = self.run(self.forward_cell, x, mask, range(src.shape[1]))    # S × →h_j (B, H)
        bwd = self.run(self.backward_cell, x, mask, range(src.shape[1])[::-1])  # S × ←h_j (B, H)
        return annotate(fwd, bwd, mask)

    def run(self, cell: GRUCell, x, mask, order) -> list:
        """One direction over the positions in ``order``, the state held at padding."""
        h = mg.Tensor(np.zeros((x.shape[0], self.hidden_size), dtype=x.dtype))  # h_0 = 0 (B, H)
        states = [None] * x.shape[1]
        for j in order:
            new = cell.step(F.linear_op(x[:, j], cell.weight_ih, cell.bias_ih), h)  # (B, H)
            real = mask[:, j]                                              # (B,)
            h = new if real.all() else mg.where(real[:, None], new, h)     # held at padding
            states[j] = h
        return states


def annotate(fwd: list, bwd: list, mask: np.ndarray) -> Encoded:
    """Annotations by position, and final = [→h_{S_b} ; ←h_1] (→h is held over the padding)."""
    annotations = mg.concatenate([mg.stack(fwd, axis=1), mg.stack(bwd, axis=1)],
                                 axis=2)                                       # (B, S, 2H)
    if not mask.all():
        annotations = mg.where(mask[:, :, None], annotations, 0.0)       # (B, S, 2H)
    final = mg.concatenate([fwd[-1], bwd[0]], axis=1)                     # (B, 2H)
    return Encoded(annotations, mask, final)
