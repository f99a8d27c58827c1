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

from minigrad import i18n
from minigrad.draw.console import run_main
from minigrad.i18n import translator
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
                                given_train_options, language_of, model_config)
from models.app.pictures import (by_length_svg, by_length_table, by_length_text, curves_svg,
                                 heads_svg, heads_text)
from models.app.runs import (Interrupted, foreign_files, free_name, fresh_folder,
                             holds_checkpoint, run_lock, stop_on_signals, writable_folder)
from models.app.progress import fmt_time
from models.app.train import POOL, Trainer, TrainConfig
from models.app.translate import cmd_translate, show
from models.seq2seq import masked_cross_entropy
from models.vocab import pad_batch

_ = translator("models")

DEMO_DATES = ("Thursday, August 29, 2018", "3rd Mar '95", "12/25/2019", "the 5th of November 1605")


def _fresh(base: str) -> str:
    """A new folder for a run, created by this call: ``base``, or ``base-2`` … (kept)."""
    out = fresh_folder(base)
    if out != os.path.normpath(base):
        message = (_("{base} already holds an earlier run (kept); this run writes into {out}")
                   if holds_checkpoint(base) else
                   _("{base} already holds other files (or another run) (kept); this run "
                     "writes into {out}"))
        print(message.format(base=base, out=out))
    return writable_folder(out)


def _train_folder(a) -> str:
    """The folder for a new run (created; the caller locks it, then ``_check_out``)."""
    if a.out is None:
        if a.overwrite:
            raise ValueError(_("train: --overwrite replaces the checkpoint in --out DIR: "
                               "name it"))
        return _fresh(os.path.join("runs", a.task))
    return writable_folder(a.out)


def _check_out(a, out: str) -> None:
    """Under the folder's lock (which refuses a folder that is neither empty nor a run
    folder): never a checkpoint unless --overwrite, never the user's files."""
    if holds_checkpoint(out) and a.out is not None:
        if not a.overwrite:
            raise ValueError(_("train: {out} already holds a checkpoint. To continue that run: "
                               "--resume {out}; to replace it: --overwrite; or choose another "
                               "--out").format(out=out))
        print(_("--overwrite: the checkpoint in {out} is replaced when this run saves its "
                "first").format(out=out))
    others = foreign_files(out)
    if others:
        shown = ", ".join(others[:3]) + (" …" if len(others) > 3 else "")
        raise ValueError(_("train: {out} holds files a run does not write ({shown}); a run "
                           "never replaces them: choose a new or empty --out folder").format(
            out=out, shown=shown))


def _train(trainer: Trainer, out: str, time_limit=None) -> None:
    """Train into ``out``. A signal (Ctrl-C, SIGTERM, SIGHUP) or a closed stdout stops it
    after the current batch, checkpointed; then it ends as that signal (or pipe) ends a program."""
    try:
        with stop_on_signals() as stop:
            trainer.run(log=stop.log, folder=out, time_limit=time_limit,
                        should_stop=lambda: bool(stop))
    except KeyboardInterrupt:
        message = (_("aborted: {out} keeps the last checkpoint written (--resume {out} "
                     "continues it)") if holds_checkpoint(out) else
                   _("aborted before the first checkpoint: nothing was saved"))
        with contextlib.suppress(OSError, ValueError):
            print("\n" + message.format(out=out), file=sys.stderr)
        raise
    path = os.path.join(out, "training.svg")
    if trainer.state.history or trainer.state.curve:
        curves_svg(trainer.state, path)
        drawn = _("loss curve: {path}").format(path=path)
    else:  # e.g. --time-limit 0: nothing measured, so nothing drawn
        drawn = _("no loss curve: it stopped before a point of the curve was measured")
    saved = (_("checkpoint: {out}  ({drawn})") if holds_checkpoint(out) else
             _("nothing saved in: {out}  ({drawn})"))
    stop.log(saved.format(out=out, drawn=drawn))
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
            print(_("{out} holds a finished run (after epoch {epoch}, step {step}): nothing "
                    "to resume").format(out=out, epoch=st.epoch, step=st.step))
            return
        print(_("resuming {out} at epoch {epoch}, step {step}").format(
            out=out, epoch=st.epoch + 1, step=st.step))
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
        what = (_("transformer, layers L = {layers}, heads h = {heads}, d_model {d_model}").format(
                    layers=c.layers, heads=c.heads, d_model=c.d_model)
                if c.decoder == "transformer" else
                _("{decoder} decoder, {score} score").format(decoder=c.decoder, score=c.score))
        print(_("{task}: {n_train} training and {n_val} held-out pairs; {what}, {n:,} "
                "parameters ({dtype})").format(task=a.task, n_train=len(trainer.data.train),
                                                n_val=len(trainer.data.val), what=what, n=n,
                                                dtype=c.dtype))
        _train(trainer, out, a.time_limit)


def cmd_demo(a) -> None:
    started = time.perf_counter()
    cfg = TrainConfig(task="dates", n_train=a.n_train, n_val=1000, batch_size=64, lr=3e-3,
                      epochs=a.epochs, target=0.99, min_epochs=2, seed=a.seed,
                      schedule="cosine")
    trainer = Trainer.create(cfg, dict(embed=32, hidden=64, dec_hidden=64, attn=64,
                                       dtype="float32"))
    out = _fresh(a.out)
    with run_lock(out):
        _demo(a, trainer, out, started)


def _demo(a, trainer, out, started) -> None:
    source, target = trainer.data.train[0]
    print(_("Training Bahdanau attention (bidirectional GRU encoder, additive score) to "
            "normalise dates:\n{n_train} training pairs such as {source!r} -> {target!r}; stop "
            "at 99% exact match on {n_val} held-out dates.").format(
        n_train=len(trainer.data.train), source=source, target=target,
        n_val=len(trainer.data.val)))
    _train(trainer, out)
    vocabs = trainer.data.src_vocab, trainer.data.tgt_vocab
    wild, wrong = wild_accuracy(trainer.model, *vocabs)
    val = (trainer.state.best or {}).get("val_exact", float("nan"))
    summary = _("exact match: {val:.1f}% on {n_val} held-out generated dates, {wild:.1f}% on "
                "{n_wild} hand-written \"wild\" dates").format(
        val=100 * val, n_val=len(trainer.data.val), wild=100 * wild, n_wild=len(wild_dates()))
    misses = "".join("\n" + _("  wild: {text!r} -> {got!r}, want {want!r}").format(
        text=t, got=got, want=want) for t, want, got in wrong)
    print("\n" + summary + misses)
    print("\n" + _("Unseen dates. Rows: output characters; columns: input characters (<eos> = "
                   "end of sequence);\na dark cell is where the decoder looked while writing "
                   "that row's character.") + "\n")
    show(read_dates(trainer.model, *vocabs, DEMO_DATES), *vocabs, True, out)
    print(_("total time {time}; try: python -m models translate {out} \"3rd of May 1999\" "
            "--beam 4").format(time=fmt_time(time.perf_counter() - started), out=out))


def cmd_compare(a) -> None:
    cfg = CompareConfig(**{k: getattr(a, k) for k in vars(CompareConfig())})
    writable_folder(a.out)  # before training, not after
    results = compare_length(cfg)
    print("\n" + _("held-out exact match by source length:") + "\n" + by_length_table(results)
          + "\n")
    print(by_length_text(results))
    path = free_name(a.out, "exact_vs_length", "svg")  # an earlier plot is kept
    by_length_svg(results, path)
    print(_("plot written to {path}").format(path=path))


def cmd_inspect(a) -> None:
    print(inspect_run(a.run, a.n, not a.no_svg)[0])


def cmd_compare_scores(a) -> None:
    cfg = ScoresConfig(**{k: getattr(a, k) for k in vars(ScoresConfig())})
    print(_("{task}: {n_train} training pairs, {epochs} epochs of batches of {batch_size} for "
            "every score (seed {seed}); exact match on {n_val} held-out pairs").format(
        task=cfg.task, n_train=cfg.n_train, epochs=cfg.epochs, batch_size=cfg.batch_size,
        seed=cfg.seed, n_val=cfg.n_val))
    results = compare_scores(cfg)
    print("\n" + scores_table(results))


def cmd_compare_models(a) -> None:
    if a.long_len <= a.max_len:
        raise ValueError(_("compare-models: --long-len must be more than --max-len ({max_len}): "
                           "the held-out sources longer than any in training, got "
                           "{long_len}").format(max_len=a.max_len, long_len=a.long_len))
    cfg = ModelsConfig(**{k: getattr(a, k) for k in vars(ModelsConfig())})
    writable_folder(a.out)  # before training, not after
    print(_("{task}: {n_train} training pairs of lengths {min_len}..{max_len}, {epochs} epochs "
            "of batches of {batch_size} for every model (seed {seed})").format(
        task=cfg.task, n_train=cfg.n_train, min_len=cfg.min_len, max_len=cfg.max_len,
        epochs=cfg.epochs, batch_size=cfg.batch_size, seed=cfg.seed))
    results, trainers, data = compare_models(cfg)[:3]
    print("\n" + _("held-out: {n_val} pairs like the training ones, plus sources of "
                   "{shortest}..{longest} characters; target {target:g}% exact").format(
        n_val=cfg.n_val, shortest=cfg.max_len + 1, longest=cfg.long_len, target=100 * cfg.target)
          + "\n" + models_table(results, cfg.max_len))
    text = max((s for s, _ in data.val), key=len)  # the longest held-out example of training length
    maps = attention_maps(trainers, data, text)
    print("\n" + heads_text(maps, data.src_vocab, data.tgt_vocab))
    paths = heads_svg(maps, data.src_vocab, data.tgt_vocab,
                      free_name(a.out, "cross_attention_heads", "svg"),
                      free_name(a.out, "encoder_self_attention", "svg"))
    print(_("pictures written to {cross} and {encoder}").format(cross=paths[0],
                                                                  encoder=paths[1]))


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
    stop = _(", or less: it stops at {target:g}% held-out exact match").format(
        target=100 * cfg.target) if cfg.target <= 1 else ""
    about = (_("about 1 minute") if minutes == 1 else
             _("about {minutes} minutes").format(minutes=minutes))
    return _("training {decoder} on {task}: {epochs} epochs of {n} pairs, {about} on this "
             "machine (measured on a few batches{stop}); Ctrl-C stops and keeps the "
             "checkpoint").format(decoder=c.decoder, task=cfg.task, epochs=cfg.epochs,
                                  n=len(trainer.src), about=about, stop=stop)


def main(argv=None) -> int:
    """Run the command line ``argv``; any output encoding, and quiet on a closed pipe."""
    return run_main(_main, argv)


def _main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    i18n.set_language(language_of(argv))  # before the parser is built: --help speaks it too
    if argv[:1] == ["explore"]:  # a run's HTML explorer, with its own parser
        from models.app.explore import main as explore
        return explore(argv[1:])
    parser = build_parser()
    a = parser.parse_args(argv)
    if a.command is None:
        a = parser.parse_args(argv + ["demo"])
    i18n.apply(a)
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
            print(_("interrupted (Ctrl-C)"), file=sys.stderr)
        return 128 + signum
    except BrokenPipeError:  # the reader went away (`| head`): run_main ends quietly
        raise
    except (CheckpointError, ValueError, FloatingPointError, OSError) as e:
        print(_("error: {e}").format(e=e), file=sys.stderr)
        return 2
    return 0
