"""benchmarks/ab.py: two revisions of the engine load side by side and give the same numbers."""
import subprocess

import numpy as np
import pytest

from benchmarks import ab


def test_two_revisions_load_under_their_own_names_and_compute_the_same(tmp_path, monkeypatch):
    if subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.fail("benchmarks.ab needs the git repository (run from a clone)")
    monkeypatch.syspath_prepend(str(tmp_path))
    ea, eb = ab.load("HEAD", "test_a", tmp_path), ab.load("HEAD", "test_b", tmp_path)
    a, b = ea["mg"], eb["mg"]
    assert a is not b and a.Tensor is not b.Tensor
    assert a.Tensor.__module__ == "minigrad_test_a.engine"
    assert eb["seq2seq"].__name__ == "models_test_b.seq2seq"
    assert eb["seq2seq"].Seq2Seq.__init__.__globals__["mg"] is b   # its imports were renamed
    grads = []
    for mg in (a, b):
        x = mg.Tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        (x.tanh() * x).sum().backward()
        grads.append(x.grad)
    np.testing.assert_array_equal(*grads)
    monkeypatch.setattr(ab, "ROUNDS", 3)
    monkeypatch.setattr(ab, "CALLS", {"chain": 2, "mlp": 2})
    rows = ab.compare([ea, eb], "float64", ["chain", "mlp"])
    assert [r[0] for r in rows] == ["chain", "mlp"]
    assert all(t > 0 for r in rows for t in r[1:])
