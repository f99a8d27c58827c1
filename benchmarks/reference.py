"""The reference workload (the Bahdanau seq2seq described in benchmarks/README.md), built
from the public API of ``models``.

Bahdanau seq2seq: vocabulary 32 (source and target), embedding 32, bidirectional GRU encoder
with hidden 64 per direction (annotations K = 128), additive attention of width 64 with bias,
s_0 = tanh(W_init · masked mean of the annotations), decoder GRUCell([E y_{t−1}; c_t], s_{t−1})
with hidden 64, output W_o [s_t; c_t] + b_o. Batch 64, source and target length 20, the last 3
source positions of half the batch are padding, teacher forcing, mean cross-entropy over all
targets, Adam (lr 1e-3). One training step = forward + backward + update.

The model is built with the kernels on, as ``python -m models`` builds it (``models/app/build.py``);
``reference_model(dtype, kernels=False)`` is the core model, to measure what the kernels buy:
``build(dtype, model=reference_model(dtype, kernels=False))``.

For any harness (pytest-benchmark, asv, a script):

    step = build("float32")      # step() runs one training step, returns the loss (float)
    forward = build_forward()    # forward() the loss with the graph recorded, no backward
    decode = build_decode()      # decode() greedily decodes the reference batch (20 steps max)
    beam = build_beam()          # beam() beam search, k = 4, of the reference batch

``build_torch_all`` builds the same model in PyTorch eager (``benchmarks/torch_reference.py``)
with minigrad's initial weights, ``check_same`` checks that the two agree (the losses of the
first three steps, which checks gradients and Adam too, and the greedy and beam tokens), and
``measure`` times candidates interleaved. ``python -m benchmarks`` runs them (its model rows).
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from minigrad import optim
from models.kernels import use_kernels
from models.vocab import PAD
from models.seq2seq import ModelConfig, Seq2Seq

VOCAB, EMBED, HIDDEN, DEC_HIDDEN, ATTN = 32, 32, 64, 64, 64
BATCH, SRC_LEN, TGT_LEN, PADDED, LR = 64, 20, 20, 3, 1e-3
BEAM = 4


def reference_batch(seed: int = 0) -> tuple:
    """(src, src_mask, tgt, tgt_mask): ids in 1..31 (never PAD); the last PADDED source
    positions of the second half of the batch are PAD."""
    rng = np.random.default_rng([seed, 1])
    src = rng.integers(1, VOCAB, size=(BATCH, SRC_LEN))               # (B, S)
    src[BATCH // 2:, SRC_LEN - PADDED:] = PAD
    tgt = rng.integers(1, VOCAB, size=(BATCH, TGT_LEN))               # (B, T)
    return src, src != PAD, tgt, np.ones_like(tgt, dtype=bool)


def reference_model(dtype: str = "float32", seed: int = 0, kernels: bool = True) -> Seq2Seq:
    """The reference model as the application builds it, kernels on (``models/kernels.py``);
    ``kernels=False``: the core model, composed from primitives (the same numbers, slower)."""
    config = ModelConfig(VOCAB, VOCAB, embed=EMBED, hidden=HIDDEN, dec_hidden=DEC_HIDDEN,
                         attn=ATTN, decoder="bahdanau", score="additive", dtype=dtype)
    model = Seq2Seq(config, np.random.default_rng([seed, 0]))
    return use_kernels(model) if kernels else model


def build(dtype: str = "float32", seed: int = 0, model: Seq2Seq | None = None):
    """A zero-argument ``step()``: one training step on the reference batch; returns the loss."""
    model = reference_model(dtype, seed) if model is None else model
    src, src_mask, tgt, tgt_mask = reference_batch(seed)
    opt = optim.Adam(model.parameters(), lr=LR)

    def step() -> float:
        opt.zero_grad()
        loss = model.loss(src, tgt, src_mask, tgt_mask)
        loss.backward()
        opt.step()
        return loss.item()
    step.model = model
    return step


def build_forward(dtype: str = "float32", seed: int = 0, model: Seq2Seq | None = None):
    """A zero-argument ``forward()``: the loss of the reference batch, its graph recorded (the
    first half of a training step, without backward); returns the loss."""
    model = reference_model(dtype, seed) if model is None else model
    src, src_mask, tgt, tgt_mask = reference_batch(seed)

    def forward() -> float:
        return model.loss(src, tgt, src_mask, tgt_mask).item()
    forward.model = model
    return forward


def build_beam(dtype: str = "float32", seed: int = 0, beam_size: int = BEAM,
               model: Seq2Seq | None = None):
    """A zero-argument ``beam()``: beam search (``beam_size`` hypotheses, length penalty
    0.6) of the reference batch, ≤ TGT_LEN steps."""
    model = reference_model(dtype, seed) if model is None else model
    src, src_mask, _, _ = reference_batch(seed)

    def beam() -> list:
        return model.beam(src, beam_size, 0.6, TGT_LEN, src_mask)
    beam.model = model
    return beam


def build_decode(dtype: str = "float32", seed: int = 0, model: Seq2Seq | None = None):
    """A zero-argument ``decode()``: greedy decoding of the reference batch (≤ TGT_LEN steps)."""
    model = reference_model(dtype, seed) if model is None else model
    src, src_mask, _, _ = reference_batch(seed)

    def decode() -> list:
        return model.greedy(src, TGT_LEN, src_mask)
    decode.model = model
    return decode


# ---- PyTorch, same model and weights (optional) ------------------------------------------

def build_torch_all(dtype: str = "float32", seed: int = 0, weights: dict | None = None) -> dict:
    """``step``, ``forward``, ``decode`` and ``beam`` of the same model in PyTorch eager, with
    minigrad's initial weights (one model, so build a fresh set for each timed function).
    ``weights``: ``reference_model(dtype, seed).state_dict()``, built here when not given."""
    import torch
    from benchmarks.torch_reference import TorchBahdanau
    tdtype = {"float32": torch.float32, "float64": torch.float64}[dtype]
    model = TorchBahdanau(VOCAB, EMBED, HIDDEN, DEC_HIDDEN, ATTN, dtype=tdtype)
    model.load_minigrad(reference_model(dtype, seed).state_dict() if weights is None else weights)
    src, src_mask, tgt, _ = (torch.from_numpy(a) for a in reference_batch(seed))
    lengths = src_mask.sum(1)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step() -> float:
        opt.zero_grad()
        loss = loss_fn(model(src, lengths, tgt).reshape(-1, VOCAB), tgt.reshape(-1))
        loss.backward()
        opt.step()
        return loss.item()

    def forward() -> float:
        return loss_fn(model(src, lengths, tgt).reshape(-1, VOCAB), tgt.reshape(-1)).item()

    def decode():
        return model.greedy(src, lengths, TGT_LEN)

    def beam():
        return model.beam(src, lengths, BEAM, 0.6, TGT_LEN)
    return {"step": step, "forward": forward, "decode": decode, "beam": beam}


def _padded(rows) -> np.ndarray:
    """Token lists or a (B, L) array as a (B, TGT_LEN) array, PAD after the end."""
    return np.array([list(r) + [PAD] * (TGT_LEN - len(r)) for r in rows])


def check_same(dtype: str, seed: int = 0) -> str:
    """Same weights in both: the first 3 losses, and the greedy and beam tokens, must agree."""
    tol = 1e-4 if dtype == "float32" else 1e-10
    mg_step, t_step = build(dtype, seed), build_torch_all(dtype, seed)["step"]
    for k in range(3):
        a, b = mg_step(), t_step()
        if abs(a - b) > tol * max(1.0, abs(b)):
            raise AssertionError(f"{dtype}: loss of step {k + 1} differs: minigrad {a!r}, torch {b!r}")
    torch_fns = build_torch_all(dtype, seed)
    agree = {}
    for what, ours in (("greedy", build_decode(dtype, seed)), ("beam", build_beam(dtype, seed))):
        mine = _padded([o.tokens for o in ours()])
        theirs = _padded(torch_fns["decode" if what == "greedy" else "beam"]().tolist())
        agree[what] = float(np.mean(mine == theirs))
        if agree[what] < (0.99 if dtype == "float32" else 1.0):
            raise AssertionError(f"{dtype}: {what} tokens agree on only {agree[what]:.1%}")
    return (f"{dtype}: losses of 3 steps agree (last {a:.6f} vs {b:.6f}); tokens equal: "
            f"greedy {agree['greedy']:.0%}, beam (k={BEAM}) {agree['beam']:.0%}")


# ---- timing -------------------------------------------------------------------------------

def timed(fn, calls: int) -> float:
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls


def measure(candidates: dict, repeat: int, calls: int) -> dict:
    """Median seconds per call of each candidate, timed in interleaved batches; with two
    candidates also the median of the per-round ratios first/second."""
    for fn in candidates.values():
        timed(fn, 2)  # warm up
    rounds = {name: [] for name in candidates}
    for _ in range(repeat):
        for name, fn in candidates.items():
            rounds[name].append(timed(fn, calls))
    result = {name: statistics.median(v) for name, v in rounds.items()}
    if len(candidates) == 2:
        a, b = rounds.values()
        result["ratio"] = statistics.median(x / y for x, y in zip(a, b))
    return result
