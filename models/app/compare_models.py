"""From Bahdanau to the Transformer, side by side: ``python -m models compare-models``.

Bahdanau's GRU decoder (additive score), Luong's (general score, input feeding) and the
Transformer, at similar parameter counts, trained on the same pairs with the same budget
(the same epochs of the same batches) and scored the same way:

* time to the target: training seconds until held-out exact match first reached it;
* held-out exact match at the end, and by source length -- including lengths longer than
  any seen in training, where recurrent decoders and sinusoidal Transformers are known to
  behave differently;
* decoding speed: held-out sentences per second, greedy.

``attention_maps`` gives, for one example, the Transformer's per-head cross-attention and its
encoder self-attention next to the Bahdanau alignment, for ``pictures.heads_text`` / ``_svg``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from minigrad.draw.common import columns, pad
from minigrad.i18n import translator
from models.vocab import BOS, pad_batch
from models.app.build import build_model
from models.app.compare import exact_by_length
from models.app.data import TASKS, make_task
from models.app.progress import say
from models.app.train import Trainer
from models.app.train_config import TrainConfig, seeds
from models.seq2seq import ModelConfig, Seq2Seq

_ = translator("models")


@dataclass
class ModelsConfig:
    """One budget for all three models; ``long_len`` is the longest held-out source, longer
    than ``max_len``, the longest training source."""
    task: str = "reverse"
    min_len: int = 3
    max_len: int = 10
    long_len: int = 14
    n_train: int = 3000
    n_val: int = 500
    n_long: int = 300
    epochs: int = 6
    batch_size: int = 32
    lr: float = 2e-3
    target: float = 0.95
    dtype: str = "float32"
    seed: int = 0


# Sizes with similar parameter counts (about 55 k, 62 k and 58 k on the symbol tasks).
MODELS = (
    ("Bahdanau", dict(decoder="bahdanau", score="additive", embed=32, hidden=32, dec_hidden=64,
                      attn=32)),
    ("Luong", dict(decoder="luong", score="general", embed=32, hidden=32, dec_hidden=64,
                   input_feeding=True)),
    ("Transformer", dict(decoder="transformer", layers=1, heads=4, d_model=52, ff=104)),
)


def long_pairs(c: ModelsConfig, rng: np.random.Generator) -> list:
    """Held-out pairs whose sources are longer than every training source (none for a task
    whose lengths are fixed by its data, such as dates)."""
    if c.long_len <= c.max_len or c.n_long == 0:
        return []
    pairs = TASKS[c.task].generate(rng, c.n_long, c.max_len + 1, c.long_len)
    return [(s, t) for s, t in pairs if len(s) > c.max_len]


def decode_speed(model: Seq2Seq, data, pairs, max_len: int) -> float:
    """Greedy decoding of ``pairs`` in batches of 100: sentences per second."""
    started = time.perf_counter()
    for i in range(0, len(pairs), 100):
        src, mask = pad_batch([data.src_vocab.encode(s) for s, _ in pairs[i:i + 100]])
        model.greedy(src, max_len, mask)
    return len(pairs) / (time.perf_counter() - started)


def compare_models(config: ModelsConfig, log=say, models=MODELS) -> tuple:
    """Train each model of ``models`` on the same data for the same steps. Returns
    ``(results, trainers, data, long)``: results {name: {params, seconds, to_target,
    exact, by_length, speed}}; trainers {name: Trainer}."""
    c = config
    tc = TrainConfig(task=c.task, n_train=c.n_train, n_val=c.n_val, min_len=c.min_len,
                     max_len=c.max_len, batch_size=c.batch_size, lr=c.lr, epochs=c.epochs,
                     target=2.0, seed=c.seed)  # target > 1: the same number of steps for all
    data_rng = seeds(c.seed)[0]
    data = make_task(c.task, data_rng, c.n_train, c.n_val, c.min_len, c.max_len)
    long = long_pairs(c, data_rng)
    results, trainers = {}, {}
    for name, sizes in models:
        _, init_rng, train_rng = seeds(c.seed)
        mc = ModelConfig(len(data.src_vocab), len(data.tgt_vocab), dtype=c.dtype, **sizes)
        trainer = Trainer(build_model(mc, init_rng), data, tc, train_rng)
        log(f"--- {name}")
        trainer.run(log=log)
        hist = trainer.state.history
        reached = [h["seconds"] for h in hist if h["val_exact"] >= c.target]
        decode_len = trainer.decode_len + c.long_len - c.max_len
        results[name] = {
            "params": sum(p.size for p in trainer.model.parameters()),
            "seconds": trainer.state.seconds, "to_target": reached[0] if reached else None,
            "exact": trainer.evaluate()["exact"],  # the weights it ends with (its best epoch's)
            "by_length": exact_by_length(trainer.model, data, data.val + long, decode_len),
            "speed": decode_speed(trainer.model, data, data.val, trainer.decode_len)}
        trainers[name] = trainer
    return results, trainers, data, long


def models_table(results: dict, max_len: int) -> str:
    """The comparison as a text table; source lengths > ``max_len`` are marked *. Each column
    is as wide as its header in terminal columns, in any language (at least its English width)."""
    lengths = sorted({n for r in results.values() for n in r["by_length"]})
    heads = (_("model"), _("params"), _("train s"), _("to target"), _("exact"), _("decode/s"))
    widths = [max(w, columns(h)) for w, h in zip((12, 7, 8, 9, 6, 9), heads)]
    line = lambda cells: " ".join(pad(c, w, right=i > 0)
                                  for i, (c, w) in enumerate(zip(cells, widths))) + "  "
    head = line(heads)
    lines = [head + _("exact match (%) by source length (* longer than training)"),
             " " * columns(head) + " ".join(f"{n:>4}{'*' if n > max_len else ' '}"
                                            for n in lengths)]
    for name, r in results.items():
        to = f"{r['to_target']:.1f}s" if r["to_target"] is not None else _("not met")
        cells = " ".join(f"{100 * r['by_length'][n]:4.0f} " if n in r["by_length"] else "   - "
                         for n in lengths)
        lines.append(line((name, f"{r['params']:,}", f"{r['seconds']:.1f}s", to,
                           f"{100 * r['exact']:.1f}%", f"{r['speed']:.0f}")) + cells)
    return "\n".join(lines)


def attention_maps(trainers: dict, data, text: str) -> dict:
    """For one source ``text``: the Transformer's greedy output and, from its last layer,
    cross-attention per head (h, T_out, S) and encoder self-attention per head (h, S, S);
    the Bahdanau alignment (T_out, S) with its own output. Labels for the pictures included."""
    src, mask = pad_batch([data.src_vocab.encode(text)])                 # (1, S)
    bahdanau = trainers["Bahdanau"].model.greedy(src, 2 * len(text) + 4, mask)[0]
    model = trainers["Transformer"].model.eval()
    out = model.greedy(src, 2 * len(text) + 4, mask)[0]
    tgt_in = np.array([[BOS] + out.tokens[:-1]])                         # (1, T_out)
    with mg.no_grad():
        encoded, self_weights = model.encoder.encode(src, mask)
        _, _, cross = model.decoder.attend_all(encoded, tgt_in)
    return {"text": text, "cross": cross[-1][0],  # (h, T, S)
            "self": self_weights[-1][0],  # (h, S, S)
            "transformer_out": out.tokens, "bahdanau": bahdanau}
