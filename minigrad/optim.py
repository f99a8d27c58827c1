"""Optimizers (PyTorch's update rules) and gradient clipping. ``state_dict()`` gives an
optimizer's state as plain arrays and ``load_state_dict`` restores it, so a run resumes exactly.
Hyperparameters are read as Python floats, so NumPy float64 ones keep float32 float32.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.engine import Tensor


def _number(who: str, name: str, value, interval: str):
    """``value`` if a real number in ``interval``, written as the error shows it: "[0, 1)" (a NaN
    or negative lr would poison every update)."""
    low, high = map(float, interval[1:-1].split(", "))
    real = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    v = float(value) if real else math.nan
    if not ((v > low if interval[0] == "(" else v >= low) and
            (v < high if interval[-1] == ")" else v <= high)):
        raise ValueError(f"{who}: {name} must be a number in {interval}, got {value!r}")
    return value


class Optimizer:
    def __init__(self, params, lr: float):
        who = type(self).__name__
        self.params = list(params)
        if not self.params:
            raise ValueError(f"{who}: got an empty parameter list")
        first = {}  # id -> first index: a parameter listed twice would be stepped twice
        for i, p in enumerate(self.params):
            if first.setdefault(id(p), i) != i:
                raise ValueError(f"{who}: parameter {i} (shape {p.shape}) is parameter "
                                 f"{first[id(p)]} again; list each parameter once")
        self.lr = _number(who, "lr", lr, "[0, inf)")

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None


def _state_array(who: str, state: dict, key: str, p: Tensor, i: int) -> np.ndarray:
    """``state[key]``, the state of parameter ``i``, of its shape, copied in its dtype."""
    if np.shape(state[key]) != p.shape:
        raise ValueError(f"{who}.load_state_dict: {key} has shape {np.shape(state[key])}, "
                         f"parameter {i} has {p.shape}")
    return np.array(state[key], dtype=p.data.dtype)


class SGD(Optimizer):
    """p ← p − lr·v with v = μ v + (g + λ p) (momentum μ, weight decay λ), as torch.optim.SGD."""

    def __init__(self, params, lr: float, momentum: float = 0.0, weight_decay: float = 0.0):
        super().__init__(params, lr)
        self.momentum = _number("SGD", "momentum", momentum, "[0, 1]")
        self.weight_decay = _number("SGD", "weight_decay", weight_decay, "[0, inf)")
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
        """Restore the velocities (a parameter never stepped with momentum has none)."""
        names = [f"velocity.{i}" for i in range(len(self.params))]
        if set(state) - set(names):
            raise ValueError(f"SGD.load_state_dict: unexpected entries "
                             f"{sorted(set(state) - set(names))}")
        self.velocity = [_state_array("SGD", state, k, p, i) if k in state else None
                         for i, (k, p) in enumerate(zip(names, self.params))]


class Adam(Optimizer):
    """Adam (Kingma & Ba), PyTorch's update including bias correction:

        m ← β1 m + (1 − β1) g,   v ← β2 v + (1 − β2) g²
        p ← p − lr · (m / (1 − β1ᵗ)) / (√(v / (1 − β2ᵗ)) + ε)
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        super().__init__(params, lr)
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"Adam: betas must be a pair (beta1, beta2), got {betas!r}")
        self.betas = (_number("Adam", "beta1", betas[0], "[0, 1)"),
                      _number("Adam", "beta2", betas[1], "[0, 1)"))
        self.eps = _number("Adam", "eps", eps, "(0, inf)")
        self.weight_decay = _number("Adam", "weight_decay", weight_decay, "[0, inf)")
        self.t = 0
        self.m = [np.zeros_like(p.data) for p in self.params]
        self.v = [np.zeros_like(p.data) for p in self.params]

    def step(self) -> None:
        self.t += 1
        b1, b2 = map(float, self.betas)
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
            denom = np.sqrt(v) / math.sqrt(c2)
            denom += eps
            p.data -= (lr / c1) * (m / denom)

    def state_dict(self) -> dict:
        state = {"t": np.array(self.t)}
        for i, (m, v) in enumerate(zip(self.m, self.v)):
            state[f"m.{i}"], state[f"v.{i}"] = m.copy(), v.copy()
        return state

    def load_state_dict(self, state: dict) -> None:
        """Restore t, m and v; nothing changes unless every entry fits (finite, v ≥ 0)."""
        n = len(self.params)
        need = {"t"} | {f"{k}.{i}" for i in range(n) for k in "mv"}
        if set(state) != need:
            raise ValueError(f"Adam.load_state_dict: expected entries t, m.0..m.{n-1}, "
                             f"v.0..v.{n-1}; missing {sorted(need - set(state))}, "
                             f"unexpected {sorted(set(state) - need)}")
        t = np.asarray(state["t"])
        if t.shape != () or t.dtype.kind not in "iu" or not 0 <= int(t) < 2 ** 62:
            raise ValueError(f"Adam.load_state_dict: the step count t must be an int >= 0, "
                             f"got {t!r}")
        m = [_state_array("Adam", state, f"m.{i}", p, i) for i, p in enumerate(self.params)]
        v = [_state_array("Adam", state, f"v.{i}", p, i) for i, p in enumerate(self.params)]
        if not all(np.isfinite(a).all() for a in m + v) or not all((a >= 0).all() for a in v):
            raise ValueError("Adam.load_state_dict: m and v must be finite, and v >= 0")
        self.m, self.v, self.t = m, v, int(t)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0):
    """Scale all gradients by min(1, max_norm / ‖g‖), ‖g‖ the ``norm_type``-norm of all of them
    together, and return ‖g‖ (a 0-d Tensor), as ``torch.nn.utils.clip_grad_norm_``. A non-finite
    ‖g‖ raises and changes nothing (PyTorch's ``error_if_nonfinite=True``)."""
    _number("clip_grad_norm_", "max_norm", max_norm, "(0, inf]")
    p_norm = _number("clip_grad_norm_", "norm_type", norm_type, "(0, inf]")
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    params = [p for p in params if p.grad is not None]
    grads = [np.abs(np.ravel(p.grad)) for p in params]
    if p_norm == math.inf:
        total = max((float(g.max()) for g in grads if g.size), default=0.0)
    else:
        total = float(sum(float((g ** p_norm).sum()) for g in grads) ** (1.0 / p_norm))
    if not math.isfinite(total):
        raise FloatingPointError(f"clip_grad_norm_: the total gradient norm is {total}; the "
                                 f"gradients were left unchanged (find the op with "
                                 f"detect_anomaly())")
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for p in params:
            p.grad = np.asarray(p.grad * coef)  # a new array: .grad may be shared, or 0-d
    return Tensor(np.asarray(total, dtype=params[0].grad.dtype if params else np.float64))
