"""Recurrent cells: GRU and LSTM with ``torch.nn.GRUCell`` / ``torch.nn.LSTMCell``'s equations,
parameter names and weight layout, composed from minigrad ops (autograd derives the backward,
so ``create_graph=True`` works through them).

Shape letters: B batch, I input size, H hidden size.

Layout (as PyTorch, so weights copy across unchanged), all initialised U(−1/√H, 1/√H):

    GRUCell:  weight_ih (3H, I), weight_hh (3H, H), bias_ih (3H,), bias_hh (3H,), rows r | z | n
    LSTMCell: weight_ih (4H, I), weight_hh (4H, H), bias_ih (4H,), bias_hh (4H,), rows i | f | g | o

Called as PyTorch calls them; a state left out is all zeros:

    h = gru(x, h)              # x (B, I), h (B, H)
    h, c = lstm(x, (h, c))

A call is ``step(W_ih x + b_ih, state)``: the input projection does not read the state, and
``step`` is the recurrence, so a caller that knows the projection already can run ``step`` alone
(the kernels in ``models/kernels.py`` do; ``FusedGRUCell`` replaces ``step`` by one op).
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import functional as F, init
from minigrad.nn import Module, Parameter, check_sizes


class GRUCell(Module):
    """Gated recurrent unit, ``torch.nn.GRUCell``'s equations (``reset_after=True``)::

        r  = σ(W_ir x + b_ir + W_hr h + b_hr)            reset gate
        z  = σ(W_iz x + b_iz + W_hz h + b_hz)            update gate
        n  = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))   candidate
        h' = (1 − z) ⊙ n + z ⊙ h

    ``reset_after=False`` is the form of Cho et al. 2014 used in Bahdanau et al.'s paper: r acts
    on h *before* the matrix, ``n = tanh(W_in x + b_in + W_hn (r ⊙ h) + b_hn)``. Same parameters.
    """

    parts = ("h",)  # the state, as a call takes and returns it

    def __init__(self, input_size: int, hidden_size: int, reset_after: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        self.input_size, self.hidden_size, self.reset_after = input_size, hidden_size, reset_after
        _init_weights(self, 3, init.generator("GRUCell", rng), dtype)

    def forward(self, x, h=None) -> mg.Tensor:
        """h' (B, H) from x (B, I) and h (B, H)."""
        h = _zeros(self, x) if h is None else h
        _check(self, x, h)
        return self.step(F.linear(x, self.weight_ih, self.bias_ih), h)  # gi = W_ih x + b_ih (B, 3H)

    def step(self, gi, h) -> mg.Tensor:
        """h' from the projected input gi (B, 3H), blocks r | z | n, and h (B, H)."""
        H, W, b = self.hidden_size, self.weight_hh, self.bias_hh
        if self.reset_after:
            gh = F.linear(h, W, b)                                   # (B, 3H) = W_hh h + b_hh
        else:  # r acts on h before W_hn: only the rows of r and z here
            gh = F.linear(h, W[:2 * H], b[:2 * H])                   # (B, 2H)
        rz = mg.sigmoid(gi[:, :2 * H] + gh[:, :2 * H])               # (B, 2H): r | z
        r, z = rz[:, :H], rz[:, H:]                                  # (B, H) each
        if self.reset_after:
            n = mg.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])           # (B, H)
        else:
            n = mg.tanh(gi[:, 2 * H:] + F.linear(r * h, W[2 * H:], b[2 * H:]))  # (B, H)
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
        """(h', c'), each (B, H), from x (B, I) and state (h, c)."""
        state = (_zeros(self, x), _zeros(self, x)) if state is None else state
        _check(self, x, state)
        return self.step(F.linear(x, self.weight_ih, self.bias_ih), state)  # gi (B, 4H)

    def step(self, gi, state: tuple) -> tuple:
        """(h', c') from the projected input gi (B, 4H), blocks i | f | g | o, and (h, c)."""
        (h, c), H = state, self.hidden_size
        gates = gi + F.linear(h, self.weight_hh, self.bias_hh)   # (B, 4H)
        sig = mg.sigmoid(gates)                                  # (B, 4H); its g block is unused
        i, f, o = sig[:, :H], sig[:, H:2 * H], sig[:, 3 * H:]    # (B, H) each
        g = mg.tanh(gates[:, 2 * H:3 * H])                       # (B, H)
        c = f * c + i * g                                        # c' (B, H)
        return o * mg.tanh(c), c                                 # h' (B, H), c' (B, H)


# ---- construction and the checks at the entry (not part of the equations) --------------------

def _init_weights(cell, gates: int, rng: np.random.Generator, dtype) -> None:
    """weight_ih (G, I), weight_hh (G, H), bias_ih and bias_hh (G,), G = gates·H, U(±1/√H)."""
    I, H = cell.input_size, cell.hidden_size
    check_sizes(type(cell).__name__, input_size=I, hidden_size=H)
    cell.weight_ih = Parameter(init.uniform(rng, H, (gates * H, I), dtype))
    cell.weight_hh = Parameter(init.uniform(rng, H, (gates * H, H), dtype))
    cell.bias_ih = Parameter(init.uniform(rng, H, (gates * H,), dtype))
    cell.bias_hh = Parameter(init.uniform(rng, H, (gates * H,), dtype))


def _zeros(cell, x) -> mg.Tensor:
    """The all-zero (B, H) state part for the batch of ``x``."""
    return mg.Tensor(np.zeros((x.shape[0], cell.hidden_size), dtype=cell.weight_hh.dtype))


def _check(cell, x, state) -> None:
    """Raise, naming the cell, unless ``state`` has the cell's form (h, or the tuple (h, c)) and
    x (B, I) and every part (B, H) fit its sizes."""
    who, pair = type(cell).__name__, len(cell.parts) > 1
    parts = state if isinstance(state, tuple) else (state,)
    if isinstance(state, tuple) != pair or len(parts) != len(cell.parts):
        want = f"the tuple ({', '.join(cell.parts)})" if pair else "h, one tensor (B, H)"
        got = f"a tuple of {len(state)}" if isinstance(state, tuple) else type(state).__name__
        raise TypeError(f"{who}: the state must be {want}, as in torch.nn.{who}; got {got}")
    if x.shape[-1] != cell.input_size:
        raise ValueError(f"{who}: input of shape {tuple(x.shape)} has last dim {x.shape[-1]}, "
                         f"but weight_ih expects input_size={cell.input_size}")
    for name, part in zip(cell.parts, parts):
        if part.shape[-1:] != (cell.hidden_size,):
            raise ValueError(f"{who}: {name} of shape {tuple(part.shape)} does not fit "
                             f"hidden_size={cell.hidden_size}")
