"""``python -m models``: run the subcommand the command line names (no arguments: the main demo).

The command line itself (its parsers, the ``--help`` text, the checks on options) is in
``options.py``, and ``translate`` in ``translate.py``; here are train, the demo, compare-length,
compare-scores, compare-models and inspect, and ``main``, which runs one of them with the BLAS
threads asked for and turns a bad input into a one-line error and exit status 2 (Ctrl-C: 130;
SIGTERM and SIGHUP stop training as Ctrl-C does, with 143 and 129). Output goes through
``minigrad.draw.console``: any encoding works (what it cannot write comes out as ASCII) and a
reader that stops early (``| head``) ends the run quietly -- training first checkpoints.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

import numpy as np

from minigrad.draw.console import run_main
from minigrad.runtime import blas
from models.app.checkpoint import CheckpointError
from models.app.compare import (CompareConfig, ScoresConfig, compare_length, compare_scores,
                                scores_table)
from models.app.compare_models import (ModelsConfig, attention_maps, compare_models,
                                       models_table)
from models.app.datetext import read_dates, wild_accuracy, wild_dates
from models.app.diagnose import inspect_run
from models.app.graphs import cmd_graph
from models.app.options import (build_parser, check_limits, check_train_options,
                                given_train_options, model_config)
from models.app.pictures import (by_length_svg, by_length_table, by_length_text, curves_svg,
                                 heads_svg, heads_text)
from models.app.runs import (Interrupted, foreign_files, free_name, fresh_folder,
                             holds_checkpoint, run_lock, stop_on_signals, writable_folder)
from models.app.progress import fmt_time
from models.app.train import POOL, Trainer, TrainConfig
from models.app.translate import cmd_translate, show
from models.seq2seq import masked_cross_entropy
from models.vocab import pad_batch

DEMO_DATES = ("Thursday, August 29, 2018", "3rd Mar '95", "12/25/2019", "the 5th of November 1605")


def _fresh(base: str) -> str:
    """A new folder for a run, created by this call: ``base``, or ``base-2`` … (kept)."""
    out = fresh_folder(base)
    if out != os.path.normpath(base):
        what = "an earlier run" if holds_checkpoint(base) else "other files (or another run)"
        print(f"{base} already holds {what} (kept); this run writes into {out}")
    return writable_folder(out)


def _train_folder(a) -> str:
    """The folder for a new run (created; the caller locks it, then ``_check_out``)."""
    if a.out is None:
        if a.overwrite:
            raise ValueError("train: --overwrite replaces the checkpoint in --out DIR: name it")
        return _fresh(os.path.join("runs", a.task))
    return writable_folder(a.out)


def _check_out(a, out: str) -> None:
    """Under the folder's lock (which refuses a folder that is neither empty nor a run
    folder): never a checkpoint unless --overwrite, never the user's files."""
    if holds_checkpoint(out) and a.out is not None:
        if not a.overwrite:
            raise ValueError(f"train: {out} already holds a checkpoint. To continue that "
                             f"run: --resume {out}; to replace it: --overwrite; or choose "
                             "another --out")
        print(f"--overwrite: the checkpoint in {out} is replaced when this run saves its first")
    others = foreign_files(out)
    if others:
        shown = ", ".join(others[:3]) + (" …" if len(others) > 3 else "")
        raise ValueError(f"train: {out} holds files a run does not write ({shown}); a run "
                         "never replaces them: choose a new or empty --out folder")


def _train(trainer: Trainer, out: str, time_limit=None) -> None:
    """Train into ``out``. A signal (Ctrl-C, SIGTERM, SIGHUP) or a closed stdout stops it
    after the current batch, checkpointed; then it ends as that signal (or pipe) ends a program."""
    try:
        with stop_on_signals() as stop:
            trainer.run(log=stop.log, folder=out, time_limit=time_limit,
                        should_stop=lambda: bool(stop))
    except KeyboardInterrupt:
        with contextlib.suppress(OSError, ValueError):
            print(f"\naborted: {out} keeps the last checkpoint written (--resume {out} continues "
                  "it)" if holds_checkpoint(out) else "\naborted before the first checkpoint: "
                  "nothing was saved", file=sys.stderr)
        raise
    path = os.path.join(out, "training.svg")
    if trainer.state.history or trainer.state.curve:
        curves_svg(trainer.state, path)
        drawn = f"loss curve: {path}"
    else:  # e.g. --time-limit 0: nothing measured, so nothing drawn
        drawn = "no loss curve: it stopped before a point of the curve was measured"
    saved = "checkpoint" if holds_checkpoint(out) else "nothing saved in"
    stop.log(f"{saved}: {out}  ({drawn})")
    if stop:  # stopped by a signal or a closed stdout, checkpoint written: exit as it does
        raise stop.exit()


def _resume(a) -> None:
    """train --resume DIR: continue the run saved in DIR, under its lock."""
    if os.path.isdir(a.resume):
        writable_folder(a.resume)  # before any work, not at the first checkpoint
    with run_lock(a.resume) if os.path.isdir(a.resume) else contextlib.nullcontext():
        trainer = Trainer.resume(a.resume)
        out, st = a.resume, trainer.state
        if st.done:
            print(f"{out} holds a finished run (after epoch {st.epoch}, step {st.step}): "
                  "nothing to resume")
            return
        print(f"resuming {out} at epoch {st.epoch + 1}, step {st.step}")
        _train(trainer, out, a.time_limit)


def cmd_train(a) -> None:
    check_train_options(a)
    if a.resume:
        _resume(a)
        return
    cfg = TrainConfig(task=a.task, n_train=a.n_train, n_val=a.n_val, min_len=a.min_len,
                      max_len=a.max_len, batch_size=a.batch_size, lr=a.lr, clip=a.clip,
                      epochs=a.epochs, target=a.target, teacher_forcing=a.teacher_forcing,
                      seed=a.seed, schedule=a.schedule)
    trainer = Trainer.create(cfg, model_config(a))
    if not a.given - {"out", "overwrite"}:  # a bare `train`: what it starts, how long here
        print(plan_line(trainer, estimate_seconds(trainer)))
    out = _train_folder(a)
    with run_lock(out):
        _check_out(a, out)
        n = sum(p.size for p in trainer.model.parameters())
        c = trainer.model.config
        what = (f"transformer, {c.layers} layers, {c.heads} heads, d_model {c.d_model}"
                if c.decoder == "transformer" else f"{c.decoder} decoder, {c.score} score")
        print(f"{a.task}: {len(trainer.data.train)} training and {len(trainer.data.val)} held-out "
              f"pairs; {what}, {n:,} parameters ({c.dtype})")
        _train(trainer, out, a.time_limit)


def cmd_demo(a) -> None:
    started = time.perf_counter()
    cfg = TrainConfig(task="dates", n_train=a.n_train, n_val=1000, batch_size=64, lr=3e-3,
                      epochs=a.epochs, target=0.99, min_epochs=2, seed=a.seed,
                      schedule="cosine")
    trainer = Trainer.create(cfg, dict(embed=32, hidden=64, dec_hidden=64, attn=64, dtype="float32"))
    out = _fresh(a.out)
    with run_lock(out):
        _demo(a, trainer, out, started)


def _demo(a, trainer, out, started) -> None:
    print("Training Bahdanau attention (bidirectional GRU encoder, additive score) to normalise "
          f"dates:\n{len(trainer.data.train)} training pairs such as "
          f"{trainer.data.train[0][0]!r} -> {trainer.data.train[0][1]!r}; "
          f"stop at 99% exact match on {len(trainer.data.val)} held-out dates.")
    _train(trainer, out)
    vocabs = trainer.data.src_vocab, trainer.data.tgt_vocab
    wild, wrong = wild_accuracy(trainer.model, *vocabs)
    val = (trainer.state.best or {}).get("val_exact", float("nan"))
    print(f"\nexact match: {100 * val:.1f}% on {len(trainer.data.val)} held-out generated dates, "
          f"{100 * wild:.1f}% on {len(wild_dates())} hand-written \"wild\" dates"
          + "".join(f"\n  wild: {t!r} -> {got!r}, want {want!r}" for t, want, got in wrong))
    print("\nUnseen dates. Rows: output characters; columns: input characters (<eos> = end "
          "of sequence);\na dark cell is where the decoder looked while writing that row's "
          "character.\n")
    show(read_dates(trainer.model, *vocabs, DEMO_DATES), *vocabs, True, out)
    print(f"total time {fmt_time(time.perf_counter() - started)}; try: python -m models translate "
          f"{out} \"3rd of May 1999\" --beam 4")


def cmd_compare(a) -> None:
    cfg = CompareConfig(**{k: getattr(a, k) for k in vars(CompareConfig())})
    writable_folder(a.out)  # before training, not after
    results = compare_length(cfg)
    print("\nheld-out exact match by source length:\n" + by_length_table(results) + "\n")
    print(by_length_text(results))
    path = free_name(a.out, "exact_vs_length", "svg")  # an earlier plot is kept
    by_length_svg(results, path)
    print(f"plot written to {path}")


def cmd_inspect(a) -> None:
    print(inspect_run(a.run, a.n, not a.no_svg)[0])


def cmd_compare_scores(a) -> None:
    cfg = ScoresConfig(**{k: getattr(a, k) for k in vars(ScoresConfig())})
    print(f"{cfg.task}: {cfg.n_train} training pairs, {cfg.epochs} epochs of batches of "
          f"{cfg.batch_size} for every score (seed {cfg.seed}); exact match on {cfg.n_val} "
          "held-out pairs")
    results = compare_scores(cfg)
    print("\n" + scores_table(results))


def cmd_compare_models(a) -> None:
    if a.long_len <= a.max_len:
        raise ValueError(f"compare-models: --long-len must be more than --max-len ({a.max_len}): "
                         f"the held-out sources longer than any in training, got {a.long_len}")
    cfg = ModelsConfig(**{k: getattr(a, k) for k in vars(ModelsConfig())})
    writable_folder(a.out)  # before training, not after
    print(f"{cfg.task}: {cfg.n_train} training pairs of lengths {cfg.min_len}..{cfg.max_len}, "
          f"{cfg.epochs} epochs of batches of {cfg.batch_size} for every model (seed {cfg.seed})")
    results, trainers, data, _ = compare_models(cfg)
    print(f"\nheld-out: {cfg.n_val} pairs like the training ones, plus sources of "
          f"{cfg.max_len + 1}..{cfg.long_len} characters; target {100 * cfg.target:g}% exact\n"
          + models_table(results, cfg.max_len))
    text = max((s for s, _ in data.val), key=len)  # the longest held-out example of training length
    maps = attention_maps(trainers, data, text)
    print("\n" + heads_text(maps, data.src_vocab, data.tgt_vocab))
    paths = heads_svg(maps, data.src_vocab, data.tgt_vocab,
                      free_name(a.out, "cross_attention_heads", "svg"),
                      free_name(a.out, "encoder_self_attention", "svg"))
    print("pictures written to " + " and ".join(paths))


def estimate_seconds(trainer: Trainer, batches: int = 5) -> float:
    """The longest the run can take on this machine: forward and backward of a few batches
    (cut, as training cuts them, from a pool sorted by length) and a greedy pass over 100
    held-out pairs, timed here and scaled to every epoch's batches and evaluation. The weights,
    the optimizer and the training generator are left untouched."""
    cfg, model, bs = trainer.config, trainer.model, trainer.config.batch_size
    rng = np.random.default_rng(0)  # not the run's generator: the run stays reproducible
    pool = sorted(range(min(len(trainer.src), POOL * bs)), key=lambda i: len(trainer.src[i]))
    cut = [pool[i:i + bs] for i in range(0, len(pool), bs)]
    times = []
    for k in [0] + list(np.linspace(0, len(cut) - 1, batches).round().astype(int)):
        src, src_mask = pad_batch([trainer.src[i] for i in cut[k]])      # (B, S) each
        tgt, tgt_mask = pad_batch([trainer.tgt[i] for i in cut[k]])      # (B, T) each
        t0 = time.perf_counter()
        logits, _ = model(src, tgt, src_mask, cfg.teacher_forcing, rng)  # (B, T, V)
        masked_cross_entropy(logits, tgt, tgt_mask).backward()
        times.append(time.perf_counter() - t0)
    trainer.optimizer.zero_grad()
    per_batch = float(np.mean(times[1:]))  # the first batch warms up (allocations): not counted
    val = trainer.data.val[:100]
    t0 = time.perf_counter()
    trainer.evaluate(val)
    per_eval = (time.perf_counter() - t0) * len(trainer.data.val) / max(len(val), 1)
    n_batches = -(-len(trainer.src) // bs)
    return cfg.epochs * (n_batches * per_batch + per_eval)


def plan_line(trainer: Trainer, seconds: float) -> str:
    """What a run will do and about how long it takes (at most: it may stop at its target)."""
    cfg, c = trainer.config, trainer.model.config
    minutes = max(1, round(seconds / 60))
    stop = f", or less: it stops at {100 * cfg.target:g}% held-out exact match" \
        if cfg.target <= 1 else ""
    return (f"training {c.decoder} on {cfg.task}: {cfg.epochs} epochs of {len(trainer.src)} pairs, "
            f"about {minutes} minute{'s' * (minutes != 1)} on this machine (measured on a few "
            f"batches{stop}); Ctrl-C stops and keeps the checkpoint")


def main(argv=None) -> int:
    """Run the command line ``argv``; any output encoding, and quiet on a closed pipe."""
    return run_main(_main, argv)


def _main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    a = parser.parse_args(argv)
    if a.command is None:
        a = parser.parse_args(argv + ["demo"])
    if a.command == "train":
        a.given = given_train_options(argv)
    commands = {"demo": cmd_demo, "train": cmd_train, "translate": cmd_translate,
                "compare-length": cmd_compare, "compare-scores": cmd_compare_scores,
                "compare-models": cmd_compare_models,
                "inspect": cmd_inspect, "graph": cmd_graph}
    try:
        check_limits(a)
        with blas.threads(a.threads):
            commands[a.command](a)
    except KeyboardInterrupt as e:  # exit status 128 + the signal, as a shell reports it
        signum = e.signum if isinstance(e, Interrupted) else signal.SIGINT  # SIGTERM, SIGHUP too
        with contextlib.suppress(ValueError):  # ValueError: not the main thread
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # more Ctrl-C: we are exiting already
        if not isinstance(e, Interrupted):  # training's handler has said it already
            print("interrupted (Ctrl-C)", file=sys.stderr)
        return 128 + signum
    except BrokenPipeError:  # the reader went away (`| head`): run_main ends quietly
        raise
    except (CheckpointError, ValueError, FloatingPointError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
