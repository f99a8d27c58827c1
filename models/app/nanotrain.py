"""nanotrain: the dates model trained from library parts, in one screen (nanoGPT style).

Dates as people type them -> ISO ('3rd May, 2020' -> '2020-05-03', the task of ``python -m
models``) by a bidirectional GRU encoder and Bahdanau's attention decoder: data, model, loss,
Adam and a loop, no Trainer. Shape letters: B batch, S source length, T target length.
"""
import math
import sys
import time
from argparse import Namespace
from ast import literal_eval

import numpy as np

from minigrad import optim
from minigrad.draw.console import run_main
from minigrad.runtime import blas
from models.app.data import batches, make_task
from models.app.evaluate import evaluate
from models.app.options import check_limits
from models.seq2seq import ModelConfig, Seq2Seq

# ---- settings, each overridden as --name=value: python -m models.app.nanotrain --epochs=2
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
    """SETTINGS with the ``--name=value`` overrides in argv (``-`` or ``_`` in a name), each
    read as a Python literal and checked as ``python -m models train`` checks it."""
    config = dict(SETTINGS)
    for arg in argv:
        name, eq, text = arg.removeprefix("--").partition("=")
        name = name.replace("-", "_")  # --train-size, as the main CLI spells its options, too
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
    check_limits(Namespace(command="nanotrain", **config))  # as python -m models checks them
    return config


def main(argv: list) -> None:
    c = configure(argv)
    # Three streams from one seed: resizing the data changes neither weights nor batch order.
    data_rng, init_rng, rng = map(np.random.default_rng, np.random.SeedSequence(c["seed"]).spawn(3))
    data = make_task("dates", data_rng, c["train_size"], c["val_size"])
    model = Seq2Seq(ModelConfig(len(data.src_vocab), len(data.tgt_vocab), decoder="bahdanau", **{
        k: c[k] for k in ("embed", "hidden", "dec_hidden", "attn", "dtype")}), rng=init_rng)
    opt = optim.Adam(model.parameters(), lr=c["lr"])
    total = c["epochs"] * math.ceil(c["train_size"] / c["batch_size"])  # planned steps
    print(f"{len(data.train)} training dates such as {data.train[0][0]!r} -> {data.train[0][1]!r}")
    started = shown = time.perf_counter()
    for epoch in range(1, c["epochs"] + 1):
        losses = []
        for b in batches(data.train, data.src_vocab, data.tgt_vocab, c["batch_size"], rng):
            loss = model.loss(b.src, b.tgt, b.src_mask, b.tgt_mask)  # (B, T) ids -> () mean
            if not math.isfinite(loss.item()):  # a step too large sent the weights to inf
                sys.exit(f"nanotrain: training diverged at step {opt.t + 1}; try a smaller --lr")
            opt.zero_grad()
            loss.backward()
            optim.clip_grad_norm_(opt.params, c["clip"])  # a NaN gradient raises here, loudly
            cosine = 0.5 * (1 + math.cos(math.pi * opt.t / total))  # opt.t: steps so far
            opt.lr = c["lr"] * (c["lr_floor"] + (1 - c["lr_floor"]) * cosine)
            opt.step()
            losses.append(loss.item())
            if time.perf_counter() - shown >= 5:  # a long epoch says every 5 s where it is
                shown = time.perf_counter()
                print(f"  step {opt.t}/{total}  loss {np.mean(losses[-50:]):.4f}", flush=True)
        exact = 100 * evaluate(model, data, data.val, max_len=12)["exact"]  # ISO: 10 + EOS
        print(f"epoch {epoch}/{c['epochs']}  loss {np.mean(losses):.4f}  val exact {exact:.1f}%  "
              f"{time.perf_counter() - started:.0f}s", flush=True)  # loss: the epoch's mean


if __name__ == "__main__":  # importing this module (as the tests do) trains nothing
    with blas.threads(1), np.errstate(all="ignore"):  # 1 thread: 64-wide matrices are faster
        try:  # a closed pipe ends it quietly
            sys.exit(run_main(main, sys.argv[1:]))
        except (ValueError, FloatingPointError) as e:  # one line: nanotrain's, or a library op's
            sys.exit(e if str(e).startswith("nanotrain") else f"nanotrain: {e}")
