"""Attention cost over the source length S, for a fixed number of decoder steps T.

The reference decoder's attention, alone: T = 20 steps, each scoring B = 64 queries (H = 64)
against S keys with the additive score of width A = 64 (keys K = 128 wide, their projection
``W_k h + b`` computed once, as the decoder does) and reading the context with the fused read;
then backward through all T steps. The last 15% of the positions of half the batch are padding.
Attention touches every (query, key) pair once per step, so for fixed T its cost should grow
linearly in S: ``exponent`` fits t ∝ S^p and p ≈ 1 means linear.

    fn = build(S=100, dtype="float32")           # fn() = forward + backward of the T steps
    fn = build_torch(S=100, dtype="float32")     # the same in PyTorch eager (same inputs)
"""
from __future__ import annotations

import math

import numpy as np

import minigrad as mg
from attention import AdditiveScore, Attention

B, T, H, K, A = 64, 20, 64, 128, 64
SIZES = (20, 50, 100, 200, 400)


def inputs(S: int, dtype: str, seed: int = 0) -> dict:
    """Queries (T, B, H), keys (B, S, K), mask (B, S), seeds (T, B, K), score weights."""
    rng = np.random.default_rng([seed, S])
    score = AdditiveScore(H, K, A, bias=True, rng=rng, dtype=dtype)
    mask = np.ones((B, S), dtype=bool)
    mask[B // 2:, S - max(1, (15 * S) // 100):] = False
    return {"queries": rng.standard_normal((T, B, H)).astype(dtype),
            "keys": rng.standard_normal((B, S, K)).astype(dtype), "mask": mask,
            "seeds": rng.standard_normal((T, B, K)).astype(dtype),
            "weights": {n: p.data for n, p in score.named_parameters()}, "score": score}


def build(S: int, dtype: str = "float32", seed: int = 0):
    """Forward + backward of T attention steps in minigrad; returns the keys' gradient."""
    x = inputs(S, dtype, seed)
    attention = Attention(x["score"])
    keys = mg.tensor(x["keys"], requires_grad=True)
    queries = [mg.tensor(q, requires_grad=True) for q in x["queries"]]

    def run() -> np.ndarray:
        keys.grad = None
        projected = attention.project_keys(keys)                      # (B, S, A), once
        total = None
        for q, g in zip(queries, x["seeds"]):
            c, _ = attention(q, keys, mask=x["mask"], projected=projected)  # (B, K)
            term = (c * g).sum()
            total = term if total is None else total + term
        total.backward()
        return keys.grad
    return run


def build_torch(S: int, dtype: str = "float32", seed: int = 0):
    """The same T steps in PyTorch eager (the twin of ``TorchBahdanau.step``'s attention)."""
    import torch
    x = inputs(S, dtype, seed)
    w = {n: torch.from_numpy(a.copy()).requires_grad_() for n, a in x["weights"].items()}
    keys = torch.from_numpy(x["keys"]).requires_grad_()
    queries = [torch.from_numpy(q).requires_grad_() for q in x["queries"]]
    seeds = [torch.from_numpy(g) for g in x["seeds"]]
    mask = torch.from_numpy(x["mask"])

    def run():
        keys.grad = None
        projected = keys @ w["W_k"].T + w["b"]                        # (B, S, A)
        total = 0
        for q, g in zip(queries, seeds):
            e = torch.tanh((q @ w["W_q"].T)[:, None, :] + projected) @ w["v"]  # (B, S)
            alpha = torch.softmax(e.masked_fill(~mask, float("-inf")), dim=-1)
            c = torch.bmm(alpha[:, None, :], keys)[:, 0]               # (B, K)
            total = total + (c * g).sum()
        total.backward()
        return keys.grad.numpy()
    return run


def exponent(sizes, seconds) -> float:
    """p of the least-squares fit log t = p log S + c: 1 for linear growth."""
    xs, ys = [math.log(s) for s in sizes], [math.log(t) for t in seconds]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((a - mx) * (b - my) for a, b in zip(xs, ys)) / sum((a - mx) ** 2 for a in xs)
