"""Recurrent cells with ``torch.nn.GRUCell`` / ``torch.nn.LSTMCell``'s equations, calls
(``h = gru(x, h)``, ``h, c = lstm(x, (h, c))``; a state left out is zeros), parameter names and
layout (rows r | z | n, and i | f | g | o), composed from minigrad ops. Shape letters: B batch,
I input size, H hidden size. A call is ``step(W_ih x + b_ih, state)``: a caller that has the
input projection already runs ``step`` alone (the kernels in ``models/kernels.py`` do).
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

    ``reset_after=False`` is Cho et al. 2014's form, used in Bahdanau et al.'s paper:
    ``n = tanh(W_in x + b_in + W_hn (r ⊙ h) + b_hn)``. Same parameters.
    """

    parts = ("h",)  # the state, as a call takes and returns it

    def __init__(self, input_size: int, hidden_size: int, reset_after: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        self.input_size, self.hidden_size, self.reset_after = input_size, hidden_size, reset_after
        _init_weights(self, 3, init.generator("GRUCell", rng), dtype)

    def forward(self, x, h=None) -> mg.Tensor:
        h = _zeros(self, x) if h is None else h
        _check(self, x, h)
        return self.step(F.linear(x, self.weight_ih, self.bias_ih), h)  # gi = W_ih x + b_ih (B, 3H)

    def step(self, gi, h) -> mg.Tensor:
        """h' (B, H) from the projected input gi (B, 3H) and h (B, H)."""
        H, W, b = self.hidden_size, self.weight_hh, self.bias_hh
        if self.reset_after:
            gh = F.linear(h, W, b)                                   # (B, 3H) = W_hh h + b_hh
        else:
            gh = F.linear(h, W[:2 * H], b[:2 * H])                   # (B, 2H): r, z rows only
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
        state = (_zeros(self, x), _zeros(self, x)) if state is None else state
        _check(self, x, state)
        return self.step(F.linear(x, self.weight_ih, self.bias_ih), state)  # gi (B, 4H)

    def step(self, gi, state: tuple) -> tuple:
        """(h', c'), each (B, H), from the projected input gi (B, 4H) and (h, c)."""
        (h, c), H = state, self.hidden_size
        gates = gi + F.linear(h, self.weight_hh, self.bias_hh)   # (B, 4H)
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


def _check(cell, x, state) -> None:
    """The state's form (h, or the tuple (h, c)) and x (B, I), each part (B, H)."""
    who, parts = type(cell).__name__, state if isinstance(state, tuple) else (state,)
    if isinstance(state, tuple) != (len(cell.parts) > 1) or len(parts) != len(cell.parts):
        want = "the tuple (h, c)" if len(cell.parts) > 1 else "h, one tensor (B, H)"
        got = f"a tuple of {len(state)}" if isinstance(state, tuple) else type(state).__name__
        raise TypeError(f"{who}: the state must be {want}, as in torch.nn.{who}; got {got}")
    if [t.shape[-1] for t in (x, *parts)] != [cell.input_size] + [cell.hidden_size] * len(parts):
        got = ", ".join(f"{n} {tuple(t.shape)}" for n, t in zip(("x",) + cell.parts, (x, *parts)))
        raise ValueError(f"{who}: {got} do not fit input_size={cell.input_size}, "
                         f"hidden_size={cell.hidden_size}")
