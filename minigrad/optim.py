"""Optimizers (PyTorch's update rules) and gradient clipping.

Each optimizer holds the parameters it updates and its own state; ``state_dict()`` returns
that state as plain arrays (for ``minigrad.save``) and ``load_state_dict`` restores it, so a
run can be resumed exactly.
"""
from __future__ import annotations

import math

import numpy as np


class Optimizer:
    def __init__(self, params, lr: float):
        self.params = list(params)
        if not self.params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        if lr < 0:
            raise ValueError(f"{type(self).__name__}: lr must be >= 0, got {lr}")
        self.lr = lr

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


def _state_array(who: str, state: dict, key: str, params: list, i: int) -> np.ndarray:
    """``state[key]``, the state of parameter ``i``, checked to have its shape and copied in
    its dtype."""
    value, p = state[key], params[i]
    if np.shape(value) != p.shape:
        raise ValueError(f"{who}.load_state_dict: {key} has shape {np.shape(value)}, "
                         f"parameter {i} has {p.shape}")
    return np.array(value, dtype=p.data.dtype)


class SGD(Optimizer):
    """p ← p − lr·v with v = μ v + (g + λ p) (momentum μ, weight decay λ), as torch.optim.SGD.

    Hyperparameters are read as Python floats, so a NumPy float64 one keeps float32 float32.
    """

    def __init__(self, params, lr: float, momentum: float = 0.0, weight_decay: float = 0.0):
        super().__init__(params, lr)
        self.momentum, self.weight_decay = momentum, weight_decay
        self.velocity = [None] * len(self.params)

    def step(self) -> None:
        lr, mu, wd = float(self.lr), float(self.momentum), float(self.weight_decay)
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad + wd * p.data if wd else p.grad
            if mu:
                v = self.velocity[i]
                self.velocity[i] = g.copy() if v is None else mu * v + g
                g = self.velocity[i]
            p.data -= lr * g

    def state_dict(self) -> dict:
        return {f"velocity.{i}": v for i, v in enumerate(self.velocity) if v is not None}

    def load_state_dict(self, state: dict) -> None:
        """Restore the velocities (a parameter never stepped with momentum has no entry);
        nothing changes unless every entry fits."""
        n = len(self.params)
        unexpected = sorted(set(state) - {f"velocity.{i}" for i in range(n)})
        if unexpected:
            raise ValueError(f"SGD.load_state_dict: unexpected entries {unexpected} "
                             f"(expected some of velocity.0..velocity.{n - 1})")
        self.velocity = [_state_array("SGD", state, f"velocity.{i}", self.params, i)
                         if f"velocity.{i}" in state else None for i in range(n)]


class Adam(Optimizer):
    """Adam (Kingma & Ba), PyTorch's update including bias correction:

        m ← β1 m + (1 − β1) g,   v ← β2 v + (1 − β2) g²
        p ← p − lr · (m / (1 − β1ᵗ)) / (√(v / (1 − β2ᵗ)) + ε)
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        super().__init__(params, lr)
        self.betas, self.eps, self.weight_decay = betas, eps, weight_decay
        self.t = 0
        self.m = [np.zeros_like(p.data) for p in self.params]
        self.v = [np.zeros_like(p.data) for p in self.params]

    def step(self) -> None:
        self.t += 1
        b1, b2 = map(float, self.betas)  # Python floats: NumPy float64 ones would upcast float32
        lr, eps, wd = float(self.lr), float(self.eps), float(self.weight_decay)
        c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            g = p.grad + wd * p.data if wd else p.grad
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * (g * g)
            denom = np.sqrt(v) / math.sqrt(c2)  # a Python float keeps float32 float32
            denom += eps
            p.data -= (lr / c1) * (m / denom)

    def state_dict(self) -> dict:
        state = {"t": np.array(self.t)}
        for i, (m, v) in enumerate(zip(self.m, self.v)):
            state[f"m.{i}"], state[f"v.{i}"] = m.copy(), v.copy()
        return state

    def load_state_dict(self, state: dict) -> None:
        n = len(self.params)
        need = {"t"} | {f"{k}.{i}" for i in range(n) for k in "mv"}
        if set(state) != need:
            raise ValueError(f"Adam.load_state_dict: expected entries t, m.0..m.{n-1}, v.0..v.{n-1}; "
                             f"missing {sorted(need - set(state))}, unexpected {sorted(set(state) - need)}")
        m = [_state_array("Adam", state, f"m.{i}", self.params, i) for i in range(n)]
        v = [_state_array("Adam", state, f"v.{i}", self.params, i) for i in range(n)]
        self.m, self.v, self.t = m, v, int(state["t"])


def clip_grad_norm(params, max_norm: float) -> float:
    """Scale all gradients by min(1, max_norm / ‖g‖) where ‖g‖ is the global L2 norm over
    every parameter's gradient. Returns ‖g‖ before clipping (as torch.nn.utils.clip_grad_norm_).

    A NaN or infinite ‖g‖ raises ``FloatingPointError`` and leaves the gradients untouched
    (PyTorch's ``error_if_nonfinite=True``): scaling by max_norm / inf would turn them into
    zeros or NaN, and the step after it would silently ruin the parameters.
    """
    params = [p for p in params if p.grad is not None]
    total = float(np.sqrt(sum(float(np.vdot(p.grad, p.grad)) for p in params)))
    if not math.isfinite(total):
        raise FloatingPointError(f"clip_grad_norm: the total gradient norm is {total}; the "
                                 f"gradients were left unchanged (find the op with detect_anomaly())")
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for p in params:
            p.grad = np.asarray(p.grad * coef)  # a new array: .grad may be shared, or 0-d
    return total
