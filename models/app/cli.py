"""``python -m models``: train, translate and compare; with no arguments, the main demo.

    python -m models                      train Bahdanau attention on dates, then translate
                                          unseen dates and draw their alignments
    python -m models train [options]      any task, decoder and score; --resume DIR continues
                                          a run, --overwrite replaces the one in --out DIR
    python -m models translate CHECKPOINT TEXT... [--beam K] [--svg DIR] [--no-heatmap]
                                          [--month-first]  (dates: see translate --help)
    python -m models compare-length       attention vs none: exact match against source length
    python -m models inspect RUN          source 003 §6's debugging checks on a saved run
    python -m models compare-models       Bahdanau, Luong and the Transformer side by side
    python -m models compare-scores       dot, general, concat (Luong) and additive (Bahdanau)
                                          on one budget: held-out exact match and time
    python -m models graph [--fmt svg]    computation graphs: a GRU step, a collapsed seq2seq loss

--threads N goes before or after the subcommand.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
import warnings

from attention import Attention
from attention.masking import check_temperature
from minigrad.runtime import blas
from models.app.checkpoint import CheckpointError, load_checkpoint
from models.app.compare import (CompareConfig, ScoresConfig, compare_length, compare_scores,
                                scores_table)
from models.app import dates
from models.app.data import TASKS
from models.app.datetext import read_dates, wild_accuracy, wild_dates
from models.app.diagnose import inspect_run
from models.app.graphs import EXTENSIONS, cmd_graph
from models.vocab import pad_batch
from models.decoders import SCORES
from models.luong import LUONG_SCORES
from models.app.compare_models import (ModelsConfig, attention_maps, compare_models,
                                       models_table)
from models.app.pictures import (alignment_svg, alignment_text, by_length_svg, by_length_table,
                             by_length_text, curves_svg, heads_svg, heads_text)
from models.app.runs import (foreign_files, free_name, fresh_folder, holds_checkpoint, run_lock,
                         stop_on_ctrl_c, writable_folder)
from models.seq2seq import DECODERS, DTYPES
from models.app.train import Trainer, TrainConfig, fmt_time

DEMO_DATES = ("Thursday, August 29, 2018", "3rd Mar '95", "12/25/2019", "the 5th of November 1605")
MAX_BEAM = 1000  # wider beams help nothing here and hold K copies of the decoder state
MAX_DECODE = 1000  # --max-len: output characters per text (the toy tasks need < 40)
RESUME_OPTIONS = {"resume", "out", "time_limit"}  # the train options --resume goes with


def _model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model")
    g.add_argument("--decoder", choices=DECODERS, default="bahdanau")
    g.add_argument("--score", choices=sorted(set(SCORES + LUONG_SCORES)), default=None,
                   help="attention score (default: additive for bahdanau, general for luong)")
    g.add_argument("--embed", type=int, default=32, help="embedding size E")
    g.add_argument("--hidden", type=int, default=64, help="encoder hidden size per direction")
    g.add_argument("--dec-hidden", type=int, default=None, help="decoder hidden size (default: "
                   "64, or 2 × --hidden for the dot scores)")
    g.add_argument("--attn", type=int, default=64, help="attention width A (additive, concat)")
    g.add_argument("--input-feeding", action="store_true", help="luong: feed h̃_{t−1} back into "
                   "the RNN (Luong et al. 2015 §3.3; not in the sources, so off by default)")
    g.add_argument("--combine", choices=("concat", "gate"), default="concat",
                   help="luong: h̃_t = tanh(W_c [c_t; s_t]) or a learned gate (source 003 §3.1)")
    g.add_argument("--cell", choices=("gru", "lstm"), default="gru", help="luong decoder's cell")
    g.add_argument("--window", type=int, default=None, metavar="W", help="local-m/local-p: the "
                   "half-width D (default 2); any other score: truncated attention, weight 0 "
                   "where |j - t| > W (default: the whole source)")
    g.add_argument("--temperature", type=float, default=1.0, metavar="T",
                   help="α = softmax(e / T): below 1 sharper, above 1 flatter (source 003 §6)")
    g.add_argument("--attn-dropout", "--dropout", dest="dropout", type=float, default=0.0,
                   metavar="P", help="dropout on the attention weights α, in training only "
                   "(source 003 §6; every decoder with attention)")
    g.add_argument("--reset-before", action="store_true",
                   help="Cho et al. 2014's GRU (reset gate before W_hn) instead of PyTorch's")
    g.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    t = p.add_argument_group("transformer (--decoder transformer)")
    t.add_argument("--layers", type=int, default=2, help="layers per stack L")
    t.add_argument("--heads", type=int, default=4, help="attention heads h")
    t.add_argument("--d-model", type=int, default=64, help="model width D")
    t.add_argument("--ff", type=int, default=None, help="feed-forward width (default 2D)")
    t.add_argument("--activation", choices=("relu", "gelu"), default="relu")
    t.add_argument("--positions", choices=("sinusoidal", "learned"), default="sinusoidal")


def _train_options(p: argparse.ArgumentParser, task: str = "dates") -> None:
    g = p.add_argument_group("training")
    g.add_argument("--task", choices=sorted(TASKS), default=task)
    g.add_argument("--n-train", type=int, default=20000)
    g.add_argument("--n-val", type=int, default=1000)
    g.add_argument("--min-len", type=int, default=3, help="copy/reverse/sort source lengths")
    g.add_argument("--max-len", type=int, default=10)
    g.add_argument("--epochs", type=int, default=20)
    g.add_argument("--batch-size", type=int, default=64)
    g.add_argument("--lr", type=float, default=3e-3)
    g.add_argument("--schedule", choices=("cosine", "constant"), default="cosine",
                   help="step size: warm-up then cosine decay to 5%% of --lr (default), or constant")
    g.add_argument("--clip", type=float, default=1.0, help="max global gradient norm")
    g.add_argument("--target", type=float, default=0.99,
                   help="stop at this held-out exact match (default 0.99)")
    g.add_argument("--teacher-forcing", type=float, default=1.0)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--time-limit", type=float, default=None, help="stop after this many seconds")


def build_parser(train_defaults: dict | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; ``train_defaults`` overrides the train subcommand's defaults."""
    threads_help = "BLAS threads (default 1: faster for these small matrices)"
    parser = argparse.ArgumentParser(prog="python -m models", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1, help=threads_help)
    threads = argparse.ArgumentParser(add_help=False)  # --threads after the subcommand too,
    threads.add_argument("--threads", type=int, default=argparse.SUPPRESS,  # with no default
                         help=threads_help)  # there, so it cannot undo one given before
    sub = parser.add_subparsers(dest="command")
    add = lambda name, **kw: sub.add_parser(name, parents=[threads], **kw)
    demo = add("demo", help="the main demo (what no arguments runs)")
    demo.add_argument("--out", default="runs/dates", help="checkpoint and SVG folder")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--n-train", type=int, default=20000, help="training dates (default 20000)")
    demo.add_argument("--epochs", type=int, default=10, help="at most this many (default 10; "
                      "it stops at 99%% held-out exact match after at least 2)")
    train = add("train", help="train a model and checkpoint it")
    _model_options(train)
    _train_options(train)
    train.add_argument("--out", default=None, metavar="DIR", help="checkpoint folder (default: "
                       "runs/<task>, or runs/<task>-2 ... when that one is in use); a folder "
                       "that holds a checkpoint is refused unless --overwrite is given")
    train.add_argument("--resume", metavar="DIR", help="continue the run saved in DIR exactly, "
                       "with the settings it was saved with")
    train.add_argument("--overwrite", action="store_true",
                       help="replace the checkpoint already in --out DIR")
    if train_defaults:
        train.set_defaults(**train_defaults)
    tr = add("translate", help="translate text with a trained checkpoint", epilog=dates.HELP,
             formatter_class=argparse.RawDescriptionHelpFormatter)
    tr.add_argument("checkpoint", help="checkpoint folder (or its checkpoint.json)")
    tr.add_argument("text", nargs="+")
    tr.add_argument("--beam", type=int, default=0, metavar="K", help="beam search of width K")
    tr.add_argument("--length-penalty", type=float, default=0.6)
    tr.add_argument("--max-len", type=int, default=64)
    tr.add_argument("--svg", metavar="DIR", help="also write each heatmap as an SVG file here")
    tr.add_argument("--no-heatmap", action="store_true")
    tr.add_argument("--month-first", action="store_true", help="dates: read ambiguous numeric "
                    "dates (03/04/2020) month first (US) instead of day first")
    tr.add_argument("--temperature", type=float, default=None, metavar="T", help="decode with "
                    "α = softmax(e / T) (default: the temperature the model was trained with)")
    ins = add("inspect", help="source 003 §6's debugging checks on a saved run: diagonality, "
              "lazy attention, entropy per step, gradient through attention vs recurrence")
    ins.add_argument("run", help="a run folder (or its checkpoint.json)")
    ins.add_argument("--n", type=int, default=200, help="held-out pairs to measure")
    ins.add_argument("--no-svg", action="store_true", help="draw the curves in the terminal only")
    cmp_ = add("compare-length", help="exact match vs source length, with and "
                          "without attention (Bahdanau et al.'s Figure 2 in miniature)")
    defaults = CompareConfig()
    for name, value in vars(defaults).items():
        cmp_.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)
    cmp_.add_argument("--out", default="runs/compare-length", help="folder for the SVG")
    scores = add("compare-scores", help="the four scores of sources 000 and 003 trained on the "
                 "same task with the same budget: held-out exact match and training time")
    for name, value in vars(ScoresConfig()).items():
        scores.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)
    models = add("compare-models", help="Bahdanau, Luong and a Transformer at similar sizes on "
                 "one budget: time to target, exact match by length, decoding speed, heads")
    for name, value in vars(ModelsConfig()).items():
        models.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)
    models.add_argument("--out", default="runs/compare-models", help="folder for the SVGs")
    graph = add("graph", help="draw a GRU step and a seq2seq loss (collapsed) with minigrad.viz")
    graph.add_argument("--fmt", choices=sorted(EXTENSIONS), default="svg")
    graph.add_argument("--out", default="runs/graphs", help="folder for gru_step.* and seq2seq_loss.*")
    for name, value in (("seed", 0), ("vocab", 32), ("batch", 64), ("length", 20)):
        graph.add_argument("--" + name, type=int, default=value)
    return parser


def _model_config(a) -> dict:
    score = a.score or ("general" if a.decoder == "luong" else "additive")
    dot, local = score in ("dot", "scaled-dot"), score.startswith("local")
    return dict(embed=a.embed, hidden=a.hidden, attn=a.attn, decoder=a.decoder, score=score,
                dec_hidden=a.dec_hidden or (2 * a.hidden if dot else 64),
                input_feeding=a.input_feeding, cell=a.cell, combine=a.combine,
                window=a.window if local and a.window is not None else 2,
                truncate=None if local else a.window, temperature=a.temperature,
                reset_after=not a.reset_before, dtype=a.dtype, layers=a.layers, heads=a.heads,
                d_model=a.d_model, ff=a.ff or 2 * a.d_model, dropout=a.dropout,
                activation=a.activation, positions=a.positions)


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
    """Under the folder's lock: never a checkpoint unless --overwrite, never the user's files."""
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
    try:
        with stop_on_ctrl_c() as flag:
            trainer.run(folder=out, time_limit=time_limit, should_stop=lambda: bool(flag))
    except KeyboardInterrupt:
        print(f"\naborted: {out} keeps the last checkpoint written (--resume {out} continues it)"
              if holds_checkpoint(out) else "\naborted before the first checkpoint: nothing was "
              "saved", file=sys.stderr)
        raise
    if trainer.state.history or trainer.state.curve:
        curves_svg(trainer.state, os.path.join(out, "training.svg"))
    print(f"checkpoint: {out}  (loss curve: {os.path.join(out, 'training.svg')})")
    if flag:  # stopped by Ctrl-C, checkpoint written: exit as an interrupted program does
        raise KeyboardInterrupt


def cmd_train(a) -> None:
    if a.time_limit is not None and not a.time_limit >= 0:
        raise ValueError(f"train: --time-limit must be >= 0 seconds, got {a.time_limit}")
    if a.resume:
        moved = a.out is not None and os.path.normpath(a.out) != os.path.normpath(a.resume)
        if a.overwrite or moved:
            drop = "--overwrite (which would replace it)" if a.overwrite else f"--out {a.out}"
            raise ValueError(f"train: --resume {a.resume} continues the run in that folder: "
                             f"drop {drop}")
        ignored = ", ".join("--" + k.replace("_", "-") for k in sorted(a.given - RESUME_OPTIONS))
        if ignored:
            raise ValueError(f"train: --resume continues {a.resume} with the settings it was saved "
                             f"with, so {ignored} would be ignored: drop it (or start a new run "
                             "with --out NEW_DIR)")
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
        return
    cfg = TrainConfig(task=a.task, n_train=a.n_train, n_val=a.n_val, min_len=a.min_len,
                      max_len=a.max_len, batch_size=a.batch_size, lr=a.lr, clip=a.clip,
                      epochs=a.epochs, target=a.target, teacher_forcing=a.teacher_forcing,
                      seed=a.seed, schedule=a.schedule)
    trainer = Trainer.create(cfg, _model_config(a))
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


def translate_texts(model, src_vocab, tgt_vocab, texts, beam=0, length_penalty=0.6,
                    max_len=64) -> list:
    """[(text, Translation)] for each text (unknown characters → <unk>, with a warning)."""
    for t in texts:
        if not t.strip():
            raise ValueError("translate: empty text; give at least one character to translate")
    src, mask = pad_batch([src_vocab.encode(t) for t in texts])  # (B, S) each
    outs = (model.beam(src, beam, length_penalty, max_len, mask) if beam
            else model.greedy(src, max_len, mask))
    return list(zip(texts, outs))


def set_temperature(model, temperature: float) -> None:
    """Decode ``model`` with α = softmax(e / T) (source 003 §6): its attention's T becomes
    ``temperature``. Only the global attention of the bahdanau and luong decoders has one."""
    attention = getattr(model.decoder, "attention", None)
    if not isinstance(attention, Attention):
        raise ValueError(f"translate: --temperature needs global attention; this model has the "
                         f"{model.config.decoder!r} decoder with the {model.config.score!r} score")
    attention.temperature = check_temperature("translate: --temperature", temperature)


def show(results, src_vocab, tgt_vocab, heatmaps=True, svg_dir=None) -> None:
    """Print each translation (and its heatmap); SVG heatmaps go to new files in ``svg_dir``.
    ``results``: (text, Translation) pairs, or ``datetext.Reading``s (with their notes)."""
    k = 1
    for item in results:
        typed, text, out, notes = ((item.text, item.model_input, item.translation, item.notes)
                                   if hasattr(item, "notes") else (item[0], *item, []))
        print(f"{typed!r} -> {tgt_vocab.decode(out.tokens)!r}   (log p = {out.score:.3f})")
        for note in notes:
            print(f"  {note}")
        if heatmaps:
            print(alignment_text(out, text, src_vocab, tgt_vocab))
        if svg_dir and out.weights is not None:
            os.makedirs(svg_dir, exist_ok=True)
            while os.path.exists(os.path.join(svg_dir, f"alignment-{k}.svg")):
                k += 1  # never overwrite an earlier picture: continue the numbering
            path = os.path.join(svg_dir, f"alignment-{k}.svg")
            alignment_svg(out, text, src_vocab, tgt_vocab, path)
            print(f"heatmap written to {path}")
        print()


def cmd_translate(a) -> None:
    if not 0 <= a.beam <= MAX_BEAM:
        raise ValueError(f"translate: --beam must be 1..{MAX_BEAM} (or 0 for greedy), got {a.beam}")
    if not 1 <= a.max_len <= MAX_DECODE:
        raise ValueError(f"translate: --max-len must be 1..{MAX_DECODE}, got {a.max_len}")
    if a.svg:
        writable_folder(a.svg)  # a file, or a folder that cannot be written: before decoding
    model, src_vocab, tgt_vocab, index = load_checkpoint(a.checkpoint)
    is_dates = index.get("task") == "dates"
    if a.month_first and not is_dates:
        raise ValueError("translate: --month-first is for a dates checkpoint; "
                         f"{a.checkpoint} was trained on {index.get('task')!r}")
    if a.temperature is not None:
        set_temperature(model, a.temperature)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if is_dates:  # normalised, ambiguity reported, output checked as a calendar date
            results = read_dates(model, src_vocab, tgt_vocab, a.text, a.beam, a.length_penalty,
                                 a.max_len, "month-first" if a.month_first else "day-first")
        else:
            results = translate_texts(model, src_vocab, tgt_vocab, a.text, a.beam,
                                      a.length_penalty, a.max_len)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    show(results, src_vocab, tgt_vocab, not a.no_heatmap, a.svg)


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


def given_train_options(argv) -> set:
    """The train options named on the command line ``argv`` (whatever their values)."""
    dests = set(vars(build_parser().parse_args(["train"]))) - {"command", "threads"}
    unset = object()  # a default no command line can produce
    a = vars(build_parser(train_defaults=dict.fromkeys(dests, unset)).parse_args(argv))
    return {d for d in dests if a.get(d, unset) is not unset}


def main(argv=None) -> int:
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
        with blas.threads(a.threads):
            commands[a.command](a)
    except KeyboardInterrupt:
        with contextlib.suppress(ValueError):  # ValueError: not the main thread
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # more Ctrl-C: we are exiting already
        print("interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    except (CheckpointError, ValueError, FloatingPointError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
