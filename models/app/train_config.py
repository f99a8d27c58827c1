"""What a training run is, as its checkpoint saves it: ``TrainConfig``, the settings (checked
when made, since a config may also come from a checkpoint anyone wrote); ``TrainState``, where
the run is; and ``seeds``, its three random generators.

Randomness. ``TrainConfig.seed`` seeds three generators (``np.random.SeedSequence.spawn``):
the data, the initial weights, and training (batch order, teacher forcing). The training
generator's state (``bit_generator.state``, plain JSON) is saved with every checkpoint, with
the state it had when the current epoch's batch order was drawn; together with Adam's state
this makes a resumed run continue bit for bit: it ends with the weights of an uninterrupted one.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from minigrad.i18n import translator

from models.app.checks import MAX_LEN, check_data_size, is_int, is_real, need
from models.app.data import TASKS
from models.app.schedule import SCHEDULES

_ = translator("models")


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
        need(self.task in TASKS, who,
             _("task must be one of {tasks}").format(tasks=sorted(TASKS)), self.task)
        for name in ("n_train", "n_val", "batch_size", "epochs", "min_len", "max_len"):
            v = getattr(self, name)
            need(is_int(v) and v >= 1, who, _("{name} must be a positive int").format(name=name),
                 v)
        need(self.max_len <= MAX_LEN, who, _("max_len must be <= {max}").format(max=MAX_LEN),
             self.max_len)
        need(is_int(self.min_epochs) and self.min_epochs >= 0, who,
             _("min_epochs must be an int >= 0"), self.min_epochs)
        need(is_int(self.seed) and self.seed >= 0, who, _("seed must be an int >= 0"), self.seed)
        need(is_real(self.lr) and 0 < self.lr < math.inf, who, _("lr must be a finite number > 0"),
             self.lr)
        need(self.schedule in SCHEDULES, who,
             _("schedule must be one of {schedules}").format(schedules=SCHEDULES), self.schedule)
        need(is_real(self.clip) and self.clip > 0, who,
             _("clip (the max gradient norm) must be > 0 (inf: no clipping)"), self.clip)
        need(is_real(self.teacher_forcing) and 0 <= self.teacher_forcing <= 1, who,
             _("teacher_forcing must be in [0, 1]"), self.teacher_forcing)
        need(is_real(self.target) and self.target >= 0, who,
             _("target must be >= 0 (above 1: never stop early)"), self.target)
        check_data_size(self.n_train + self.n_val, self.max_len)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        if not isinstance(d, dict):
            raise ValueError(_("TrainConfig: expected a dict of settings, got {type}").format(
                type=type(d).__name__))
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
    history: list = field(default_factory=list)  # a dict per finished epoch (train.thin)
    curve: list = field(default_factory=list)    # [step, mean loss of CURVE steps] (thin)
    best: dict | None = None       # {"epoch", "val_exact"} of the best held-out epoch
    done: bool = False


def seeds(seed: int) -> tuple:
    """Generators for (data, initial weights, training) from one seed."""
    return tuple(np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
