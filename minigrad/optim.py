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


class SGD(Optimizer):
    """p ← p − lr·v with v = μ v + (g + λ p) (momentum μ, weight decay λ), as torch.optim.SGD."""

    def __init__(self, params, lr: float, momentum: float = 0.0, weight_decay: float = 0.0):
        super().__init__(params, lr)
        self.momentum, self.weight_decay = momentum, weight_decay
        self.velocity = [None] * len(self.params)

    def step(self) -> None:
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p.data if self.weight_decay else p.grad
            if self.momentum:
                v = self.velocity[i]
                self.velocity[i] = g.copy() if v is None else self.momentum * v + g
                g = self.velocity[i]
            p.data -= self.lr * g

    def state_dict(self) -> dict:
        return {f"velocity.{i}": v for i, v in enumerate(self.velocity) if v is not None}

    def load_state_dict(self, state: dict) -> None:
        self.velocity = [state.get(f"velocity.{i}") for i in range(len(self.params))]


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
        b1, b2 = self.betas
        c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p.data if self.weight_decay else p.grad
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * (g * g)
            denom = np.sqrt(v) / math.sqrt(c2)  # a Python float keeps float32 float32
            denom += self.eps
            p.data -= (self.lr / c1) * (m / denom)

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
        for i, p in enumerate(self.params):
            for k, store in (("m", self.m), ("v", self.v)):
                if np.shape(state[f"{k}.{i}"]) != p.shape:
                    raise ValueError(f"Adam.load_state_dict: {k}.{i} has shape "
                                     f"{np.shape(state[f'{k}.{i}'])}, parameter {i} has {p.shape}")
                store[i] = np.array(state[f"{k}.{i}"], dtype=p.data.dtype)
        self.t = int(state["t"])


def clip_grad_norm(params, max_norm: float) -> float:
    """Scale all gradients by min(1, max_norm / ‖g‖) where ‖g‖ is the global L2 norm over
    every parameter's gradient. Returns ‖g‖ before clipping (as torch.nn.utils.clip_grad_norm_)."""
    grads = [p.grad for p in params if p.grad is not None]
    total = float(np.sqrt(sum(float(np.vdot(g, g)) for g in grads)))
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g *= coef
    return total
