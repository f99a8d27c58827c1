"""The lines a training run prints: the progress line inside an epoch, the epoch line, and the
verdicts (got worse, target reached, out of epochs, the best epoch's weights kept).

Each function only formats: ``Trainer`` decides when a line is due and passes it to its ``log``.
"""
from __future__ import annotations

from minigrad.i18n import translator

_ = translator("models")


def say(line: str) -> None:
    """Print a line of a long step at once, into a pipe too (``| tee``): never silent."""
    print(line, flush=True)


def fmt_time(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


def progress_line(state, n_batches: int, batch_size: int, rate: float) -> str:
    """Where the epoch is, its running loss and token accuracy, ``rate`` examples/s, time left."""
    s = state.sums
    left = (n_batches - state.batch) * batch_size / max(rate, 1e-9)
    return _("  epoch {epoch:>3} batch {batch:>4}/{n_batches}  loss {loss:.4f}  tok acc "
             "{acc:5.1f}%  {rate:6.0f} ex/s  epoch ends in ~{left}").format(
        epoch=state.epoch + 1, batch=state.batch, n_batches=n_batches,
        loss=s["loss"] / s["tokens"], acc=100 * s["correct"] / s["tokens"], rate=rate,
        left=fmt_time(left))


def epoch_line(state, epochs: int, record: dict, n_train: int) -> str:
    """After epoch ``record``: loss, accuracies, speed, elapsed time and an upper bound of the
    rest."""
    rate = n_train * state.epoch / max(state.seconds, 1e-9)
    eta = (epochs - state.epoch) * n_train / rate
    return _("epoch {epoch:>3}/{epochs}  loss {loss:.4f}  tok acc {acc:5.1f}%  exact(val) "
             "{exact:5.1f}%  {rate:6.0f} ex/s  {elapsed} elapsed  ETA ≤{eta}").format(
        epoch=state.epoch, epochs=epochs, loss=record["loss"], acc=100 * record["token_acc"],
        exact=100 * record["val_exact"], rate=rate, elapsed=fmt_time(state.seconds),
        eta=fmt_time(eta))


def got_worse(exact: float, best) -> str:
    return _("  this run got worse: held-out exact match {exact:.1f}%, down from {best:.1f}% "
             "at epoch {epoch} (those weights are kept)").format(
        exact=100 * exact, best=100 * best.score, epoch=best.epoch)


def reached(exact: float, n_val: int, target: float, seconds: float) -> str:
    return _("reached {exact:.1f}% exact match on {n_val} held-out examples (target "
             "{target:g}%) after {time}").format(exact=100 * exact, n_val=n_val,
                                                 target=100 * target, time=fmt_time(seconds))


def out_of_epochs(epochs: int, exact: float, target: float) -> str:
    stopped = (_("stopped after 1 epoch") if epochs == 1
               else _("stopped after {epochs} epochs").format(epochs=epochs))
    return _("{stopped} at {exact:.1f}% held-out exact match (target {target:g}% not "
             "reached). To train longer, start a new run with more --epochs (--resume "
             "continues only an interrupted run)").format(stopped=stopped, exact=100 * exact,
                                                          target=100 * target)


def kept_best(best, last_exact: float) -> str:
    return _("keeping the weights of epoch {epoch} ({best:.1f}% held-out exact match), not the "
             "last epoch's ({last:.1f}%)").format(epoch=best.epoch, best=100 * best.score,
                                                  last=100 * last_exact)
