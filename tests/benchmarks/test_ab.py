"""benchmarks/ab.py: two revisions of the engine load side by side and give the same numbers."""
import shutil
import subprocess
from pathlib import Path

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
    monkeypatch.setattr(ab, "CALLS", {"chain": 2, "mlp": 2, "decode": 1})
    rows = ab.compare([ea, eb], "float64", ["chain", "mlp", "decode"])
    assert [r[0] for r in rows] == ["chain", "mlp", "decode"]
    assert all(t > 0 for r in rows for t in r[1:])


def test_a_folder_loads_as_a_revision_with_its_uncommitted_edits(tmp_path, monkeypatch):
    """``python -m benchmarks.ab HEAD .``: a folder's packages (the working tree) are copied."""
    tree = tmp_path / "tree"
    root = Path(ab.__file__).resolve().parent.parent
    for package in ab.PACKAGES:
        shutil.copytree(root / package, tree / package, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "minigrad" / "__init__.py").write_text(
        (tree / "minigrad" / "__init__.py").read_text() + "\nEDITED_HERE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "out"))
    (tmp_path / "out").mkdir()
    engine = ab.load(str(tree), "test_c", tmp_path / "out")
    assert engine["mg"].__name__ == "minigrad_test_c" and engine["mg"].EDITED_HERE == 1


def test_too_few_rounds_are_refused_in_one_line(capsys):
    with pytest.raises(SystemExit):
        ab.main(["HEAD", "HEAD", "--rounds", "2"])
    assert "--rounds: at least 3" in capsys.readouterr().err
