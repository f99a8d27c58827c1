"""The learning-rate schedule and the best held-out weights, for the training loop.

Why a schedule. With a constant Adam step of 3e-3 the copy task of ``compare-length`` learns
fast, then its loss spikes again and again once it is small (from 0.002-0.04 back to
0.07-0.16, three times in 1880 steps) and held-out exact match ends below its best: Adam
divides each gradient by the root of its
recent squares, so after many tiny gradients one ordinary batch moves the weights by about
the full step, and clipping the gradient's norm does not limit that (Adam rescales it away).
Nothing overflows: the gradient norms stay finite. The cure is the step size late in
training: a short linear warm-up, then a cosine decay from ``lr`` to ``floor · lr``,

    lr_t = lr · min(1, t / W) · (floor + (1 − floor) · (1 + cos(π t / N)) / 2)

with t the step, W the warm-up steps and N the planned number of steps.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.i18n import translator

_ = translator("models")

SCHEDULES = ("cosine", "constant")


def learning_rate(step: int, total: int, lr: float, schedule: str = "cosine",
                  warmup: int = 50, floor: float = 0.05) -> float:
    """The step size at ``step`` (0-based) of ``total`` planned steps."""
    if schedule == "constant":
        return lr
    if schedule != "cosine":
        raise ValueError(_("learning_rate: schedule must be one of {schedules}, got {schedule!r}")
                         .format(schedules=SCHEDULES, schedule=schedule))
    ramp = min(1.0, (step + 1) / max(warmup, 1))
    progress = min(step / max(total, 1), 1.0)
    return lr * ramp * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


class BestWeights:
    """The held-out best so far: its exact match, its epoch and a copy of the weights."""

    def __init__(self, score: float = -1.0, epoch: int = 0, weights: dict | None = None):
        self.score, self.epoch, self.weights = score, epoch, weights

    def offer(self, score: float, epoch: int, model) -> bool:
        """Keep ``model``'s weights if ``score`` is at least the best (later wins ties)."""
        if score < self.score:
            return False
        self.score, self.epoch, self.weights = score, epoch, model.state_dict()
        return True

    def worse(self, score: float, by: float = 0.005) -> bool:
        """True when ``score`` fell more than ``by`` below the best."""
        return self.weights is not None and score < self.score - by

    def to_dict(self) -> dict | None:
        return None if self.weights is None else {"epoch": self.epoch, "val_exact": self.score}

    def arrays(self) -> dict:
        return {k: np.asarray(v) for k, v in (self.weights or {}).items()}
