"""Comparisons trained on one budget.

``compare_length``: a miniature of Bahdanau et al. 2015, Figure 2: accuracy against source
length, with and without attention.

``PlainDecoder`` must squeeze the whole source into one fixed vector; ``BahdanauDecoder`` looks
back at every annotation. Both are trained on the same pairs (same seed, same sizes, same
number of steps) and scored by greedy exact match on held-out pairs, grouped by source length.
Without attention accuracy falls as sources get longer; with attention it holds.

``compare_scores``: Luong's dot, general and concat scores and Bahdanau's additive one, each
trained for the same steps on the same pairs; held-out exact match and training time.
"""
from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

from minigrad.draw.common import columns, pad
from minigrad.i18n import translator
from models.app.build import build_model
from models.app.data import make_task
from models.app.progress import say
from models.vocab import pad_batch
from models.app.train import Trainer
from models.app.train_config import TrainConfig, seeds
from models.seq2seq import ModelConfig, Seq2Seq

_ = translator("models")


@dataclass
class CompareConfig:
    task: str = "copy"
    min_len: int = 4
    max_len: int = 20
    n_train: int = 12000      # 6000 x 10 epochs left attention at 97-98% on some lengths
    n_val: int = 1000
    epochs: int = 6
    batch_size: int = 32
    lr: float = 3e-3
    embed: int = 32
    hidden: int = 32
    dec_hidden: int = 64
    attn: int = 32
    dtype: str = "float32"
    schedule: str = "cosine"  # a constant 3e-3 spikes late in training (models.app.schedule)
    seed: int = 0


def exact_by_length(model: Seq2Seq, data, pairs, max_len: int, batch_size: int = 500) -> dict:
    """{source length: exact-match rate} of greedy decoding on ``pairs``."""
    right, count = defaultdict(int), defaultdict(int)
    pairs = sorted(pairs, key=lambda p: len(p[0]))
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start:start + batch_size]
        src, mask = pad_batch([data.src_vocab.encode(s) for s, _ in chunk])  # (B, S) each
        for (s, want), out in zip(chunk, model.greedy(src, max_len, mask)):
            right[len(s)] += data.tgt_vocab.decode(out.tokens) == want
            count[len(s)] += 1
    return {k: right[k] / count[k] for k in sorted(count)}


def compare_length(config: CompareConfig, log=say, time_limit: float | None = None) -> dict:
    """Train both decoders on the same data; returns {name: {length: exact match}}."""
    c = config
    tc = TrainConfig(task=c.task, n_train=c.n_train, n_val=c.n_val, min_len=c.min_len,
                     max_len=c.max_len, batch_size=c.batch_size, lr=c.lr, epochs=c.epochs,
                     target=2.0, seed=c.seed,
                     schedule=c.schedule)  # target > 1: same steps for both
    data = make_task(c.task, seeds(c.seed)[0], c.n_train, c.n_val, c.min_len, c.max_len)
    results = {}
    for name, decoder in (("no attention", "plain"), ("attention", "bahdanau")):
        init_rng, train_rng = seeds(c.seed)[1:]
        mc = ModelConfig(len(data.src_vocab), len(data.tgt_vocab), embed=c.embed, hidden=c.hidden,
                         dec_hidden=c.dec_hidden, attn=c.attn, decoder=decoder, dtype=c.dtype)
        trainer = Trainer(build_model(mc, init_rng), data, tc, train_rng)
        log(_("--- {name} ({decoder} decoder)").format(name=_(name), decoder=decoder))
        trainer.run(log=log, time_limit=time_limit)
        results[name] = exact_by_length(trainer.model, data, data.val, trainer.decode_len)
    return results


# The four scores of sources 000 §2.3 and 003 §3.1, each in the decoder it was proposed with.
SCORE_RUNS = (("dot (Luong)", "luong", "dot"), ("general (Luong)", "luong", "general"),
              ("concat (Luong)", "luong", "concat"),
              ("additive (Bahdanau)", "bahdanau", "additive"))


@dataclass
class ScoresConfig:
    """One budget for every score: the same data, sizes, seed and number of steps."""
    task: str = "reverse"
    min_len: int = 3
    max_len: int = 12
    n_train: int = 3000
    n_val: int = 500
    epochs: int = 3
    batch_size: int = 32
    lr: float = 3e-3
    embed: int = 32
    hidden: int = 32         # annotations 2·hidden = 64 wide, so the decoders are 64 wide too
    attn: int = 64
    dtype: str = "float32"
    seed: int = 0


def kept_epoch(state) -> dict:
    """The history row of the epoch whose weights a finished run kept: its best held-out
    epoch (``Trainer`` ends with those weights, see ``progress.kept_best``), else the last."""
    best = (state.best or {}).get("epoch")
    return next((h for h in state.history if h["epoch"] == best), state.history[-1])


def compare_scores(config: ScoresConfig, log=say, runs=SCORE_RUNS) -> dict:
    """Train each (decoder, score) of ``runs`` for the same number of steps on the same data;
    returns {name: {"exact", "token_acc", "epoch", "seconds", "params", "steps"}}: the held-out
    figures of the weights each run keeps (its best epoch's, ``kept_epoch``).

    The decoder is 2·hidden wide so that the dot score (sᵀh needs equal widths) fits; the
    other scores get the same width. Source 000 §2.3 says the plain dot product suffices
    (Luong 2015), source 003 §3.1 that general is the usual best: this measures it here.
    """
    c = config
    tc = TrainConfig(task=c.task, n_train=c.n_train, n_val=c.n_val, min_len=c.min_len,
                     max_len=c.max_len, batch_size=c.batch_size, lr=c.lr, epochs=c.epochs,
                     target=2.0, seed=c.seed)  # target > 1: the same number of steps for all
    data = make_task(c.task, seeds(c.seed)[0], c.n_train, c.n_val, c.min_len, c.max_len)
    results = {}
    for name, decoder, score in runs:
        init_rng, train_rng = seeds(c.seed)[1:]
        mc = ModelConfig(len(data.src_vocab), len(data.tgt_vocab), embed=c.embed, hidden=c.hidden,
                         dec_hidden=2 * c.hidden, attn=c.attn, decoder=decoder, score=score,
                         dtype=c.dtype)
        model = build_model(mc, init_rng)
        trainer = Trainer(model, data, tc, train_rng)
        log(f"--- {name}")
        started = time.perf_counter()
        trainer.run(log=log)
        seconds = time.perf_counter() - started
        val = kept_epoch(trainer.state)  # the epoch whose weights the run ended with
        results[name] = {"exact": val["val_exact"], "token_acc": val["val_token_acc"],
                         "epoch": val["epoch"], "seconds": seconds,
                         "params": sum(p.size for p in model.parameters()),
                         "steps": trainer.state.step}
    return results


def scores_table(results: dict) -> str:
    """One row per score: the held-out figures of the weights kept (and their epoch). Each
    column is as wide as its header in terminal columns, in any language, and at least its
    English width; the first is left-aligned, the others right-aligned."""
    heads = (_("score"), _("exact match"), _("token acc"), _("epoch kept"), _("train time"),
             _("parameters"))
    widths = [max(w, columns(h)) for w, h in zip((20, 11, 10, 10, 11, 11), heads)]
    line = lambda cells: " ".join(pad(c, w, right=i > 0)
                                  for i, (c, w) in enumerate(zip(cells, widths)))
    lines = [line(heads)]
    for name, r in results.items():
        lines.append(line((name, f"{100 * r['exact']:.1f}%", f"{100 * r['token_acc']:.1f}%",
                           str(r.get("epoch", "-")), f"{r['seconds']:.1f}s",
                           f"{r['params']:,}")))
    return "\n".join(lines)
