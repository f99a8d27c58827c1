"""Recurrent cells: GRU and LSTM, with ``torch.nn.GRUCell`` / ``torch.nn.LSTMCell``'s equations,
parameter names and weight layout. The LSTM step is composed from minigrad ops (so backward
comes for free); the GRU step is, by default, one fused op with a hand-written backward, and
its composed version is kept as the reference (see the last paragraph).

Shape letters: B batch, I input size, H hidden size.

Layout (as PyTorch, so weights can be copied across unchanged):

    GRUCell:  weight_ih (3H, I), weight_hh (3H, H), bias_ih (3H,), bias_hh (3H,), rows r | z | n
    LSTMCell: weight_ih (4H, I), weight_hh (4H, H), bias_ih (4H,), bias_hh (4H,), rows i | f | g | o

All initialised U(−1/√H, 1/√H), as PyTorch does.

One interface for every cell. The state is always a tuple whose first element is the hidden
state h (B, H) that the layers above read: ``(h,)`` for the GRU, ``(h, c)`` for the LSTM.
``zero_state(B)`` is all zeros; ``initial_state(h_0)`` is the state with hidden part h_0 (an
LSTM's memory c starts at 0). A decoder therefore never needs to know which cell it holds.

Each cell splits its work in two: ``project_input(x) = W_ih x + b_ih`` does not depend on the
recurrence, so a caller that knows all inputs up front can compute it once for every step (the
encoder projects its embedding table once per batch); ``step(gi, state) -> state`` does the
rest. ``forward(x, state)`` is simply ``step(project_input(x), state)``.

``GRUCell.step`` runs, by default, the fused op of ``models.fused``: one graph node with a
hand-written backward (a reference training step takes 0.74-0.78 of the time it takes with
the composed cell; benchmarks/README.md). ``composed_step`` is the same step composed from
minigrad ops, the readable reference that the tests hold the fused op to;
``GRUCell(..., fused=False)`` uses it.
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import functional as F, init
from minigrad.nn import Module, Parameter

from models.fused import gru_step


class RecurrentCell(Module):
    """The cell interface (see the module docstring) and the parameters of a cell with
    ``gates`` stacked gate blocks. Subclasses define ``initial_state`` and ``step``."""

    gates = 0
    parts = ()  # the names of the state's tensors, h first

    def __init__(self, input_size: int, hidden_size: int, rng: np.random.Generator | None = None,
                 dtype=np.float64):
        rng = init.generator(type(self).__name__, rng)
        H, G = hidden_size, self.gates * hidden_size  # every block U(±1/√H), as PyTorch
        self.input_size, self.hidden_size = input_size, hidden_size
        self.weight_ih = Parameter(init.uniform(rng, H, (G, input_size), dtype))
        self.weight_hh = Parameter(init.uniform(rng, H, (G, hidden_size), dtype))
        self.bias_ih = Parameter(init.uniform(rng, H, (G,), dtype))
        self.bias_hh = Parameter(init.uniform(rng, H, (G,), dtype))

    def project_input(self, x) -> mg.Tensor:
        """gi = W_ih x + b_ih: the part of every gate that the recurrence does not touch."""
        if x.shape[-1] != self.input_size:
            raise ValueError(f"{type(self).__name__}: input of shape {tuple(x.shape)} has last dim "
                             f"{x.shape[-1]}, but weight_ih expects input_size={self.input_size}")
        return F.linear(x, self.weight_ih, self.bias_ih)  # (B, G)

    def zero_state(self, batch: int) -> tuple:
        """The all-zero state for a batch of ``batch``."""
        zeros = np.zeros((batch, self.hidden_size), dtype=self.weight_hh.dtype)  # (B, H)
        return self.initial_state(mg.Tensor(zeros))

    def forward(self, x, state: tuple | None = None) -> tuple:
        """One step from input ``x (B, I)``; ``state`` None means zeros."""
        if state is None:
            state = self.zero_state(x.shape[0])
        return self.step(self.project_input(x), state)

    def _checked(self, state) -> tuple:
        """``state`` if it is a tuple of the cell's parts (``parts``) whose h fits; else raise."""
        if not isinstance(state, tuple) or len(state) != len(self.parts):
            parts = ", ".join(self.parts) + ("," if len(self.parts) == 1 else "")
            got = f"a tuple of {len(state)}" if isinstance(state, tuple) else type(state).__name__
            raise TypeError(f"{type(self).__name__}: state must be the tuple ({parts}) that "
                            f"zero_state or initial_state gives, got {got}")
        h = state[0]
        if h.shape[-1] != self.hidden_size:
            raise ValueError(f"{type(self).__name__}: hidden state of shape {tuple(h.shape)} does "
                             f"not fit hidden_size={self.hidden_size}")
        return state


class GRUCell(RecurrentCell):
    """Gated recurrent unit, ``torch.nn.GRUCell``'s equations (``reset_after=True``)::

        r  = σ(W_ir x + b_ir + W_hr h + b_hr)            reset gate
        z  = σ(W_iz x + b_iz + W_hz h + b_hz)            update gate
        n  = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))   candidate
        h' = (1 − z) ⊙ n + z ⊙ h

    ``reset_after=False`` is the form of Cho et al. 2014 used in Bahdanau et al.'s paper: the
    reset gate acts on h *before* the matrix, ``n = tanh(W_in x + b_in + W_hn (r ⊙ h) + b_hn)``.
    The parameters are the same; the two forms differ only in where r is applied.
    ``fused`` chooses how ``step`` computes (the same numbers either way, see the module doc).
    """

    gates, parts = 3, ("h",)

    def __init__(self, input_size: int, hidden_size: int, reset_after: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64, fused: bool = True):
        super().__init__(input_size, hidden_size, rng, dtype)
        self.reset_after, self.fused = reset_after, fused

    def initial_state(self, h0) -> tuple:
        """``(h_0,)``: a GRU's state is its hidden state alone."""
        return (h0,)

    def step(self, gi, state: tuple) -> tuple:
        """``(h',)`` from the projected input ``gi = W_ih x + b_ih (B, 3H)`` and ``(h,)``."""
        if not self.fused:
            return self.composed_step(gi, state)
        (h,) = self._checked(state)                               # (B, H)
        return (gru_step(gi, h, self.weight_hh, self.bias_hh, self.reset_after),)  # (B, H)

    def composed_step(self, gi, state: tuple) -> tuple:
        """``step`` composed from minigrad ops: the reference the fused op is tested against."""
        (h,) = self._checked(state)                               # (B, H)
        H = self.hidden_size
        if self.reset_after:
            gh = F.linear(h, self.weight_hh, self.bias_hh)        # (B, 3H)
            rz = mg.sigmoid(gi[:, :2 * H] + gh[:, :2 * H])        # (B, 2H): r | z in one op
            r, z = rz[:, :H], rz[:, H:]                           # (B, H) each
            n = mg.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])        # (B, H)
        else:
            W_rz, W_n = self.weight_hh[:2 * H], self.weight_hh[2 * H:]  # (2H, H), (H, H)
            b_rz, b_n = self.bias_hh[:2 * H], self.bias_hh[2 * H:]      # (2H,), (H,)
            rz = mg.sigmoid(gi[:, :2 * H] + F.linear(h, W_rz, b_rz))  # (B, 2H)
            r, z = rz[:, :H], rz[:, H:]                               # (B, H) each
            n = mg.tanh(gi[:, 2 * H:] + F.linear(r * h, W_n, b_n))   # (B, H)
        return (n + z * (h - n),)  # h' (B, H); = (1 − z) ⊙ n + z ⊙ h with one op fewer


class LSTMCell(RecurrentCell):
    """Long short-term memory, ``torch.nn.LSTMCell``'s equations; the state is ``(h, c)``::

        i = σ(W_ii x + b_ii + W_hi h + b_hi)     input gate
        f = σ(W_if x + b_if + W_hf h + b_hf)     forget gate
        g = tanh(W_ig x + b_ig + W_hg h + b_hg)  cell candidate
        o = σ(W_io x + b_io + W_ho h + b_ho)     output gate
        c' = f ⊙ c + i ⊙ g,   h' = o ⊙ tanh(c')
    """

    gates, parts = 4, ("h", "c")

    def initial_state(self, h0) -> tuple:
        """``(h_0, c_0 = 0)``: the memory starts empty."""
        return h0, mg.Tensor(np.zeros(h0.shape, dtype=h0.dtype))

    def step(self, gi, state: tuple) -> tuple:
        """(h', c') from the projected input ``gi (B, 4H)`` and ``state = (h, c)``."""
        h, c = self._checked(state)                              # (B, H) each
        H = self.hidden_size
        gates = gi + F.linear(h, self.weight_hh, self.bias_hh)   # (B, 4H)
        sig = mg.sigmoid(gates)                                  # (B, 4H); its g block is unused
        i, f, o = sig[:, :H], sig[:, H:2 * H], sig[:, 3 * H:]    # (B, H) each
        g = mg.tanh(gates[:, 2 * H:3 * H])                       # (B, H)
        c = f * c + i * g                                        # (B, H)
        return o * mg.tanh(c), c                                 # h' (B, H), c' (B, H)
