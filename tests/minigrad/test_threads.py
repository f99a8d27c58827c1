"""The engine's modes are per thread (``minigrad/modes.py``): ``no_grad`` and ``detect_anomaly``
in one thread do not reach another, and two threads training separate models get exactly the
gradients each gets alone. Threads are made to overlap with events, not with timing."""
import threading

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.checks import AnomalyError
from minigrad.modes import mode

STEPS = 30


def train(rng_seed: int, steps: int = STEPS) -> list:
    """A small tanh network trained by SGD; returns every step's gradients (copies)."""
    rng = np.random.default_rng(rng_seed)
    lin1, lin2 = nn.Linear(4, 8, rng=rng), nn.Linear(8, 3, rng=rng)
    params = lin1.parameters() + lin2.parameters()
    opt = optim.SGD(params, lr=0.1, momentum=0.5)
    x, y = rng.normal(size=(16, 4)), rng.integers(0, 3, 16)
    grads = []
    for _ in range(steps):
        opt.zero_grad()
        mg.functional.cross_entropy(lin2(lin1(x).tanh()), y).backward()
        grads.append([p.grad.copy() for p in params])
        opt.step()
    return grads


def run_threads(*targets):
    """Run each target in its own thread; re-raise the first exception a thread raised."""
    errors = []

    def wrap(f):
        def run():
            try:
                f()
            except BaseException as e:  # noqa: BLE001  (handed to the main thread)
                errors.append(e)
        return run
    threads = [threading.Thread(target=wrap(f)) for f in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]


def test_training_beside_a_no_grad_loop_gets_the_single_threaded_gradients():
    alone = train(0)
    inside, done, seen = threading.Event(), threading.Event(), []

    def no_grad_loop():
        a = mg.tensor(np.ones((8, 8)), requires_grad=True)
        with mg.no_grad():
            inside.set()
            while not done.is_set():
                seen.append(((a * a).tanh() @ a).sum().requires_grad)

    def trainer():
        assert inside.wait(30)
        try:
            got.extend(train(0))
        finally:
            done.set()
    got = []
    run_threads(no_grad_loop, trainer)
    assert len(got) == STEPS
    for step, (a, b) in enumerate(zip(alone, got)):
        for ga, gb in zip(a, b):
            np.testing.assert_array_equal(ga, gb, err_msg=f"step {step}")
    assert seen and not any(seen)           # no_grad held in its own thread all along


def test_two_threads_training_separate_models_match_each_alone():
    alone = [train(1), train(2)]
    got = [[], []]
    start = threading.Barrier(2)

    def trainer(i):
        def run():
            start.wait(30)
            got[i].extend(train(i + 1))
        return run
    run_threads(trainer(0), trainer(1))
    for want, have in zip(alone, got):
        assert len(have) == STEPS
        for a, b in zip(want, have):
            for ga, gb in zip(a, b):
                np.testing.assert_array_equal(ga, gb)


def test_anomaly_in_one_thread_does_not_raise_in_another():
    armed, other_done = threading.Event(), threading.Event()
    results = {}

    def strict():
        with mg.detect_anomaly():
            armed.set()
            assert other_done.wait(30)
            with pytest.raises(AnomalyError, match="'log'"), np.errstate(invalid="ignore"):
                mg.log(mg.tensor([-1.0], requires_grad=True))
            results["strict"] = "raised"

    def relaxed():
        assert armed.wait(30)
        try:
            with np.errstate(invalid="ignore"):
                out = mg.log(mg.tensor([-1.0], requires_grad=True))
            results["relaxed"] = bool(np.isnan(out.data).all())
        finally:
            other_done.set()
    run_threads(strict, relaxed)
    assert results == {"strict": "raised", "relaxed": True}


def test_a_new_thread_starts_with_grad_enabled_and_anomaly_off():
    seen = {}

    def child():
        seen["grad"] = (mg.tensor([1.0], requires_grad=True) * 2).requires_grad
        seen["anomaly"] = mode.anomaly
    with mg.no_grad(), mg.detect_anomaly():
        run_threads(child)
        assert not (mg.tensor([1.0], requires_grad=True) * 2).requires_grad  # still off here
    assert seen == {"grad": True, "anomaly": False}


def test_the_saved_leaf_check_neither_misses_nor_fires_across_threads():
    """Thread A records a graph on its leaf, then thread B runs many backward passes (its own
    epochs) and changes its own leaf in place between them, as an optimizer does: B never
    trips the check, and A's own in-place change is still caught at A's backward."""
    recorded, b_done = threading.Event(), threading.Event()
    outcome = {}

    def a_thread():
        a = mg.tensor(np.arange(4.0), requires_grad=True)
        loss = (a * a).sum()
        recorded.set()
        assert b_done.wait(30)
        a.data += 1.0                                   # changed after the graph saved it
        with pytest.raises(RuntimeError, match="changed in place"):
            loss.backward()
        outcome["a"] = "caught"

    def b_thread():
        assert recorded.wait(30)
        try:
            b = mg.tensor(np.ones(4), requires_grad=True)
            for _ in range(20):
                b.grad = None
                (b * b).sum().backward()
                b.data -= 0.1 * b.grad                 # in place, after backward: allowed
            outcome["b"] = float(b.data[0])
        finally:
            b_done.set()
    run_threads(a_thread, b_thread)
    assert outcome == {"a": "caught", "b": pytest.approx(0.8 ** 20)}


def in_turns(steps) -> None:
    """Run ``steps``, a list of (thread 0 or 1, function), in that order, each in its thread."""
    turn = threading.Condition()
    state = {"next": 0}

    def worker(me):
        def run():
            for k, (who, f) in enumerate(steps):
                if who != me:
                    continue
                with turn:
                    assert turn.wait_for(lambda: state["next"] == k, timeout=30)
                try:
                    f()
                finally:
                    with turn:
                        state["next"] = k + 1
                        turn.notify_all()
        return run
    run_threads(worker(0), worker(1))


def test_each_thread_counts_its_epochs_in_its_own_range():
    """A leaf shared by two threads (here, read by both, changed by one after its backward):
    were both threads' epochs counted from 0, thread 0's snapshot (taken at its epoch 1) would
    pass for thread 1's (its epoch 1 too) and thread 1's legitimate update would be refused."""
    w = mg.tensor(np.arange(3.0), requires_grad=True)
    kept, epochs = {}, []
    in_turns([
        (1, lambda: (w * w).sum().backward()),                  # thread 1: epoch e1 -> e1 + 1
        (0, lambda: (w * w).sum().backward()),                  # thread 0: epoch e0 -> e0 + 1
        (0, lambda: kept.setdefault("graph", (w * 2.0).sum())),  # thread 0 snapshots w
        (1, lambda: w.data.__isub__(0.5)),                      # thread 1 updates w, as SGD
        (1, lambda: (w * w).sum().backward()),                  # must not be refused
        (0, lambda: epochs.append(mode.backward_pass)),
        (1, lambda: epochs.append(mode.backward_pass)),
    ])
    assert epochs[0] != epochs[1] and epochs[0] >> 40 != epochs[1] >> 40
    np.testing.assert_array_equal(w.grad, 2 * np.arange(3.0) + 2 * np.arange(3.0) + 2 * (np.arange(3.0) - 0.5))


def test_backward_passes_in_several_threads_into_one_leaf_all_add_up():
    """The accumulation into a shared leaf's .grad is under one lock (the in-place add releases
    the GIL on a large array, so without it updates were lost: 387-399 of 400 seen)."""
    w = mg.tensor(np.zeros(100_000), requires_grad=True)
    start = threading.Barrier(4)

    def passes():
        start.wait()
        for _ in range(100):
            (w * 1.0).sum().backward()
    run_threads(*[passes] * 4)
    np.testing.assert_array_equal(w.grad, np.full(100_000, 400.0))
