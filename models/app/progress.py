"""The lines a training run prints: the progress line inside an epoch, the epoch line, and the
verdicts (got worse, target reached, out of epochs, the best epoch's weights kept).

Each function only formats: ``Trainer`` decides when a line is due and passes it to its ``log``.
"""
from __future__ import annotations


def fmt_time(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


def progress_line(state, n_batches: int, batch_size: int, rate: float) -> str:
    """Where the epoch is, its running loss and token accuracy, ``rate`` examples/s, time left."""
    s = state.sums
    left = (n_batches - state.batch) * batch_size / max(rate, 1e-9)
    return (f"  epoch {state.epoch + 1:>3} batch {state.batch:>4}/{n_batches}  loss "
            f"{s['loss'] / s['tokens']:.4f}  tok acc {100 * s['correct'] / s['tokens']:5.1f}%  "
            f"{rate:6.0f} ex/s  epoch ends in ~{fmt_time(left)}")


def epoch_line(state, epochs: int, record: dict, n_train: int) -> str:
    """After epoch ``record``: loss, accuracies, speed, elapsed time and an upper bound of the rest."""
    rate = n_train * state.epoch / max(state.seconds, 1e-9)
    eta = (epochs - state.epoch) * n_train / rate
    return (f"epoch {state.epoch:>3}/{epochs}  loss {record['loss']:.4f}  "
            f"tok acc {100 * record['token_acc']:5.1f}%  exact(val) {100 * record['val_exact']:5.1f}%  "
            f"{rate:6.0f} ex/s  {fmt_time(state.seconds)} elapsed  ETA ≤{fmt_time(eta)}")


def got_worse(exact: float, best) -> str:
    return (f"  this run got worse: held-out exact match {100 * exact:.1f}%, down from "
            f"{100 * best.score:.1f}% at epoch {best.epoch} (those weights are kept)")


def reached(exact: float, n_val: int, target: float, seconds: float) -> str:
    return (f"reached {100 * exact:.1f}% exact match on {n_val} held-out "
            f"examples (target {100 * target:g}%) after {fmt_time(seconds)}")


def out_of_epochs(epochs: int, exact: float, target: float) -> str:
    return (f"stopped after {epochs} epoch{'s' * (epochs != 1)} at "
            f"{100 * exact:.1f}% held-out exact match (target {100 * target:g}% "
            "not reached). To train longer, start a new run with more --epochs "
            "(--resume continues only an interrupted run)")


def kept_best(best, last_exact: float) -> str:
    return (f"keeping the weights of epoch {best.epoch} ({100 * best.score:.1f}% held-out exact "
            f"match), not the last epoch's ({100 * last_exact:.1f}%)")
