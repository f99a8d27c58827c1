"""Training: Adam, gradient clipping, a progress line (worded in ``models.app.progress``),
held-out evaluation (``models.app.evaluate``), early stop at a target exact match, and
checkpoints that resume exactly (bit for bit: the settings, the state and the random
generators a checkpoint saves are in ``models.app.train_config``).

The step size follows ``TrainConfig.schedule``: "constant" (the default here, so code that
configures a run keeps its behaviour) or "cosine", warm-up then cosine decay, which the CLI's
train, demo and compare-length use (see ``models.app.schedule`` for why). The weights with the
best held-out exact match are kept: when a run gets worse, the epoch line says so, and a
finished run ends with (and saves) the best epoch's weights; until then a
``best-weights-<step>.npz`` in the checkpoint (with its digest, checked like the weights')
holds them for ``--resume``.

Batches are bucketed: each epoch shuffles the examples, sorts pools of 16 batches by source
length, cuts them into batches and shuffles the batch order, so little time goes into padding.

Shape letters: N training examples, B batch, S source length, T target length, V target
vocabulary.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from minigrad import optim
from minigrad.i18n import translator

from models.app.build import build_model
from models.app import checkpoint as ckpt, progress
from models.app.checks import check_model_size, check_state
from models.app.data import TaskData, make_task
from models.app.evaluate import evaluate
from models.app.schedule import BestWeights, learning_rate
from models.app.train_config import TrainConfig, TrainState, seeds
from models.vocab import pad_batch
from models.seq2seq import ModelConfig, Seq2Seq, masked_cross_entropy

POOL = 16   # batches per sorting pool
CURVE = 25  # steps per point of the loss curve
DIVERGED = 25  # a loss per token above DIVERGED · log V (a uniform guess: log V) is divergence
MAX_POINTS = 1000  # epoch records and curve points a run keeps (its index stays < 1 MB)
ALIGNED = 100  # epochs whose record keeps α of the first held-out pair (≈ 2 KB each)

_ = translator("models")


@dataclass
class _Pace:
    """The clock of one ``Trainer.run`` call, for the time limit and the progress line."""
    started: float              # time.perf_counter() when the call began
    seconds0: float             # training seconds before the call
    last_line: float = 0.0      # when the last progress line was written
    seen: int = 0               # examples trained on in this call
    last_batch: float = 0.0     # seconds the last batch took

    def __post_init__(self):
        self.last_line = self.started

    def elapsed(self) -> float:
        return time.perf_counter() - self.started


def first_alignment(model: Seq2Seq, data: TaskData) -> list | None:
    """α (T, S) of the first held-out pair, teacher-forced without dropout, to 3 decimals:
    what ``python -m models explore`` replays epoch by epoch (None: no attention or pair)."""
    if not data.val:
        return None
    (src, src_mask), (tgt, _m) = (pad_batch([v.encode(s)]) for v, s in
                                  zip((data.src_vocab, data.tgt_vocab), data.val[0]))  # (1, S|T)
    training = model.training
    model.eval()
    try:
        with mg.no_grad():
            alpha = model.forward(src, tgt, src_mask)[1]                 # (1, T, S) or None
    finally:
        model.train(training)
    return None if alpha is None else np.round(np.asarray(alpha[0], float), 3).tolist()


def thin(points: list) -> None:
    """Past ``MAX_POINTS``, every other point, back from the newest: a small, quick index."""
    while len(points) > MAX_POINTS:
        points[:] = points[::-2][::-1]


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
        self.best = BestWeights()

    # ---- setting up ------------------------------------------------------------------
    @classmethod
    def create(cls, config: TrainConfig, model_config: dict | None = None) -> "Trainer":
        """Fresh run: the task's data and a model (``model_config`` overrides defaults)."""
        data_rng, init_rng, train_rng = seeds(config.seed)
        data = make_task(config.task, data_rng, config.n_train, config.n_val,
                         config.min_len, config.max_len)
        mc = ModelConfig(len(data.src_vocab), len(data.tgt_vocab), **(model_config or {}))
        check_model_size(mc)
        return cls(build_model(mc, init_rng), data, config, train_rng)

    @classmethod
    def resume(cls, folder) -> "Trainer":
        """Continue the run saved in ``folder`` exactly where it stopped."""
        model, _src_vocab, _tgt_vocab, index = ckpt.load_checkpoint(folder)
        if "train" not in index or "state" not in index:
            raise ckpt.CheckpointError(_("checkpoint: {folder} was not saved by training; it has "
                                         "no training state to resume").format(folder=folder))
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
            raise ckpt.CheckpointError(_("checkpoint: {folder} has a bad training state ({error})")
                                       .format(folder=folder, error=e)) from None
        trainer = cls(model, data, config, rng, state)
        try:
            trainer.optimizer.load_state_dict(ckpt.load_optimizer_state(folder, trainer.optimizer))
        except ckpt.CheckpointError:
            raise
        except ValueError as e:
            raise ckpt.CheckpointError(_("checkpoint: {folder} has a bad optimizer state "
                                         "({error})").format(folder=folder, error=e)) from None
        if state.best and not state.done:  # a finished run's weights are its best
            trainer.best = BestWeights(state.best["val_exact"], state.best["epoch"],
                                       ckpt.load_best_weights(folder, model))
        return trainer

    def save(self, folder) -> str:
        """Checkpoint into ``folder``; an unfinished run's best weights go in with a digest
        (a finished run's weights are its best, and its best-weights file is removed)."""
        self.state.rng = self.rng.bit_generator.state
        extra = {"task": self.config.task, "train": dataclasses.asdict(self.config),
                 "state": dataclasses.asdict(self.state)}
        best = None if self.state.done or self.best.weights is None else self.best.arrays()
        return ckpt.save_checkpoint(folder, self.model, self.data.src_vocab, self.data.tgt_vocab,
                                    extra, self.optimizer, self.state.step, best)

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
        # Weights blown up by divergence make NaN here; clip_grad_norm_ then raises, and run()
        # reports it as "training diverged", so NumPy's "invalid value" warnings are not shown.
        with np.errstate(invalid="ignore"):
            logits, _alignment = self.model(src, tgt, src_mask, self.config.teacher_forcing,
                                            self.rng)                    # (B, T, V)
            loss = masked_cross_entropy(logits, tgt, tgt_mask)          # () mean over real tokens
            self.optimizer.zero_grad()
            loss.backward()
        limit = DIVERGED * math.log(len(self.data.tgt_vocab))  # a uniform guess scores log V
        if not loss.item() <= limit:  # float64 rarely overflows: a huge loss says it instead
            raise FloatingPointError(_("the loss per token is {loss:.3g}, far above {limit:.3g} = "
                                       "{factor} × log V").format(loss=loss.item(), limit=limit,
                                                                  factor=DIVERGED))
        optim.clip_grad_norm_(self.optimizer.params, self.config.clip)
        self.optimizer.lr = learning_rate(self.state.step, self.total_steps, self.config.lr,
                                          self.config.schedule)
        self.optimizer.step()
        right = (logits.data.argmax(axis=-1) == tgt) | ~tgt_mask          # (B, T)
        n_tok = int(tgt_mask.sum())
        return {"loss": loss.item() * n_tok, "tokens": n_tok,
                "correct": int((right & tgt_mask).sum()),
                "exact": int(right.all(axis=1).sum()), "examples": len(idx)}

    # ---- evaluation ------------------------------------------------------------------
    def evaluate(self, pairs=None, batch_size: int = 500) -> dict:
        """Greedy decoding of held-out ``pairs`` (default: the validation set)."""
        return evaluate(self.model, self.data, self.data.val if pairs is None else pairs,
                        self.decode_len, batch_size)

    # ---- the loop --------------------------------------------------------------------
    def run(self, log=progress.say, folder=None, max_steps: int | None = None,
            time_limit: float | None = None, should_stop=lambda: False,
            progress_every: float = 10.0) -> TrainState:
        """Train until ``epochs``, the target, ``max_steps``, ``time_limit`` (seconds) or
        ``should_stop()``; checkpoint into ``folder`` after every epoch and when stopping.
        A progress line goes to ``log`` after every epoch and every ``progress_every`` s."""
        st, cfg = self.state, self.config
        if st.done:
            log(_("this run is already finished"))
            return st
        self.model.train()
        pace = _Pace(time.perf_counter(), st.seconds)
        # a batch that would end past the time limit is not started (batches may be slow)
        stop = lambda: ((max_steps is not None and st.step >= max_steps) or should_stop() or (
            time_limit is not None and pace.elapsed() + pace.last_batch >= time_limit))
        while st.epoch < cfg.epochs:
            plan = self._this_epochs_plan()
            while st.batch < len(plan):
                if stop():
                    self._stop(log, folder, pace, len(plan))
                    return st
                self._batch(plan[st.batch], folder, pace)
                if time.perf_counter() - pace.last_line >= progress_every:
                    pace.last_line = time.perf_counter()
                    rate = pace.seen / (pace.last_line - pace.started)
                    log(progress.progress_line(st, len(plan), cfg.batch_size, rate))
            st.seconds = pace.seconds0 + pace.elapsed()
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

    def _batch(self, idx, folder, pace: "_Pace") -> None:
        """One training step, timed and counted; NaN/inf gradients stop the run, saving nothing."""
        st, cfg = self.state, self.config
        try:
            t0 = time.perf_counter()
            counts = self.train_step(idx)
            pace.last_batch = time.perf_counter() - t0
        except FloatingPointError as e:
            message = (_("training diverged at epoch {epoch}, step {step} ({error}); the last "
                         "checkpoint in {folder} (if any) is kept; try a smaller --lr (now {lr}) "
                         "or --clip (now {clip})") if folder else
                       _("training diverged at epoch {epoch}, step {step} ({error}); try a "
                         "smaller --lr (now {lr}) or --clip (now {clip})"))
            raise FloatingPointError(message.format(
                epoch=st.epoch + 1, step=st.step + 1, error=e, folder=folder, lr=cfg.lr,
                clip=cfg.clip)) from None
        self._count(counts)
        pace.seen += counts["examples"]

    def _stop(self, log, folder, pace: "_Pace", n_batches: int) -> None:
        """Stopped inside an epoch: checkpoint where the run is, and say how to go on."""
        st = self.state
        st.seconds = pace.seconds0 + pace.elapsed()
        if folder is not None:
            self.save(folder)
        stopped = (_("stopped at epoch {epoch}, batch {batch}/{n} (step {step}); resume with "
                     "--resume {folder}") if folder else
                   _("stopped at epoch {epoch}, batch {batch}/{n} (step {step})"))
        log(stopped.format(epoch=st.epoch + 1, batch=st.batch, n=n_batches, step=st.step,
                           folder=folder))

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
            thin(st.curve)
            for k in counts:
                st.sums.pop("curve_" + k, None)

    def _end_epoch(self, log) -> None:
        st, cfg, s = self.state, self.config, self.state.sums
        val = self.evaluate()
        record = {"epoch": st.epoch + 1, "step": st.step, "seconds": round(st.seconds, 2),
                  "loss": s["loss"] / s["tokens"], "token_acc": s["correct"] / s["tokens"],
                  "train_exact": s["exact"] / s["examples"], "val_exact": val["exact"],
                  "val_token_acc": val["token_acc"]}
        if st.epoch < ALIGNED and (alpha := first_alignment(self.model, self.data)) is not None:
            record["alpha"] = alpha
        st.history.append(record)
        thin(st.history)
        if self.best.offer(val["exact"], st.epoch + 1, self.model):
            st.best = self.best.to_dict()
        elif self.best.worse(val["exact"]):
            log(progress.got_worse(val["exact"], self.best))
        st.epoch, st.batch, st.sums, st.epoch_rng = st.epoch + 1, 0, {}, None
        log(progress.epoch_line(st, cfg.epochs, record, len(self.src)))
        if val["exact"] >= cfg.target and st.epoch >= cfg.min_epochs:
            st.done = True
            log(progress.reached(val["exact"], len(self.data.val), cfg.target, st.seconds))
        elif st.epoch >= cfg.epochs and val["exact"] < cfg.target <= 1:  # out of epochs
            log(progress.out_of_epochs(st.epoch, val["exact"], cfg.target))

    def _keep_best(self, log) -> None:
        """End with the best held-out epoch's weights when the last epoch was worse."""
        b, last = self.best, self.state.history[-1] if self.state.history else None
        if b.weights is not None and last is not None and b.epoch != last["epoch"]:
            self.model.load_state_dict(b.weights)
            log(progress.kept_best(b, last["val_exact"]))
