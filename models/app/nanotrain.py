"""nanotrain: the dates model trained from library parts, in one screen (nanoGPT style).

Dates as people type them -> ISO ('3rd May, 2020' -> '2020-05-03', the task of ``python -m
models``) by a bidirectional GRU encoder and Bahdanau's attention decoder: data, model, loss,
Adam and a loop, no Trainer. Shape letters: B batch, S source length, T target length. Usage:

    python -m models.app.nanotrain --epochs=2 --train_size=200

``python -m models.app.nanotrain`` (these defaults, the core model: no kernels) on a shared 2-core
VM, 2026-12-01, other jobs running: 100.0% held-out exact match (99.3% after epoch 1), 120 s wall.
"""
import math
import sys
import time
from ast import literal_eval

import numpy as np

from minigrad import optim
from minigrad.runtime import blas
from models.app.data import batches, make_task
from models.seq2seq import ModelConfig, Seq2Seq

# ---- settings (each one can be overridden as --name=value)
seed = 0
train_size = 20000  # distinct training dates: enough that the model cannot memorise them
val_size = 1000     # held out: no source string is also in the training set
epochs = 3
batch_size = 64
lr = 3e-3           # Adam's peak step; it decays along a cosine to lr_floor * lr ...
lr_floor = 0.05     # ... because a constant step makes the loss spike once it is small
clip = 1.0          # max gradient norm: one odd batch early on cannot throw the weights far
embed = 32
hidden = 64         # per encoder direction; the annotations h_j are 2 * hidden wide
dec_hidden = 64
attn = 64           # width A of the additive score e_j = v^T tanh(W s + U h_j)
dtype = "float32"   # half the memory traffic of float64, and accurate enough to train
SETTINGS = {k: v for k, v in globals().items() if k[0] != "_" and type(v) in (int, float, str)}


def configure(argv: list) -> dict:
    """SETTINGS with the ``--name=value`` overrides in argv, each read as a Python literal."""
    config = dict(SETTINGS)
    for arg in argv:
        name, eq, text = arg.removeprefix("--").partition("=")
        if not (arg.startswith("--") and eq and name in config):
            sys.exit(f"nanotrain: {arg!r} is not --name=value with a name of {list(config)}")
        try:
            value = literal_eval(text)
        except (ValueError, SyntaxError):  # a bare word, e.g. --dtype=float64, is a string
            value = text
        kind = type(config[name])  # the default's: a typo like --epochs=2.5 fails here, not later
        value = float(value) if kind is float and type(value) is int else value
        if type(value) is not kind:
            sys.exit(f"nanotrain: --{name} must be of type {kind.__name__}, got {text!r}")
        config[name] = value
    return config


def exact_match(model: Seq2Seq, data, max_len: int = 12) -> float:
    """Share of held-out dates that greedy decoding gets exactly right (ISO: 10 chars + EOS)."""
    model.eval()  # no dropout while measuring (none by default, but the habit costs nothing)
    b = next(batches(data.val, data.src_vocab, data.tgt_vocab, len(data.val), shuffle=False))
    outs = model.greedy(b.src, max_len, b.src_mask)  # b.src (B, S): one Translation per date
    model.train()
    return float(np.mean([data.tgt_vocab.decode(o.tokens) == want
                          for o, (_, want) in zip(outs, data.val)]))


def main(argv: list) -> None:
    c = configure(argv)
    # Three independent streams from one seed: a change to the data size leaves the initial
    # weights as they were, and the batch order does not depend on how the data was drawn.
    data_rng, init_rng, rng = map(np.random.default_rng, np.random.SeedSequence(c["seed"]).spawn(3))
    data = make_task("dates", data_rng, c["train_size"], c["val_size"])
    model = Seq2Seq(ModelConfig(len(data.src_vocab), len(data.tgt_vocab), decoder="bahdanau", **{
        k: c[k] for k in ("embed", "hidden", "dec_hidden", "attn", "dtype")}), rng=init_rng)
    opt = optim.Adam(model.parameters(), lr=c["lr"])
    total = c["epochs"] * math.ceil(c["train_size"] / c["batch_size"])  # planned steps
    print(f"{len(data.train)} training dates such as {data.train[0][0]!r} -> {data.train[0][1]!r}")
    started = time.perf_counter()
    for epoch in range(1, c["epochs"] + 1):
        losses = []
        for b in batches(data.train, data.src_vocab, data.tgt_vocab, c["batch_size"], rng):
            loss = model.loss(b.src, b.tgt, b.src_mask, b.tgt_mask)  # (B, T) ids -> () mean
            opt.zero_grad()
            loss.backward()
            optim.clip_grad_norm_(opt.params, c["clip"])  # a NaN gradient raises here, loudly
            cosine = 0.5 * (1 + math.cos(math.pi * opt.t / total))  # opt.t: steps so far
            opt.lr = c["lr"] * (c["lr_floor"] + (1 - c["lr_floor"]) * cosine)
            opt.step()
            losses.append(loss.item())
        exact = 100 * exact_match(model, data)
        print(f"epoch {epoch}/{c['epochs']}  loss {np.mean(losses):.4f}  val exact {exact:.1f}%  "
              f"{time.perf_counter() - started:.0f}s")  # loss: the mean over the epoch's batches


if __name__ == "__main__":  # importing this module (as the tests do) trains nothing
    with blas.threads(1):  # 64-wide matrices: a 2nd BLAS thread costs more than it saves
        main(sys.argv[1:])
