"""Training: Adam, gradient clipping, a progress line, held-out evaluation, early stop at a
target exact match, and checkpoints that resume exactly.

Randomness. ``TrainConfig.seed`` seeds three generators (``np.random.SeedSequence.spawn``):
the data, the initial weights, and training (batch order, teacher forcing). The training
generator's state (``bit_generator.state``, plain JSON) is saved with every checkpoint, with
the state it had when the current epoch's batch order was drawn; together with Adam's state
this makes a resumed run continue bit for bit: it ends with the weights of an uninterrupted one.

The step size follows ``TrainConfig.schedule``: "constant" (the default here, so code that
configures a run keeps its behaviour) or "cosine", warm-up then cosine decay, which the CLI's
train, demo and compare-length use (see ``models.app.schedule`` for why). The weights with the
best held-out exact match are kept: when a run gets worse, the epoch line says so, and a
finished run ends with (and saves) the best epoch's weights; until then ``best-weights.npz``
in the run folder holds them for ``--resume``.

Batches are bucketed: each epoch shuffles the examples, sorts pools of 16 batches by source
length, cuts them into batches and shuffles the batch order, so little time goes into padding.

Shape letters: N training examples, B batch, S source length, T target length, V target
vocabulary.
"""
from __future__ import annotations

import dataclasses
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

import minigrad as mg
from minigrad import optim

from models.app import checkpoint as ckpt
from models.app.checks import MAX_LEN, check_data_size, check_state, is_int, is_real, need
from models.app.data import TASKS, TaskData, make_task
from models.app.schedule import SCHEDULES, BestWeights, learning_rate
from models.vocab import pad_batch
from models.seq2seq import ModelConfig, Seq2Seq, masked_cross_entropy

POOL = 16   # batches per sorting pool
CURVE = 25  # steps per point of the loss curve
BEST = "best-weights.npz"  # in the run folder: the best held-out epoch's weights
DIVERGED = 25  # a loss per token above DIVERGED · log V (a uniform guess: log V) is divergence


@dataclass
class TrainConfig:
    task: str = "dates"
    n_train: int = 20000
    n_val: int = 1000
    min_len: int = 3          # copy, reverse, sort: source length range (dates ignore it)
    max_len: int = 10
    batch_size: int = 64
    lr: float = 3e-3
    schedule: str = "constant"  # or "cosine" (the CLI's default; see models.app.schedule)
    clip: float = 1.0         # max global gradient norm
    epochs: int = 20
    target: float = 0.99      # stop once held-out exact match reaches this (> 1: never)
    min_epochs: int = 1       # ... but not before this many epochs
    teacher_forcing: float = 1.0
    seed: int = 0

    def __post_init__(self):
        """Refuse settings that would crash later, train nothing, never stop, or not fit in
        memory (a config may also come from a checkpoint anyone wrote)."""
        who = "TrainConfig"
        need(self.task in TASKS, who, f"task must be one of {sorted(TASKS)}", self.task)
        for name in ("n_train", "n_val", "batch_size", "epochs", "min_len", "max_len"):
            v = getattr(self, name)
            need(is_int(v) and v >= 1, who, f"{name} must be a positive int", v)
        need(self.max_len <= MAX_LEN, who, f"max_len must be <= {MAX_LEN}", self.max_len)
        need(is_int(self.min_epochs) and self.min_epochs >= 0, who, "min_epochs must be an int >= 0",
             self.min_epochs)
        need(is_int(self.seed) and self.seed >= 0, who, "seed must be an int >= 0", self.seed)
        need(is_real(self.lr) and 0 < self.lr < math.inf, who, "lr must be a finite number > 0", self.lr)
        need(self.schedule in SCHEDULES, who, f"schedule must be one of {SCHEDULES}", self.schedule)
        need(is_real(self.clip) and self.clip > 0, who,
             "clip (the max gradient norm) must be > 0 (inf: no clipping)", self.clip)
        need(is_real(self.teacher_forcing) and 0 <= self.teacher_forcing <= 1, who,
             "teacher_forcing must be in [0, 1]", self.teacher_forcing)
        need(is_real(self.target) and self.target >= 0, who,
             "target must be >= 0 (above 1: never stop early)", self.target)
        check_data_size(self.n_train + self.n_val, self.max_len)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        if not isinstance(d, dict):
            raise ValueError(f"TrainConfig: expected a dict of settings, got {type(d).__name__}")
        return cls(**{k: v for k, v in d.items() if k in {f.name for f in dataclasses.fields(cls)}})


@dataclass
class TrainState:
    """Where a run is: everything besides weights and Adam that ``--resume`` needs."""
    epoch: int = 0                 # epochs completed
    batch: int = 0                 # batches of the current epoch completed
    step: int = 0                  # optimizer steps in total
    seconds: float = 0.0           # training time so far
    rng: dict | None = None        # training generator's bit_generator.state
    epoch_rng: dict | None = None  # its state before this epoch's batch order was drawn
    sums: dict = field(default_factory=dict)     # running sums over the current epoch
    history: list = field(default_factory=list)  # one dict per finished epoch
    curve: list = field(default_factory=list)    # [step, mean loss of the last CURVE steps]
    best: dict | None = None       # {"epoch", "val_exact"} of the best held-out epoch
    done: bool = False


def seeds(seed: int) -> tuple:
    """Generators for (data, initial weights, training) from one seed."""
    return tuple(np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))


def fmt_time(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


class Trainer:
    """Trains ``model`` on ``data`` with ``config``; ``run()`` returns when done or stopped."""

    def __init__(self, model: Seq2Seq, data: TaskData, config: TrainConfig,
                 rng: np.random.Generator, state: TrainState | None = None):
        self.model, self.data, self.config, self.rng = model, data, config, rng
        self.optimizer = optim.Adam(model.parameters(), lr=config.lr)
        self.state = state or TrainState()
        encode = lambda pairs, v, side: [v.encode(p[side]) for p in pairs]
        self.src = encode(data.train, data.src_vocab, 0)
        self.tgt = encode(data.train, data.tgt_vocab, 1)
        self.decode_len = max(len(t) for _, t in data.train + data.val) + 5
        self.total_steps = config.epochs * math.ceil(len(self.src) / config.batch_size)
        self.best, self._best_saved = BestWeights(), True

    # ---- setting up ------------------------------------------------------------------
    @classmethod
    def create(cls, config: TrainConfig, model_config: dict | None = None) -> "Trainer":
        """Fresh run: the task's data and a model (``model_config`` overrides defaults)."""
        data_rng, init_rng, train_rng = seeds(config.seed)
        data = make_task(config.task, data_rng, config.n_train, config.n_val,
                         config.min_len, config.max_len)
        mc = ModelConfig(len(data.src_vocab), len(data.tgt_vocab), **(model_config or {}))
        return cls(Seq2Seq(mc, init_rng), data, config, train_rng)

    @classmethod
    def resume(cls, folder) -> "Trainer":
        """Continue the run saved in ``folder`` exactly where it stopped."""
        model, _, _, index = ckpt.load_checkpoint(folder)
        if "train" not in index or "state" not in index:
            raise ckpt.CheckpointError(f"checkpoint: {folder} was not saved by training; "
                                       "it has no training state to resume")
        try:
            config = TrainConfig.from_dict(index["train"])
            data = make_task(config.task, seeds(config.seed)[0], config.n_train, config.n_val,
                             config.min_len, config.max_len)
            n_batches = -(-len(data.train) // config.batch_size)
            state = TrainState(**check_state(index["state"], n_batches, config.epochs))
            rng = np.random.default_rng()
            rng.bit_generator.state = state.rng
            if state.epoch_rng is not None:  # checked now, used when the epoch is redrawn
                np.random.default_rng().bit_generator.state = state.epoch_rng
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            raise ckpt.CheckpointError(f"checkpoint: {folder} has a bad training state ({e})") from None
        trainer = cls(model, data, config, rng, state)
        try:
            trainer.optimizer.load_state_dict(ckpt.load_optimizer_state(folder, trainer.optimizer))
        except ckpt.CheckpointError:
            raise
        except ValueError as e:
            raise ckpt.CheckpointError(f"checkpoint: {folder} has a bad optimizer state ({e})") from None
        best = os.path.join(os.fspath(folder), BEST)
        if state.best and os.path.exists(best):
            try:
                trainer.best = BestWeights(state.best["val_exact"], state.best["epoch"], mg.load(best))
            except (KeyError, TypeError, ValueError) as e:
                raise ckpt.CheckpointError(f"checkpoint: {best}: bad best weights ({e})") from None
        return trainer

    def save(self, folder) -> str:
        self.state.rng = self.rng.bit_generator.state
        best = os.path.join(os.fspath(folder), BEST)
        if not self._best_saved and not self.state.done:  # written before the commit
            os.makedirs(folder, exist_ok=True)
            mg.save(self.best.arrays(), best)
            self._best_saved = True
        extra = {"task": self.config.task, "train": dataclasses.asdict(self.config),
                 "state": dataclasses.asdict(self.state)}
        index = ckpt.save_checkpoint(folder, self.model, self.data.src_vocab, self.data.tgt_vocab,
                                     extra, self.optimizer, self.state.step)
        if self.state.done and os.path.exists(best):  # a finished run's weights are the best
            os.remove(best)
        return index

    # ---- one epoch's batches ---------------------------------------------------------
    def epoch_plan(self) -> list:
        """This epoch's batches as index arrays, drawn from the training generator."""
        n, bs = len(self.src), self.config.batch_size
        order = self.rng.permutation(n)                                  # (N,)
        lengths = np.array([len(s) for s in self.src])                   # (N,)
        plan = []
        for start in range(0, n, bs * POOL):
            pool = order[start:start + bs * POOL]                        # (≤ 16B,)
            pool = pool[np.argsort(lengths[pool], kind="stable")]        # the same, by length
            plan += [pool[i:i + bs] for i in range(0, len(pool), bs)]
        return [plan[i] for i in self.rng.permutation(len(plan))]

    def train_step(self, idx) -> dict:
        """Forward, backward, clip, Adam on the examples ``idx``; returns the batch's counts."""
        src, src_mask = pad_batch([self.src[i] for i in idx])           # (B, S) each
        tgt, tgt_mask = pad_batch([self.tgt[i] for i in idx])           # (B, T) each
        # Weights blown up by divergence make NaN here; clip_grad_norm then raises, and run()
        # reports it as "training diverged", so NumPy's "invalid value" warnings are not shown.
        with np.errstate(invalid="ignore"):
            logits, _ = self.model(src, tgt, src_mask, self.config.teacher_forcing, self.rng)  # (B, T, V)
            loss = masked_cross_entropy(logits, tgt, tgt_mask)          # () mean over real tokens
            self.optimizer.zero_grad()
            loss.backward()
        limit = DIVERGED * math.log(len(self.data.tgt_vocab))  # a uniform guess scores log V
        if not loss.item() <= limit:  # float64 rarely overflows: a huge loss says it instead
            raise FloatingPointError(f"the loss per token is {loss.item():.3g}, far above "
                                     f"{limit:.3g} = {DIVERGED} × log V")
        optim.clip_grad_norm(self.optimizer.params, self.config.clip)
        self.optimizer.lr = learning_rate(self.state.step, self.total_steps, self.config.lr,
                                          self.config.schedule)
        self.optimizer.step()
        right = (logits.data.argmax(axis=-1) == tgt) | ~tgt_mask          # (B, T)
        n_tok = int(tgt_mask.sum())
        return {"loss": loss.item() * n_tok, "tokens": n_tok, "correct": int((right & tgt_mask).sum()),
                "exact": int(right.all(axis=1).sum()), "examples": len(idx)}

    # ---- evaluation ------------------------------------------------------------------
    def evaluate(self, pairs=None, batch_size: int = 500) -> dict:
        """Greedy decoding of held-out ``pairs`` (default: the validation set)."""
        return evaluate(self.model, self.data, self.data.val if pairs is None else pairs,
                        self.decode_len, batch_size)

    # ---- the loop --------------------------------------------------------------------
    def run(self, log=print, folder=None, max_steps: int | None = None,
            time_limit: float | None = None, should_stop=lambda: False,
            progress_every: float = 10.0) -> TrainState:
        """Train until ``epochs``, the target, ``max_steps``, ``time_limit`` (seconds) or
        ``should_stop()``; checkpoint into ``folder`` after every epoch and when stopping.
        A progress line goes to ``log`` after every epoch and every ``progress_every`` s."""
        st, cfg = self.state, self.config
        if st.done:
            log("this run is already finished")
            return st
        self.model.train()
        started, seconds0 = time.perf_counter(), st.seconds
        last_line, seen = started, 0  # for the progress line: examples seen in this call
        last_batch = 0.0  # seconds the last batch took
        while st.epoch < cfg.epochs:
            plan = self._this_epochs_plan()
            while st.batch < len(plan):
                # a batch that would end past the time limit is not started (batches may be slow)
                if (max_steps is not None and st.step >= max_steps) or should_stop() or (
                        time_limit is not None
                        and time.perf_counter() - started + last_batch >= time_limit):
                    st.seconds = seconds0 + time.perf_counter() - started
                    if folder is not None:
                        self.save(folder)
                    log(f"stopped at epoch {st.epoch + 1}, batch {st.batch}/{len(plan)} "
                        f"(step {st.step})" + (f"; resume with --resume {folder}" if folder else ""))
                    return st
                try:
                    t0 = time.perf_counter()
                    counts = self.train_step(plan[st.batch])
                    last_batch = time.perf_counter() - t0
                except FloatingPointError as e:  # NaN/inf gradients: stop, and save nothing
                    kept = f"; the last checkpoint in {folder} (if any) is kept" if folder else ""
                    raise FloatingPointError(
                        f"training diverged at epoch {st.epoch + 1}, step {st.step + 1} ({e}){kept}; "
                        f"try a smaller --lr (now {cfg.lr}) or --clip (now {cfg.clip})") from None
                self._count(counts)
                seen += counts["examples"]
                if time.perf_counter() - last_line >= progress_every:
                    last_line = time.perf_counter()
                    log(self._progress_line(len(plan), seen / (last_line - started)))
            st.seconds = seconds0 + time.perf_counter() - started
            self._end_epoch(log)  # sets done when the target is reached
            st.done = st.done or st.epoch >= cfg.epochs
            if st.done:
                self._keep_best(log)
            if folder is not None:
                self.save(folder)
            if st.done:
                break
        if not st.done:  # nothing was left to do
            st.done = True
            if folder is not None:
                self.save(folder)
        self.model.eval()
        return st

    def _this_epochs_plan(self) -> list:
        """The batch order of the current epoch: drawn afresh (and the generator remembered) at
        a new epoch, redrawn from the remembered generator when resuming inside one."""
        st = self.state
        if st.epoch_rng is None:
            st.epoch_rng, st.sums = self.rng.bit_generator.state, {}
            return self.epoch_plan()
        now, self.rng.bit_generator.state = self.rng.bit_generator.state, st.epoch_rng
        plan = self.epoch_plan()
        self.rng.bit_generator.state = now  # the generator goes on where it was
        return plan

    def _count(self, counts: dict) -> None:
        """Add one batch's counts to the epoch's sums; every CURVE steps, a point of the curve."""
        st = self.state
        for k, v in counts.items():
            st.sums[k] = st.sums.get(k, 0) + v
            st.sums["curve_" + k] = st.sums.get("curve_" + k, 0) + v
        st.batch += 1
        st.step += 1
        if st.step % CURVE == 0:
            st.curve.append([st.step, st.sums.pop("curve_loss") / st.sums["curve_tokens"]])
            for k in counts:
                st.sums.pop("curve_" + k, None)

    def _progress_line(self, n_batches: int, rate: float) -> str:
        st, s = self.state, self.state.sums
        left = (n_batches - st.batch) * self.config.batch_size / max(rate, 1e-9)
        return (f"  epoch {st.epoch + 1:>3} batch {st.batch:>4}/{n_batches}  loss "
                f"{s['loss'] / s['tokens']:.4f}  tok acc {100 * s['correct'] / s['tokens']:5.1f}%  "
                f"{rate:6.0f} ex/s  epoch ends in ~{fmt_time(left)}")

    def _end_epoch(self, log) -> None:
        st, cfg, s = self.state, self.config, self.state.sums
        val = self.evaluate()
        record = {"epoch": st.epoch + 1, "step": st.step, "seconds": round(st.seconds, 2),
                  "loss": s["loss"] / s["tokens"], "token_acc": s["correct"] / s["tokens"],
                  "train_exact": s["exact"] / s["examples"], "val_exact": val["exact"],
                  "val_token_acc": val["token_acc"]}
        st.history.append(record)
        if self.best.offer(val["exact"], st.epoch + 1, self.model):
            st.best, self._best_saved = self.best.to_dict(), False
        elif self.best.worse(val["exact"]):
            log(f"  this run got worse: held-out exact match {100 * val['exact']:.1f}%, down from "
                f"{100 * self.best.score:.1f}% at epoch {self.best.epoch} (those weights are kept)")
        st.epoch, st.batch, st.sums, st.epoch_rng = st.epoch + 1, 0, {}, None
        rate = len(self.src) * st.epoch / max(st.seconds, 1e-9)
        eta = (cfg.epochs - st.epoch) * len(self.src) / rate
        log(f"epoch {st.epoch:>3}/{cfg.epochs}  loss {record['loss']:.4f}  "
            f"tok acc {100 * record['token_acc']:5.1f}%  exact(val) {100 * val['exact']:5.1f}%  "
            f"{rate:6.0f} ex/s  {fmt_time(st.seconds)} elapsed  ETA ≤{fmt_time(eta)}")
        if val["exact"] >= cfg.target and st.epoch >= cfg.min_epochs:
            st.done = True
            log(f"reached {100 * val['exact']:.1f}% exact match on {len(self.data.val)} held-out "
                f"examples (target {100 * cfg.target:g}%) after {fmt_time(st.seconds)}")
        elif st.epoch >= cfg.epochs and val["exact"] < cfg.target <= 1:  # out of epochs
            log(f"stopped after {st.epoch} epoch{'s' * (st.epoch != 1)} at "
                f"{100 * val['exact']:.1f}% held-out exact match (target {100 * cfg.target:g}% "
                "not reached). To train longer, start a new run with more --epochs "
                "(--resume continues only an interrupted run)")


    def _keep_best(self, log) -> None:
        """End with the best held-out epoch's weights when the last epoch was worse."""
        b, last = self.best, self.state.history[-1] if self.state.history else None
        if b.weights is not None and last is not None and b.epoch != last["epoch"]:
            self.model.load_state_dict(b.weights)
            log(f"keeping the weights of epoch {b.epoch} ({100 * b.score:.1f}% held-out exact "
                f"match), not the last epoch's ({100 * last['val_exact']:.1f}%)")


def evaluate(model: Seq2Seq, data: TaskData, pairs, max_len: int, batch_size: int = 500) -> dict:
    """Exact match and token accuracy of greedy decoding on ``pairs`` (sorted by length),
    in eval mode (no dropout), whatever mode the model was in (and is left in)."""
    training = model.training
    model.eval()
    try:
        return _evaluate(model, data, pairs, max_len, batch_size)
    finally:
        model.train(training)


def _evaluate(model: Seq2Seq, data: TaskData, pairs, max_len: int, batch_size: int) -> dict:
    pairs = sorted(pairs, key=lambda p: len(p[0]))
    exact = right = total = 0
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start:start + batch_size]
        src, src_mask = pad_batch([data.src_vocab.encode(s) for s, _ in chunk])  # (B, S) each
        for (_, want), out in zip(chunk, model.greedy(src, max_len, src_mask)):
            got = data.tgt_vocab.decode(out.tokens)
            exact += got == want
            right += sum(a == b for a, b in zip(got, want))
            total += max(len(got), len(want))
    return {"exact": exact / max(len(pairs), 1), "token_acc": right / max(total, 1)}
