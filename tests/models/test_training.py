"""Training runs (marked slow; sized to finish in seconds): copy and reverse are learned, the
reverse model's alignment is the anti-diagonal, attention beats no attention on long sources,
and an interrupted-then-resumed run ends with the weights of an uninterrupted one."""
import numpy as np
import pytest

from minigrad.runtime import blas
from models.app.compare import CompareConfig, compare_length
from models.vocab import pad_batch
from models.app.train import Trainer, TrainConfig

SMALL = dict(embed=16, hidden=32, dec_hidden=32, attn=32, dtype="float32")


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread():
    with blas.threads(1):  # small matrices: a second BLAS thread only adds waiting
        yield


def quick(task, seed=0, **kw):
    config = dict(task=task, n_train=3000, n_val=500, min_len=3, max_len=8, batch_size=32,
                  lr=3e-3, epochs=20, target=0.99, seed=seed)
    config.update(kw)
    return Trainer.create(TrainConfig(**config), SMALL)


@pytest.fixture(scope="module")
def reverse_model():
    trainer = quick("reverse")
    trainer.run(log=lambda line: None)
    return trainer


def test_a_run_that_misses_its_target_says_so_and_how_to_go_on(tmp_path):
    lines = []
    trainer = quick("reverse", n_train=64, n_val=20, epochs=1)  # far too short to get there
    trainer.run(log=lines.append, folder=tmp_path)
    exact = 100 * trainer.state.history[-1]["val_exact"]
    assert exact < 99 and trainer.state.done
    assert lines[-1].startswith(f"stopped after 1 epoch at {exact:.1f}% held-out exact match "
                                f"(target 99% not reached)")
    assert "start a new run with more --epochs" in lines[-1]  # --resume: finished runs stay so
    assert Trainer.resume(tmp_path).state.done


@pytest.mark.slow
def test_copy_reaches_99_percent():
    trainer = quick("copy")
    trainer.run(log=lambda line: None)
    assert trainer.state.history[-1]["val_exact"] >= 0.99
    assert trainer.evaluate()["exact"] >= 0.99


@pytest.mark.slow
def test_reverse_reaches_99_percent(reverse_model):
    assert reverse_model.state.history[-1]["val_exact"] >= 0.99
    assert reverse_model.state.done


@pytest.mark.slow
def test_reverse_alignment_is_the_anti_diagonal(reverse_model):
    """Output character t of an n-character source is x_{n−1−t}: row t of the alignment should
    peak at source position n − 1 − t (the argmax runs over every column, EOS included)."""
    data = reverse_model.data
    src, mask = pad_batch([data.src_vocab.encode(s) for s, _ in data.val])
    hits = rows = 0
    for (text, _), out in zip(data.val, reverse_model.model.greedy(src, 12, mask)):
        n = len(text)
        peaks = out.weights[:n].argmax(axis=1)                          # rows for the n characters
        hits += int(np.sum(peaks == (n - 1 - np.arange(len(peaks)))))
        rows += n
    assert hits / rows >= 0.9


@pytest.mark.slow
def test_attention_holds_up_on_long_sources_and_no_attention_does_not():
    """Bahdanau et al.'s Figure 2 in miniature: exact match by source length."""
    config = CompareConfig(task="copy", min_len=4, max_len=14, n_train=3000, n_val=500,
                           epochs=8, batch_size=32, seed=0)
    results = compare_length(config, log=lambda line: None)
    mean = lambda r, keep: float(np.mean([v for k, v in r.items() if keep(k)]))
    plain, attn = results["no attention"], results["attention"]
    short, long = (lambda k: k <= 7), (lambda k: k >= 10)
    assert mean(plain, short) - mean(plain, long) >= 0.3   # without attention: falls with length
    assert mean(attn, long) >= 0.6                          # with attention: holds
    assert mean(attn, long) - mean(plain, long) >= 0.5


def weights(trainer):
    return {k: v.copy() for k, v in trainer.model.state_dict().items()}


@pytest.mark.slow
@pytest.mark.parametrize("stop_at", [5, 19, 27])
def test_resume_equals_uninterrupted(tmp_path, stop_at):
    """19 batches per epoch: stop inside epoch 1, at the boundary, and inside epoch 2."""
    kw = dict(n_train=600, n_val=50, epochs=2, target=2.0, teacher_forcing=0.7)
    whole = quick("reverse", **kw)
    whole.run(log=lambda line: None)

    first = quick("reverse", **kw)
    first.run(log=lambda line: None, folder=tmp_path, max_steps=stop_at)
    assert first.state.step == stop_at and not first.state.done
    resumed = Trainer.resume(tmp_path)
    assert resumed.state.step == stop_at
    resumed.run(log=lambda line: None, folder=tmp_path)
    assert resumed.state.done and resumed.state.step == whole.state.step == 38
    a, b = weights(whole), weights(resumed)
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    assert [h["loss"] for h in whole.state.history] == [h["loss"] for h in resumed.state.history]
    again = Trainer.resume(tmp_path)  # a finished run stays finished
    assert again.state.done
    assert again.run(log=lambda line: None).step == 38


def test_the_schedule_warms_up_then_decays_to_its_floor():
    from models.app.schedule import learning_rate
    lrs = [learning_rate(t, 1000, 3e-3) for t in range(1000)]
    assert lrs[0] == pytest.approx(3e-3 / 50) and max(lrs) == pytest.approx(3e-3, rel=0.01)
    assert all(a >= b for a, b in zip(lrs[50:], lrs[51:]))  # after the warm-up, only down
    assert learning_rate(1000, 1000, 3e-3) == pytest.approx(0.05 * 3e-3)
    assert learning_rate(10, 1000, 3e-3, "constant") == 3e-3
    with pytest.raises(ValueError, match="schedule"):
        learning_rate(0, 10, 1e-3, "step")
    with pytest.raises(ValueError, match="schedule"):
        TrainConfig(schedule="linear")


@pytest.mark.slow
@pytest.mark.parametrize("stop_at", [None, 2])
def test_a_run_that_gets_worse_says_so_and_keeps_its_best_weights(tmp_path, stop_at):
    """Held-out scores 0.5, 0.9, 0.6 (scripted): epoch 3 is reported as worse and the run
    ends with epoch 2's weights, also when it was interrupted after epoch 2 and resumed."""
    scores = iter([0.5, 0.9, 0.6])
    script = lambda self, pairs=None, batch_size=500: {"exact": next(scores), "token_acc": 0.0}
    lines, seen = [], {}
    original = Trainer.evaluate
    Trainer.evaluate = lambda self, *a, **k: (seen.__setitem__(self.state.epoch + 1, weights(self))
                                              or script(self))
    try:
        trainer = quick("reverse", n_train=64, n_val=20, epochs=3, target=2.0)
        trainer.run(log=lines.append, folder=tmp_path, max_steps=None if stop_at is None else 4)
        if stop_at is not None:  # 2 batches per epoch: stopped after epoch 2, then resumed
            assert not trainer.state.done and len(list(tmp_path.glob("best-weights-*.npz"))) == 1
            trainer = Trainer.resume(tmp_path)
            trainer.run(log=lines.append, folder=tmp_path)
    finally:
        Trainer.evaluate = original
    assert any("this run got worse: held-out exact match 60.0%, down from 90.0% at epoch 2" in l
               for l in lines)
    assert any("keeping the weights of epoch 2" in l for l in lines)
    assert trainer.state.best == {"epoch": 2, "val_exact": 0.9}
    for k, v in weights(trainer).items():
        np.testing.assert_array_equal(v, seen[2][k], err_msg=k)
    assert not list(tmp_path.glob("best-weights*.npz"))  # finished: the checkpoint holds them
