"""The command line of ``python -m models``: its parsers (``build_parser``), the model settings
they name (``model_config``), which train options were given (``given_train_options``) and
the checks on options that argparse cannot make: ``check_limits`` (every number that sets
memory or time within its ``LIMITS``, every float finite), ``check_train_options`` (options
the chosen decoder does not read, or that ``--resume`` would ignore) and
``check_translate_options`` (the texts, and ``--beam`` × their length).
``USAGE`` is what ``python -m models --help`` prints above the options. The help speaks the
language ``--lang`` names (``language_of`` reads it before the parser is built).
"""
from __future__ import annotations

import argparse
import math
import os
import re

from minigrad import i18n
from minigrad.draw.common import columns
from minigrad.i18n import translator
from models.app import dates
from models.app.compare import CompareConfig, ScoresConfig
from models.app.compare_models import ModelsConfig
from models.app.data import TASKS
from models.app.graphs import EXTENSIONS
from models.decoders import SCORES
from models.luong import LUONG_SCORES
from models.app.checks import MAX_LAYERS, MAX_LEN, MAX_WIDTH
from models.config import DECODERS, DTYPES

_ = translator("models")

USAGE = """``python -m models``: train, translate and compare; with no arguments, the main demo.

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
MAX_BEAM = 1000  # wider beams help nothing here and hold K copies of the decoder state
MAX_DECODE = 1000  # --max-len: output characters per text (the toy tasks need < 40)
MAX_TEXT = 1000  # characters per translate text (a date is < 40)
MAX_TEXTS = 1000  # texts per translate command
MAX_BEAM_CELLS = 100_000  # --beam × the longest text: the beam holds K copies of the annotations
MAX_EPOCHS = 100_000
MAX_BATCH = 4096
RESUME_OPTIONS = {"resume", "out", "time_limit"}  # the train options --resume goes with
# Every number an option gives that sets memory or time: (least, most), most None where a
# later check sizes it (--n-train/--n-val: the memory their pairs need; train --max-len:
# TrainConfig's MAX_LEN). Options of one name mean the same in every command, except those
# in COMMAND_LIMITS. Floats must be finite too, except where inf means "none" (INF_OK).
LIMITS = {"threads": (1, 256), "seed": (0, None), "n_train": (1, None), "n_val": (1, None),
          "min_len": (1, None), "max_len": (1, None), "epochs": (1, MAX_EPOCHS),
          "batch_size": (1, MAX_BATCH), "embed": (1, MAX_WIDTH), "hidden": (1, MAX_WIDTH),
          "dec_hidden": (1, MAX_WIDTH), "attn": (1, MAX_WIDTH), "d_model": (1, MAX_WIDTH),
          "heads": (1, MAX_WIDTH), "ff": (1, 4 * MAX_WIDTH), "layers": (1, MAX_LAYERS),
          "window": (0, MAX_WIDTH), "n": (1, 100_000), "long_len": (1, MAX_LEN),
          "n_long": (1, 100_000), "target": (0, None), "time_limit": (0, None)}
COMMAND_LIMITS = {
    "translate": {"max_len": (1, MAX_DECODE), "beam": (0, MAX_BEAM), "length_penalty": (0, 10)},
    "graph": {"length": (4, 50), "batch": (1, 128), "vocab": (2, 500)},  # traced: <= 0.8 GB
    "compare-models": {"target": (0, 1)},
    "nanotrain": {"train_size": (1, 10**6), "val_size": (1, 10**5), "lr_floor": (0, 1),
                  "lr": (1e-9, None), "clip": (1e-9, None)}}  # a step or a norm of 0: no training
INF_OK = {"clip", "time_limit"}  # inf: no clipping, no time limit
OPTION = {"dropout": "--attn-dropout"}  # the option of a setting whose name differs
# train options that only some decoders read: given for another, they are refused
APPLIES = {"cell": ("luong",), "input_feeding": ("luong",), "combine": ("luong",),
           "score": ("bahdanau", "luong"), "attn": ("bahdanau", "luong"),
           "embed": ("bahdanau", "luong", "plain"), "hidden": ("bahdanau", "luong", "plain"),
           "dec_hidden": ("bahdanau", "luong", "plain"),
           "reset_before": ("bahdanau", "luong", "plain"),
           **dict.fromkeys(("layers", "heads", "d_model", "ff", "activation", "positions"),
                           ("transformer",))}


class _Help(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs keep their line breaks; an option's help is wrapped to the
    terminal's columns, where a Chinese character takes two (and a line may break next to one)."""

    def _split_lines(self, text, width):
        if columns(text) == len(text):  # no wide characters: argparse's own wrapping
            return super()._split_lines(text, width)
        # pieces: spaces, a word, or one wide character; an opening bracket joins the piece
        # after it, and a closing punctuation mark never starts a line
        lines, line = [], ""
        for piece in re.findall(r"\s+|[（“]*(?:[^\s\u2e80-\uffef]+|.)", " ".join(text.split())):
            closing = piece in "，。；：、）”！？"
            if line and columns(line + piece) > width and not piece.isspace() and not closing:
                lines.append(line.rstrip())
                line = ""
            line += "" if piece.isspace() and not line else piece
        return lines + [line.rstrip()] if line else lines


class _HelpWithDefaults(_Help, argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` shows each option's default, in the language of the messages, unless its
    help already says it (in English or Chinese) or there is none to show (None, an off flag)."""

    def _get_help_string(self, action):
        unset = action.default is None or action.default is False  # 0 is a default to show
        if unset or any(word in (action.help or "") for word in ("default", "默认")):
            return action.help
        return super()._get_help_string(action).replace(" (default: %(default)s)",
                                                        _(" (default: %(default)s)"))


def _model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(_("model"))
    g.add_argument("--decoder", choices=DECODERS, default="bahdanau", help=_("the decoder"))
    g.add_argument("--score", choices=sorted(set(SCORES + LUONG_SCORES)), default=None,
                   help=_("attention score (default: additive for bahdanau, general for luong)"))
    g.add_argument("--embed", type=int, default=32, help=_("embedding size E"))
    g.add_argument("--hidden", type=int, default=64, help=_("encoder hidden size per direction"))
    g.add_argument("--dec-hidden", type=int, default=None, help=_(
        "decoder hidden size (default: 64, or 2 × --hidden for the dot scores)"))
    g.add_argument("--attn", type=int, default=64, help=_("attention width A (additive, concat)"))
    g.add_argument("--input-feeding", action="store_true", help=_(
        "luong: feed h̃_{t−1} back into the RNN (Luong et al. 2015 §3.3; not in the sources, "
        "so off by default)"))
    g.add_argument("--combine", choices=("concat", "gate"), default="concat", help=_(
        "luong: h̃_t = tanh(W_c [c_t; s_t]) or a learned gate (source 003 §3.1)"))
    g.add_argument("--cell", choices=("gru", "lstm"), default="gru",
                   help=_("luong decoder's cell"))
    g.add_argument("--window", type=int, default=None, metavar="W", help=_(
        "local-m/local-p: the half-width D (default 2); any other score: truncated attention, "
        "weight 0 where |j - t| > W (default: the whole source)"))
    g.add_argument("--temperature", type=float, default=1.0, metavar="T", help=_(
        "α = softmax(e / T): below 1 sharper, above 1 flatter (source 003 §6)"))
    g.add_argument("--attn-dropout", "--dropout", dest="dropout", type=float, default=0.0,
                   metavar="P", help=_("dropout on the attention weights α, in training only "
                                       "(source 003 §6; every decoder with attention)"))
    g.add_argument("--reset-before", action="store_true", help=_(
        "Cho et al. 2014's GRU (reset gate before W_hn) instead of PyTorch's"))
    g.add_argument("--dtype", choices=sorted(DTYPES), default="float32",
                   help=_("floating-point type of the weights"))
    t = p.add_argument_group(_("transformer (--decoder transformer)"))
    t.add_argument("--layers", type=int, default=2, help=_("layers per stack L"))
    t.add_argument("--heads", type=int, default=4, help=_("attention heads h"))
    t.add_argument("--d-model", type=int, default=64, help=_("model width D"))
    t.add_argument("--ff", type=int, default=None, help=_("feed-forward width (default 2D)"))
    t.add_argument("--activation", choices=("relu", "gelu"), default="relu",
                   help=_("feed-forward activation"))
    t.add_argument("--positions", choices=("sinusoidal", "learned"), default="sinusoidal",
                   help=_("position encodings"))


def _train_options(p: argparse.ArgumentParser, task: str = "dates") -> None:
    g = p.add_argument_group(_("training"))
    g.add_argument("--task", choices=sorted(TASKS), default=task, help=_("what to learn"))
    g.add_argument("--n-train", type=int, default=20000, help=_("training pairs"))
    g.add_argument("--n-val", type=int, default=1000, help=_("held-out pairs"))
    g.add_argument("--min-len", type=int, default=3,
                   help=_("copy/reverse/sort: shortest source"))
    g.add_argument("--max-len", type=int, default=10, help=_("copy/reverse/sort: longest source"))
    g.add_argument("--epochs", type=int, default=20, help=_("at most this many epochs"))
    g.add_argument("--batch-size", type=int, default=64, help=_("pairs per batch"))
    g.add_argument("--lr", type=float, default=3e-3,
                   help=_("Adam's step size (its peak, cosine)"))
    g.add_argument("--schedule", choices=("cosine", "constant"), default="cosine", help=_(
        "step size: warm-up then cosine decay to 5%% of --lr (default), or constant"))
    g.add_argument("--clip", type=float, default=1.0, help=_("max global gradient norm"))
    g.add_argument("--target", type=float, default=0.99,
                   help=_("stop at this held-out exact match"))
    g.add_argument("--teacher-forcing", type=float, default=1.0,
                   help=_("share of decoder steps fed the true previous token"))
    g.add_argument("--seed", type=int, default=0,
                   help=_("seeds the data, the weights and training"))
    g.add_argument("--time-limit", type=float, default=None,
                   help=_("stop after this many seconds"))


def _demo_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="runs/dates", help=_("checkpoint and SVG folder"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-train", type=int, default=20000,
                   help=_("training dates (default 20000)"))
    p.add_argument("--epochs", type=int, default=10, help=_(
        "at most this many (default 10; it stops at 99%% held-out exact match after at least 2)"))


def _run_options(p: argparse.ArgumentParser) -> None:
    """train: where the run goes (a new folder, --resume, --overwrite)."""
    p.add_argument("--out", default=None, metavar="DIR", help=_(
        "checkpoint folder (default: runs/<task>, or runs/<task>-2 ... when that one is in "
        "use); a folder that holds a checkpoint is refused unless --overwrite is given"))
    p.add_argument("--resume", metavar="DIR", help=_(
        "continue the run saved in DIR exactly, with the settings it was saved with"))
    p.add_argument("--overwrite", action="store_true",
                   help=_("replace the checkpoint already in --out DIR"))


def _translate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("checkpoint", help=_("checkpoint folder (or its checkpoint.json)"))
    p.add_argument("text", nargs="+")
    p.add_argument("--beam", type=int, default=0, metavar="K", help=_("beam search of width K"))
    p.add_argument("--length-penalty", type=float, default=0.6)
    p.add_argument("--max-len", type=int, default=64)
    p.add_argument("--svg", metavar="DIR", help=_("also write each heatmap as an SVG file here"))
    p.add_argument("--no-heatmap", action="store_true")
    p.add_argument("--month-first", action="store_true", help=_(
        "dates: read ambiguous numeric dates (03/04/2020) month first (US) instead of day first"))
    p.add_argument("--temperature", type=float, default=None, metavar="T", help=_(
        "decode with α = softmax(e / T) (default: the temperature the model was trained with)"))


def _inspect_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", help=_("a run folder (or its checkpoint.json)"))
    p.add_argument("--n", type=int, default=200, help=_("held-out pairs to measure"))
    p.add_argument("--no-svg", action="store_true",
                   help=_("draw the curves in the terminal only"))


def _config_options(p: argparse.ArgumentParser, config) -> None:
    """One option per field of ``config`` (a compare command's settings), its default the
    field's."""
    for name, value in vars(config).items():
        p.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)


def _graph_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fmt", choices=sorted(EXTENSIONS), default="svg")
    p.add_argument("--out", default="runs/graphs",
                   help=_("folder for gru_step.* and seq2seq_loss.*"))
    for name, value in (("seed", 0), ("vocab", 32), ("batch", 64), ("length", 20)):
        p.add_argument("--" + name, type=int, default=value)


def language_of(argv) -> str | None:
    """The language ``--lang`` names in ``argv`` (None: not given, or not a language), read
    before the parser is built, so that ``--help`` speaks it too; the parser then checks it."""
    pre = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    pre.add_argument("--lang")
    try:
        lang = pre.parse_known_args(argv)[0].lang
    except argparse.ArgumentError:  # "--lang" with no value: the parser says so
        return None
    return lang if lang in i18n.LANGUAGES else None


def build_parser(train_defaults: dict | None = None) -> argparse.ArgumentParser:
    """The CLI's parser, its help in the current language; ``train_defaults`` overrides the
    train subcommand's defaults."""
    threads_help = _("BLAS threads (default 1: faster for these small matrices)")
    parser = argparse.ArgumentParser(prog="python -m models", description=_(USAGE),
                                     formatter_class=_Help)
    parser.add_argument("--threads", type=int, default=1, help=threads_help)
    i18n.add_argument(parser)
    common = argparse.ArgumentParser(add_help=False)  # --threads and --lang after the
    common.add_argument("--threads", type=int, default=argparse.SUPPRESS,  # subcommand too,
                        help=threads_help)  # with no default there, so it cannot undo one
    common.add_argument("--lang", choices=i18n.LANGUAGES, default=argparse.SUPPRESS,  # given
                        help=_("language of the messages: en, zh (Simplified) or zh-TW "
                               "(Traditional); default: from the locale"))
    sub = parser.add_subparsers(dest="command")
    add = lambda name, **kw: sub.add_parser(name, parents=[common],
                                            formatter_class=_HelpWithDefaults, **kw)
    _demo_options(add("demo", help=_("the main demo (what no arguments runs)")))
    train = add("train", help=_("train a model and checkpoint it"))
    _model_options(train)
    _train_options(train)
    _run_options(train)
    if train_defaults:
        train.set_defaults(**train_defaults)
    _translate_options(add("translate", help=_("translate text with a trained checkpoint"),
                           epilog=_(dates.HELP)))
    _inspect_options(add("inspect", help=_(
        "source 003 §6's debugging checks on a saved run: diagonality, lazy attention, entropy "
        "per step, gradient through attention vs recurrence")))
    cmp_ = add("compare-length", help=_("exact match vs source length, with and without "
                                        "attention (Bahdanau et al.'s Figure 2 in miniature)"))
    _config_options(cmp_, CompareConfig())
    cmp_.add_argument("--out", default="runs/compare-length", help=_("folder for the SVG"))
    _config_options(add("compare-scores", help=_(
        "the four scores of sources 000 and 003 trained on the same task with the same budget: "
        "held-out exact match and training time")), ScoresConfig())
    models = add("compare-models", help=_(
        "Bahdanau, Luong and a Transformer at similar sizes on one budget: time to target, "
        "exact match by length, decoding speed, heads"))
    _config_options(models, ModelsConfig())
    models.add_argument("--out", default="runs/compare-models", help=_("folder for the SVGs"))
    _graph_options(add("graph", help=_(
        "draw a GRU step and a seq2seq loss (collapsed) with minigrad.viz")))
    add("explore", help=_("one HTML page of a run: its graph, backward pass and attention "
                          "(python -m models explore RUN --help)"))  # run by models.app.explore
    return parser


def given_train_options(argv) -> set:
    """The train options named on the command line ``argv`` (whatever their values)."""
    dests = set(vars(build_parser().parse_args(["train"]))) - {"command", "threads", "lang"}
    unset = object()  # a default no command line can produce
    a = vars(build_parser(train_defaults=dict.fromkeys(dests, unset)).parse_args(argv))
    return {d for d in dests if a.get(d, unset) is not unset}


def model_config(a) -> dict:
    """The ``ModelConfig`` settings the train options ``a`` name (score and sizes defaulted)."""
    score = a.score or ("general" if a.decoder == "luong" else "additive")
    dot, local = score in ("dot", "scaled-dot"), score.startswith("local")
    return dict(embed=a.embed, hidden=a.hidden, attn=a.attn, decoder=a.decoder, score=score,
                dec_hidden=(a.dec_hidden if a.dec_hidden is not None else
                            2 * a.hidden if dot else 64),
                input_feeding=a.input_feeding, cell=a.cell, combine=a.combine,
                local_window=a.window if local and a.window is not None else 2,
                truncate=None if local else a.window, temperature=a.temperature,
                reset_after=not a.reset_before, dtype=a.dtype, layers=a.layers, heads=a.heads,
                d_model=a.d_model, ff=a.ff if a.ff is not None else 2 * a.d_model,
                dropout=a.dropout,
                activation=a.activation, positions=a.positions)


def option(dest: str) -> str:
    """The command-line option of the setting ``dest`` (``dec_hidden`` → ``--dec-hidden``)."""
    return OPTION.get(dest, "--" + dest.replace("_", "-"))


def check_limits(a, more: dict | None = None) -> None:
    """Refuse a number outside its ``LIMITS`` (or ``COMMAND_LIMITS``, or ``more``), and a float
    option that is not finite, with one line naming the option and the limit. Unset options
    (None) pass."""
    limits = {**LIMITS, **COMMAND_LIMITS.get(a.command, {}), **(more or {})}
    for dest, v in sorted(vars(a).items()):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if isinstance(v, float) and not math.isfinite(v) and not (dest in INF_OK and v > 0):
            raise ValueError(_("{command}: {option} must be a finite number, got {v}").format(
                command=a.command, option=option(dest), v=v))
        lo, hi = limits.get(dest, (None, None))
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            message = (_("{command}: {option} must be at least {lo}, got {v}") if hi is None
                       else _("{command}: {option} must be {lo}..{hi}, got {v}"))
            raise ValueError(message.format(command=a.command, option=option(dest), lo=lo,
                                            hi=hi, v=v))


def check_train_options(a) -> None:
    """train: refuse options the chosen decoder does not read, and options --resume would
    ignore or contradict."""
    if not a.resume:
        for dest in sorted(a.given & set(APPLIES)):
            if a.decoder not in APPLIES[dest]:
                *most, last = APPLIES[dest]
                message = (_("train: {option} applies to the {most} and {last} decoders, not "
                             "to --decoder {decoder}: drop it") if most else
                           _("train: {option} applies to the {last} decoder, not to --decoder "
                             "{decoder}: drop it"))
                raise ValueError(message.format(option=option(dest), most=", ".join(most),
                                                last=last, decoder=a.decoder))
        return
    moved = a.out is not None and os.path.normpath(a.out) != os.path.normpath(a.resume)
    if a.overwrite or moved:
        message = (_("train: --resume {resume} continues the run in that folder: drop "
                     "--overwrite (which would replace it)") if a.overwrite else
                   _("train: --resume {resume} continues the run in that folder: drop "
                     "--out {out}"))
        raise ValueError(message.format(resume=a.resume, out=a.out))
    ignored = ", ".join(option(k) for k in sorted(a.given - RESUME_OPTIONS))
    if ignored:
        raise ValueError(_("train: --resume continues {resume} with the settings it was saved "
                           "with, so {ignored} would be ignored: drop it (or start a new run "
                           "with --out NEW_DIR)").format(resume=a.resume, ignored=ignored))


def check_translate_options(a) -> None:
    """translate: the texts' number and lengths, and --beam × the longest, within bounds
    (before the checkpoint is read)."""
    if len(a.text) > MAX_TEXTS:
        raise ValueError(_("translate: at most {most} texts at once, got {n}").format(
            most=MAX_TEXTS, n=len(a.text)))
    longest = max(len(t) for t in a.text)
    if longest > MAX_TEXT:
        raise ValueError(_("translate: a text may have at most {most} characters, got one of "
                           "{longest}").format(most=MAX_TEXT, longest=longest))
    if a.beam * longest > MAX_BEAM_CELLS:
        raise ValueError(_("translate: --beam × the longest text must be at most {most:,}, got "
                           "{beam} × {longest} = {cells:,}").format(
            most=MAX_BEAM_CELLS, beam=a.beam, longest=longest, cells=a.beam * longest))
