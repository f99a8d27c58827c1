"""The floor: the reference training step (``benchmarks/reference.py``) written by hand in plain
NumPy, forward, backward and Adam, the way one writes it without an autograd engine.

Batch-major arrays, a Python loop over time forward and back, a cache of what each step needs,
the weight gradients summed step by step, the input projections of the encoder done for all
positions at once, matmul (not einsum) for the products, each embedding's gradient scattered
once (``np.add.at``). No engine, no graph, no checks: what it costs is the arithmetic and the
loop, so ``minigrad / floor`` is what the engine and the glue cost. Its loss and gradients equal
the core model's (``tests/benchmarks/test_floor.py``, 1e-10 in float64).

Also ``loss_fn(params, batch, xp)``: the forward alone as a pure function of a dict of arrays,
for HIPS autograd (``xp = autograd.numpy``) and MyGrad (``xp = mygrad``) to differentiate.

Shape letters: B batch, S source length, T target length, V vocabulary, E embedding, H hidden,
G = 3H gate width, K = 2H annotation width, A attention width.
"""
from __future__ import annotations

import math

import numpy as np

from benchmarks import reference as ref
from models.seq2seq import decoder_inputs


def params_of(model) -> dict:
    """The model's parameters by state_dict name, copied (the floor updates its own)."""
    return {k: np.array(v) for k, v in model.state_dict().items()}


def sig(x):
    return 0.5 * (1 + np.tanh(0.5 * x))


def gru(gi, h, W, b):
    """One GRU step (reset after); returns h' and the cache for ``gru_back``."""
    H = h.shape[1]
    gh = h @ W.T + b                                                      # (B, G)
    r = sig(gi[:, :H] + gh[:, :H])
    z = sig(gi[:, H:2 * H] + gh[:, H:2 * H])
    n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    return (1 - z) * n + z * h, (h, r, z, n, gh[:, 2 * H:])


def gru_back(dh, cache, W, grads, prefix):
    """∂L/∂gi (B, G) and ∂L/∂h (B, H); adds into grads[prefix + weight_hh / bias_hh]."""
    h, r, z, n, ghn = cache
    dn = dh * (1 - z) * (1 - n * n)
    dz = dh * (h - n) * z * (1 - z)
    dr = dn * ghn * r * (1 - r)
    dgh = np.concatenate([dr, dz, dn * r], axis=1)                        # (B, G)
    grads[prefix + "weight_hh"] += dgh.T @ h
    grads[prefix + "bias_hh"] += dgh.sum(0)
    return np.concatenate([dr, dz, dn], axis=1), dgh @ W + dh * z


def loss_and_grads(p: dict, batch) -> tuple:
    """(loss, {name: ∂L/∂param}) of the reference loss on ``batch`` (src, src_mask, tgt, _)."""
    src, mask, tgt, _ = batch
    B, S = src.shape
    T = tgt.shape[1]
    y_in = decoder_inputs(tgt)                                            # (B, T)
    grads = {k: np.zeros_like(v) for k, v in p.items()}
    # encoder
    x = p["encoder.embedding.weight"][src]                                # (B, S, E)
    enc, caches = {}, {}
    for d, order in (("forward", range(S)), ("backward", range(S - 1, -1, -1))):
        c = f"encoder.{d}_cell."
        gi = x @ p[c + "weight_ih"].T + p[c + "bias_ih"]                  # (B, S, G)
        h = np.zeros((B, p[c + "weight_hh"].shape[1]), x.dtype)
        states = [None] * S
        for j in order:
            new, caches[d, j] = gru(gi[:, j], h, p[c + "weight_hh"], p[c + "bias_hh"])
            h = np.where(mask[:, j, None], new, h)
            states[j] = h
        enc[d] = np.stack(states, 1)                                      # (B, S, H)
    ann = np.concatenate([enc["forward"], enc["backward"]], 2) * mask[:, :, None]  # (B, S, K)
    # decoder
    lengths = mask.sum(1, keepdims=True).astype(x.dtype)
    mean = ann.sum(1) / lengths                                           # (B, K)
    s = np.tanh(mean @ p["decoder.init.weight"].T + p["decoder.init.bias"])
    s0 = s
    Wq, Wk, bk, v = (p["decoder.attention.score." + k] for k in ("W_q", "W_k", "b", "v"))
    P = ann @ Wk.T + bk                                                   # (B, S, A)
    emb = p["decoder.embedding.weight"]
    W_ih, b_ih = p["decoder.cell.weight_ih"], p["decoder.cell.bias_ih"]
    W_hh, b_hh = p["decoder.cell.weight_hh"], p["decoder.cell.bias_hh"]
    steps = []
    for t in range(T):
        u = np.tanh((s @ Wq.T)[:, None, :] + P)                           # (B, S, A)
        e = np.where(mask, u @ v, -np.inf)                                # (B, S)
        a = np.exp(e - e.max(1, keepdims=True))
        a /= a.sum(1, keepdims=True)                                      # α (B, S)
        c = (a[:, None, :] @ ann)[:, 0]                                   # (B, K)
        xin = np.concatenate([emb[y_in[:, t]], c], 1)                     # (B, E + K)
        s_prev = s
        s, cache = gru(xin @ W_ih.T + b_ih, s, W_hh, b_hh)
        steps.append((s_prev, u, a, c, xin, cache, s))
    feats = np.concatenate([np.stack([st[6] for st in steps], 1),
                            np.stack([st[3] for st in steps], 1)], 2)     # (B, T, H + K)
    logits = feats @ p["decoder.out.weight"].T + p["decoder.out.bias"]    # (B, T, V)
    m = logits.max(2, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(2, keepdims=True))
    N = B * T
    loss = -np.take_along_axis(logp, tgt[:, :, None], 2).sum() / N
    # backward: output layer and cross-entropy
    dlogits = np.exp(logp)
    np.put_along_axis(dlogits, tgt[:, :, None], np.take_along_axis(dlogits, tgt[:, :, None], 2) - 1, 2)
    dlogits /= N
    grads["decoder.out.weight"] += dlogits.reshape(N, -1).T @ feats.reshape(N, -1)
    grads["decoder.out.bias"] += dlogits.sum((0, 1))
    dfeats = dlogits @ p["decoder.out.weight"]                            # (B, T, H + K)
    H, E = s.shape[1], emb.shape[1]
    d_ann, dP, ds = np.zeros_like(ann), np.zeros_like(P), np.zeros_like(s)
    d_emb_in = np.empty((B, T, E), x.dtype)                               # ∂L/∂E[y_t], added once
    for t in reversed(range(T)):
        s_prev, u, a, c, xin, cache, _ = steps[t]
        dgi, ds = gru_back(dfeats[:, t, :H] + ds, cache, W_hh, grads, "decoder.cell.")
        grads["decoder.cell.weight_ih"] += dgi.T @ xin
        grads["decoder.cell.bias_ih"] += dgi.sum(0)
        dx = dgi @ W_ih                                                   # (B, E + K)
        d_emb_in[:, t] = dx[:, :E]
        dc = dfeats[:, t, H:] + dx[:, E:]                                 # (B, K)
        d_ann += a[:, :, None] * dc[:, None, :]
        de = a * ((ann @ dc[:, :, None])[:, :, 0] - (dc * c).sum(1, keepdims=True))  # (B, S)
        grads["decoder.attention.score.v"] += de.reshape(-1) @ u.reshape(B * S, -1)
        du = de[:, :, None] * v * (1 - u * u)                             # (B, S, A)
        dP += du
        dq = du.sum(1)                                                    # (B, A)
        grads["decoder.attention.score.W_q"] += dq.T @ s_prev
        ds = ds + dq @ Wq
    np.add.at(grads["decoder.embedding.weight"], y_in, d_emb_in)
    grads["decoder.attention.score.W_k"] += dP.reshape(B * S, -1).T @ ann.reshape(B * S, -1)
    grads["decoder.attention.score.b"] += dP.sum((0, 1))
    d_ann += dP @ Wk
    dpre = ds * (1 - s0 * s0)
    grads["decoder.init.weight"] += dpre.T @ mean
    grads["decoder.init.bias"] += dpre.sum(0)
    d_ann += (dpre @ p["decoder.init.weight"] / lengths)[:, None, :]
    d_ann *= mask[:, :, None]
    # backward: encoder
    dx = np.zeros_like(x)
    for d, order, part in (("forward", range(S), slice(0, H)),
                           ("backward", range(S - 1, -1, -1), slice(H, None))):
        c = f"encoder.{d}_cell."
        dgis = np.zeros((B, S, p[c + "weight_ih"].shape[0]), x.dtype)
        dh = np.zeros((B, p[c + "weight_hh"].shape[1]), x.dtype)
        for j in reversed(order):
            total = d_ann[:, j, part] + dh
            real = mask[:, j, None]
            dgis[:, j], dh = gru_back(np.where(real, total, 0), caches[d, j],
                                      p[c + "weight_hh"], grads, c)
            dh = dh + np.where(real, 0, total)
        grads[c + "weight_ih"] += dgis.reshape(B * S, -1).T @ x.reshape(B * S, -1)
        grads[c + "bias_ih"] += dgis.sum((0, 1))
        dx += dgis @ p[c + "weight_ih"]
    np.add.at(grads["encoder.embedding.weight"], src, dx)
    return loss, grads


class Adam:
    """Adam as ``minigrad.optim.Adam`` (PyTorch's update) on a dict of arrays."""

    def __init__(self, params: dict, lr: float = ref.LR, b1=0.9, b2=0.999, eps=1e-8):
        self.p, self.lr, self.b1, self.b2, self.eps, self.t = params, lr, b1, b2, eps, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, grads: dict) -> None:
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        for k, g in grads.items():
            m, v = self.m[k], self.v[k]
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * (g * g)
            denom = np.sqrt(v) / math.sqrt(c2)
            denom += self.eps
            self.p[k] -= (self.lr / c1) * (m / denom)


def build(dtype: str = "float32", seed: int = 0):
    """A zero-argument ``step()`` of the floor with the reference model's initial weights."""
    params = params_of(ref.reference_model(dtype, seed))
    batch = ref.reference_batch(seed)
    opt = Adam(params)

    def step() -> float:
        loss, grads = loss_and_grads(params, batch)
        opt.step(grads)
        return float(loss)
    return step


# ---- the forward as a pure function, for autograd libraries ---------------------------------

def loss_fn(p: dict, batch, xp):
    """The reference loss, functional (no in-place writes): ``xp`` is numpy, autograd.numpy or
    mygrad; ``p`` maps state_dict names to that library's arrays."""
    src, mask, tgt, _ = batch
    B, S = src.shape
    y_in = decoder_inputs(tgt)
    m3 = mask[:, :, None].astype(p["decoder.out.bias"].dtype)

    def sig_(x):
        return 0.5 * (1 + xp.tanh(0.5 * x))

    def cell(gi, h, c):
        H = h.shape[1]
        gh = xp.matmul(h, xp.transpose(p[c + "weight_hh"])) + p[c + "bias_hh"]
        r = sig_(gi[:, :H] + gh[:, :H])
        z = sig_(gi[:, H:2 * H] + gh[:, H:2 * H])
        n = xp.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
        return (1 - z) * n + z * h

    x = p["encoder.embedding.weight"][src]                                # (B, S, E)
    enc = []
    for d, order in (("forward", range(S)), ("backward", range(S - 1, -1, -1))):
        c = f"encoder.{d}_cell."
        gi = xp.matmul(x, xp.transpose(p[c + "weight_ih"])) + p[c + "bias_ih"]
        h = np.zeros((B, p[c + "weight_hh"].shape[1]), m3.dtype)
        states = [None] * S
        for j in order:
            keep = m3[:, j]                                               # (B, 1)
            h = keep * cell(gi[:, j], h, c) + (1 - keep) * h
            states[j] = h
        enc.append(xp.stack(states, axis=1))
    ann = xp.concatenate(enc, axis=2) * m3                                # (B, S, K)
    lengths = mask.sum(1, keepdims=True).astype(m3.dtype)
    s = xp.tanh(xp.matmul(xp.sum(ann, axis=1) / lengths, xp.transpose(p["decoder.init.weight"]))
                + p["decoder.init.bias"])
    sc = "decoder.attention.score."
    P = xp.matmul(ann, xp.transpose(p[sc + "W_k"])) + p[sc + "b"]          # (B, S, A)
    W_ih_T = xp.transpose(p["decoder.cell.weight_ih"])
    feats = []
    for t in range(tgt.shape[1]):
        q = xp.matmul(s, xp.transpose(p[sc + "W_q"]))                     # (B, A)
        e = xp.matmul(xp.tanh(q[:, None, :] + P), p[sc + "v"])            # (B, S)
        e = e - 1e30 * (1 - m3[:, :, 0])                                  # masked: weight 0
        w = xp.exp(e - xp.max(e, axis=1, keepdims=True))
        a = w / xp.sum(w, axis=1, keepdims=True)                          # (B, S)
        ctx = xp.sum(a[:, :, None] * ann, axis=1)                         # (B, K)
        xin = xp.concatenate([p["decoder.embedding.weight"][y_in[:, t]], ctx], axis=1)
        s = cell(xp.matmul(xin, W_ih_T) + p["decoder.cell.bias_ih"], s, "decoder.cell.")
        feats.append(xp.concatenate([s, ctx], axis=1))
    logits = xp.matmul(xp.stack(feats, axis=1), xp.transpose(p["decoder.out.weight"])) \
        + p["decoder.out.bias"]                                           # (B, T, V)
    top = xp.max(logits, axis=2, keepdims=True)
    logp = logits - top - xp.log(xp.sum(xp.exp(logits - top), axis=2, keepdims=True))
    onehot = np.eye(logits.shape[2], dtype=m3.dtype)[tgt]                 # (B, T, V)
    return -xp.sum(logp * onehot) / tgt.size
