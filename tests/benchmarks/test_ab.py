"""benchmarks/ab.py: two revisions of the engine load side by side and give the same numbers."""
import subprocess

import numpy as np
import pytest

from benchmarks import ab


def test_two_revisions_load_under_their_own_names_and_compute_the_same(tmp_path, monkeypatch):
    if subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.fail("benchmarks.ab needs the git repository (run from a clone)")
    monkeypatch.syspath_prepend(str(tmp_path))
    a = ab.load("HEAD", "mg_test_a", tmp_path)
    b = ab.load("HEAD", "mg_test_b", tmp_path)
    assert a is not b and a.Tensor is not b.Tensor
    assert a.Tensor.__module__.startswith("mg_test_a") and b.Tensor.__module__.startswith("mg_test_b")
    grads = []
    for mg in (a, b):
        x = mg.Tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        (x.tanh() * x).sum().backward()
        grads.append(x.grad)
    np.testing.assert_array_equal(*grads)
    monkeypatch.setattr(ab, "ROUNDS", 3)
    monkeypatch.setattr(ab, "CALLS", 2)
    rows = ab.compare([a, b], "float64")
    assert [r[0] for r in rows] == ["chain", "mlp"]
    assert all(t > 0 for r in rows for t in r[1:])
